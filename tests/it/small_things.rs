//! Small things users hit (issue 13, item 9), through the binary: a failed `spawn --exec`
//! command says the task stays active and how to end it, an empty repository's spawn names the
//! real cause (no commits yet), and a teardown blocked by an untracked file does not advise
//! pushing. Their exact words are pinned in `pinned_errors.rs`.

use crate::support::{TestEnv, installed, path_of, spawn};

#[test]
fn a_failed_exec_command_says_the_task_stays_active_and_how_to_end_it() {
    let (env, repo) = installed();
    for (task, cmd, status) in [("t1", "false", 1), ("t7", "exit 7", 7)] {
        let run = env
            .hand(&repo, &["spawn", task, "--exec", "--", "sh", "-c", cmd])
            .code(status);
        let err = &run.stderr;
        assert!(
            err.contains(&format!("exited with status {status}")),
            "{run:?}"
        );
        assert!(
            err.contains(&format!("task {task} stays active")),
            "{run:?}"
        );
        assert!(
            err.contains(&format!("git hand teardown {task}")),
            "{run:?}"
        );
        let list = env.hand(&repo, &["list", "--json"]).ok();
        assert!(list.contains(&format!("\"{task}\"")), "{list}");
    }
    // A command that succeeds says nothing of its own.
    let run = env
        .hand(&repo, &["spawn", "t0", "--exec", "--", "true"])
        .code(0);
    assert_eq!(run.stderr, "", "{run:?}");
}

#[test]
fn an_empty_repository_says_it_has_no_commits_yet() {
    let env = TestEnv::new();
    let work = env.path("work");
    env.git(&work, &["init", "-q", "-b", "main", "empty"]);
    let empty = work.join("empty");
    let says_no_commits = |when: &str| {
        let run = env.hand(&empty, &["spawn", "a"]).code(2);
        assert!(
            run.stderr.contains("this repository has no commits yet"),
            "{when}: {run:?}"
        );
        assert!(
            !run.stderr.contains("init.defaultBranch"),
            "{when}: {run:?}"
        );
        assert!(run.stderr.contains("git commit"), "{when}: {run:?}");
    };
    says_no_commits("HEAD an unborn main");
    env.git(&empty, &["config", "init.defaultBranch", "main"]);
    says_no_commits("init.defaultBranch set");
    env.git(
        &empty,
        &[
            "symbolic-ref",
            "refs/remotes/origin/HEAD",
            "refs/remotes/origin/trunk",
        ],
    );
    says_no_commits("origin/HEAD naming a branch with no commit");
    // With a first commit (and origin/HEAD gone), spawn works.
    env.git(&empty, &["symbolic-ref", "-d", "refs/remotes/origin/HEAD"]);
    env.commit(&empty, "README", "hello\n");
    env.hand(&empty, &["spawn", "a"]).ok();
}

#[test]
fn teardown_blocked_by_an_untracked_file_does_not_advise_pushing() {
    let (env, repo) = installed();
    let slot = path_of(&spawn(&env, &repo, "scratch", &[]));
    std::fs::write(slot.join("notes.txt"), "wip\n").unwrap();
    let run = env.hand(&repo, &["teardown", "scratch"]).code(3);
    let hints: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.trim_start().starts_with("hint:"))
        .collect();
    assert!(!hints.is_empty(), "{run:?}");
    for hint in &hints {
        assert!(!hint.contains("push"), "advises pushing: {hint}\n{run:?}");
    }
    let slot = slot.display().to_string();
    assert!(
        hints
            .iter()
            .any(|h| h.contains(&format!("git -C {slot} status"))),
        "{run:?}"
    );
    assert!(hints.iter().any(|h| h.contains("stash")), "{run:?}");
    assert!(
        hints
            .iter()
            .any(|h| h.contains("git hand teardown scratch --force")),
        "{run:?}"
    );
    // Each way out the hints give works: here, the stash.
    env.git(
        std::path::Path::new(&slot),
        &["stash", "--include-untracked"],
    );
    env.hand(&repo, &["teardown", "scratch"]).ok();
}
