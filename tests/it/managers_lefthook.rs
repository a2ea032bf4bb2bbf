//! git-hand beside lefthook (the real tool, npm `lefthook`) and beside a hand-written hook: both
//! install orders, lefthook re-syncing, uninstall, a stale push from a slot, the manager's own
//! hooks in the main worktree and in slots, and no recursion. Every push runs contained (its own
//! PID namespace under a kill timeout), so a hook that recursed fails the test instead of the
//! machine.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{
    Run, TestEnv, hooks_dir, hooks_snapshot, leased_again, path_of, remote_oid, spawn, tool,
};

/// `git push ARGS` in `dir`, contained, as the holder of `cred` when given.
pub fn push(env: &TestEnv, dir: &Path, cred: Option<&Value>, args: &[&str]) -> Run {
    let mut cmd = env.contained("git", dir);
    cmd.arg("push").args(args).env("NO_COLOR", "1");
    if let Some(c) = cred {
        cmd.env("GIT_HAND_LEASE", c["lease_id"].as_str().unwrap())
            .env("GIT_HAND_TOKEN", c["token"].to_string());
    }
    Run::from(cmd.output().unwrap())
}

/// The fence, told as a zombie would meet it: task a spawns and is torn down, task b gets the same
/// slot, and a's holder pushes from there with a's credential: refused, the remote untouched. b's
/// own push goes through. Returns b's slot and spawn output.
pub fn a_stale_push_from_a_slot_is_refused(
    env: &TestEnv,
    repo: &Path,
    origin: &Path,
) -> (PathBuf, Value) {
    let (slot, a, b) = leased_again(env, repo, "fence-a", "fence-b");
    env.commit(&slot, "zombie.txt", "from a, late\n");
    let run = push(
        env,
        &slot,
        Some(&a),
        &["origin", "HEAD:refs/heads/hand/fence-b"],
    );
    assert_ne!(run.code, 0, "the stale push went through:\n{}", run.stderr);
    assert!(
        run.stderr.contains("git-hand: push refused (stale)"),
        "{}",
        run.stderr
    );
    // One verdict, however many hooks of the chain call git-hand.
    assert_eq!(
        run.stderr.matches("git-hand: push refused").count(),
        1,
        "{}",
        run.stderr
    );
    assert_eq!(
        remote_oid(env, origin, "hand/fence-b"),
        None,
        "{}",
        run.stderr
    );
    let run = push(
        env,
        &slot,
        Some(&b),
        &["origin", "HEAD:refs/heads/hand/fence-b"],
    );
    assert_eq!(run.code, 0, "b's own push was refused:\n{}", run.stderr);
    assert_eq!(
        run.stderr.matches("git-hand: push refused").count(),
        0,
        "{}",
        run.stderr
    );
    (slot, b)
}

/// What `git hand install --manual --json` prints for `manager`.
pub fn recipe(env: &TestEnv, repo: &Path, manager: &str) -> String {
    let run = env.hand(repo, &["install", "--manual", "--json"]);
    let v = Run::json(&run);
    // One recipe for the manager in use (`manager`, `recipe`), or one per manager (`manual`).
    let one = (v["manager"] == manager)
        .then(|| v["recipe"].as_str())
        .flatten();
    one.or_else(|| v["manual"][manager].as_str())
        .unwrap_or_else(|| panic!("no {manager} recipe in {}", run.stdout))
        .to_string()
}

/// Applies the lefthook recipe exactly as printed: its shell part runs in the repository, its
/// YAML is added to lefthook.yml.
fn apply_lefthook_recipe(env: &TestEnv, repo: &Path) {
    let text = recipe(env, repo, "lefthook");
    let yaml_at = text.find("\npre-push:").expect("the recipe has YAML") + 1;
    let (shell, yaml) = text.split_at(yaml_at);
    let run = Run::from(
        env.command("sh", repo)
            .args(["-c", shell])
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, 0, "{shell}: {}", run.stderr);
    let config = repo.join("lefthook.yml");
    let mut content = std::fs::read_to_string(&config).unwrap_or_default();
    content.push_str(yaml);
    std::fs::write(&config, content).unwrap();
}

/// A repository whose lefthook runs a team script on every push (recording where it ran in
/// `<env>/lefthook-ran`), with git-hand's lefthook recipe applied when `with_recipe`, committed so
/// every slot has it.
pub fn lefthook_repo(env: &TestEnv, with_recipe: bool) -> (PathBuf, PathBuf) {
    let repo = env.repo("app");
    let origin = env.path("work/app-origin.git");
    let marker = env.path("lefthook-ran");
    std::fs::create_dir_all(repo.join(".lefthook/pre-push")).unwrap();
    std::fs::write(
        repo.join(".lefthook/pre-push/team"),
        format!("pwd >> '{}'\n", marker.display()),
    )
    .unwrap();
    std::fs::write(
        repo.join("lefthook.yml"),
        "pre-push:\n  scripts:\n    team:\n      runner: sh\n",
    )
    .unwrap();
    if with_recipe {
        apply_lefthook_recipe(env, &repo);
        // One file holds both: the team's script and git-hand's.
        let config = std::fs::read_to_string(repo.join("lefthook.yml")).unwrap();
        let merged = config.replacen(
            "pre-push:\n  scripts:\n    team:\n      runner: sh\npre-push:\n  scripts:\n",
            "pre-push:\n  scripts:\n    team:\n      runner: sh\n",
            1,
        );
        std::fs::write(repo.join("lefthook.yml"), merged).unwrap();
    }
    env.git(&repo, &["add", "-A"]);
    env.git(&repo, &["commit", "-q", "-m", "lefthook"]);
    env.git(&repo, &["push", "-q", "origin", "main"]);
    (repo, origin)
}

/// Where lefthook's team script ran, one directory per line.
pub fn lefthook_ran(env: &TestEnv) -> Vec<PathBuf> {
    std::fs::read_to_string(env.path("lefthook-ran"))
        .unwrap_or_default()
        .lines()
        .map(|l| std::fs::canonicalize(l).unwrap())
        .collect()
}

/// lefthook's own hook runs in the main worktree and in `slot`, and pushes go through there.
fn lefthook_runs_in_main_and_slot(env: &TestEnv, repo: &Path, slot: &Path) {
    let before = lefthook_ran(env).len();
    env.commit(repo, "main.txt", "main\n");
    let run = push(env, repo, None, &["origin", "main"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let ran = lefthook_ran(env);
    assert_eq!(
        ran.len(),
        before + 1,
        "lefthook did not run once in main: {}",
        run.stderr
    );
    assert_eq!(ran.last().unwrap(), repo);
    assert!(
        ran.iter().any(|d| d == slot),
        "lefthook never ran in the slot {}: {ran:?}",
        slot.display()
    );
}

#[test]
fn lefthook_first_then_git_hand_fences_slots_runs_lefthook_once_and_uninstalls_byte_identical() {
    let env = TestEnv::new().with_hook_tools();
    let (repo, origin) = lefthook_repo(&env, true);
    tool(&env, &repo, "lefthook", &["install"]).ok();
    let lefthook_only = hooks_snapshot(&hooks_dir(&repo));

    let (slot, _) = a_stale_push_from_a_slot_is_refused(&env, &repo, &origin);
    lefthook_runs_in_main_and_slot(&env, &repo, &slot);
    let runs_in_slot = lefthook_ran(&env).iter().filter(|d| *d == &slot).count();
    assert_eq!(
        runs_in_slot, 2,
        "lefthook ran once per push from the slot (the refused one too)"
    );

    env.hand(&repo, &["uninstall"]).ok();
    assert_eq!(hooks_snapshot(&hooks_dir(&repo)), lefthook_only);
}

#[test]
fn git_hand_first_then_lefthook_still_fences_and_uninstall_leaves_lefthooks_setup() {
    let env = TestEnv::new().with_hook_tools();
    let (repo, origin) = lefthook_repo(&env, true);
    env.hand(&repo, &["install"]).ok();
    // lefthook renames git-hand's shims to <hook>.old and puts its own launcher in place.
    tool(&env, &repo, "lefthook", &["install"]).ok();
    assert!(hooks_dir(&repo).join("pre-push.old").exists());

    // Spawn puts git-hand's shim back in front of lefthook's launcher and drops the renamed
    // copy, so lefthook's next re-sync is not blocked by it; the fence holds, lefthook runs.
    let (slot, _) = a_stale_push_from_a_slot_is_refused(&env, &repo, &origin);
    lefthook_runs_in_main_and_slot(&env, &repo, &slot);
    let dir = hooks_dir(&repo);
    assert!(!dir.join("pre-push.old").exists());
    assert!(dir.join("pre-push.git-hand-chained").exists());

    env.hand(&repo, &["uninstall"]).ok();
    let after = hooks_snapshot(&dir);
    // What lefthook alone would have left: its launchers, nothing of git-hand's.
    let fresh = TestEnv::new().with_hook_tools();
    let (other, _) = lefthook_repo(&fresh, true);
    tool(&fresh, &other, "lefthook", &["install"]).ok();
    let expected = hooks_snapshot(&hooks_dir(&other));
    assert_eq!(
        after.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>()
    );
    for (name, (bytes, mode)) in &expected {
        let (got, got_mode) = &after[name];
        // lefthook's launcher names the lefthook binary it was installed with: the same here.
        assert_eq!(got, bytes, "{name} differs");
        assert_eq!(got_mode, mode, "{name} mode differs");
    }
}

#[test]
fn after_lefthook_resyncs_spawn_puts_the_fence_back_without_a_not_enforced_warning() {
    let env = TestEnv::new().with_hook_tools();
    // No git-hand recipe in lefthook.yml: only git-hand's chain protects the slots.
    let (repo, origin) = lefthook_repo(&env, false);
    tool(&env, &repo, "lefthook", &["install"]).ok();
    env.hand(&repo, &["install"]).ok();
    let dir = hooks_dir(&repo);
    let lefthook_only_launcher = std::fs::read(dir.join("pre-push.git-hand-chained")).unwrap();

    // The team adds a hook to lefthook.yml; lefthook re-syncs on the next hook it runs, renaming
    // git-hand's shim to pre-push.old.
    let config = std::fs::read_to_string(repo.join("lefthook.yml")).unwrap();
    std::fs::write(
        repo.join("lefthook.yml"),
        format!("{config}post-merge:\n  commands:\n    deps:\n      run: \"true\"\n"),
    )
    .unwrap();
    // lefthook trusts its checksum file while the config's mtime (in seconds) is the one it
    // recorded: date the edit a minute ahead, as a later edit would be.
    env.command("touch", &repo)
        .args(["-d", "+1 minute", "lefthook.yml"])
        .status()
        .unwrap();
    env.commit(&repo, "x.txt", "x\n");
    push(&env, &repo, None, &["origin", "main"]).ok();
    assert!(
        dir.join("pre-push.old").exists(),
        "lefthook did not re-sync: {:?}",
        hooks_snapshot(&dir).keys()
    );

    let run = env.hand(&repo, &["spawn", "after-resync", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        !run.stderr.contains("NOT"),
        "spawn still warns after repairing the chain:\n{}",
        run.stderr
    );
    assert!(!dir.join("pre-push.old").exists());
    assert_eq!(
        std::fs::read(dir.join("pre-push.git-hand-chained")).unwrap(),
        lefthook_only_launcher,
        "the chained hook is lefthook's launcher"
    );
    env.hand(&repo, &["teardown", "after-resync", "--force"])
        .ok();
    let (slot, _) = a_stale_push_from_a_slot_is_refused(&env, &repo, &origin);
    lefthook_runs_in_main_and_slot(&env, &repo, &slot);
}

/// A hand-written hook that does its own check, and calls `git-hand hook pre-push "$@"` first as
/// the old docs advised, chained behind git-hand's shim: one verdict, no recursion, its own
/// check still refusing what it refuses.
#[test]
fn a_hand_written_hook_calling_git_hand_is_chained_without_recursion_in_both_orders() {
    for git_hand_first in [false, true] {
        let env = TestEnv::new();
        let repo = env.repo("app");
        let origin = env.path("work/app-origin.git");
        let dir = hooks_dir(&repo);
        let counter = env.path("hand-hook-ran");
        let hook = format!(
            "#!/bin/sh\ngit-hand hook pre-push \"$@\" || exit $?\necho run >> '{}'\n\
             if grep -q forbidden; then echo 'team: no forbidden branches' >&2; exit 7; fi\n",
            counter.display()
        );
        let write_hook = || {
            std::fs::write(dir.join("pre-push"), &hook).unwrap();
            std::fs::set_permissions(dir.join("pre-push"), std::fs::Permissions::from_mode(0o755))
                .unwrap();
        };
        if git_hand_first {
            env.hand(&repo, &["install"]).ok();
            // The person's hook replaces git-hand's shim; the next spawn chains it.
            let _ = std::fs::remove_file(dir.join("pre-push"));
            write_hook();
        } else {
            write_hook();
        }
        let before = hooks_snapshot(&dir);
        let (slot, b) = a_stale_push_from_a_slot_is_refused(&env, &repo, &origin);
        assert!(dir.join("pre-push.git-hand-chained").exists());

        let ran = || {
            std::fs::read_to_string(&counter)
                .unwrap_or_default()
                .lines()
                .count()
        };
        let runs = ran();
        env.commit(&slot, "more.txt", "more\n");
        let run = push(
            &env,
            &slot,
            Some(&b),
            &["origin", "HEAD:refs/heads/forbidden"],
        );
        assert_ne!(
            run.code, 0,
            "the team's check did not refuse:\n{}",
            run.stderr
        );
        assert!(
            run.stderr.contains("team: no forbidden branches"),
            "{}",
            run.stderr
        );
        assert_eq!(remote_oid(&env, &origin, "forbidden"), None);
        assert_eq!(ran(), runs + 1, "the hand-written hook ran more than once");
        assert_eq!(
            run.stderr.matches("git-hand: push refused").count(),
            0,
            "{}",
            run.stderr
        );

        if !git_hand_first {
            env.hand(&repo, &["uninstall"]).ok();
            assert_eq!(hooks_snapshot(&dir), before);
        }
    }
}

/// A hand-written pre-push that git-hand chained, then lefthook installed over git-hand's shim:
/// git-hand cannot chain lefthook's launcher too (it would lose the person's hook). With git-hand's
/// recipe in lefthook.yml, lefthook enforces the lease itself: spawn says nothing and the fence
/// holds. Without it, spawn says so and gives lefthook's recipe as the fix, not the generic
/// three ways out.
#[test]
fn lefthook_over_a_chained_hook_is_in_force_only_when_its_config_calls_git_hand() {
    for with_recipe in [true, false] {
        let env = TestEnv::new().with_hook_tools();
        let (repo, origin) = lefthook_repo(&env, with_recipe);
        let dir = hooks_dir(&repo);
        std::fs::write(dir.join("pre-push"), "#!/bin/sh\nexit 0\n").unwrap();
        std::fs::set_permissions(dir.join("pre-push"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        env.hand(&repo, &["install"]).ok();
        tool(&env, &repo, "lefthook", &["install"]).ok();
        assert!(dir.join("pre-push.old").exists());

        let run = env.hand(&repo, &["spawn", "probe", "--json"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        if with_recipe {
            assert!(!run.stderr.contains("NOT"), "{}", run.stderr);
            env.hand(&repo, &["teardown", "probe", "--force"]).ok();
            a_stale_push_from_a_slot_is_refused(&env, &repo, &origin);
        } else {
            assert!(
                run.stderr.contains("lefthook's pre-push hook"),
                "{}",
                run.stderr
            );
            assert!(
                run.stderr.contains("git hand install --manual"),
                "{}",
                run.stderr
            );
            assert!(!run.stderr.contains("keep both"), "{}", run.stderr);
        }
    }
}

/// With git-hand's lefthook recipe committed and lefthook's launcher as the pre-push hook, every
/// surface that reports whether pushes are checked says they are: `check` as `spawn` does.
#[test]
fn check_counts_the_lefthook_recipe_as_in_force_as_spawn_does() {
    let env = TestEnv::new().with_hook_tools();
    let (repo, _origin) = lefthook_repo(&env, true);
    tool(&env, &repo, "lefthook", &["install"]).ok();
    let run = env.hand(&repo, &["spawn", "probe", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stderr.contains("NOT"), "{}", run.stderr);
    let slot = crate::support::path_of(&run.json());
    let check = env.hand(&slot, &["check", "--json"]).json();
    assert_eq!(check["hooks"]["in_force"], true, "{check}");
}

/// The rules behind the re-sync cases, on plain files: a foreign hook that is the same bytes as
/// the chained one replaces it (no exit 3); a different one still refuses, changing nothing;
/// `<hook>.old` is removed only when it is git-hand's shim.
#[test]
fn a_copy_of_the_chained_hook_is_rechained_and_only_our_own_old_copy_is_removed() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let dir = hooks_dir(&repo);
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text).unwrap();
        std::fs::set_permissions(dir.join(name), std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    let mine = "#!/bin/sh\necho mine\n";
    write("pre-push", mine);
    env.hand(&repo, &["install"]).ok();
    let shim = std::fs::read(dir.join("pre-push")).unwrap();

    // Someone restores their hook over the shim (a copy of what git-hand chained).
    std::fs::rename(dir.join("pre-push"), dir.join("pre-push.old")).unwrap();
    write("pre-push", mine);
    write("post-checkout.old", "#!/bin/sh\necho not git-hand's\n");
    let run = env.hand(&repo, &["install", "--json"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.json()["hooks"][0]["change"], "chained");
    assert_eq!(std::fs::read(dir.join("pre-push")).unwrap(), shim);
    assert_eq!(
        std::fs::read_to_string(dir.join("pre-push.git-hand-chained")).unwrap(),
        mine
    );
    assert!(
        !dir.join("pre-push.old").exists(),
        "git-hand's own .old copy stays"
    );
    assert!(
        dir.join("post-checkout.old").exists(),
        "someone else's .old was removed"
    );

    // A different hook over the shim is a real conflict: refused, nothing changed.
    write("pre-push", "#!/bin/sh\necho another\n");
    let before = hooks_snapshot(&dir);
    env.hand(&repo, &["install"]).code(3);
    assert_eq!(hooks_snapshot(&dir), before);
}

/// The lefthook recipe, committed, in a teammate's clone where git-hand is not installed: their
/// pushes go through (the script does nothing there); in a worktree git-hand leased, the same
/// script refuses when git-hand cannot be found.
#[test]
fn the_lefthook_recipe_does_nothing_where_git_hand_is_not_installed_but_fails_closed_in_a_slot() {
    let env = TestEnv::new().with_hook_tools();
    let (repo, origin) = lefthook_repo(&env, true);
    tool(&env, &repo, "lefthook", &["install"]).ok();
    let slot = path_of(&spawn(&env, &repo, "leased", &[]));
    env.hand(&repo, &["uninstall"]).ok();
    tool(&env, &repo, "lefthook", &["install"]).ok();

    let without_git_hand: Vec<PathBuf> = crate::support::hook_tools()
        .iter()
        .cloned()
        .chain(["/usr/bin", "/bin"].map(PathBuf::from))
        .collect();
    let path = std::env::join_paths(without_git_hand).unwrap();
    let push_without = |dir: &Path, refspec: &str| {
        let mut cmd = env.contained("git", dir);
        cmd.args(["push", "origin", refspec])
            .env("PATH", &path)
            .env("NO_COLOR", "1");
        Run::from(cmd.output().unwrap())
    };
    env.commit(&repo, "teammate.txt", "no git-hand here\n");
    let run = push_without(&repo, "main");
    assert_eq!(
        run.code, 0,
        "a teammate without git-hand cannot push:\n{}",
        run.stderr
    );

    env.commit(&slot, "slot.txt", "leased\n");
    let run = push_without(&slot, "HEAD:refs/heads/hand/leased");
    assert_ne!(
        run.code, 0,
        "a leased slot pushed unchecked:\n{}",
        run.stderr
    );
    assert!(run.stderr.contains("push refused"), "{}", run.stderr);
    assert_eq!(remote_oid(&env, &origin, "hand/leased"), None);
}
