//! Crash safety, tested rather than argued: spawn and teardown are killed at every named step
//! (`GIT_HAND_FAILPOINT`), then `doctor --repair` or a retry must leave the ledger and the
//! worktrees consistent, with no token reused and no commit lost.

use std::path::Path;

use crate::support::{TestEnv, assert_consistent, path_of, spawn};

const SPAWN_POINTS: &[&str] = &[
    "spawn-after-intent",
    "spawn-after-checkout",
    "spawn-after-stamp",
];
const TEARDOWN_POINTS: &[&str] = &[
    "teardown-after-intent",
    "teardown-after-clean",
    "teardown-after-detach",
    "teardown-after-release",
];

fn crash(env: &TestEnv, repo: &Path, point: &str, args: &[&str]) {
    let run = env.hand_env(repo, args, &[("GIT_HAND_FAILPOINT", point)]);
    assert_ne!(
        run.code, 0,
        "{point}: the failpoint did not fire\n{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!("failpoint {point} hit")),
        "{point}: {}",
        run.stderr
    );
}

/// The largest token ever issued for the slot at `path` (0 if none).
fn max_token_of(env: &TestEnv, path: &str) -> i64 {
    let conn = rusqlite::Connection::open(env.ledger()).unwrap();
    conn.query_row(
        "SELECT coalesce(max(t.token), 0) FROM tenures t JOIN resources r ON r.id = t.resource_id WHERE r.key = ?1",
        [path],
        |r| r.get(0),
    )
    .unwrap()
}

#[test]
fn spawn_crashed_after_installing_the_hooks_leaves_them_installed_and_nothing_leased() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    crash(&env, &repo, "spawn-after-hooks", &["spawn", "t1"]);
    let pre_push = repo.join(".git/hooks/pre-push");
    let shim = std::fs::read_to_string(&pre_push).unwrap_or_default();
    assert!(shim.contains("git-hand-managed-hook"), "{shim}");
    let list = env.hand(&repo, &["list", "--all", "--json"]).json();
    assert_eq!(list["tasks"], serde_json::json!([]), "{list}");
    let doctor = env.hand(&repo, &["doctor", "--json"]);
    assert_eq!(doctor.code, 0, "nothing to settle:\n{}", doctor.stdout);
    assert_consistent(&env, "spawn-after-hooks");
    spawn(&env, &repo, "t1", &[]);
    assert_consistent(&env, "spawn-after-hooks, then a spawn");
}

#[test]
fn spawn_crashed_at_every_step_is_settled_by_doctor_repair() {
    for point in SPAWN_POINTS {
        for reuse in [false, true] {
            let context = format!("{point} (reuse: {reuse})");
            let env = TestEnv::new();
            let repo = env.repo("app");
            if reuse {
                spawn(&env, &repo, "warm", &[]);
                env.hand(&repo, &["teardown", "warm"]).ok();
            }
            crash(&env, &repo, point, &["spawn", "t1"]);
            let slot1 = env.path("data/git-hand/pools").canonicalize().unwrap();
            let slot1 = std::fs::read_dir(&slot1)
                .unwrap()
                .next()
                .unwrap()
                .unwrap()
                .path()
                .join("1/app");
            let before = max_token_of(&env, slot1.to_str().unwrap());
            let doctor = env.hand(&repo, &["doctor", "--repair", "--json"]);
            assert_eq!(
                doctor.code, 0,
                "{context}: doctor left problems:\n{}",
                doctor.stdout
            );
            assert!(
                doctor.stdout.contains("stuck-spawn"),
                "{context}: {}",
                doctor.stdout
            );
            assert_consistent(&env, &context);
            let again = spawn(&env, &repo, "t1", &["--branch", "hand/t1-again"]);
            if path_of(&again) == slot1 {
                assert!(
                    again["token"].as_i64().unwrap() > before,
                    "{context}: the slot's token went back"
                );
            }
            assert_consistent(&env, &context);
        }
    }
}

#[test]
fn teardown_crashed_at_every_step_is_settled_by_doctor_or_a_retry_and_keeps_commits() {
    for point in TEARDOWN_POINTS {
        for retry in [false, true] {
            let context = format!("{point} (retry: {retry})");
            let env = TestEnv::new();
            let repo = env.repo("app");
            let path = path_of(&spawn(&env, &repo, "t1", &[]));
            let oid = env.commit(&path, "work.txt", "unpushed work\n");
            std::fs::write(path.join("scratch.txt"), "uncommitted\n").unwrap();
            crash(&env, &repo, point, &["teardown", "t1", "--force"]);
            if retry {
                env.hand(&repo, &["teardown", "t1", "--force"]).ok();
            } else {
                // Doctor never discards uncommitted work on its own: when the crash came before
                // `--force` discarded it, doctor leaves the task and names the command.
                let doctor = env.hand(&repo, &["doctor", "--repair", "--json"]);
                if doctor.code != 0 {
                    let v = doctor.json();
                    assert_eq!(
                        v["problems"][0]["command"], "git hand teardown t1 --force",
                        "{context}: {v:#}"
                    );
                    assert!(
                        path.join("scratch.txt").exists(),
                        "{context}: doctor discarded work"
                    );
                    env.hand(&repo, &["teardown", "t1", "--force"]).ok();
                }
            }
            assert_consistent(&env, &context);
            let list = env.hand(&repo, &["list", "--all", "--json"]).json();
            assert_eq!(list["tasks"][0]["state"], "done", "{context}");
            assert_eq!(
                env.git(&repo, &["rev-parse", "hand/t1"]),
                oid,
                "{context}: the commit was lost"
            );
            let next = spawn(&env, &repo, "t2", &[]);
            assert_eq!(path_of(&next), path, "{context}: the slot is reusable");
            assert_eq!(next["token"], 2, "{context}");
        }
    }
}

/// The collision regression: a teardown that crashed after freeing the slot leaves a task row
/// that still names the slot. The next spawn must get that slot and succeed.
#[test]
fn a_stale_task_row_from_a_crashed_teardown_never_blocks_the_next_spawn() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let path = path_of(&spawn(&env, &repo, "t1", &[]));
    crash(&env, &repo, "teardown-after-release", &["teardown", "t1"]);
    let list = env.hand(&repo, &["list", "--json"]).json();
    assert_eq!(
        list["tasks"][0]["state"], "tearing-down",
        "the stale row is there"
    );
    let next = spawn(&env, &repo, "t2", &[]);
    assert_eq!(
        path_of(&next),
        path,
        "the freed slot is taken despite the stale row"
    );
    assert_eq!(next["token"], 2);
    // Settling the stale row later never touches the slot that now belongs to t2.
    let out = env.hand(&repo, &["teardown", "t1", "--json"]).ok();
    assert!(out.contains("lease-ended"), "{out}");
    assert_eq!(
        env.git(&path, &["symbolic-ref", "--short", "HEAD"]),
        "hand/t2"
    );
    let status = env.hand(&path, &["status", "--json"]).json();
    assert_eq!(status["verdict"], "current");
    assert_consistent(&env, "collision");
}

#[test]
fn doctor_reports_a_crash_without_repair_and_exits_3() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    crash(&env, &repo, "spawn-after-checkout", &["spawn", "t1"]);
    let run = env.hand(&repo, &["doctor"]).code(3);
    assert!(run.stdout.contains("stuck-spawn"), "{}", run.stdout);
    assert!(run.stdout.contains("doctor --repair"), "{}", run.stdout);
    env.hand(&repo, &["doctor", "--repair"]).ok();
    env.hand(&repo, &["doctor"]).ok();
}

#[test]
fn prune_removes_only_free_clean_slots_and_is_a_dry_run_by_default() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let a = path_of(&spawn(&env, &repo, "a", &[]));
    let b = path_of(&spawn(&env, &repo, "b", &[]));
    let c = path_of(&spawn(&env, &repo, "c", &[]));
    env.hand(&repo, &["teardown", "a"]).ok();
    env.hand(&repo, &["teardown", "b"]).ok();
    std::fs::write(b.join("keep.txt"), "mine\n").unwrap();
    let dry = env.hand(&repo, &["prune", "--json"]).json();
    assert_eq!(dry["dry_run"], true);
    assert!(a.exists(), "a dry run removes nothing");
    let done = env.hand(&repo, &["prune", "--yes", "--json"]).json();
    assert_eq!(done["removed"], serde_json::json!([a.to_str().unwrap()]));
    assert!(!a.exists());
    assert!(
        b.join("keep.txt").exists(),
        "a slot with untracked files is kept"
    );
    assert!(c.exists(), "a leased slot is kept");
    let kept = done["kept"].to_string();
    assert!(
        kept.contains("untracked") && kept.contains("leased"),
        "{kept}"
    );
    let worktrees = env.git(&repo, &["worktree", "list"]);
    assert!(!worktrees.contains(a.to_str().unwrap()), "{worktrees}");
    let next = spawn(&env, &repo, "d", &[]);
    assert_eq!(path_of(&next), a, "a pruned slot number is created again");
    assert_eq!(next["token"], 2, "its token history continues");
}
