//! The hooks enforcing leases, end to end: real pushes to a local bare remote through the
//! installed shims and the binary under test.

use std::path::Path;

use crate::support::{Run, TestEnv, cred, installed, path_of, remote_oid, spawn};

fn push_as(env: &TestEnv, dir: &Path, cred: Option<&[(String, String)]>, args: &[&str]) -> Run {
    let mut cmd = env.timed("git", dir);
    cmd.arg("push").args(args);
    if let Some(c) = cred {
        for (k, v) in c {
            cmd.env(k, v);
        }
    }
    let out = cmd.output().unwrap();
    Run::from(out)
}

#[test]
fn the_zombie_story_a_superseded_holder_cannot_clobber_the_new_one() {
    let (env, repo) = installed();
    let a = spawn(&env, &repo, "t1", &[]);
    let slot = path_of(&a);
    let cred_a = cred(&a);
    env.commit(&slot, "a.txt", "from A\n");
    push_as(&env, &slot, Some(&cred_a), &["-q", "origin", "hand/t1"]).ok();

    env.hand(&repo, &["teardown", "t1", "--force"]).ok();
    let b = spawn(&env, &repo, "t2", &[]);
    assert_eq!(path_of(&b), slot, "t2 got the same slot");
    let cred_b = cred(&b);

    // A wakes up in the recycled slot, commits and pushes with its old credential.
    let zombie = env.commit(&slot, "zombie.txt", "from A, late\n");
    let run = push_as(&env, &slot, Some(&cred_a), &["origin", "HEAD"]);
    assert_ne!(
        run.code, 0,
        "the zombie's push went through:\n{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("git-hand: push refused (stale)"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("token 2"),
        "the message names t2's token: {}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("--no-verify"),
        "a refusal never teaches the bypass: {}",
        run.stderr
    );
    assert_eq!(
        remote_oid(&env, &env.path("work/app-origin.git"), "hand/t2"),
        None,
        "nothing reached the remote"
    );
    let log = env.hand(&repo, &["log", "--json"]).json();
    assert!(
        log.to_string().contains("push refused: stale"),
        "the refusal is recorded"
    );

    // B, the current holder, pushes the same branch.
    push_as(&env, &slot, Some(&cred_b), &["-q", "origin", "HEAD"]).ok();
    assert_eq!(
        remote_oid(&env, &env.path("work/app-origin.git"), "hand/t2").as_deref(),
        Some(zombie.as_str())
    );
}

#[test]
fn expired_and_released_leases_are_refused_and_the_main_worktree_is_unmanaged() {
    let (env, repo) = installed();
    let e = spawn(&env, &repo, "short", &["--ttl", "1s"]);
    let slot = path_of(&e);
    env.commit(&slot, "e.txt", "x\n");
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let run = push_as(&env, &slot, Some(&cred(&e)), &["origin", "HEAD"]);
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("push refused (expired)"),
        "{}",
        run.stderr
    );

    let r = spawn(&env, &repo, "rel", &[]);
    let rslot = path_of(&r);
    env.commit(&rslot, "r.txt", "x\n");
    let rcred = cred(&r);
    env.git(&rslot, &["push", "-q", "origin", "hand/rel"]);
    env.hand(&repo, &["teardown", "rel"]).ok();
    env.commit(&rslot, "r2.txt", "after release\n");
    let run = push_as(
        &env,
        &rslot,
        Some(&rcred),
        &["origin", "HEAD:refs/heads/hand/rel"],
    );
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("push refused (released)"),
        "{}",
        run.stderr
    );

    env.commit(&repo, "main.txt", "x\n");
    push_as(&env, &repo, None, &["-q", "origin", "main"]).ok();
}

#[test]
fn without_a_credential_in_the_environment_the_stamp_decides() {
    let (env, repo) = installed();
    let a = spawn(&env, &repo, "t1", &["--ttl", "1s"]);
    let slot = path_of(&a);
    env.commit(&slot, "a.txt", "x\n");
    push_as(&env, &slot, None, &["-q", "origin", "hand/t1"]).ok();
    // After expiry the stamp names an expired tenure: refused.
    std::thread::sleep(std::time::Duration::from_millis(1200));
    env.commit(&slot, "b.txt", "x\n");
    let run = push_as(&env, &slot, None, &["origin", "hand/t1"]);
    assert!(
        run.stderr.contains("push refused (expired)"),
        "{}",
        run.stderr
    );
    // Another task takes the expired slot over: the stamp now names the new tenure, so a push
    // from the slot (by whoever sits there now, without a credential) is allowed.
    let b = spawn(&env, &repo, "t2", &[]);
    assert_eq!(path_of(&b), slot, "the expired slot was taken over");
    assert_eq!(b["token"], 2);
    env.commit(&slot, "c.txt", "x\n");
    push_as(&env, &slot, None, &["-q", "origin", "hand/t2"]).ok();
}

#[test]
fn a_task_whose_issue_lease_was_taken_over_cannot_push() {
    let (env, repo) = installed();
    let a = spawn(&env, &repo, "t1", &["--issue", "42", "--holder", "alice"]);
    let slot = path_of(&a);
    // Someone releases alice's issue lease by hand and bob takes the issue; her slot lease lives.
    env.hand(&repo, &["lease", "release", "42", "--holder", "alice"])
        .ok();
    env.hand(&repo, &["lease", "acquire", "42", "--holder", "bob"])
        .ok();
    env.commit(&slot, "a.txt", "x\n");
    let run = push_as(&env, &slot, Some(&cred(&a)), &["origin", "HEAD"]);
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("push refused (issue-lost)"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("bob"), "{}", run.stderr);
}

#[test]
fn a_zombie_under_another_home_is_still_refused_through_the_stamp() {
    let (env, repo) = installed();
    let a = spawn(&env, &repo, "t1", &[]);
    let slot = path_of(&a);
    let cred_a = cred(&a);
    env.hand(&repo, &["teardown", "t1"]).ok();
    spawn(&env, &repo, "t2", &[]);
    env.commit(&slot, "z.txt", "x\n");
    let other = env.path("elsewhere");
    std::fs::create_dir_all(&other).unwrap();
    let mut cmd = env.timed("git", &slot);
    cmd.args(["push", "origin", "HEAD"])
        .env_remove("GIT_HAND_LEDGER")
        .env("HOME", &other)
        .env("XDG_STATE_HOME", other.join("state"));
    for (k, v) in &cred_a {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "the zombie under another HOME pushed: {stderr}"
    );
    assert!(stderr.contains("push refused (stale)"), "{stderr}");
    assert!(
        !other.join("state/git-hand").exists(),
        "no second ledger was created"
    );
}

#[test]
fn pushing_a_live_tasks_branch_from_elsewhere_is_refused() {
    let (env, repo) = installed();
    let t2 = spawn(&env, &repo, "t2", &[]);
    env.commit(&path_of(&t2), "t2.txt", "x\n");
    let run = push_as(&env, &repo, None, &["origin", "hand/t2"]);
    assert_ne!(run.code, 0);
    assert!(
        run.stderr
            .contains("branch hand/t2 belongs to live task t2"),
        "{}",
        run.stderr
    );
    assert_eq!(
        remote_oid(&env, &env.path("work/app-origin.git"), "hand/t2"),
        None
    );
    // With fencing off, or once the task is done, the branch is anyone's.
    env.git(&repo, &["config", "hand.fenceBranches", "false"]);
    push_as(&env, &repo, None, &["-q", "origin", "hand/t2"]).ok();
}

#[test]
fn a_foreign_pre_push_hook_still_runs_with_its_args_and_stdin_and_its_failure_refuses() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let hooks = repo.join(".git/hooks");
    let record = env.path("foreign.log");
    let foreign = format!(
        "#!/bin/sh\necho \"args: $*\" >> {0}\ncat >> {0}\n[ ! -e {0}.fail ]\n",
        record.display()
    );
    std::fs::write(hooks.join("pre-push"), &foreign).unwrap();
    std::fs::set_permissions(
        hooks.join("pre-push"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    env.hand(&repo, &["install"]).ok();
    let t = spawn(&env, &repo, "t1", &[]);
    let slot = path_of(&t);
    let oid = env.commit(&slot, "a.txt", "x\n");
    push_as(&env, &slot, Some(&cred(&t)), &["-q", "origin", "hand/t1"]).ok();
    let seen = std::fs::read_to_string(&record).unwrap();
    let origin = env.path("work/app-origin.git");
    assert!(
        seen.contains(&format!("args: origin {}", origin.display())),
        "{seen}"
    );
    assert!(
        seen.contains(&format!(
            "refs/heads/hand/t1 {oid} refs/heads/hand/t1 {}",
            "0".repeat(40)
        )),
        "{seen}"
    );
    std::fs::write(format!("{}.fail", record.display()), "").unwrap();
    env.commit(&slot, "b.txt", "x\n");
    let run = push_as(&env, &slot, Some(&cred(&t)), &["origin", "hand/t1"]);
    assert_ne!(run.code, 0, "the foreign hook's failure refuses the push");
    assert_eq!(
        remote_oid(&env, &env.path("work/app-origin.git"), "hand/t1").as_deref(),
        Some(oid.as_str())
    );
    env.hand(&repo, &["uninstall"]).ok();
    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-push")).unwrap(),
        foreign
    );
}

#[test]
fn spawns_own_git_calls_do_not_reenter_the_post_checkout_hook() {
    let (env, repo) = installed();
    env.git(&repo, &["config", "hand.adoptWorktrees", "true"]);
    let a = spawn(&env, &repo, "t1", &[]);
    let b = spawn(&env, &repo, "t2", &[]);
    env.hand(&repo, &["teardown", "t1"]).ok();
    spawn(&env, &repo, "t3", &[]);
    let list = env.hand(&repo, &["list", "--json"]).json();
    let names: Vec<&str> = list["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["task"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["t2", "t3"],
        "no worktree of ours was adopted as a task"
    );
    let log = env
        .hand(&repo, &["log", "--json", "--limit", "200"])
        .json()
        .to_string();
    assert!(
        !log.contains("worktree-added") && !log.contains("checked-out"),
        "{log}"
    );
    assert_ne!(a["path"], b["path"]);
}

#[test]
fn adopted_worktrees_are_leased_and_their_pushes_fenced() {
    let (env, repo) = installed();
    env.git(&repo, &["config", "hand.adoptWorktrees", "true"]);
    let x = env.path("work/x");
    let run = env.git_run(&repo, &["worktree", "add", x.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("leased this worktree as task x"),
        "{}",
        run.stderr
    );
    let list = env.hand(&repo, &["list", "--json"]).json();
    assert_eq!(list["tasks"][0]["task"], "x");
    assert_eq!(list["tasks"][0]["branch"], "x");
    let x = x.canonicalize().unwrap();
    env.commit(&x, "x.txt", "x\n");
    push_as(&env, &x, None, &["-q", "origin", "x"]).ok();
    env.hand(&repo, &["teardown", "x"]).ok();
    env.commit(&x, "y.txt", "after the lease ended\n");
    let run = push_as(&env, &x, None, &["origin", "HEAD:refs/heads/x"]);
    assert!(
        run.stderr.contains("push refused (released)"),
        "{}",
        run.stderr
    );
}

/// `git worktree add -f <dir> hand/B` checks out live task B's branch a second time: adopting
/// it made a second open task on B's branch (issue 22 item 10). The checkout goes through (the
/// hook never fails it), nothing is adopted, and the hook says why.
#[test]
fn a_worktree_added_on_a_live_tasks_branch_is_not_adopted_and_the_hook_says_why() {
    let (env, repo) = installed();
    env.git(&repo, &["config", "hand.adoptWorktrees", "true"]);
    spawn(&env, &repo, "b", &[]);
    let x = env.path("work/x");
    let run = env.git_run(
        &repo,
        &["worktree", "add", "-f", x.to_str().unwrap(), "hand/b"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("git-hand:")
            && run
                .stderr
                .contains("not adopted: branch hand/b is live task b's")
            && !run.stderr.contains("leased this worktree"),
        "{}",
        run.stderr
    );
    let list = env.hand(&repo, &["list", "--json"]).json();
    let names: Vec<&str> = list["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["task"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["b"], "{list:#}");
    // Two detached worktrees are on no branch: both are adopted.
    for d in ["d1", "d2"] {
        let d = env.path(&format!("work/{d}"));
        env.git(
            &repo,
            &["worktree", "add", "-q", "--detach", d.to_str().unwrap()],
        );
    }
    let list = env.hand(&repo, &["list", "--json"]).json();
    assert_eq!(list["tasks"].as_array().unwrap().len(), 3, "{list:#}");
}

#[test]
fn a_plain_worktree_add_is_only_registered_without_adoption() {
    let (env, repo) = installed();
    let y = env.path("work/y");
    env.git(&repo, &["worktree", "add", "-q", y.to_str().unwrap()]);
    let list = env.hand(&repo, &["list", "--json"]).json();
    assert_eq!(list["tasks"], serde_json::json!([]));
    let log = env.hand(&repo, &["log", "--json"]).json().to_string();
    assert!(log.contains("worktree-added"), "{log}");
}

#[test]
fn post_checkout_warns_in_a_slot_whose_lease_ended_and_never_fails_the_checkout() {
    let (env, repo) = installed();
    let a = spawn(&env, &repo, "t1", &["--ttl", "1s"]);
    let slot = path_of(&a);
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let run = env.git_run(&slot, &["switch", "-c", "other"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("git-hand: this worktree's lease has ended (expired)"),
        "{}",
        run.stderr
    );
}

#[test]
fn no_verify_bypasses_the_hook_as_documented() {
    let (env, repo) = installed();
    let a = spawn(&env, &repo, "t1", &[]);
    let slot = path_of(&a);
    let cred_a = cred(&a);
    env.hand(&repo, &["teardown", "t1"]).ok();
    env.commit(&slot, "z.txt", "x\n");
    assert_ne!(
        push_as(
            &env,
            &slot,
            Some(&cred_a),
            &["origin", "HEAD:refs/heads/zombie"]
        )
        .code,
        0
    );
    push_as(
        &env,
        &slot,
        Some(&cred_a),
        &["-q", "--no-verify", "origin", "HEAD:refs/heads/zombie"],
    )
    .ok();
    let docs =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/hooks.md")).unwrap();
    assert!(
        docs.contains("--no-verify"),
        "docs/hooks.md documents the bypass"
    );
}

#[test]
fn check_reports_the_verdict_without_pushing() {
    let (env, repo) = installed();
    let a = spawn(&env, &repo, "t1", &[]);
    let slot = path_of(&a);
    let v = env
        .hand_env(
            &slot,
            &["check", "--json"],
            &[("GIT_HAND_LEASE", a["lease_id"].as_str().unwrap())],
        )
        .code(0)
        .json();
    assert_eq!(v["verdict"], "current");
    assert_eq!(v["credential"]["source"], "env");
    env.hand(&repo, &["teardown", "t1"]).ok();
    let run = env.hand(&slot, &["check"]).code(1);
    assert!(
        run.stdout
            .contains("a push from here would be refused (released)"),
        "{}",
        run.stdout
    );
    env.hand(&repo, &["check"]).code(0);
}

#[test]
fn a_broken_ledger_fails_the_push_closed_with_the_repair_command() {
    let (env, repo) = installed();
    let a = spawn(&env, &repo, "t1", &[]);
    let slot = path_of(&a);
    env.commit(&slot, "a.txt", "x\n");
    std::fs::write(env.ledger(), b"this is not a database, just garbage bytes of some length....................................................").unwrap();
    let _ = std::fs::remove_file(env.ledger().with_extension("sqlite-wal"));
    let _ = std::fs::remove_file(env.ledger().with_extension("sqlite-shm"));
    let run = push_as(&env, &slot, Some(&cred(&a)), &["origin", "HEAD"]);
    assert_ne!(run.code, 0, "a broken ledger must refuse");
    assert!(
        run.stderr.contains("cannot check this worktree's lease"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("git hand doctor"), "{}", run.stderr);
}

#[test]
fn require_credential_refuses_a_stamp_only_push() {
    let (env, repo) = installed();
    let a = spawn(&env, &repo, "t1", &[]);
    let slot = path_of(&a);
    env.commit(&slot, "a.txt", "x\n");
    // Set after the commit: with it, the commit itself would be refused (ref_fence.rs).
    env.git(&repo, &["config", "hand.requireCredential", "true"]);
    let run = push_as(&env, &slot, None, &["origin", "hand/t1"]);
    assert!(
        run.stderr.contains("push refused (no-credential)"),
        "{}",
        run.stderr
    );
    // Whose credential it needs, never the command that prints it (issue 22).
    assert!(run.stderr.contains("if you hold task t1"), "{}", run.stderr);
    assert!(!run.stderr.contains("git hand env t1"), "{}", run.stderr);
    push_as(&env, &slot, Some(&cred(&a)), &["-q", "origin", "hand/t1"]).ok();
}

#[test]
fn spawn_installs_the_hooks_or_says_loudly_that_the_lease_is_not_enforced() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let v = spawn(&env, &repo, "t1", &[]);
    assert_eq!(v["hooks"]["in_force"], true);
    let hook = std::fs::read_to_string(repo.join(".git/hooks/pre-push")).unwrap();
    assert!(hook.contains("git-hand hook pre-push"), "{hook}");

    let other = env.repo("husky");
    env.git(&other, &["config", "core.hooksPath", ".husky"]);
    let run = env.hand(&other, &["spawn", "t1"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("NOT enforced"), "{}", run.stderr);
    assert!(
        run.stderr.contains("git hand install --manual"),
        "{}",
        run.stderr
    );
    assert!(
        !other.join(".husky").exists(),
        "nothing was written into the other tool's directory"
    );
}

#[test]
fn git_dash_c_settings_reach_the_hook() {
    let (env, repo) = installed();
    let a = spawn(&env, &repo, "t1", &[]);
    let slot = path_of(&a);
    env.commit(&slot, "a.txt", "x\n");
    let run = env.git_run(
        &slot,
        &[
            "-c",
            "hand.requireCredential=true",
            "push",
            "origin",
            "hand/t1",
        ],
    );
    assert!(
        run.stderr.contains("push refused (no-credential)"),
        "{}",
        run.stderr
    );
    push_as(&env, &slot, None, &["-q", "origin", "hand/t1"]).ok();
}

#[test]
fn a_chained_post_checkout_hook_still_runs_for_the_switches_of_spawn_and_teardown() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let hooks = repo.join(".git/hooks");
    let record = env.path("post-checkout.log");
    let foreign = format!("#!/bin/sh\necho \"$*\" >> {}\n", record.display());
    std::fs::write(hooks.join("post-checkout"), &foreign).unwrap();
    std::fs::set_permissions(
        hooks.join("post-checkout"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    env.hand(&repo, &["install"]).ok();
    spawn(&env, &repo, "t1", &[]);
    env.hand(&repo, &["teardown", "t1"]).ok();
    let after_teardown = std::fs::read_to_string(&record)
        .unwrap_or_default()
        .lines()
        .count();
    assert!(
        after_teardown >= 1,
        "teardown's switch ran the chained hook"
    );
    spawn(&env, &repo, "t2", &[]);
    let after_reuse = std::fs::read_to_string(&record).unwrap().lines().count();
    assert_eq!(
        after_reuse,
        after_teardown + 1,
        "the reuse switch ran the chained hook"
    );
}
