//! Names that differ only in case (issue 24 item 3): on a case-insensitive filesystem (macOS's
//! default) the branches `hand/fix` and `hand/Fix` are one ref file, so spawn refuses such a
//! pair on every platform, naming the other task or branch and the command that gets out of it.
//! Names that are not such a pair are unaffected.

use std::path::Path;

use crate::support::{Run, TestEnv, installed, spawn};

/// The open tasks' names (`list --json`).
fn open_tasks(env: &TestEnv, repo: &Path) -> Vec<String> {
    let v = env.hand(repo, &["list", "--json"]).code(0).json();
    v["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["task"].as_str().unwrap().to_string())
        .collect()
}

/// Whether `refs/heads/<branch>` exists.
fn has_branch(env: &TestEnv, repo: &Path, branch: &str) -> bool {
    let refname = format!("refs/heads/{branch}");
    env.git_run(repo, &["rev-parse", "--verify", "--quiet", &refname])
        .code
        == 0
}

/// Asserts a precondition refusal (exit 3) that says `said`, with nothing created.
#[track_caller]
fn refused(run: Run, said: &[&str]) -> String {
    let run = run.code(3);
    for s in said {
        assert!(
            run.stderr.contains(s),
            "{s:?} missing from:\n{}",
            run.stderr
        );
    }
    assert!(run.stderr.contains("nothing was created"), "{}", run.stderr);
    run.stderr
}

#[test]
fn a_task_name_that_differs_only_in_case_from_an_open_task_is_refused_naming_it() {
    let (env, repo) = installed();
    spawn(&env, &repo, "fix", &[]);
    refused(
        env.hand(&repo, &["spawn", "Fix"]),
        &[
            "task Fix differs only in case from open task fix",
            "case-insensitive filesystem",
            "git hand spawn Fix-2",
            "git hand teardown fix",
        ],
    );
    // With a branch of its own too: the task names themselves are the pair.
    refused(
        env.hand(&repo, &["spawn", "FIX", "--branch", "elsewhere"]),
        &["open task fix"],
    );
    assert_eq!(open_tasks(&env, &repo), ["fix"]);
    assert!(!has_branch(&env, &repo, "hand/Fix"));
    assert!(!has_branch(&env, &repo, "elsewhere"));
    // The way out it named works, and the task itself is still resumed by its own name.
    spawn(&env, &repo, "Fix-2", &[]);
    assert_eq!(spawn(&env, &repo, "fix", &[])["slot_source"], "existing");
    // Once fix has ended (its branch kept), Fix is refused for the branch.
    env.hand(&repo, &["teardown", "fix"]).ok();
    refused(
        env.hand(&repo, &["spawn", "Fix"]),
        &["branch hand/Fix differs only in case from the existing branch hand/fix"],
    );
}

#[test]
fn a_branch_that_differs_only_in_case_from_a_kept_branch_is_refused_with_the_ways_out() {
    let (env, repo) = installed();
    spawn(&env, &repo, "fix", &[]);
    env.hand(&repo, &["teardown", "fix"]).ok();
    assert!(
        has_branch(&env, &repo, "hand/fix"),
        "teardown keeps the branch"
    );
    refused(
        env.hand(&repo, &["spawn", "Fix"]),
        &[
            "branch hand/Fix differs only in case from the existing branch hand/fix",
            "git hand spawn Fix-2",
            "git hand spawn Fix --branch hand/fix",
        ],
    );
    assert!(open_tasks(&env, &repo).is_empty());
    assert!(!has_branch(&env, &repo, "hand/Fix"));
    // Both ways out work.
    spawn(&env, &repo, "Fix-2", &[]);
    let continued = spawn(&env, &repo, "Fix", &["--branch", "hand/fix"]);
    assert_eq!(continued["branch"], "hand/fix");
}

#[test]
fn an_explicit_branch_that_differs_only_in_case_from_a_local_branch_is_refused() {
    let (env, repo) = installed();
    env.git(&repo, &["branch", "Feature/Login"]);
    refused(
        env.hand(&repo, &["spawn", "login", "--branch", "feature/login"]),
        &[
            "branch feature/login differs only in case from the existing branch Feature/Login",
            "git hand spawn login --branch feature/login-2",
            "git hand spawn login --branch Feature/Login",
        ],
    );
    assert!(!has_branch(&env, &repo, "feature/login"));
    // An open task's branch: the refusal names the task and its teardown.
    spawn(&env, &repo, "a", &["--branch", "Topic"]);
    refused(
        env.hand(&repo, &["spawn", "b", "--branch", "topic"]),
        &[
            "branch topic differs only in case from open task a's branch Topic",
            "git hand teardown a",
        ],
    );
    assert_eq!(open_tasks(&env, &repo), ["a"]);
}

#[test]
fn names_that_differ_in_more_than_case_are_unaffected() {
    let (env, repo) = installed();
    env.git(&repo, &["branch", "hand/fix-old"]);
    spawn(&env, &repo, "fix", &[]);
    for name in ["fix2", "Fixes", "xfix", "fix-old-2"] {
        spawn(&env, &repo, name, &[]);
    }
    spawn(&env, &repo, "other", &["--branch", "hand/FIX-OLDER"]);
    let mut names = open_tasks(&env, &repo);
    names.sort();
    assert_eq!(
        names,
        ["Fixes", "fix", "fix-old-2", "fix2", "other", "xfix"]
    );
}

#[test]
fn a_task_name_that_differs_only_in_case_from_one_open_on_another_machine_is_refused() {
    let db = crate::pg::database();
    let m = crate::team_machines::two_machines(&db.tcp_url());
    m.laptop
        .hand_env(
            &m.repo,
            &["spawn", "fix-login"],
            &[("GIT_HAND_HOLDER", "alice")],
        )
        .ok();
    refused(
        m.runner.hand(&m.clone, &["spawn", "Fix-Login"]),
        &[
            "task Fix-Login differs only in case from open task fix-login on machine laptop, \
             held by alice",
            "git hand spawn Fix-Login-2",
            "ask alice to run on laptop: git hand teardown fix-login",
        ],
    );
    assert_eq!(
        db.psql("SELECT count(*) FROM tasks WHERE machine = 'runner'"),
        "0",
        "nothing was recorded for the runner"
    );
    spawn(&m.runner, &m.clone, "fix-login-2", &[]);
}

#[test]
fn an_adopted_worktree_named_like_an_open_task_but_for_case_gets_a_variant() {
    let (env, repo) = installed();
    env.git(&repo, &["config", "hand.adoptWorktrees", "true"]);
    spawn(&env, &repo, "fix", &[]);
    let dir = env.path("work/Fix");
    let run = env.git_run(
        &repo,
        &["worktree", "add", "-b", "adopted", dir.to_str().unwrap()],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("leased this worktree as task Fix-2"),
        "{}",
        run.stderr
    );
    let mut names = open_tasks(&env, &repo);
    names.sort();
    assert_eq!(names, ["Fix-2", "fix"]);
}
