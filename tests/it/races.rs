//! Races found in review, made deterministic: a `git` wrapper first on PATH stops one
//! git-hand process at a named git command ([`GitPause`]) until the test has run the other
//! command, so the race is exercised every time, whatever the machine's speed.

use crate::support::{GitPause, TestEnv, finish, path_of, spawn};

/// Past a 1 s TTL: the only sleep here is real time passing for a lease to expire.
fn let_a_1s_lease_expire() {
    std::thread::sleep(std::time::Duration::from_millis(1200));
}

#[test]
fn prune_never_removes_a_slot_leased_while_it_ran() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    spawn(&env, &repo, "a", &[]);
    env.hand(&repo, &["teardown", "a"]).ok();
    // Prune has read the pool and is proving the free slot clean when b leases it.
    let pause = GitPause::new(&env, "prune", "status --porcelain");
    let prune = pause.start(&env, &repo, &["prune", "--yes"]);
    pause.wait_until_paused();
    let b = spawn(&env, &repo, "b", &[]);
    pause.release();
    finish(prune).ok();
    let path = path_of(&b);
    assert!(
        path.join(".git").is_file(),
        "b's slot was removed under it: {}",
        path.display()
    );
    assert_eq!(
        env.git(&path, &["symbolic-ref", "--short", "HEAD"]),
        "hand/b"
    );
}

#[test]
fn doctor_repair_leaves_a_spawn_in_progress_alone() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let pause = GitPause::new(&env, "add", "worktree add");
    let a = pause.start(&env, &repo, &["spawn", "a", "--json"]);
    pause.wait_until_paused();
    env.hand(&repo, &["doctor", "--repair"]).ok();
    pause.release();
    let a = finish(a).ok();
    let a: serde_json::Value = serde_json::from_str(&a).unwrap();
    assert!(
        path_of(&a).join(".git").is_file(),
        "the new slot was removed"
    );
    let list = env.hand(&repo, &["list", "--json"]).json();
    assert_eq!(list["tasks"][0]["state"], "active");
    assert_eq!(
        list["tasks"][0]["lease"]["ended_at"],
        serde_json::Value::Null
    );
}

#[test]
fn a_ttl_shorter_than_the_spawn_never_puts_two_tasks_in_one_slot() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    spawn(&env, &repo, "warm", &[]);
    env.hand(&repo, &["teardown", "warm"]).ok();
    let pause = GitPause::new(&env, "switch", "-c hand/a");
    let a = pause.start(&env, &repo, &["spawn", "a", "--ttl", "1s", "--json"]);
    pause.wait_until_paused();
    let_a_1s_lease_expire();
    let b = spawn(&env, &repo, "b", &[]);
    pause.release();
    let a = finish(a).ok();
    let a: serde_json::Value = serde_json::from_str(&a).unwrap();
    assert_ne!(path_of(&a), path_of(&b), "two tasks share a worktree");
    assert_eq!(
        env.git(&path_of(&a), &["symbolic-ref", "--short", "HEAD"]),
        "hand/a"
    );
    assert_eq!(
        env.git(&path_of(&b), &["symbolic-ref", "--short", "HEAD"]),
        "hand/b"
    );
}

#[test]
fn tearing_down_an_expired_task_never_detaches_the_next_tenant() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let a = spawn(&env, &repo, "a", &["--ttl", "1s"]);
    let_a_1s_lease_expire();
    let pause = GitPause::new(&env, "detach", "switch --detach");
    let teardown = pause.start(&env, &repo, &["teardown", "a"]);
    pause.wait_until_paused();
    let b = spawn(&env, &repo, "b", &[]);
    pause.release();
    finish(teardown).ok();
    assert_ne!(
        path_of(&b),
        path_of(&a),
        "b took the slot teardown was working in"
    );
    assert_eq!(
        env.git(&path_of(&b), &["symbolic-ref", "--short", "HEAD"]),
        "hand/b"
    );
}

#[test]
fn re_adding_an_adopted_worktree_keeps_one_task_on_its_lease() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.hand(&repo, &["install"]).ok();
    env.git(&repo, &["config", "hand.adoptWorktrees", "true"]);
    let wt = env.path("work/wt1");
    env.git(&repo, &["worktree", "add", "-q", wt.to_str().unwrap()]);
    env.git(&repo, &["worktree", "remove", wt.to_str().unwrap()]);
    env.git(
        &repo,
        &["worktree", "add", "-q", "-B", "wt1", wt.to_str().unwrap()],
    );
    let list = env.hand(&repo, &["list", "--json"]).json();
    assert_eq!(list["tasks"].as_array().unwrap().len(), 1, "{list:#}");
    let status = env.hand(&wt, &["status", "--json"]).json();
    assert_eq!(
        status["verdict"], "current",
        "the stamp was written again: {status:#}"
    );
}
