//! Races found in review, made deterministic: a `git` wrapper first on PATH sleeps when its
//! arguments match, holding one git-hand process in the middle of its work while another runs.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

use crate::pool::{path_of, spawn};
use crate::support::{BIN, Run, TestEnv};

/// How long the wrapped git sleeps: long enough for the other command to run meanwhile.
const HOLD: &str = "1.5";

/// A directory with a `git` that sleeps [`HOLD`] seconds before running the real git whenever
/// its arguments contain `pattern`. It sleeps outside the worktree (`cd /`), as a git-hand
/// process between two steps would be, so the "process inside the slot" check does not hide
/// the race.
fn slow_git(env: &TestEnv, pattern: &str) -> PathBuf {
    let dir = env.path("slow-git");
    std::fs::create_dir_all(&dir).unwrap();
    let real = which::which("git").unwrap();
    let script = format!(
        "#!/bin/sh\ncase \"$*\" in *'{pattern}'*) here=$PWD; cd /; sleep {HOLD}; cd \"$here\";; esac\nexec {} \"$@\"\n",
        real.display()
    );
    let git = dir.join("git");
    std::fs::write(&git, script).unwrap();
    std::fs::set_permissions(&git, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    dir
}

/// The binary, run in the background with the slow git first on PATH.
fn start_slow(env: &TestEnv, slow: &Path, dir: &Path, args: &[&str]) -> Child {
    let mut cmd: Command = env.command(BIN, dir);
    let path = format!(
        "{}:{}:/usr/local/bin:/usr/bin:/bin",
        slow.display(),
        TestEnv::bin_dir().display()
    );
    cmd.args(args)
        .env("PATH", path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    cmd.spawn().unwrap()
}

fn finish(child: Child) -> Run {
    let out = child.wait_with_output().unwrap();
    Run::from(out)
}

fn pause(ms: u64) {
    std::thread::sleep(Duration::from_millis(ms));
}

#[test]
fn prune_never_removes_a_slot_leased_while_it_ran() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    spawn(&env, &repo, "a", &[]);
    env.hand(&repo, &["teardown", "a"]).ok();
    let slow = slow_git(&env, "worktree unlock");
    let prune = start_slow(&env, &slow, &repo, &["prune", "--yes"]);
    pause(500);
    let b = spawn(&env, &repo, "b", &[]);
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
    let slow = slow_git(&env, "worktree add");
    let a = start_slow(&env, &slow, &repo, &["spawn", "a", "--json"]);
    pause(500);
    env.hand(&repo, &["doctor", "--repair"]).ok();
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
    let slow = slow_git(&env, "-c hand/a");
    let a = start_slow(&env, &slow, &repo, &["spawn", "a", "--ttl", "1s", "--json"]);
    pause(1200);
    let b = spawn(&env, &repo, "b", &[]);
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
    pause(1200);
    let slow = slow_git(&env, "switch --detach");
    let teardown = start_slow(&env, &slow, &repo, &["teardown", "a"]);
    pause(500);
    let b = spawn(&env, &repo, "b", &[]);
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
