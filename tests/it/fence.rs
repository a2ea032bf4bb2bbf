//! Branch fencing is keyed on what the remote sees: the normalized remote URL and the branch, so
//! a second clone of the same origin on the same ledger cannot push over a live task's branch
//! (issue 10: 3).

use std::path::{Path, PathBuf};

use crate::support::{Run, TestEnv, path_of, remote_oid, spawn};

/// `app` (clone 1) and `clone2`, both of `app-origin.git`, on one ledger, hooks installed in both.
fn two_clones() -> (TestEnv, PathBuf, PathBuf) {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.hand(&repo, &["install"]).ok();
    let work = env.path("work");
    let origin = work.join("app-origin.git");
    env.git(&work, &["clone", "-q", origin.to_str().unwrap(), "clone2"]);
    let clone2 = work.join("clone2").canonicalize().unwrap();
    env.hand(&clone2, &["install"]).ok();
    (env, repo, clone2)
}

fn push(env: &TestEnv, dir: &Path, args: &[&str]) -> Run {
    let mut all = vec!["push"];
    all.extend(args);
    env.git_run(dir, &all)
}

fn on_origin(env: &TestEnv, branch: &str) -> bool {
    remote_oid(env, &env.path("work/app-origin.git"), branch).is_some()
}

#[test]
fn a_second_clone_cannot_push_over_a_live_tasks_branch_until_it_is_torn_down() {
    let (env, repo, clone2) = two_clones();
    spawn(&env, &repo, "a", &[]);
    env.git(&clone2, &["switch", "-q", "-c", "hand/a"]);
    env.commit(&clone2, "c2.txt", "from clone 2\n");

    let refused = push(&env, &clone2, &["origin", "hand/a"]);
    assert_ne!(refused.code, 0, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("branch hand/a belongs to live task a"),
        "names the task: {}",
        refused.stderr
    );
    assert!(!on_origin(&env, "hand/a"));
    // Another spelling of the same remote is the same remote.
    let url = format!("file://{}", env.path("work/app-origin.git").display());
    let respelled = push(&env, &clone2, &[&url, "hand/a"]);
    assert_ne!(respelled.code, 0, "{}", respelled.stderr);
    assert!(!on_origin(&env, "hand/a"));

    // The same branch name on another remote is another branch.
    let other = env.path("work/other.git");
    env.git(
        &env.path("work"),
        &["init", "-q", "--bare", other.to_str().unwrap()],
    );
    push(&env, &clone2, &["-q", other.to_str().unwrap(), "hand/a"]).ok();

    env.hand(&repo, &["teardown", "a"]).ok();
    push(&env, &clone2, &["-q", "origin", "hand/a"]).ok();
    assert!(on_origin(&env, "hand/a"));
}

#[test]
fn the_task_itself_pushes_its_branch_from_its_slot() {
    let (env, repo, _clone2) = two_clones();
    let a = spawn(&env, &repo, "a", &[]);
    let slot = path_of(&a);
    env.commit(&slot, "a.txt", "mine\n");
    push(&env, &slot, &["-q", "origin", "hand/a"]).ok();
    assert!(on_origin(&env, "hand/a"));
}

#[test]
fn a_task_recorded_without_a_remote_is_still_fenced_by_its_repository() {
    let (env, repo, clone2) = two_clones();
    spawn(&env, &repo, "a", &[]);
    // What a ledger from before version 4 holds: no remote for the task.
    let conn = rusqlite::Connection::open(env.ledger()).unwrap();
    conn.execute("UPDATE tasks SET remote = NULL", []).unwrap();
    drop(conn);
    env.git(&repo, &["switch", "-q", "-c", "hand/a-copy"]);
    env.commit(&repo, "m.txt", "main\n");
    let refused = push(&env, &repo, &["origin", "HEAD:refs/heads/hand/a"]);
    assert!(
        refused.stderr.contains("belongs to live task a"),
        "{}",
        refused.stderr
    );
    // Such a row knows no remote: only its own repository is fenced, as before.
    env.git(&clone2, &["switch", "-q", "-c", "hand/a"]);
    env.commit(&clone2, "c2.txt", "from clone 2\n");
    push(&env, &clone2, &["-q", "origin", "hand/a"]).ok();
}

#[test]
fn a_second_clone_cannot_spawn_a_task_on_a_live_tasks_branch() {
    let (env, repo, clone2) = two_clones();
    spawn(&env, &repo, "a", &[]);
    let refused = env.hand(&clone2, &["spawn", "a"]).code(3);
    assert!(
        refused
            .stderr
            .contains("branch hand/a belongs to open task a"),
        "{}",
        refused.stderr
    );
    env.hand(&repo, &["teardown", "a"]).ok();
    spawn(&env, &clone2, "a", &[]);
}

/// Whether a statement the server logged reads one task's whole row by its id
/// (`View::task`).
fn reads_a_task_row(statement: &str) -> bool {
    statement.contains("FROM tasks WHERE id = ")
}

#[test]
fn a_push_over_a_stale_tasks_branch_reads_its_tenure_and_never_its_task_row() {
    // Counted on a team ledger whose database logs every statement: the fence reads each
    // candidate's tenure first, and the wide task row only of a candidate that fences.
    let db = crate::pg::database();
    db.log_statements();
    let env = TestEnv::on_team_ledger(&db.url());
    let repo = env.repo("app");
    env.hand(&repo, &["install"]).ok();
    spawn(&env, &repo, "stale", &["--ttl", "1s"]);
    spawn(&env, &repo, "live", &[]);
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let read_rows = |branch: &str| {
        let from = db.log_len();
        let run = push(
            &env,
            &repo,
            &["origin", &format!("HEAD:refs/heads/{branch}")],
        );
        let statements = db.logged_statements(from, "git-hand");
        let rows = statements
            .iter()
            .filter(|(_, s)| reads_a_task_row(s))
            .count();
        (run, rows, statements)
    };

    let (run, rows, statements) = read_rows("hand/stale");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(on_origin(&env, "hand/stale"));
    assert_eq!(rows, 0, "{statements:#?}");

    // The live task's branch: its row is read, for the refusal that names it.
    let (run, rows, statements) = read_rows("hand/live");
    assert_ne!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("branch hand/live belongs to live task live")
    );
    assert_eq!(rows, 1, "{statements:#?}");
}

#[test]
fn every_spelling_git_opens_as_the_origin_is_fenced_as_the_origin() {
    let (env, repo, clone2) = two_clones();
    spawn(&env, &repo, "a", &[]);
    env.git(&clone2, &["switch", "-q", "-c", "hand/a"]);
    env.commit(&clone2, "c2.txt", "from clone 2\n");
    let origin = env.path("work/app-origin.git").canonicalize().unwrap();
    // git ignores a file:// URL's host, and opens `<path>.git` for `<path>` (issue 22).
    std::os::unix::fs::symlink(&origin, env.path("work/link.git")).unwrap();
    let link = env.path("work/link");
    for url in [
        format!("file://localhost{}", origin.display()),
        link.display().to_string(),
        format!("file://{}", link.display()),
    ] {
        let refused = push(&env, &clone2, &[&url, "hand/a"]);
        assert_ne!(refused.code, 0, "{url} took the push: {}", refused.stderr);
        assert!(
            refused
                .stderr
                .contains("branch hand/a belongs to live task a"),
            "{url}: {}",
            refused.stderr
        );
        assert!(!on_origin(&env, "hand/a"), "{url}");
    }
}
