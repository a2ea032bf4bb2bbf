//! A task remembers the branch it was based on (schema version 5, `tasks.base_ref`): `list`
//! measures its worktree against that branch, not the default one, and `prune --branches`
//! counts its branch landed once its commits are on it. Rows from before, and tasks based on a
//! bare commit, fall back to the default branch as they always did.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{TestEnv, cred, git_with, installed, path_of, spawn};

/// The `base_ref` the ledger recorded for the open task `task`.
fn recorded_base_ref(env: &TestEnv, task: &str) -> Option<String> {
    let conn = rusqlite::Connection::open(env.ledger()).unwrap();
    conn.query_row(
        "SELECT base_ref FROM tasks WHERE name = ?1 AND state <> 'done'",
        [task],
        |r| r.get(0),
    )
    .unwrap()
}

/// The `base_branch` of a task's worktree in `list --json`.
fn base_branch(env: &TestEnv, repo: &Path, task: &str) -> Value {
    let v = env.hand(repo, &["list", "--json"]).code(0).json();
    let t = v["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["task"] == task)
        .unwrap_or_else(|| panic!("{task} is not listed: {v:#}"))
        .clone();
    t["worktree"]["base_branch"].clone()
}

/// A commit on `branch` (not checked out anywhere) with `file`, made through a temporary
/// checkout of the main worktree.
fn commit_on(env: &TestEnv, repo: &Path, branch: &str, file: &str) {
    env.git(repo, &["checkout", "-q", branch]);
    env.commit(repo, file, file);
    env.git(repo, &["checkout", "-q", "main"]);
}

/// A repository whose `release` branch split from main: main has two commits release lacks,
/// release one main lacks. Then task `a`, spawned from release, commits once, and release
/// moves on by one more: `a` is 1 ahead and 1 behind release, 2 ahead and 2 behind main.
fn task_on_release() -> (TestEnv, PathBuf, Value) {
    let (env, repo) = installed();
    env.git(&repo, &["branch", "release"]);
    env.commit(&repo, "m1", "m1");
    env.commit(&repo, "m2", "m2");
    commit_on(&env, &repo, "release", "r1");
    let a = spawn(&env, &repo, "a", &["--base", "release"]);
    let commit = git_with(
        &env,
        &path_of(&a),
        &cred(&a),
        &["commit", "-q", "--allow-empty", "-m", "t1"],
    );
    commit.ok();
    commit_on(&env, &repo, "release", "r2");
    (env, repo, a)
}

#[test]
fn list_measures_a_task_spawned_from_release_against_release_not_main() {
    let (env, repo, _) = task_on_release();
    let base = base_branch(&env, &repo, "a");
    assert_eq!(base["ref"], "release", "{base:#}");
    assert_eq!(base["source"], "task-base", "{base:#}");
    assert_eq!(
        (base["ahead"].as_u64(), base["behind"].as_u64()),
        (Some(1), Some(1))
    );
    let text = env.hand(&repo, &["list"]).ok();
    let row = text.lines().find(|l| l.starts_with("a ")).unwrap();
    assert!(row.contains("+1 -1"), "{text}");
}

#[test]
fn spawn_records_a_branch_base_by_its_full_name_and_a_commit_base_as_none() {
    let (env, repo) = installed();
    env.git(&repo, &["branch", "release"]);
    let head = env.git(&repo, &["rev-parse", "HEAD"]);
    spawn(&env, &repo, "default", &[]);
    spawn(&env, &repo, "release", &["--base", "release"]);
    spawn(&env, &repo, "remote", &["--base", "origin/main"]);
    spawn(&env, &repo, "oid", &["--base", &head]);
    spawn(&env, &repo, "head", &["--base", "HEAD"]);
    env.commit(&repo, "m1", "m1");
    spawn(&env, &repo, "back", &["--base", "main~1"]);
    let recorded: Vec<Option<String>> = ["default", "release", "remote", "oid", "head", "back"]
        .iter()
        .map(|t| recorded_base_ref(&env, t))
        .collect();
    assert_eq!(
        recorded,
        [
            Some("refs/heads/main".to_string()),
            Some("refs/heads/release".to_string()),
            Some("refs/remotes/origin/main".to_string()),
            None,
            None,
            None,
        ]
    );
    // A task based on a bare commit is measured against the default branch.
    let base = base_branch(&env, &repo, "back");
    assert_eq!(base["ref"], "main", "{base:#}");
    assert_eq!(base["source"], "default-branch", "{base:#}");
}

#[test]
fn a_task_without_a_base_ref_or_whose_base_is_gone_is_measured_against_the_default_branch() {
    let (env, repo, _) = task_on_release();
    // A row as schema version 4 left it: no base_ref.
    let conn = rusqlite::Connection::open(env.ledger()).unwrap();
    conn.execute("UPDATE tasks SET base_ref = NULL WHERE name = 'a'", [])
        .unwrap();
    drop(conn);
    let base = base_branch(&env, &repo, "a");
    assert_eq!(base["ref"], "main", "{base:#}");
    assert_eq!(base["source"], "default-branch", "{base:#}");
    assert_eq!(
        (base["ahead"].as_u64(), base["behind"].as_u64()),
        (Some(2), Some(2))
    );

    // A recorded base branch that was deleted since.
    let conn = rusqlite::Connection::open(env.ledger()).unwrap();
    conn.execute(
        "UPDATE tasks SET base_ref = 'refs/heads/release' WHERE name = 'a'",
        [],
    )
    .unwrap();
    drop(conn);
    assert_eq!(base_branch(&env, &repo, "a")["ref"], "release");
    env.git(&repo, &["branch", "-D", "release"]);
    let base = base_branch(&env, &repo, "a");
    assert_eq!(base["ref"], "main", "{base:#}");
    assert_eq!(base["source"], "default-branch", "{base:#}");
}

#[test]
fn prune_branches_deletes_a_branch_landed_on_its_own_base_and_keeps_one_that_is_not() {
    let (env, repo, _) = task_on_release();
    // hand/a's commit lands on release (merged), on no remote and not on main.
    env.hand(&repo, &["teardown", "a", "--force"]).ok();
    env.git(&repo, &["checkout", "-q", "release"]);
    env.git(&repo, &["merge", "-q", "--no-edit", "hand/a"]);
    env.git(&repo, &["checkout", "-q", "main"]);
    // hand/b's commit is on release's line nowhere.
    let b = spawn(&env, &repo, "b", &["--base", "release"]);
    git_with(
        &env,
        &path_of(&b),
        &cred(&b),
        &["commit", "-q", "--allow-empty", "-m", "unlanded b"],
    )
    .ok();
    env.hand(&repo, &["teardown", "b", "--force"]).ok();

    let done = env
        .hand(&repo, &["prune", "--branches", "--yes", "--json"])
        .json();
    assert_eq!(done["deleted"][0]["branch"], "hand/a", "{done:#}");
    assert_eq!(done["deleted"].as_array().unwrap().len(), 1, "{done:#}");
    assert_eq!(done["kept"][0]["branch"], "hand/b", "{done:#}");
    let why = done["kept"][0]["why"][0].as_str().unwrap();
    assert!(
        why.starts_with("1 commit(s) on neither release, main nor a remote-tracking branch"),
        "{why}"
    );
    assert_eq!(
        done["kept"][0]["hint"],
        "git log --oneline hand/b --not --remotes release main   # push or merge them, then prune again"
    );
    let gone = env.git_run(&repo, &["rev-parse", "--verify", "-q", "refs/heads/hand/a"]);
    assert_ne!(gone.code, 0, "hand/a was deleted");
}
