//! Paths spelled through a symlink (issue 24, item 3), the Linux proxy for macOS, where the
//! temporary directory (`$TMPDIR`, `/var/folders/...`) lies under `/var`, a symlink to
//! `/private/var`: git (`rev-parse --show-toplevel`, `worktree list`) and the kernel (a
//! process's cwd) answer with the real path, while the user's shell (`$PWD`), `-C`, the
//! environment (HOME, the XDG dirs, the ledger) and Claude Code's hook input carry the symlinked
//! spelling. Every story here runs in a [`TestEnv::through_a_symlink`] world, with every
//! command's cwd, `PWD` and path arguments spelled through `link`, and checks that both
//! spellings name one slot wherever git-hand compares two paths: spawn, list, status and
//! `path` from inside the slot, the fence (the holder's push allowed, a zombie's commit and push
//! refused), `done`, doctor, prune, a re-spawn that reuses the slot, Claude Code's hooks, and
//! what else holds a path: `spawn --exec`'s `PWD`, a relative remote, `core.hooksPath`, the
//! ledger's path in stamps (`ledger copy`, a lost ledger's evidence).
//!
//! A process scan compares a process's cwd (the kernel's, real) with slot paths: every slot
//! path git-hand hands it is a ledger key or a path from git's admin files, canonicalized
//! where it is read (`ensure_pool_dir`, `Repo::located`, `link::worktree_of`), which the stories
//! here would see broken as a slot reused while occupied or never found.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::{Run, TestEnv, cred, path_of, remote_oid};

/// A world reached through `link`, with repository `app` (and its bare origin) made there and
/// git-hand's hooks installed: (the env, the repository spelled through `link`).
fn linked_world() -> (TestEnv, PathBuf) {
    let env = TestEnv::through_a_symlink();
    env.repo("app");
    let repo = env.path("work/app");
    assert_ne!(
        repo.canonicalize().unwrap(),
        repo,
        "the repository is reached through a symlink"
    );
    hand(&env, &repo, &["install"], &[]).ok();
    (env, repo)
}

/// `dir` with the symlink resolved: the spelling git and the kernel report.
fn real(dir: &Path) -> PathBuf {
    dir.canonicalize().unwrap()
}

/// `dir` spelled through `link` again: where a user who `cd`'d there through the symlink sees
/// themselves (`$PWD`).
fn linked(env: &TestEnv, dir: &Path) -> PathBuf {
    let real_root = real(&env.path(""));
    let rel = dir
        .strip_prefix(&real_root)
        .unwrap_or_else(|_| panic!("{} is not under {}", dir.display(), real_root.display()));
    env.path("").join(rel)
}

/// `git hand ARGS` run in `dir` as a shell that `cd`'d there would run it: `PWD` is `dir` as
/// spelled (the kernel reports the real path as the cwd), `vars` in its environment.
fn hand(env: &TestEnv, dir: &Path, args: &[&str], vars: &[(String, String)]) -> Run {
    let mut all: Vec<(&str, &str)> = vec![("PWD", dir.to_str().unwrap())];
    all.extend(vars.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    env.hand_env(dir, args, &all)
}

/// `git hand -C DIR ARGS`, run from the filesystem's root: the path argument is the only
/// spelling git-hand gets.
fn hand_c(env: &TestEnv, dir: &Path, args: &[&str], vars: &[(String, String)]) -> Run {
    let mut all = vec!["-C", dir.to_str().unwrap()];
    all.extend(args);
    hand(env, Path::new("/"), &all, vars)
}

/// `git ARGS` in `dir`, contained, with `PWD` spelled as `dir` and `vars` in its environment.
fn git_in(env: &TestEnv, dir: &Path, vars: &[(String, String)], args: &[&str]) -> Run {
    let mut cmd = env.contained("git", dir);
    cmd.args(args).env("PWD", dir);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    Run::from(cmd.output().unwrap())
}

/// A spawn of `task` from `dir` (`--json`), asserting success.
#[track_caller]
fn spawn_in(env: &TestEnv, dir: &Path, task: &str) -> Value {
    let run = hand(env, dir, &["spawn", task, "--json"], &[]);
    assert_eq!(run.code, 0, "spawn {task}: {}", run.stderr);
    run.json()
}

/// Writes `file` in `dir` and commits it with `vars` in git's environment.
fn commit_in(env: &TestEnv, dir: &Path, vars: &[(String, String)], file: &str) -> Run {
    std::fs::write(dir.join(file), format!("{file}\n")).unwrap();
    git_in(env, dir, &[], &["add", file]).ok();
    git_in(
        env,
        dir,
        vars,
        &["commit", "-q", "-m", &format!("add {file}")],
    )
}

/// The problems `doctor --json` reports from `dir`, asserting it found none.
#[track_caller]
fn assert_doctor_finds_nothing(env: &TestEnv, dir: &Path, when: &str) {
    let run = hand(env, dir, &["doctor", "--json"], &[]);
    assert_eq!(
        run.code, 0,
        "{when}: doctor found problems\n{}\n{}",
        run.stdout, run.stderr
    );
    let problems = &run.json()["problems"];
    assert_eq!(problems, &json!([]), "{when}: {problems:#}");
}

#[test]
fn a_slot_spawned_through_a_symlink_is_recorded_by_its_real_path_and_found_from_either_spelling() {
    let (env, repo) = linked_world();
    let a = spawn_in(&env, &repo, "a");
    let slot = path_of(&a);
    assert_eq!(slot, real(&slot), "spawn names the slot by its real path");
    let worktrees = git_in(&env, &repo, &[], &["worktree", "list", "--porcelain"]).ok();
    assert!(
        worktrees.contains(&format!("worktree {}\n", slot.display())),
        "git knows the slot by the path spawn names:\n{worktrees}"
    );
    let listed = hand(&env, &repo, &["list", "--json"], &[]).ok();
    let listed: Value = serde_json::from_str(&listed).unwrap();
    assert_eq!(listed["tasks"][0]["task"], "a", "{listed:#}");
    assert_eq!(listed["tasks"][0]["path"], a["path"], "{listed:#}");
    assert_eq!(
        hand_c(&env, &repo, &["list", "--json"], &[]).json()["tasks"],
        listed["tasks"]
    );

    // From inside the slot, cd'd there through the symlink: the slot's own task.
    let inside = linked(&env, &slot);
    std::fs::create_dir(inside.join("sub")).unwrap();
    for run in [
        hand(&env, &inside, &["status", "--json"], &[]),
        hand_c(&env, &inside, &["status", "--json"], &[]),
        hand(&env, &inside.join("sub"), &["status", "--json"], &[]),
    ] {
        let status = run.json();
        assert_eq!(status["task"], "a", "{status:#}");
        assert_eq!(status["slot"], a["path"], "{status:#}");
        assert_eq!(status["lease"]["lease_id"], a["lease_id"], "{status:#}");
        assert_eq!(status["verdict"], "current", "{status:#}");
    }
    let env_of = hand(&env, &inside, &["env", "--json"], &[]).json();
    assert_eq!(env_of["GIT_HAND_LEASE"], a["lease_id"], "{env_of:#}");
    let here = hand(&env, &inside, &["path"], &[]).ok();
    assert_eq!(here.trim_end(), slot.to_str().unwrap());
    hand(&env, &inside, &["check"], &cred(&a)).ok();
}

#[test]
fn in_a_slot_reached_through_a_symlink_the_holder_pushes_and_a_zombie_is_refused() {
    let (env, repo) = linked_world();
    let a = spawn_in(&env, &repo, "a");
    let inside = linked(&env, &path_of(&a));
    commit_in(&env, &inside, &cred(&a), "a.txt").ok();
    let pushed = git_in(
        &env,
        &inside,
        &cred(&a),
        &["push", "-q", "origin", "hand/a"],
    );
    assert_eq!(pushed.code, 0, "the holder's push: {}", pushed.stderr);
    let origin = env.path("work/app-origin.git");
    let a_tip = remote_oid(&env, &origin, "hand/a").expect("hand/a was pushed");

    hand(&env, &repo, &["teardown", "a", "--force"], &[]).ok();
    let b = spawn_in(&env, &repo, "b");
    assert_eq!(path_of(&b), path_of(&a), "b got a's slot");
    let b_tip = git_in(&env, &inside, &[], &["rev-parse", "HEAD"]).ok();
    let zombie = commit_in(&env, &inside, &cred(&a), "zombie.txt");
    assert_ne!(zombie.code, 0, "the zombie's commit went through");
    assert!(
        zombie.stderr.contains("git-hand: ref update refused"),
        "{}",
        zombie.stderr
    );
    assert_eq!(
        git_in(&env, &inside, &[], &["rev-parse", "HEAD"]).ok(),
        b_tip,
        "b's branch moved"
    );
    let pushed = git_in(
        &env,
        &inside,
        &cred(&a),
        &["push", "-q", "origin", "HEAD:hand/a"],
    );
    assert_ne!(pushed.code, 0, "the zombie's push went through");
    assert!(pushed.stderr.contains("git-hand: "), "{}", pushed.stderr);
    assert_eq!(remote_oid(&env, &origin, "hand/a"), Some(a_tip));
    git_in(&env, &inside, &[], &["reset", "-q", "--hard"]).ok();
    git_in(&env, &inside, &[], &["clean", "-qfd"]).ok();
    commit_in(&env, &inside, &cred(&b), "b.txt").ok();
    let pushed = git_in(
        &env,
        &inside,
        &cred(&b),
        &["push", "-q", "origin", "hand/b"],
    );
    assert_eq!(pushed.code, 0, "the new holder's push: {}", pushed.stderr);
}

#[test]
fn done_doctor_prune_and_a_respawn_through_a_symlink_agree_on_the_slot() {
    let (env, repo) = linked_world();
    let a = spawn_in(&env, &repo, "a");
    let slot = path_of(&a);
    let inside = linked(&env, &slot);
    assert_doctor_finds_nothing(&env, &repo, "with a task open");
    assert_doctor_finds_nothing(&env, &inside, "in the slot");
    hand(&env, &inside, &["done"], &[]).ok();
    let listed = hand(&env, &repo, &["list", "--json"], &[]).json();
    assert_eq!(listed["tasks"], json!([]), "{listed:#}");
    assert_eq!(
        listed["free_slots"][0]["path"], a["path"],
        "the slot is free: {listed:#}"
    );
    assert_doctor_finds_nothing(&env, &repo, "after done");

    let b = spawn_in(&env, &repo, "b");
    assert_eq!(path_of(&b), slot, "the freed slot is reused");
    assert_eq!(b["slot_source"], "reused", "{b:#}");
    assert_eq!(b["token"], 2, "{b:#}");
    hand(&env, &inside, &["teardown"], &[]).ok();

    let dry = hand(&env, &repo, &["prune", "--json"], &[]).json();
    assert_eq!(dry["dry_run"], true, "{dry:#}");
    let pruned = hand(&env, &repo, &["prune", "--yes", "--json"], &[]).json();
    assert_eq!(
        pruned["removed"],
        json!([slot.to_str().unwrap()]),
        "{pruned:#}"
    );
    assert!(!slot.exists(), "prune left the slot");
    let worktrees = git_in(&env, &repo, &[], &["worktree", "list", "--porcelain"]).ok();
    assert!(!worktrees.contains(slot.to_str().unwrap()), "{worktrees}");
    assert_doctor_finds_nothing(&env, &repo, "after prune");
    let c = spawn_in(&env, &repo, "c");
    assert_eq!(path_of(&c), slot, "slot 1 is made again");
    assert_eq!(c["token"], 3, "the slot's tokens go on: {c:#}");
    crate::support::assert_consistent(&env, "after a spawn into a pruned slot");
}

#[test]
fn a_pool_root_and_ledger_set_through_the_symlink_in_git_config_name_the_same_slots() {
    let (env, repo) = linked_world();
    let pools = env.path("pools");
    let ledger = env.path("state/other.sqlite");
    for (key, value) in [("hand.root", &pools), ("hand.ledger", &ledger)] {
        git_in(&env, &repo, &[], &["config", key, value.to_str().unwrap()]).ok();
    }
    let vars = [("GIT_HAND_LEDGER".to_string(), String::new())];
    let run = hand(&env, &repo, &["spawn", "a", "--json"], &vars);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let a = run.json();
    let slot = path_of(&a);
    assert!(slot.starts_with(real(&pools)), "{}", slot.display());
    assert!(ledger.exists(), "hand.ledger was not used");
    let inside = linked(&env, &slot);
    let status = hand(&env, &inside, &["status", "--json"], &vars).json();
    assert_eq!(status["lease"]["lease_id"], a["lease_id"], "{status:#}");
    let run = hand(&env, &repo, &["doctor", "--json"], &vars);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    hand(&env, &inside, &["done"], &vars).ok();
    let run = hand(&env, &repo, &["spawn", "b", "--json"], &vars);
    assert_eq!(path_of(&run.json()), slot, "the freed slot is reused");
}

/// `git-hand hook claude <event>` in `dir` (spelled as given, `PWD` too), `input` on stdin.
fn claude_hook(
    env: &TestEnv,
    dir: &Path,
    event: &str,
    input: &Value,
    vars: &[(&str, &str)],
) -> Run {
    let pwd = dir.to_string_lossy();
    let vars: Vec<(&str, &str)> = [("PWD", pwd.as_ref())]
        .into_iter()
        .chain(vars.iter().copied())
        .collect();
    crate::support::claude_hook(env, dir, event, &input.to_string(), &vars)
}

const SESSION: &str = "0b6c2f1e-5a4d-4c3b-9e8f-00000000000a";

#[test]
fn claude_codes_worktree_hooks_given_symlinked_paths_lease_and_give_back_the_same_slot() {
    let (env, repo) = linked_world();
    let created = claude_hook(
        &env,
        &repo,
        "worktree-create",
        &json!({
            "session_id": SESSION,
            "cwd": repo,
            "hook_event_name": "WorktreeCreate",
            "name": "feat",
        }),
        &[],
    );
    let out = created.ok();
    let slot = PathBuf::from(out.trim_end());
    assert_eq!(slot, real(&slot), "the hook prints the slot's real path");
    let inside = linked(&env, &slot);

    let file = env.path("claude-env");
    std::fs::write(&file, "").unwrap();
    let started = claude_hook(
        &env,
        &inside,
        "session-start",
        &json!({
            "session_id": SESSION,
            "cwd": inside,
            "hook_event_name": "SessionStart",
            "source": "startup",
        }),
        &[("CLAUDE_ENV_FILE", file.to_str().unwrap())],
    );
    assert_eq!(started.code, 0, "{started:?}");
    let exported = std::fs::read_to_string(&file).unwrap();
    assert!(
        exported.contains("export GIT_HAND_LEASE="),
        "session-start in the slot, spelled through the symlink, exported no lease:\n{exported}"
    );

    let removed = claude_hook(
        &env,
        &repo,
        "worktree-remove",
        &json!({
            "session_id": SESSION,
            "cwd": repo,
            "hook_event_name": "WorktreeRemove",
            "worktree_path": inside,
        }),
        &[],
    );
    assert_eq!(removed.code, 0, "{removed:?}");
    let listed = hand(&env, &repo, &["list", "--json"], &[]).json();
    assert_eq!(
        listed["tasks"],
        json!([]),
        "the session's task is done: {listed:#}"
    );
    assert_eq!(
        listed["free_slots"][0]["path"],
        json!(slot.to_str().unwrap()),
        "{listed:#}"
    );
    assert_doctor_finds_nothing(&env, &repo, "after worktree-remove");
}

/// `git hand ledger copy` moves the stamps that name the copied file onto the team ledger:
/// a stamp holds the ledger's path as the spawn's environment spelled it, and the copy's may
/// spell the same file otherwise (through the symlink, or not).
#[test]
fn ledger_copy_restamps_a_slot_whose_stamp_spells_the_ledger_through_the_symlink() {
    let db = crate::pg::database();
    let (env, repo) = linked_world();
    git_in(
        &env,
        &repo,
        &[],
        &["config", "--global", "hand.machine", "laptop"],
    )
    .ok();
    let a = spawn_in(&env, &repo, "a");
    let slot = path_of(&a);
    let the_same_file = real(&env.ledger()).display().to_string();
    let vars = [("GIT_HAND_LEDGER".to_string(), the_same_file)];
    let run = hand(
        &env,
        &repo,
        &["ledger", "copy", "--to", &db.tcp_url(), "--json"],
        &vars,
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let copied = run.json();
    assert_eq!(
        copied["restamped"],
        json!([slot.to_str().unwrap()]),
        "{copied:#}\n{}",
        run.stderr
    );
}

/// `spawn --exec` runs its command in the slot with `PWD` naming the slot: the caller's `PWD`
/// (the main worktree, spelled through the symlink) would send a program that reads it there.
#[test]
fn spawn_exec_runs_its_command_with_pwd_naming_the_slot() {
    let (env, repo) = linked_world();
    let run = hand(
        &env,
        &repo,
        // Not a shell: a shell mends a `PWD` that names another directory than its cwd.
        &["spawn", "a", "--exec", "--", "printenv", "PWD"],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let slot = hand(&env, &repo, &["path", "a"], &[]).ok();
    let slot = slot.trim_end();
    assert_eq!(run.stdout.trim_end(), slot, "{}", run.stderr);
}

/// A remote URL that is a relative path (`../app-origin.git`) resolves as git resolves it, from
/// the real directory: reached through a symlink to the repository itself, `..` of the
/// spelling the user typed is another directory than `..` of the real one.
#[test]
fn a_relative_remote_of_a_repository_reached_through_a_symlink_is_the_one_git_pushes_to() {
    let (env, repo) = linked_world();
    git_in(
        &env,
        &repo,
        &[],
        &["remote", "set-url", "origin", "../app-origin.git"],
    )
    .ok();
    let shortcut = env.root.path().join("app-shortcut");
    std::os::unix::fs::symlink(real(&repo), &shortcut).unwrap();
    let a = hand(&env, &shortcut, &["spawn", "a", "--json"], &[]);
    assert_eq!(a.code, 0, "{}", a.stderr);
    let a = a.json();
    let inside = linked(&env, &path_of(&a));
    commit_in(&env, &inside, &cred(&a), "a.txt").ok();
    let pushed = git_in(
        &env,
        &inside,
        &cred(&a),
        &["push", "-q", "origin", "hand/a"],
    );
    assert_eq!(pushed.code, 0, "{}", pushed.stderr);
    let origin = env.path("work/app-origin.git");
    assert!(
        remote_oid(&env, &origin, "hand/a").is_some(),
        "the push went elsewhere"
    );
    let status = hand(&env, &inside, &["status", "--json"], &cred(&a)).json();
    assert_eq!(status["verdict"], "current", "{status:#}");
    let pinned = git_in(
        &env,
        &repo,
        &[],
        &["config", "--get-regexp", "^url\\..*\\.insteadof$"],
    );
    let want = format!(
        "url.{}.insteadof ../app-origin.git",
        real(&origin).display()
    );
    assert_eq!(
        pinned.ok().trim_end(),
        want,
        "the pin names the real origin"
    );
    let status = hand_c(&env, &shortcut, &["check"], &[]);
    assert_eq!(status.code, 0, "{}", status.stderr);
}

/// `core.hooksPath` naming the repository's own hooks directory through the symlink is no
/// redirection: install writes there without asking, and status finds the hooks in force.
#[test]
fn a_hooks_path_spelled_through_the_symlink_is_the_repositorys_own_hooks_dir() {
    let (env, repo) = linked_world();
    let hooks = repo.join(".git/hooks");
    git_in(
        &env,
        &repo,
        &[],
        &["config", "core.hooksPath", hooks.to_str().unwrap()],
    )
    .ok();
    hand(&env, &repo, &["install"], &[]).ok();
    let a = spawn_in(&env, &repo, "a");
    let inside = linked(&env, &path_of(&a));
    let status = hand(&env, &inside, &["status", "--json"], &cred(&a)).json();
    assert_eq!(status["hooks"]["in_force"], true, "{status:#}");
    let zombie_free = commit_in(&env, &inside, &cred(&a), "a.txt");
    assert_eq!(zombie_free.code, 0, "{}", zombie_free.stderr);
    hand(&env, &repo, &["teardown", "a", "--force"], &[]).ok();
    spawn_in(&env, &repo, "b");
    let zombie = commit_in(&env, &inside, &cred(&a), "zombie.txt");
    assert_ne!(
        zombie.code, 0,
        "the hooks were not in force: {}",
        zombie.stderr
    );
}

/// A ledger that is gone is never made again over the slots it leased, whichever spelling of
/// its path the stamps hold and the command uses: the stamps name it through the symlink, the
/// command by its real path.
#[test]
fn a_lost_ledger_is_not_made_again_when_stamps_spell_its_path_through_the_symlink() {
    let (env, repo) = linked_world();
    spawn_in(&env, &repo, "a");
    let ledger = env.ledger();
    let real_ledger = real(&ledger);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", ledger.display()));
    }
    let vars = [(
        "GIT_HAND_LEDGER".to_string(),
        real_ledger.display().to_string(),
    )];
    let run = hand(&env, &repo, &["spawn", "b"], &vars);
    assert_eq!(run.code, 3, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("is missing"), "{}", run.stderr);
    assert!(!real_ledger.exists(), "a new ledger was made");
}

/// A process that went into a free slot through the symlink (its cwd, as the kernel reports
/// it, is the real path) keeps the slot from being reused; once it is gone, the slot is.
#[test]
fn a_process_that_entered_a_slot_through_the_symlink_keeps_it_from_reuse() {
    let (env, repo) = linked_world();
    let a = spawn_in(&env, &repo, "a");
    let slot = path_of(&a);
    let inside = linked(&env, &slot);
    hand(&env, &inside, &["done"], &[]).ok();
    let mut tenant = env.command("sleep", &inside);
    let mut tenant = tenant.arg("600").env("PWD", &inside).spawn().unwrap();
    let b = spawn_in(&env, &repo, "b");
    tenant.kill().unwrap();
    tenant.wait().unwrap();
    assert_ne!(path_of(&b), slot, "a slot with a process inside was reused");
    assert!(
        b["skipped"].to_string().contains(slot.to_str().unwrap()),
        "{b:#}"
    );
    let c = spawn_in(&env, &repo, "c");
    assert_eq!(path_of(&c), slot, "the slot nobody is in is reused");
}
