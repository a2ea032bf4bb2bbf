//! The reference-transaction hook (issue 16): a zombie cannot write a ref in a slot it no longer
//! holds, so the new holder's branch and push never carry its commits. Every git command that
//! could go through hooks runs contained (its own PID namespace under a kill timeout).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{
    Run, SYSTEM_PATH, TestEnv, hooks_dir, hooks_snapshot, leased_again, path_of, spawn, tool,
};

/// `git ARGS` in `dir`, contained, as the holder of `cred` (a spawn's JSON) when given, with
/// `extra` variables.
fn git_as(
    env: &TestEnv,
    dir: &Path,
    cred: Option<&Value>,
    extra: &[(&str, &str)],
    args: &[&str],
) -> Run {
    let mut cmd = env.contained("git", dir);
    cmd.args(args);
    // The holder's environment exactly as `spawn --exec` sets it: the spawn JSON's `env`.
    if let Some(c) = cred {
        let vars = c["env"].as_object().expect("spawn --json has env");
        assert!(vars.contains_key("GIT_HAND_LEASE"), "{vars:?}");
        for (k, v) in vars {
            cmd.env(k, v.as_str().unwrap());
        }
    }
    for (k, v) in extra {
        cmd.env(k, v);
    }
    Run::from(cmd.output().unwrap())
}

/// Writes `file` in `dir` and commits it as the holder of `cred`; the run of `git commit`.
fn commit_as(env: &TestEnv, dir: &Path, cred: Option<&Value>, file: &str) -> Run {
    std::fs::write(dir.join(file), format!("{file}\n")).unwrap();
    env.git(dir, &["add", file]);
    git_as(
        env,
        dir,
        cred,
        &[],
        &["commit", "-q", "-m", &format!("add {file}")],
    )
}

fn rev(env: &TestEnv, dir: &Path, what: &str) -> String {
    env.git(dir, &["rev-parse", what])
}

/// A repository with git-hand's hooks, task `a` spawned, torn down, and its slot re-leased to
/// task `b`: (repo, slot, a's spawn output, b's spawn output).
fn zombie_setup(env: &TestEnv) -> (PathBuf, PathBuf, Value, Value) {
    let repo = env.repo("app");
    env.hand(&repo, &["install"]).ok();
    let (slot, a, b) = leased_again(env, &repo, "a", "b");
    (repo, slot, a, b)
}

#[track_caller]
fn assert_refused(run: &Run, words: &str, what: &str) {
    assert_ne!(run.code, 0, "{what} went through:\n{}", run.stderr);
    assert!(
        run.stderr
            .contains(&format!("git-hand: ref update refused ({words})")),
        "{what}: {}",
        run.stderr
    );
    assert!(!run.stderr.contains("--no-verify"), "{}", run.stderr);
}

/// No lock file git could have left behind in the slot's admin dir or the shared refs (git-hand's
/// own lock files, which are flocked and stay, aside).
#[track_caller]
fn assert_no_locks(repo: &Path) {
    let out = std::process::Command::new("find")
        .arg(repo.join(".git"))
        .args(["-name", "*.lock", "-not", "-path", "*git-hand*"])
        .output()
        .unwrap();
    let found = String::from_utf8_lossy(&out.stdout);
    assert!(found.trim().is_empty(), "lock files left: {found}");
}

#[test]
fn a_zombie_cannot_commit_in_a_slot_it_no_longer_holds_and_bs_push_carries_only_bs_commits() {
    let env = TestEnv::new();
    let (repo, slot, a, b) = zombie_setup(&env);
    let b_start = rev(&env, &slot, "hand/b");

    // A wakes up in the recycled slot and commits with its old credential.
    let run = commit_as(&env, &slot, Some(&a), "zombie.txt");
    assert_refused(&run, "stale", "the zombie's commit");
    assert!(
        run.stderr.contains("token 2"),
        "names b's token: {}",
        run.stderr
    );
    let refused = run
        .stderr
        .split("git hand spawn a-rescue --base ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .map(str::to_string)
        .unwrap_or_else(|| panic!("no rescue advice: {}", run.stderr));
    assert_eq!(
        env.git(&slot, &["cat-file", "-t", &refused]),
        "commit",
        "the refused commit is kept"
    );
    assert_eq!(
        rev(&env, &slot, "hand/b"),
        b_start,
        "b's branch did not move"
    );
    assert_no_locks(&repo);
    let log = env.hand(&repo, &["log", "--json"]).json().to_string();
    assert!(log.contains("ref-update-refused"), "recorded: {log}");

    // The rescue advice works: the refused commit becomes a task of A's own.
    let rescue = spawn(&env, &repo, "a-rescue", &["--base", &refused]);
    assert_eq!(rev(&env, &path_of(&rescue), "HEAD"), refused);

    // B's own commit, with B's credential, passes; then B pushes: only B's commits.
    env.git(&slot, &["reset", "-q", "--hard"]);
    env.git(&slot, &["clean", "-qfd"]);
    let run = commit_as(&env, &slot, Some(&b), "b.txt");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let pushed = git_as(
        &env,
        &slot,
        Some(&b),
        &[],
        &["push", "-q", "origin", "hand/b"],
    );
    assert_eq!(pushed.code, 0, "{}", pushed.stderr);
    let origin = env.path("work/app-origin.git");
    let files = env.git(&origin, &["log", "--format=%s", "hand/b"]);
    assert!(files.contains("add b.txt"), "{files}");
    assert!(
        !files.contains("zombie"),
        "the zombie's commit reached b's branch: {files}"
    );

    // A process without a credential is the stamp's holder (b): it passes...
    let run = commit_as(&env, &slot, None, "stamp.txt");
    assert_eq!(run.code, 0, "{}", run.stderr);
    // ...unless the repository requires a credential.
    env.git(&repo, &["config", "hand.requireCredential", "true"]);
    env.hand(&repo, &["install"]).ok();
    let run = commit_as(&env, &slot, None, "bare.txt");
    assert_refused(&run, "no-credential", "a commit without a credential");
    assert_no_locks(&repo);
    let run = commit_as(&env, &slot, Some(&b), "again.txt");
    assert_eq!(run.code, 0, "b's credential still passes: {}", run.stderr);
}

#[test]
fn every_ref_moving_command_of_a_stale_holder_is_refused() {
    let env = TestEnv::new();
    let (repo, slot, a, b) = zombie_setup(&env);
    for f in ["one.txt", "two.txt"] {
        let run = commit_as(&env, &slot, Some(&b), f);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    // A side branch to merge, rebase onto and pick from.
    env.git(&repo, &["switch", "-q", "-c", "side"]);
    env.commit(&repo, "side.txt", "side\n");
    env.git(&repo, &["switch", "-q", "main"]);
    let side = rev(&env, &repo, "side");
    let held = rev(&env, &slot, "hand/b");

    let commands: &[&[&str]] = &[
        &["commit", "--allow-empty", "-q", "-m", "zombie"],
        &["commit", "--amend", "-q", "-m", "zombie amend"],
        &["reset", "-q", "--hard", "HEAD~1"],
        &["merge", "-q", "--no-edit", "side"],
        &["rebase", "-q", "side"],
        &["cherry-pick", &side],
        &["branch", "-f", "side", "HEAD"],
        &["update-ref", "refs/heads/hand/b", "HEAD~1"],
        &["branch", "zombie-branch"],
        // A deletion without the old value reaches the hook as null -> null: still a change.
        &["update-ref", "-d", "refs/heads/side"],
        // HEAD itself is the slot's: a symbolic-ref update (`ref:refs/heads/side`) counts.
        &["switch", "-q", "side"],
        &["checkout", "-q", "--detach", "HEAD~1"],
        &["branch", "-D", "side"],
    ];
    for args in commands {
        let run = git_as(&env, &slot, Some(&a), &[], args);
        assert_refused(&run, "stale", &format!("git {}", args.join(" ")));
        assert_eq!(
            rev(&env, &slot, "hand/b"),
            held,
            "git {args:?} moved b's branch"
        );
        assert_eq!(rev(&env, &repo, "side"), side, "git {args:?} moved side");
        // Settle whatever the refused command left in progress, as the holder (the stamp).
        for abort in [
            &["rebase", "--abort"][..],
            &["merge", "--abort"],
            &["cherry-pick", "--abort"],
        ] {
            let _ = git_as(&env, &slot, None, &[], abort);
        }
        git_as(&env, &slot, None, &[], &["reset", "-q", "--hard", "hand/b"]).ok();
        assert_eq!(rev(&env, &slot, "HEAD"), held);
    }
    assert_no_locks(&repo);
}

#[test]
fn a_holder_of_one_task_cannot_move_another_live_tasks_branch() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.hand(&repo, &["install"]).ok();
    let x = spawn(&env, &repo, "x", &[]);
    let y = spawn(&env, &repo, "y", &[]);
    let x_slot = path_of(&x);
    let y_tip = rev(&env, &repo, "hand/y");

    let run = commit_as(&env, &x_slot, Some(&x), "x.txt");
    assert_eq!(run.code, 0, "x's own commit passes: {}", run.stderr);
    let run = git_as(
        &env,
        &x_slot,
        Some(&x),
        &[],
        &["update-ref", "refs/heads/hand/y", "HEAD"],
    );
    assert_ne!(run.code, 0, "x moved y's branch");
    assert!(
        run.stderr
            .contains("git-hand: ref update refused: branch hand/y belongs to live task y"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("git hand spawn x-rescue --base "),
        "{}",
        run.stderr
    );
    assert_eq!(rev(&env, &repo, "hand/y"), y_tip);
    // y's own holder moves it.
    let run = commit_as(&env, &path_of(&y), Some(&y), "y.txt");
    assert_eq!(run.code, 0, "{}", run.stderr);

    // hand.fenceRefs=false turns the hook off.
    env.git(&repo, &["config", "hand.fenceRefs", "false"]);
    let run = git_as(
        &env,
        &x_slot,
        Some(&x),
        &[],
        &["update-ref", "refs/heads/hand/y", "HEAD"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
}

/// A `git-hand` first on PATH that records every call and does nothing else.
fn fake_git_hand(env: &TestEnv) -> (String, PathBuf) {
    let dir = env.path("fake-bin");
    std::fs::create_dir_all(&dir).unwrap();
    let calls = env.path("fake-calls");
    let fake = dir.join("git-hand");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\ncat >/dev/null\nexit 0\n",
            calls.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}:{SYSTEM_PATH}",
        dir.display(),
        TestEnv::bin_dir().display()
    );
    (path, calls)
}

#[test]
fn a_fetch_of_many_refs_in_the_main_worktree_never_starts_git_hand() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.hand(&repo, &["install"]).ok();
    let a = spawn(&env, &repo, "a", &[]);
    let origin = env.path("work/app-origin.git");
    let head = rev(&env, &origin, "main");
    let lines: String = (0..100)
        .map(|i| format!("create refs/heads/b{i} {head}\n"))
        .collect();
    let mut cmd = env.timed("git", &origin);
    cmd.args(["update-ref", "--stdin"])
        .stdin(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), lines.as_bytes()).unwrap();
    assert!(child.wait().unwrap().success());

    let (path, calls) = fake_git_hand(&env);
    // Even with a credential in the environment: the main worktree is no slot.
    let run = git_as(
        &env,
        &repo,
        Some(&a),
        &[("PATH", &path)],
        &["fetch", "-q", "origin"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        env.git(
            &repo,
            &[
                "for-each-ref",
                "--count=200",
                "--format=x",
                "refs/remotes/origin/"
            ]
        )
        .lines()
        .count(),
        101
    );
    assert!(
        !calls.exists(),
        "git-hand started: {:?}",
        std::fs::read_to_string(&calls)
    );
    // Nor in the slot without a credential.
    let run = git_as(
        &env,
        &path_of(&a),
        None,
        &[("PATH", &path)],
        &["fetch", "-q", "origin"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        !calls.exists(),
        "git-hand started in the slot without a credential"
    );
    // Nor in the slot with a credential: a fetch moves only remote-tracking refs, which the sh
    // shim lets through itself.
    env.git(&origin, &["update-ref", "refs/heads/late", &head]);
    let run = git_as(
        &env,
        &path_of(&a),
        Some(&a),
        &[("PATH", &path)],
        &["fetch", "-q", "origin"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!calls.exists(), "git-hand started for remote-tracking refs");
    // The same fake is reached by a commit in the slot with a credential: the test can fail.
    std::fs::write(path_of(&a).join("f.txt"), "f\n").unwrap();
    env.git(&path_of(&a), &["add", "f.txt"]);
    let run = git_as(
        &env,
        &path_of(&a),
        Some(&a),
        &[("PATH", &path)],
        &["commit", "-q", "-m", "f"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let recorded = std::fs::read_to_string(&calls).unwrap();
    assert!(
        recorded.contains("hook reference-transaction prepared"),
        "{recorded}"
    );
}

/// A foreign reference-transaction hook that records its state and stdin.
fn recording_hook(env: &TestEnv, repo: &Path) -> PathBuf {
    let record = env.path("foreign-ran");
    let hook = hooks_dir(repo).join("reference-transaction");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\n{{ echo \"state $1\"; cat; }} >> '{}'\n",
            record.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    record
}

#[test]
fn a_chained_reference_transaction_hook_still_runs_with_stdin_and_spawns_own_git_is_never_refused()
{
    let env = TestEnv::new();
    let repo = env.repo("app");
    let record = recording_hook(&env, &repo);
    let before = hooks_snapshot(&hooks_dir(&repo));
    env.hand(&repo, &["install"]).ok();
    // The user's hook stays where it is: the main worktree runs it alone, slots run it from
    // git-hand's shim in their hooks directory, through the chained forwarder (issue 25).
    let ours: Vec<String> = hooks_snapshot(&hooks_dir(&repo))
        .into_keys()
        .filter(|name| name.starts_with("reference-transaction"))
        .collect();
    assert_eq!(ours, ["reference-transaction"]);
    let chained = repo.join(".git/git-hand/hooks/reference-transaction.git-hand-chained");
    assert!(chained.exists());

    // In the main worktree the user's hook sees git's lines.
    let run = commit_as(&env, &repo, None, "main.txt");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let main_tip = rev(&env, &repo, "main");
    let seen = std::fs::read_to_string(&record).unwrap();
    assert!(seen.contains("state prepared"), "{seen}");
    assert!(
        seen.contains(&format!("{main_tip} refs/heads/main")),
        "{seen}"
    );

    // spawn, teardown and a re-lease with a's credential in the environment: git-hand's own git
    // commands run the chained hook (hooks are not skipped) and are never refused.
    let a = spawn(&env, &repo, "a", &[]);
    let cred = [
        (
            "GIT_HAND_LEASE",
            a["lease_id"].as_str().unwrap().to_string(),
        ),
        ("GIT_HAND_TOKEN", a["token"].to_string()),
    ];
    let cred: Vec<(&str, &str)> = cred.iter().map(|(k, v)| (*k, v.as_str())).collect();
    env.hand_env(&repo, &["teardown", "a", "--force"], &cred)
        .ok();
    let run = env.hand_env(&repo, &["spawn", "b", "--json"], &cred);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let slot = path_of(&run.json());

    // In the slot, git-hand judges and still runs the chained hook with the same stdin.
    let run = commit_as(&env, &slot, Some(&a), "zombie.txt");
    assert_refused(&run, "stale", "the zombie's commit");
    let seen = std::fs::read_to_string(&record).unwrap();
    assert!(seen.matches("state prepared").count() >= 3, "{seen}");

    env.hand(&repo, &["uninstall"]).ok();
    assert_eq!(
        hooks_snapshot(&hooks_dir(&repo)),
        before,
        "uninstall restores byte-identical"
    );
}

#[test]
fn lefthook_configured_for_reference_transaction_still_runs_and_uninstall_restores_it() {
    let env = TestEnv::new().with_hook_tools();
    let repo = env.repo("app");
    let record = env.path("lefthook-ref-ran");
    std::fs::write(
        repo.join("lefthook.yml"),
        format!(
            "reference-transaction:\n  commands:\n    team:\n      run: echo \"{{1}}\" >> '{}'\n",
            record.display()
        ),
    )
    .unwrap();
    env.git(&repo, &["add", "lefthook.yml"]);
    env.git(&repo, &["commit", "-q", "-m", "lefthook"]);
    tool(&env, &repo, "lefthook", &["install"]).ok();
    let lefthook_only = hooks_snapshot(&hooks_dir(&repo));
    env.hand(&repo, &["install"]).ok();

    let _ = std::fs::remove_file(&record);
    let run = commit_as(&env, &repo, None, "main.txt");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let ran = std::fs::read_to_string(&record).unwrap_or_default();
    assert!(
        ran.contains("prepared"),
        "lefthook's command did not run: {ran:?}"
    );

    let a = spawn(&env, &repo, "a", &[]);
    env.hand(&repo, &["teardown", "a", "--force"]).ok();
    let b = spawn(&env, &repo, "b", &[]);
    let slot = path_of(&b);
    let run = commit_as(&env, &slot, Some(&a), "zombie.txt");
    assert_refused(&run, "stale", "the zombie's commit beside lefthook");
    let run = commit_as(&env, &slot, Some(&b), "b.txt");
    assert_eq!(run.code, 0, "{}", run.stderr);

    env.hand(&repo, &["uninstall"]).ok();
    assert_eq!(hooks_snapshot(&hooks_dir(&repo)), lefthook_only);
}

#[test]
fn a_missing_reference_transaction_shim_is_a_lapse_that_doctor_repair_reinstalls() {
    let env = TestEnv::new();
    let (repo, slot, a, _b) = zombie_setup(&env);
    // In the hooks directory of linked worktrees, where slots run it (issue 25).
    let hook = repo.join(".git/git-hand/hooks/reference-transaction");
    std::fs::remove_file(&hook).unwrap();
    let mut cmd = env.command(TestEnv::bin_dir().join("git-hand"), &slot);
    cmd.args(["status", "--json"])
        .env("GIT_HAND_LEASE", a["lease_id"].as_str().unwrap())
        .env("GIT_HAND_TOKEN", a["token"].to_string());
    let v = Run::from(cmd.output().unwrap()).json();
    let kinds: Vec<&str> = v["hooks"]["lapses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["reference-transaction"], "{v:#}");
    // What it warns about is real: the zombie's commit goes through.
    let run = commit_as(&env, &slot, Some(&a), "unfenced.txt");
    assert_eq!(run.code, 0, "{}", run.stderr);

    let v = env.hand(&repo, &["doctor", "--json"]).code(3).json();
    assert!(v.to_string().contains("(reference-transaction)"), "{v:#}");
    env.hand(&repo, &["doctor", "--repair"]).ok();
    assert!(hook.exists(), "doctor --repair reinstalled it");
    let run = commit_as(&env, &slot, Some(&a), "fenced.txt");
    assert_refused(&run, "stale", "the zombie's commit after the repair");
}

/// The admin dir id of the linked worktree at `dir` (`<common>/worktrees/<id>`).
fn worktree_id(env: &TestEnv, dir: &Path) -> String {
    let gd = env.git(dir, &["rev-parse", "--absolute-git-dir"]);
    Path::new(&gd)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn every_name_of_head_is_judged_alike_by_the_shim_and_by_git_hand() {
    use git_hand::hooks::HookName;
    use git_hand::ops::on_hook::ref_fence::{guards, parse_ref_lines};
    let env = TestEnv::new();
    // A leased slot as the shim sees it: a stamp in the admin dir git exports as GIT_DIR, and a
    // credential. No git-hand on PATH and none recorded: a line the shim judges fails closed
    // (exit 1), one it does not is let through (exit 0): the real shim, nothing stubbed.
    let admin = env.path("common/worktrees/slot");
    std::fs::create_dir_all(&admin).unwrap();
    std::fs::write(admin.join("git-hand-stamp"), "x\n").unwrap();
    let shim = env.path("hooks/reference-transaction");
    std::fs::create_dir_all(shim.parent().unwrap()).unwrap();
    std::fs::write(
        &shim,
        git_hand::hooks::shim::content_for(HookName::ReferenceTransaction, None),
    )
    .unwrap();
    let empty_path = env.path("no-bin");
    std::fs::create_dir_all(&empty_path).unwrap();
    let z = "0".repeat(40);
    let a = "a".repeat(40);
    let b = "b".repeat(40);
    // (old, new, name, judged)
    let table: &[(&str, &str, &str, bool)] = &[
        (&z, &a, "HEAD", true),
        (&a, &b, "HEAD", true),
        (&z, "ref:refs/heads/x", "HEAD", true),
        (&a, &a, "HEAD", false),
        (&z, &z, "refs/heads/gone", true),
        (&a, &b, "refs/heads/hand/b", true),
        (&a, &b, "refs/tags/t", true),
        (&a, &b, "refs/worktree/x", true),
        (&a, &b, "refs/bisect/bad", true),
        (&a, &b, "refs/rewritten/onto", true),
        (&z, &a, "refs/remotes/origin/x", false),
        (&a, &b, "worktrees/slot/HEAD", true),
        (&a, &b, "worktrees/other/HEAD", true),
        (&z, "ref:refs/heads/x", "worktrees/other/HEAD", true),
        (&a, &b, "worktrees/other/refs/bisect/bad", true),
        (&a, &b, "worktrees/other/refs/worktree/x", true),
        (&a, &b, "worktrees/other/ORIG_HEAD", true),
        (&a, &a, "worktrees/other/HEAD", false),
        (&a, &b, "main-worktree/HEAD", true),
        (&a, &b, "main-worktree/refs/bisect/bad", true),
        (&a, &b, "main-worktree/refs/worktree/x", true),
        (&a, &b, "main-worktree/ORIG_HEAD", true),
        // This worktree's own pseudo-refs: git's bookkeeping, never judged (a commit writes them).
        (&a, &b, "ORIG_HEAD", false),
        (&z, &a, "AUTO_MERGE", false),
        (&z, &a, "CHERRY_PICK_HEAD", false),
        (&z, &a, "BISECT_HEAD", false),
        (&z, &a, "FETCH_HEAD", false),
    ];
    for (old, new, name, judged) in table {
        let line = format!("{old} {new} {name}\n");
        let updates = parse_ref_lines(&line).unwrap();
        assert_eq!(
            guards(&updates[0]),
            *judged,
            "git-hand on {name} ({old} -> {new})"
        );
        // Run bare (it reads one line and exits; PATH is an empty directory, so not even
        // `timeout` could be found): only the variables the shim reads.
        let mut cmd = std::process::Command::new("/bin/sh");
        cmd.env_clear()
            .current_dir(env.path("."))
            .arg(&shim)
            .arg("prepared")
            .env("PATH", &empty_path)
            .env("GIT_DIR", &admin)
            .env("GIT_HAND_LEASE", "0123456789")
            .env("GIT_HAND_TOKEN", "1")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(line.as_bytes())
            .unwrap();
        let run = Run::from(child.wait_with_output().unwrap());
        assert_eq!(
            run.code != 0,
            *judged,
            "the shim on {name} ({old} -> {new}): {}",
            run.stderr
        );
    }
    // Whose ref a name is, from slot `slot`: another worktree's is refused even to its holder.
    use git_hand::ops::on_hook::ref_fence::other_worktree;
    for (name, own, other) in [
        ("HEAD", Some("slot"), false),
        ("refs/heads/x", Some("slot"), false),
        ("refs/worktree/x", Some("slot"), false),
        ("worktrees/slot/HEAD", Some("slot"), false),
        ("worktrees/slot/refs/bisect/bad", Some("slot"), false),
        ("worktrees/other/HEAD", Some("slot"), true),
        ("worktrees/other/refs/worktree/x", Some("slot"), true),
        ("main-worktree/HEAD", Some("slot"), true),
        ("main-worktree/refs/bisect/bad", Some("slot"), true),
        ("main-worktree/HEAD", None, false),
        ("worktrees/slot/HEAD", None, true),
    ] {
        assert_eq!(other_worktree(name, own), other, "{name} from {own:?}");
    }
}

#[test]
fn a_zombie_cannot_move_its_old_slots_head_or_the_main_worktrees_under_another_name() {
    let env = TestEnv::new();
    let (repo, slot, a, b) = zombie_setup(&env);
    let run = commit_as(&env, &slot, Some(&b), "b.txt");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let held = rev(&env, &slot, "HEAD");
    let main_head = rev(&env, &repo, "HEAD");
    let id = worktree_id(&env, &slot);
    // A commit of the zombie's own, on no ref.
    let tree = rev(&env, &slot, "HEAD^{tree}");
    let own = env.git(&slot, &["commit-tree", &tree, "-p", &held, "-m", "zombie"]);
    let names = [
        format!("worktrees/{id}/HEAD"),
        "main-worktree/HEAD".to_string(),
        format!("worktrees/{id}/refs/bisect/bad"),
        "refs/worktree/zombie".to_string(),
    ];
    for name in &names {
        let run = git_as(
            &env,
            &slot,
            Some(&a),
            &[],
            &["update-ref", "--no-deref", name, &own],
        );
        assert_refused(&run, "stale", &format!("update-ref {name}"));
    }
    assert_eq!(rev(&env, &slot, "HEAD"), held, "b's HEAD moved");
    assert_eq!(
        env.git(&slot, &["symbolic-ref", "HEAD"]),
        "refs/heads/hand/b",
        "b's HEAD was detached"
    );
    assert_eq!(
        rev(&env, &repo, "HEAD"),
        main_head,
        "the main worktree moved"
    );
    assert_eq!(
        env.git(&repo, &["symbolic-ref", "HEAD"]),
        "refs/heads/main",
        "the main worktree was detached"
    );
    assert_no_locks(&repo);
}

#[test]
fn a_holder_of_one_slot_cannot_move_another_slots_head_or_the_main_worktrees() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.hand(&repo, &["install"]).ok();
    let x = spawn(&env, &repo, "x", &[]);
    let y = spawn(&env, &repo, "y", &[]);
    let (x_slot, y_slot) = (path_of(&x), path_of(&y));
    let (x_id, y_id) = (worktree_id(&env, &x_slot), worktree_id(&env, &y_slot));
    let run = commit_as(&env, &x_slot, Some(&x), "x.txt");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let x_tip = rev(&env, &x_slot, "HEAD");
    let y_tip = rev(&env, &y_slot, "HEAD");
    let main_tip = rev(&env, &repo, "HEAD");
    for name in [
        format!("worktrees/{y_id}/HEAD"),
        format!("worktrees/{y_id}/refs/worktree/x"),
        "main-worktree/HEAD".to_string(),
        "main-worktree/refs/bisect/bad".to_string(),
    ] {
        let run = git_as(
            &env,
            &x_slot,
            Some(&x),
            &[],
            &["update-ref", "--no-deref", &name, &x_tip],
        );
        assert_ne!(run.code, 0, "x moved {name}");
        assert!(
            run.stderr.contains(&format!(
                "git-hand: ref update refused: {name} is another worktree's HEAD or ref"
            )),
            "{name}: {}",
            run.stderr
        );
        assert!(!run.stderr.contains("--no-verify"), "{}", run.stderr);
    }
    // A symbolic-ref update of y's HEAD (a switch made from x) is refused too.
    let run = git_as(
        &env,
        &x_slot,
        Some(&x),
        &[],
        &[
            "symbolic-ref",
            &format!("worktrees/{y_id}/HEAD"),
            "refs/heads/hand/x",
        ],
    );
    assert_ne!(run.code, 0, "x switched y's HEAD: {}", run.stderr);
    assert_eq!(rev(&env, &y_slot, "HEAD"), y_tip);
    assert_eq!(
        env.git(&y_slot, &["symbolic-ref", "HEAD"]),
        "refs/heads/hand/y"
    );
    assert_eq!(rev(&env, &repo, "HEAD"), main_tip);
    assert_eq!(env.git(&repo, &["symbolic-ref", "HEAD"]), "refs/heads/main");
    // x's own HEAD under its other name, and its own per-worktree refs, are x's to move.
    for name in [
        format!("worktrees/{x_id}/HEAD"),
        "refs/worktree/mine".into(),
    ] {
        let run = git_as(
            &env,
            &x_slot,
            Some(&x),
            &[],
            &["update-ref", "--no-deref", &name, &x_tip],
        );
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
    }
    assert_no_locks(&repo);
}

#[test]
fn a_fence_switched_off_from_the_command_line_or_the_environment_stays_on() {
    let env = TestEnv::new();
    let (repo, slot, a, _b) = zombie_setup(&env);
    let held = rev(&env, &slot, "hand/b");
    // What an agent inherits from a `git -c ...` that started it: GIT_CONFIG_PARAMETERS, or
    // GIT_CONFIG_COUNT and its pairs.
    let inherited: [&[(&str, &str)]; 2] = [
        &[(
            "GIT_CONFIG_PARAMETERS",
            "'hand.fenceRefs'='false' 'hand.fenceBranches'='false'",
        )],
        &[
            ("GIT_CONFIG_COUNT", "2"),
            ("GIT_CONFIG_KEY_0", "hand.fenceRefs"),
            ("GIT_CONFIG_VALUE_0", "false"),
            ("GIT_CONFIG_KEY_1", "hand.fenceBranches"),
            ("GIT_CONFIG_VALUE_1", "false"),
        ],
    ];
    for extra in inherited {
        let run = git_as(
            &env,
            &slot,
            Some(&a),
            extra,
            &["commit", "--allow-empty", "-q", "-m", "zombie"],
        );
        assert_refused(&run, "stale", &format!("a commit with {extra:?}"));
    }
    let run = git_as(
        &env,
        &slot,
        Some(&a),
        &[],
        &[
            "-c",
            "hand.fenceRefs=false",
            "commit",
            "--allow-empty",
            "-q",
            "-m",
            "z",
        ],
    );
    assert_refused(&run, "stale", "git -c hand.fenceRefs=false commit");
    assert_eq!(rev(&env, &slot, "hand/b"), held);
    // The repository's own configuration still switches it off.
    env.git(&repo, &["config", "hand.fenceRefs", "false"]);
    let run = git_as(
        &env,
        &slot,
        Some(&a),
        &[],
        &["commit", "--allow-empty", "-q", "-m", "zombie"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn an_inherited_re_entry_marker_does_not_switch_the_fence_off() {
    let env = TestEnv::new();
    let (_repo, slot, a, _b) = zombie_setup(&env);
    let held = rev(&env, &slot, "hand/b");
    // An agent started from inside a chained hook carries the marker, bound to the PATH the
    // hook had (git's exec path in front of the PATH git was started with), and that PATH: the
    // git it runs puts its exec path in front of it once more.
    let exec_path = env.git(&slot, &["--exec-path"]);
    let hooks_path = format!(
        "{}:{}:{SYSTEM_PATH}",
        exec_path.trim(),
        TestEnv::bin_dir().display()
    );
    for hook in ["reference-transaction", "pre-push", "post-checkout"] {
        let run = git_as(
            &env,
            &slot,
            Some(&a),
            &[
                ("PATH", &hooks_path),
                ("GIT_HAND_IN_HOOK", hook),
                ("GIT_HAND_IN_HOOK_PATH", &hooks_path),
            ],
            &["commit", "--allow-empty", "-q", "-m", "zombie"],
        );
        if hook == "reference-transaction" {
            assert_refused(&run, "stale", "a commit under an inherited marker");
        }
        assert_eq!(rev(&env, &slot, "hand/b"), held, "{hook}");
    }
    let mut cmd = env.contained("git", &slot);
    cmd.args(["push", "-q", "origin", "HEAD:refs/heads/zombie"])
        .env("GIT_HAND_IN_HOOK", "pre-push");
    for (k, v) in crate::support::cred(&a) {
        cmd.env(k, v);
    }
    let run = Run::from(cmd.output().unwrap());
    assert_ne!(run.code, 0, "a push under an inherited marker went out");
    assert!(
        run.stderr.contains("git-hand: push refused (stale)"),
        "{}",
        run.stderr
    );
}
