//! The fence beside other hooks and when it lapses: a `git-hand hook` never re-enters itself
//! through a chained hook, `status`, `check`, `doctor` and `git hand` say when the hooks are not in
//! force for a worktree, spawn installs them before it leases anything, and the opt-outs
//! (`hand.installHooks=false`, `uninstall`) hold. Every push that could recurse runs contained.

use std::path::Path;

use serde_json::Value;

use crate::support::{Run, TestEnv, cred, leased_again, path_of, push, spawn, write_hook};

#[test]
fn a_chained_hook_that_calls_git_hand_again_is_judged_once_and_never_recurses() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let hooks = repo.join(".git/hooks");
    let log = env.path("hook-runs");
    // The docs' old advice, twice over: a hand-written pre-push whose first line runs git-hand's
    // check, then a "manager" script that runs it again. Each counts how deep it is and gives
    // up past a few levels, so the old code fails here instead of forking without bound.
    let counted = |name: &str, then: &str| {
        format!(
            "#!/bin/sh\nn=$(( ${{DEPTH_{name}:-0}} + 1 )); export DEPTH_{name}=$n\n\
             echo {name} >> {log}\n\
             if [ $n -gt 3 ]; then echo \"{name} recursed $n deep\" >&2; exit 97; fi\n\
             git-hand hook pre-push \"$@\" || exit $?\n{then}",
            log = log.display()
        )
    };
    write_hook(
        &hooks.join("manager-pre-push"),
        &counted("manager", "exit 0\n"),
        0o755,
    );
    write_hook(
        &hooks.join("pre-push"),
        &counted(
            "hand",
            "exec \"$(dirname \"$0\")/manager-pre-push\" \"$@\"\n",
        ),
        0o755,
    );
    env.hand(&repo, &["install"]).ok();
    assert!(hooks.join("pre-push.git-hand-chained").exists());
    let (slot, a, b) = leased_again(&env, &repo, "a", "b");
    env.commit(&slot, "z.txt", "late\n");

    let _ = std::fs::remove_file(&log);
    let run = push(&env, &slot, &cred(&a), &["origin", "HEAD"]);
    assert_ne!(run.code, 0, "the stale push went through:\n{}", run.stderr);
    assert!(!run.stderr.contains("recursed"), "{}", run.stderr);
    assert_eq!(
        run.stderr.matches("push refused").count(),
        1,
        "one verdict:\n{}",
        run.stderr
    );
    let runs = std::fs::read_to_string(&log).unwrap();
    assert_eq!(runs, "hand\nmanager\n", "each hook ran once");

    let _ = std::fs::remove_file(&log);
    let run = push(&env, &slot, &cred(&b), &["-q", "origin", "HEAD"]);
    assert_eq!(run.code, 0, "the current push was refused:\n{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "hand\nmanager\n");
}

/// `git rev-parse --git-dir` of a worktree: where its stamp lives.
fn admin_dir(env: &TestEnv, dir: &Path) -> std::path::PathBuf {
    let out = env.git(dir, &["rev-parse", "--absolute-git-dir"]);
    std::path::PathBuf::from(out)
}

fn hand_as(env: &TestEnv, dir: &Path, cred: &[(String, String)], args: &[&str]) -> Run {
    let pairs: Vec<(&str, &str)> = cred.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    env.hand_env(dir, args, &pairs)
}

#[test]
fn a_deleted_pre_push_hook_is_reported_everywhere_and_doctor_repair_reinstalls_it() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (slot, a, _b) = leased_again(&env, &repo, "a", "b");
    let hook = repo.join(".git/hooks/pre-push");
    std::fs::remove_file(&hook).unwrap();
    env.commit(&slot, "z.txt", "late\n");

    let v = hand_as(&env, &slot, &cred(&a), &["status", "--json"]).ok();
    let v: Value = serde_json::from_str(&v).unwrap();
    assert_eq!(v["verdict"], "stale");
    assert_eq!(v["hooks"]["in_force"], false, "{v:#}");
    assert_eq!(v["hooks"]["lapses"][0]["kind"], "missing", "{v:#}");
    assert_eq!(v["checked"], false);

    let run = hand_as(&env, &slot, &cred(&a), &["check"]).code(1);
    assert!(
        run.stdout.contains("would NOT be checked"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("git hand doctor --repair"),
        "{}",
        run.stdout
    );
    let run = hand_as(&env, &slot, &cred(&a), &["status"]).ok();
    assert!(run.contains("NOT in force"), "{run}");
    assert!(!run.contains("would be refused)"), "{run}");
    let run = hand_as(&env, &slot, &cred(&a), &[]).ok();
    assert!(
        run.contains("NOT in force"),
        "git hand with no verb:\n{run}"
    );
    // What they warn about is real: the stale push goes through.
    push(
        &env,
        &slot,
        &cred(&a),
        &["-q", "origin", "HEAD:refs/heads/zombie"],
    )
    .code(0);

    let v = env.hand(&repo, &["doctor", "--json"]).code(3).json();
    let problems = v["problems"].as_array().unwrap();
    assert!(
        problems.iter().any(|p| p["kind"] == "hooks-not-in-force"),
        "{v:#}"
    );
    env.hand(&repo, &["doctor", "--repair"]).ok();
    assert!(hook.exists(), "doctor --repair reinstalled the hook");
    let v: Value =
        serde_json::from_str(&hand_as(&env, &slot, &cred(&a), &["status", "--json"]).ok()).unwrap();
    assert_eq!(v["hooks"]["in_force"], true, "{v:#}");
    assert_eq!(v["checked"], true);
    let run = push(
        &env,
        &slot,
        &cred(&a),
        &["origin", "HEAD:refs/heads/zombie2"],
    );
    assert_ne!(run.code, 0, "{}", run.stderr);
    env.hand(&repo, &["doctor"]).ok();
}

/// The first lapse `status --json` reports in `dir` with the credential.
fn lapse_kinds(env: &TestEnv, dir: &Path, cred: &[(String, String)]) -> (Value, Vec<String>) {
    let v: Value =
        serde_json::from_str(&hand_as(env, dir, cred, &["status", "--json"]).ok()).unwrap();
    let kinds = v["hooks"]["lapses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["kind"].as_str().unwrap().to_string())
        .collect();
    (v, kinds)
}

#[test]
fn every_way_the_hooks_lapse_is_named_and_a_manager_that_calls_git_hand_is_in_force() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (slot, a, _b) = leased_again(&env, &repo, "a", "b");
    let hooks = repo.join(".git/hooks");
    let hook = hooks.join("pre-push");

    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (v, kinds) = lapse_kinds(&env, &slot, &cred(&a));
    assert_eq!(kinds, ["not-executable"], "{v:#}");
    assert_eq!(v["hooks"]["in_force"], false);

    // A tool that renames our shim (lefthook keeps it as pre-push.old) and puts its own there.
    std::fs::rename(&hook, hooks.join("pre-push.old")).unwrap();
    write_hook(&hook, "#!/bin/sh\nexit 0\n", 0o755);
    let (v, kinds) = lapse_kinds(&env, &slot, &cred(&a));
    assert_eq!(kinds, ["renamed"], "{v:#}");
    std::fs::remove_file(hooks.join("pre-push.old")).unwrap();
    let (v, kinds) = lapse_kinds(&env, &slot, &cred(&a));
    assert_eq!(kinds, ["foreign"], "{v:#}");

    // A chained hook that lost its execute bit: the fence holds, the user's hook does not run.
    env.hand(&repo, &["install"]).ok();
    let chained = hooks.join("pre-push.git-hand-chained");
    std::fs::set_permissions(&chained, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (v, kinds) = lapse_kinds(&env, &slot, &cred(&a));
    assert_eq!(kinds, ["chained-broken"], "{v:#}");
    assert_eq!(v["hooks"]["in_force"], true);
    assert_eq!(v["checked"], true);

    // A relative core.hooksPath to a directory the slot does not have (husky 9's `.husky/_`
    // is gitignored): git runs no hook at all in the slot.
    let other = repo.join(".hooks");
    std::fs::create_dir(&other).unwrap();
    write_hook(&other.join("pre-push"), "#!/bin/sh\nexit 0\n", 0o755);
    env.git(&repo, &["config", "core.hooksPath", ".hooks"]);
    // Set after install: slots still run git-hand's hooks for linked worktrees (issue 25), which
    // forward to .git/hooks, so the fence holds there but .hooks's hooks do not run. That is
    // named; `doctor --repair` hands the slots to core.hooksPath, as the main worktree has it.
    let (v, kinds) = lapse_kinds(&env, &slot, &cred(&a));
    assert_eq!(kinds, ["chained-broken", "linked-hooks"], "{v:#}");
    assert_eq!(v["hooks"]["in_force"], true);
    let message = v["hooks"]["lapses"][1]["message"].as_str().unwrap();
    assert!(
        message.contains("slots do not run .hooks's hooks"),
        "{message}"
    );
    env.hand(&repo, &["doctor", "--repair"]).code(3);
    let (v, kinds) = lapse_kinds(&env, &slot, &cred(&a));
    assert_eq!(kinds, ["hooks-path"], "{v:#}");
    let message = v["hooks"]["lapses"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("does not exist in this worktree"),
        "{message}"
    );

    // core.hooksPath to a directory whose pre-push does not run git-hand: doctor --repair
    // never writes there and names the recipe.
    env.git(
        &repo,
        &["config", "core.hooksPath", other.to_str().unwrap()],
    );
    let (v, kinds) = lapse_kinds(&env, &slot, &cred(&a));
    assert_eq!(kinds, ["hooks-path"], "{v:#}");
    let p = hooks_problem_after_repair(&env, &repo);
    assert_eq!(p["repaired"], false);
    assert!(
        p["command"]
            .as_str()
            .unwrap()
            .contains("git hand install --manual"),
        "{p:#}"
    );
    assert_eq!(
        std::fs::read_to_string(other.join("pre-push")).unwrap(),
        "#!/bin/sh\nexit 0\n",
        "nothing was written into the other tool's directory"
    );

    // The same directory, its pre-push calling git-hand as docs/hooks.md says: in force.
    write_hook(
        &other.join("pre-push"),
        "#!/bin/sh\ngit-hand hook pre-push \"$@\"\n",
        0o755,
    );
    let (v, kinds) = lapse_kinds(&env, &slot, &cred(&a));
    assert!(kinds.is_empty(), "{v:#}");
    assert_eq!(v["hooks"]["pre_push"]["kind"], "manager", "{v:#}");
    assert_eq!(v["hooks"]["in_force"], true);
}

#[test]
fn check_and_status_give_exactly_pre_pushs_verdict_branch_fencing_included() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let t = spawn(&env, &repo, "t1", &[]);
    let slot = path_of(&t);
    env.commit(&slot, "a.txt", "a\n");
    push(&env, &slot, &cred(&t), &["-q", "-u", "origin", "hand/t1"]).code(0);

    // The main worktree (unmanaged) on a branch whose upstream is the live task's branch.
    env.git(&repo, &["fetch", "-q", "origin"]);
    env.git(
        &repo,
        &["switch", "-q", "-c", "mine", "--track", "origin/hand/t1"],
    );
    env.commit(&repo, "b.txt", "b\n");
    let run = env.hand(&repo, &["check", "--json"]).code(1);
    let v = run.json();
    assert_eq!(v["verdict"], "unmanaged");
    assert_eq!(v["allowed"], false, "{v:#}");
    assert_eq!(v["refusal"]["kind"], "branch");
    assert_eq!(v["refusal"]["task"], "t1");
    assert_eq!(v["push"]["branch"], "hand/t1");
    assert_eq!(v["push"]["via"], "upstream");
    let text = env.hand(&repo, &["check"]).code(1).stdout;
    assert!(
        text.contains("branch hand/t1 belongs to live task t1"),
        "{text}"
    );
    assert!(text.contains("upstream"), "{text}");
    let status = env.hand(&repo, &["status"]).ok();
    assert!(status.contains("would be refused"), "{status}");
    // And pre-push agrees.
    let run = push(&env, &repo, &[], &["origin", "HEAD:refs/heads/hand/t1"]);
    assert_ne!(run.code, 0, "{}", run.stderr);

    // No upstream: the same name on origin is judged, and another name is allowed.
    env.git(&repo, &["branch", "-q", "--unset-upstream"]);
    let v = env.hand(&repo, &["check", "--json"]).code(0).json();
    assert_eq!(v["push"]["branch"], "mine");
    assert_eq!(v["push"]["via"], "same-name");
    assert_eq!(v["allowed"], true);
}

#[test]
fn a_spawn_that_dies_after_its_intent_leaves_the_hooks_installed() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let run = env.hand_env(
        &repo,
        &["spawn", "t1"],
        &[("GIT_HAND_FAILPOINT", "spawn-after-intent")],
    );
    assert_ne!(run.code, 0, "the failpoint did not fire: {}", run.stderr);
    let hook = repo.join(".git/hooks/pre-push");
    assert!(
        hook.exists(),
        "the hooks were installed before the lease was taken"
    );
}

#[test]
fn install_hooks_false_means_spawn_never_installs_or_chains_but_still_warns() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let hooks = repo.join(".git/hooks");
    write_hook(&hooks.join("pre-push"), "#!/bin/sh\nexit 0\n", 0o755);
    env.git(&repo, &["config", "hand.installHooks", "false"]);
    let run = env.hand(&repo, &["spawn", "t1"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("NOT enforced"), "{}", run.stderr);
    assert!(run.stderr.contains("hand.installHooks"), "{}", run.stderr);
    assert!(run.stderr.contains("git hand install"), "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-push")).unwrap(),
        "#!/bin/sh\nexit 0\n"
    );
    assert!(!hooks.join("pre-push.git-hand-chained").exists());
    assert!(!hooks.join("post-checkout").exists());
}

#[test]
fn uninstall_stays_uninstalled_until_install_opts_back_in() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let hook = repo.join(".git/hooks/pre-push");
    env.hand(&repo, &["install"]).ok();
    let out = env.hand(&repo, &["uninstall"]).ok();
    assert!(out.contains("hand.installHooks=false"), "{out}");
    assert!(!hook.exists());
    env.hand(&repo, &["doctor"]).ok(); // uninstalled on purpose, nothing leased: no problem
    let run = env.hand(&repo, &["spawn", "t1"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!hook.exists(), "spawn reinstalled what uninstall removed");
    assert!(run.stderr.contains("NOT enforced"), "{}", run.stderr);
    // A leased slot nothing checks is a problem, and --repair respects the opt-out.
    let p = hooks_problem_after_repair(&env, &repo);
    assert_eq!(p["command"], "git hand install", "{p:#}");
    assert!(!hook.exists(), "doctor --repair overrode the opt-out");
    let out = env.hand(&repo, &["install"]).ok();
    assert!(out.contains("hand.installHooks unset"), "{out}");
    assert!(hook.exists());
    assert_eq!(
        env.git_run(&repo, &["config", "--get", "hand.installHooks"])
            .code,
        1
    );
}

#[test]
fn refusals_say_what_was_presented_and_never_teach_the_bypass() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (slot, a, b) = leased_again(&env, &repo, "a", "b");
    env.commit(&slot, "z.txt", "z\n");
    let no_verify = |r: &Run| {
        assert!(!r.stderr.contains("no-verify"), "{}", r.stderr);
        assert!(!r.stdout.contains("no-verify"), "{}", r.stdout);
    };

    // b's lease with a token it was never given.
    let wrong = vec![
        (
            "GIT_HAND_LEASE".to_string(),
            b["lease_id"].as_str().unwrap().to_string(),
        ),
        ("GIT_HAND_TOKEN".to_string(), "5".to_string()),
    ];
    let run = push(&env, &slot, &wrong, &["origin", "HEAD"]);
    assert!(run.stderr.contains("you present token 5"), "{}", run.stderr);
    assert!(
        run.stderr.contains("granted with token 2"),
        "{}",
        run.stderr
    );
    no_verify(&run);

    // No credential at all (the stamp deleted) while the slot is leased.
    let stamp = admin_dir(&env, &slot).join("git-hand-stamp");
    let kept = std::fs::read(&stamp).unwrap();
    std::fs::remove_file(&stamp).unwrap();
    let run = push(&env, &slot, &[], &["origin", "HEAD:refs/heads/zombie"]);
    assert!(
        run.stderr.contains("presents no credential"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("did not grant"), "{}", run.stderr);
    no_verify(&run);

    // Released, and no credential.
    std::fs::write(&stamp, kept).unwrap();
    env.hand(&repo, &["teardown", "b", "--force"]).ok();
    std::fs::remove_file(&stamp).unwrap();
    let run = push(&env, &slot, &[], &["origin", "HEAD:refs/heads/zombie"]);
    assert!(
        run.stderr.contains("last lease was released"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("no credential, was"), "{}", run.stderr);
    no_verify(&run);

    // check says what a push would do; nothing was attempted.
    let run = hand_as(&env, &slot, &cred(&a), &["check"]).code(1);
    assert!(!run.stdout.contains("nothing was pushed"), "{}", run.stdout);
    assert!(run.stdout.contains("would be refused"), "{}", run.stdout);
    no_verify(&run);
}

#[test]
fn a_teardown_blocked_by_an_untracked_file_suggests_committing_it_not_pushing() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let t = spawn(&env, &repo, "t1", &[]);
    std::fs::write(path_of(&t).join("new.txt"), "x\n").unwrap();
    let run = env.hand(&repo, &["teardown", "t1"]).code(3);
    assert!(run.stderr.contains("add -A"), "{}", run.stderr);
    assert!(!run.stderr.contains("push -u"), "{}", run.stderr);
    assert!(run.stderr.contains("--force"), "{}", run.stderr);
}

#[test]
fn a_chained_post_checkout_that_calls_git_hand_again_runs_once() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let hooks = repo.join(".git/hooks");
    let log = env.path("hook-runs");
    write_hook(
        &hooks.join("post-checkout"),
        &format!(
            "#!/bin/sh\nn=$(( ${{DEPTH:-0}} + 1 )); export DEPTH=$n\necho run >> {}\n\
             if [ $n -gt 3 ]; then echo \"recursed $n deep\" >&2; exit 97; fi\n\
             git-hand hook post-checkout \"$@\"\n",
            log.display()
        ),
        0o755,
    );
    env.hand(&repo, &["install"]).ok();
    env.git(&repo, &["branch", "-q", "other"]);
    let run = Run::from(
        env.contained("git", &repo)
            .args(["switch", "-q", "other"])
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stderr.contains("recursed"), "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "run\n");
}

/// `doctor --repair --json` in `repo`, which must leave a problem (exit 3): its
/// `hooks-not-in-force` finding.
fn hooks_problem_after_repair(env: &TestEnv, repo: &Path) -> Value {
    let v = env
        .hand(repo, &["doctor", "--repair", "--json"])
        .code(3)
        .json();
    v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["kind"] == "hooks-not-in-force")
        .cloned()
        .unwrap_or_else(|| panic!("{v:#}"))
}
