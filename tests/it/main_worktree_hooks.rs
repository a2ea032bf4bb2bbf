//! The fence costs nothing where nothing is fenced (issue 25): git-hand's reference-transaction
//! hook lives in the hooks directory of linked worktrees only (L, `<common>/git-hand/hooks`,
//! reached through `[includeIf "gitdir:./worktrees/**"]`), so the main worktree's fetch and
//! commit start neither it nor git-hand, while its push still runs the branch fence; slots are
//! still fenced, still run the user's hooks of `.git/hooks` (D), also one added later; an older
//! layout is reported, repaired and migrated; uninstall gives `.git/config` back byte for byte;
//! a moved repository and a `core.hooksPath` set later are handled.
//!
//! What starts is counted two ways, neither a timing: git's own trace of the hooks it runs
//! (`GIT_TRACE2_EVENT`, one `child_start` of class `hook` per start) and a `git-hand` first on
//! `PATH` that records each of its starts before it execs the real binary (the shims run the
//! `git-hand` on `PATH` first).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use git_hand::hooks::HookName;
use git_hand::hooks::shim::content_for;
use serde_json::Value;

use crate::support::{
    BIN, Run, SYSTEM_PATH, TestEnv, commit_file_with, cred, git_with, hooks_dir, installed,
    leased_again, path_of, remote_oid, spawn, write_hook,
};

/// `<common>/git-hand`: git-hand's own directory of the layout.
fn own_dir(repo: &Path) -> PathBuf {
    repo.join(".git/git-hand")
}

/// L: the hooks directory of linked worktrees.
fn linked_dir(repo: &Path) -> PathBuf {
    own_dir(repo).join("hooks")
}

/// The section's key as `git config` names it.
const INCLUDE_KEY: &str = "includeIf.gitdir:./worktrees/**.path";

/// What `<common>/config` includes for linked worktrees, if anything (read by git, not as text).
fn included(env: &TestEnv, repo: &Path) -> Option<String> {
    let run = env.git_run(repo, &["config", "-f", ".git/config", "--get", INCLUDE_KEY]);
    (run.code == 0).then(|| run.stdout.trim_end().to_string())
}

/// The real binary, as the shims it writes record it.
fn bin() -> PathBuf {
    std::fs::canonicalize(BIN).unwrap()
}

/// git-hand's reference-transaction shim as this binary writes it.
fn reftx_shim() -> String {
    content_for(HookName::ReferenceTransaction, Some(&bin()))
}

/// What one counted git command started.
#[derive(Debug, Default)]
struct Starts {
    /// The path of each reference-transaction hook git started (from git's trace).
    reftx_hooks: Vec<String>,
    /// The arguments of each start of `git-hand` (from the fake on `PATH`).
    git_hand: Vec<String>,
}

/// Runs git commands with git's hook trace on and a recording `git-hand` first on `PATH`.
struct Counted {
    fake_dir: PathBuf,
    marker: PathBuf,
    trace: PathBuf,
}

impl Counted {
    fn new(env: &TestEnv) -> Self {
        let fake_dir = env.path("fake-bin");
        let marker = env.path("git-hand-starts");
        let script = format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            marker.display(),
            bin().display()
        );
        write_hook(&fake_dir.join("git-hand"), &script, 0o755);
        Self {
            fake_dir,
            marker,
            trace: env.path("trace2.events"),
        }
    }

    /// `git ARGS` in `dir`, contained, with `vars` (a credential, or nothing): its run and what
    /// it started.
    fn git(
        &self,
        env: &TestEnv,
        dir: &Path,
        vars: &[(String, String)],
        args: &[&str],
    ) -> (Run, Starts) {
        for file in [&self.marker, &self.trace] {
            let _ = std::fs::remove_file(file);
        }
        let path = format!(
            "{}:{}:{SYSTEM_PATH}",
            self.fake_dir.display(),
            TestEnv::bin_dir().display()
        );
        let mut cmd = env.contained("git", dir);
        cmd.args(args)
            .env("PATH", path)
            .env("GIT_TRACE2_EVENT", &self.trace);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let run = Run::from(cmd.output().unwrap());
        (run, self.starts())
    }

    fn starts(&self) -> Starts {
        let trace = std::fs::read_to_string(&self.trace).unwrap_or_default();
        let reftx_hooks = trace
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|e| {
                e["event"] == "child_start"
                    && e["child_class"] == "hook"
                    && e["hook_name"] == "reference-transaction"
            })
            .map(|e| e["argv"][0].as_str().unwrap().to_string())
            .collect();
        let git_hand = std::fs::read_to_string(&self.marker)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect();
        Starts {
            reftx_hooks,
            git_hand,
        }
    }
}

/// `git update-ref --stdin` in `git_dir` with `lines`.
fn update_refs(env: &TestEnv, git_dir: &Path, lines: &str) {
    let mut child = env
        .timed("git", git_dir)
        .args(["update-ref", "--stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(lines.as_bytes())
        .unwrap();
    Run::from(child.wait_with_output().unwrap()).ok();
}

/// The update-ref lines that set 50 branches `many/N` and 50 tags `many/N` to `oid`.
fn hundred_refs_at(oid: &str) -> String {
    (0..50)
        .flat_map(|n| {
            [
                format!("update refs/heads/many/{n} {oid}\n"),
                format!("update refs/tags/many/{n} {oid}\n"),
            ]
        })
        .collect()
}

/// The fetch that brings the 100 refs of [`hundred_refs_at`] over, forced.
const FETCH_MANY: &[&str] = &[
    "fetch",
    "-q",
    "origin",
    "+refs/heads/many/*:refs/remotes/origin/many/*",
    "+refs/tags/many/*:refs/tags/many/*",
];

/// [`support::assert_zombie_commit_refused`], then the staged file dropped: the slot clean for
/// the next step.
#[track_caller]
fn assert_zombie_commit_refused(env: &TestEnv, slot: &Path, zombie: &Value, file: &str) {
    crate::support::assert_zombie_commit_refused(env, slot, zombie, file);
    env.git(slot, &["reset", "-q", "--hard"]);
}

/// The `detail`s of the `hooks-not-in-force` problems `git hand doctor ARGS --json` reports,
/// which must exit with `code`.
fn hooks_problems(env: &TestEnv, repo: &Path, args: &[&str], code: i32) -> Vec<String> {
    let mut all = vec!["doctor"];
    all.extend(args);
    all.push("--json");
    let v = env.hand(repo, &all).code(code).json();
    v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["kind"] == "hooks-not-in-force")
        .map(|p| p["detail"].as_str().unwrap().to_string())
        .collect()
}

/// A hook that appends its `$0` (the path git, or a forwarder, ran it by) to `log`.
fn recording_hook(log: &Path) -> String {
    format!("#!/bin/sh\nprintf '%s\\n' \"$0\" >> '{}'\n", log.display())
}

#[test]
fn the_main_worktrees_fetch_of_100_refs_and_commit_start_no_git_hand_and_its_push_only_pre_push() {
    let (env, repo) = installed();
    let live = spawn(&env, &repo, "live", &[]);
    let counted = Counted::new(&env);
    assert!(
        !hooks_dir(&repo).join("reference-transaction").exists(),
        "the main worktree's hooks directory holds a reference-transaction hook"
    );

    // A commit in the main worktree.
    std::fs::write(repo.join("main.txt"), "main\n").unwrap();
    env.git(&repo, &["add", "main.txt"]);
    let (run, starts) = counted.git(&env, &repo, &[], &["commit", "-q", "-m", "in main"]);
    run.ok();
    assert_eq!(starts.reftx_hooks, Vec::<String>::new(), "commit in main");
    assert_eq!(starts.git_hand, Vec::<String>::new(), "commit in main");
    let (first, second) = (
        env.git(&repo, &["rev-parse", "HEAD~1"]),
        env.git(&repo, &["rev-parse", "HEAD"]),
    );

    // Its push still runs git-hand, once, for pre-push: the branch fence.
    let (run, starts) = counted.git(&env, &repo, &[], &["push", "-q", "origin", "HEAD:feature"]);
    run.ok();
    assert_eq!(starts.reftx_hooks, Vec::<String>::new(), "push from main");
    assert_eq!(starts.git_hand.len(), 1, "{:?}", starts.git_hand);
    assert!(
        starts.git_hand[0].starts_with("hook pre-push origin "),
        "{:?}",
        starts.git_hand
    );

    // Fetches that create, then move, 100 refs (50 branches, 50 tags) of a bare remote.
    let origin = env.path("work/app-origin.git");
    for oid in [&first, &second] {
        update_refs(&env, &origin, &hundred_refs_at(oid));
        let (run, starts) = counted.git(&env, &repo, &[], FETCH_MANY);
        run.ok();
        assert_eq!(starts.reftx_hooks, Vec::<String>::new(), "fetch to {oid}");
        assert_eq!(starts.git_hand, Vec::<String>::new(), "fetch to {oid}");
        let fetched = env.git(
            &repo,
            &[
                "for-each-ref",
                "--format=%(objectname)",
                "refs/remotes/origin/many",
                "refs/tags/many",
            ],
        );
        assert_eq!(fetched.lines().filter(|l| l == oid).count(), 100);
    }

    // The counters count: in the slot, the holder's commit starts L's shim and git-hand.
    let slot = path_of(&live);
    std::fs::write(slot.join("slot.txt"), "slot\n").unwrap();
    env.git(&slot, &["add", "slot.txt"]);
    let (run, starts) = counted.git(&env, &slot, &cred(&live), &["commit", "-q", "-m", "slot"]);
    run.ok();
    let l_shim = linked_dir(&repo).join("reference-transaction");
    assert!(
        !starts.reftx_hooks.is_empty() && starts.reftx_hooks.iter().all(|p| Path::new(p) == l_shim),
        "{:?}",
        starts.reftx_hooks
    );
    assert!(
        starts
            .git_hand
            .iter()
            .any(|s| s.starts_with("hook reference-transaction prepared")),
        "{:?}",
        starts.git_hand
    );
}

#[test]
fn a_zombie_in_a_slot_is_refused_at_commit_and_at_push() {
    let (env, repo) = installed();
    let (slot, a, b) = leased_again(&env, &repo, "a", "b");
    assert_zombie_commit_refused(&env, &slot, &a, "zombie.txt");
    let origin = env.path("work/app-origin.git");
    let push = git_with(
        &env,
        &slot,
        &cred(&a),
        &["push", "origin", "HEAD:refs/heads/zombie"],
    );
    assert_ne!(
        push.code, 0,
        "the zombie's push went through:\n{}",
        push.stderr
    );
    assert!(push.stderr.contains("stale"), "{}", push.stderr);
    assert_eq!(remote_oid(&env, &origin, "zombie"), None);
    // The holder's own commit and push pass: the refusals are the zombie's.
    commit_file_with(&env, &slot, &cred(&b), "b.txt").ok();
    git_with(
        &env,
        &slot,
        &cred(&b),
        &["push", "-q", "origin", "HEAD:refs/heads/hand/b"],
    )
    .ok();
}

#[test]
fn a_push_from_the_main_worktree_to_a_live_tasks_branch_is_refused() {
    let (env, repo) = installed();
    spawn(&env, &repo, "b", &[]);
    let head = env.commit(&repo, "main.txt", "main\n");
    let origin = env.path("work/app-origin.git");
    let before = remote_oid(&env, &origin, "hand/b");
    let run = git_with(
        &env,
        &repo,
        &[],
        &["push", "origin", &format!("{head}:refs/heads/hand/b")],
    );
    assert_ne!(run.code, 0, "the push went through:\n{}", run.stderr);
    assert!(
        run.stderr.contains("belongs to live task b"),
        "{}",
        run.stderr
    );
    assert_eq!(remote_oid(&env, &origin, "hand/b"), before);
}

#[test]
fn a_users_hook_runs_in_a_slot_also_one_added_later_and_the_next_spawn_forwards_it() {
    let (env, repo) = installed();
    let log = env.path("hooks-ran");
    let hook = recording_hook(&log);
    let d = hooks_dir(&repo);
    write_hook(&d.join("pre-commit"), &hook, 0o755);
    let a = spawn(&env, &repo, "a", &[]);
    let slot = path_of(&a);
    let ran = || std::fs::read_to_string(&log).unwrap_or_default();

    commit_file_with(&env, &slot, &cred(&a), "one.txt").ok();
    assert_eq!(ran(), format!("{}\n", d.join("pre-commit").display()));

    // Added to D after the slot was made: L's link to it, dangling until now, runs it.
    write_hook(&d.join("post-commit"), &hook, 0o755);
    let l_entry = linked_dir(&repo).join("post-commit");
    assert!(l_entry.is_symlink(), "L/post-commit is no link");
    std::fs::remove_file(&log).unwrap();
    commit_file_with(&env, &slot, &cred(&a), "two.txt").ok();
    assert_eq!(
        ran(),
        format!(
            "{}\n{}\n",
            d.join("pre-commit").display(),
            l_entry.display()
        )
    );

    // The next spawn syncs L: a forwarder, so the hook runs as D's (its `$0`).
    spawn(&env, &repo, "c", &[]);
    assert!(!l_entry.is_symlink(), "L/post-commit is still a link");
    std::fs::remove_file(&log).unwrap();
    commit_file_with(&env, &slot, &cred(&a), "three.txt").ok();
    assert_eq!(
        ran(),
        format!(
            "{}\n{}\n",
            d.join("pre-commit").display(),
            d.join("post-commit").display()
        )
    );
}

/// Turns the layout back into the one before issue 25: no section, no `.git/git-hand`, and
/// git-hand's reference-transaction shim in D.
fn to_old_layout(env: &TestEnv, repo: &Path) {
    env.git(
        repo,
        &[
            "config",
            "-f",
            ".git/config",
            "--remove-section",
            "includeIf.gitdir:./worktrees/**",
        ],
    );
    std::fs::remove_dir_all(own_dir(repo)).unwrap();
    write_hook(
        &hooks_dir(repo).join("reference-transaction"),
        &reftx_shim(),
        0o755,
    );
}

/// The layout after a migration: the section back, D without git-hand's reference-transaction
/// shim, L with it.
#[track_caller]
fn assert_migrated(env: &TestEnv, repo: &Path) {
    assert_eq!(
        included(env, repo).as_deref(),
        Some("git-hand/linked.config")
    );
    assert!(
        !hooks_dir(repo).join("reference-transaction").exists(),
        "D still holds the reference-transaction shim"
    );
    let l_shim = linked_dir(repo).join("reference-transaction");
    assert_eq!(std::fs::read_to_string(&l_shim).unwrap(), reftx_shim());
    assert_eq!(crate::support::mode(&l_shim) & 0o111, 0o111);
}

#[test]
fn slots_made_before_the_change_are_reported_repaired_by_doctor_and_fenced() {
    let (env, repo) = installed();
    let (slot, a, _b) = leased_again(&env, &repo, "a", "b");
    to_old_layout(&env, &repo);

    let found = hooks_problems(&env, &repo, &[], 3);
    assert!(
        found.iter().any(|d| d.ends_with("(linked-hooks)")),
        "{found:#?}"
    );
    let status = env.hand(&repo, &["status", "--json"]).ok();
    let status: Value = serde_json::from_str(&status).unwrap();
    let kinds: Vec<&Value> = status["hooks"]["lapses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| &l["kind"])
        .collect();
    assert!(kinds.contains(&&Value::from("linked-hooks")), "{status:#}");

    env.hand(&repo, &["doctor", "--repair"]).ok();
    assert_migrated(&env, &repo);
    assert_eq!(hooks_problems(&env, &repo, &[], 0), Vec::<String>::new());
    assert_zombie_commit_refused(&env, &slot, &a, "zombie.txt");
}

#[test]
fn slots_made_before_the_change_are_migrated_by_the_next_spawn() {
    let (env, repo) = installed();
    let (slot, a, _b) = leased_again(&env, &repo, "a", "b");
    to_old_layout(&env, &repo);
    spawn(&env, &repo, "c", &[]);
    assert_migrated(&env, &repo);
    assert_zombie_commit_refused(&env, &slot, &a, "zombie.txt");
}

/// The `[hand]` section a user's config may start with: uninstall then adds its key there, so
/// the end of the file, where install appended the includeIf section, is uninstall's alone to
/// give back (with no `[hand]` section, uninstall's own append hides a newline left behind: git
/// starts an appended section on a line of its own anyway).
const HAND_FIRST: &str = "[hand]\n\tmaxSlots = 16\n";

/// A repository whose `.git/config` ends in a newline or not (and starts with [`HAND_FIRST`] or
/// not), git-hand installed, a task spawned, then uninstalled: the config must be what it was
/// but for `hand.installHooks = false`, which uninstall writes, and `.git/git-hand` gone.
fn uninstall_gives_the_config_back(final_newline: bool, hand_first: bool) {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let config = repo.join(".git/config");
    let mut before = std::fs::read(&config).unwrap();
    if hand_first {
        before.splice(0..0, HAND_FIRST.bytes());
    }
    if !final_newline {
        while before.last() == Some(&b'\n') {
            before.pop();
        }
    }
    std::fs::write(&config, &before).unwrap();
    env.hand(&repo, &["install"]).ok();
    spawn(&env, &repo, "a", &[]);
    assert!(included(&env, &repo).is_some(), "install wrote no section");
    env.hand(&repo, &["uninstall"]).ok();
    let before = String::from_utf8(before).unwrap();
    let want = match (hand_first, final_newline) {
        (true, _) => before.replacen(
            HAND_FIRST,
            &format!("{HAND_FIRST}\tinstallHooks = false\n"),
            1,
        ),
        (false, true) => format!("{before}[hand]\n\tinstallHooks = false\n"),
        // git's writer starts the section it appends on a line of its own.
        (false, false) => format!("{before}\n[hand]\n\tinstallHooks = false\n"),
    };
    let after = String::from_utf8(std::fs::read(&config).unwrap()).unwrap();
    assert_eq!(
        after, want,
        "final newline: {final_newline}, [hand] first: {hand_first}"
    );
    assert!(
        std::fs::symlink_metadata(own_dir(&repo)).is_err(),
        ".git/git-hand is still there"
    );
}

#[test]
fn uninstall_gives_back_the_config_byte_for_byte_and_removes_git_hands_directory() {
    uninstall_gives_the_config_back(true, false);
    uninstall_gives_the_config_back(true, true);
}

#[test]
fn uninstall_gives_back_a_config_without_a_final_newline_byte_for_byte() {
    uninstall_gives_the_config_back(false, true);
    uninstall_gives_the_config_back(false, false);
}

#[test]
fn a_moved_repository_is_reported_and_repaired_by_doctor_and_its_slots_fenced_again() {
    let (env, old) = installed();
    let (slot, a, _b) = leased_again(&env, &old, "a", "b");
    let repo = old.with_file_name("moved");
    std::fs::rename(&old, &repo).unwrap();
    // As a user would: git's own repair of the slot's link to the moved repository.
    env.git(&repo, &["worktree", "repair", slot.to_str().unwrap()]);
    assert_eq!(
        env.git(&slot, &["rev-parse", "--git-common-dir"]),
        repo.join(".git").display().to_string()
    );

    // status sees the lapse of the slots' hooks in the moved repository...
    let status: Value = serde_json::from_str(&env.hand(&repo, &["status", "--json"]).ok()).unwrap();
    assert!(
        status["hooks"]["lapses"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["kind"] == "hooks-path"),
        "{status:#}"
    );
    // ...and doctor must report it.
    let found = hooks_problems(&env, &repo, &[], 3);
    assert!(
        found.iter().any(|d| d.contains("linked.config")),
        "no lapse for the slots' hooks: {found:#?}"
    );
    env.hand(&repo, &["doctor", "--repair"]).ok();
    let config = std::fs::read_to_string(own_dir(&repo).join("linked.config")).unwrap();
    assert!(
        config.contains(&format!("hooksPath = \"{}\"", linked_dir(&repo).display())),
        "{config}"
    );
    assert_eq!(hooks_problems(&env, &repo, &[], 0), Vec::<String>::new());
    assert_zombie_commit_refused(&env, &slot, &a, "zombie.txt");
}

/// A `core.hooksPath` (an absolute directory every worktree shares, with a pre-commit that
/// records `$0`) set after install and a slot made before it; `drop` is what should then take
/// git-hand's layout away: the section and `.git/git-hand` go, the slot runs that directory's
/// hooks as the main worktree does, and doctor reports the hooks-path lapse as before.
fn a_hooks_path_set_after_install_is_followed_by_slots_after(drop: impl Fn(&TestEnv, &Path)) {
    let (env, repo) = installed();
    let a = spawn(&env, &repo, "a", &[]);
    let slot = path_of(&a);
    let shared = env.path("shared-hooks");
    let log = env.path("hooks-ran");
    let hook = recording_hook(&log);
    write_hook(&shared.join("pre-commit"), &hook, 0o755);
    env.git(
        &repo,
        &["config", "core.hooksPath", shared.to_str().unwrap()],
    );

    drop(&env, &repo);
    assert_eq!(included(&env, &repo), None, "the section is still there");
    assert!(
        std::fs::symlink_metadata(own_dir(&repo)).is_err(),
        ".git/git-hand is still there"
    );
    assert_eq!(
        env.git(&slot, &["rev-parse", "--git-path", "hooks"]),
        shared.display().to_string()
    );
    commit_file_with(&env, &slot, &cred(&a), "one.txt").ok();
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        format!("{}\n", shared.join("pre-commit").display())
    );
    let found = hooks_problems(&env, &repo, &[], 3);
    assert!(
        found.iter().any(|d| d.ends_with("(hooks-path)")),
        "{found:#?}"
    );
}

#[test]
fn a_hooks_path_set_after_install_drops_the_layout_at_the_next_spawn_and_slots_follow_it() {
    a_hooks_path_set_after_install_is_followed_by_slots_after(|env, repo| {
        spawn(env, repo, "b", &[]);
    });
}

#[test]
fn a_hooks_path_set_after_install_drops_the_layout_at_doctor_repair_and_slots_follow_it() {
    a_hooks_path_set_after_install_is_followed_by_slots_after(|env, repo| {
        // What is left needs the user's hand (their hook manager's recipe): exit 3.
        env.hand(repo, &["doctor", "--repair"]).code(3);
    });
}

/// An install killed at each step of writing the layout over an older one: the slot stays fenced
/// in every state it can be left in, and the next install finishes the migration.
#[test]
fn an_install_killed_at_each_step_of_the_migration_leaves_slots_fenced_and_is_finished_later() {
    for point in [
        "install-after-sync",
        "install-after-include",
        "install-after-migration",
    ] {
        let (env, repo) = installed();
        let (slot, a, _b) = leased_again(&env, &repo, "a", "b");
        to_old_layout(&env, &repo);
        let run = env.hand_env(&repo, &["install"], &[("GIT_HAND_FAILPOINT", point)]);
        assert!(
            run.code != 0 && run.stderr.contains(&format!("failpoint {point} hit")),
            "{point}: the failpoint did not fire: {}",
            run.stderr
        );
        assert_zombie_commit_refused(&env, &slot, &a, &format!("zombie-{point}.txt"));
        env.hand(&repo, &["install"]).ok();
        assert_migrated(&env, &repo);
        assert_zombie_commit_refused(&env, &slot, &a, &format!("after-{point}.txt"));
    }
}
