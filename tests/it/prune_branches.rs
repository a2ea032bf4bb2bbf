//! `git hand prune --branches` (issue 13): the branches done tasks leave behind are deleted once
//! every commit on them landed (on the default branch or a remote), never anything unlanded,
//! never an open task's; a dry run unless `--yes`. And `prune`'s progress on a terminal.

use std::path::Path;

use crate::support::{
    GitPause, TestEnv, cred, finish, installed, path_of, push, short_oid_free, spawn,
};

fn branch_oid(env: &TestEnv, repo: &Path, branch: &str) -> Option<String> {
    let run = env.git_run(
        repo,
        &[
            "rev-parse",
            "--verify",
            "-q",
            &format!("refs/heads/{branch}"),
        ],
    );
    (run.code == 0).then(|| run.stdout.trim().to_string())
}

/// A task that committed one file in its slot; returns its spawn JSON.
fn task_with_a_commit(env: &TestEnv, repo: &Path, task: &str) -> serde_json::Value {
    let spawned = spawn(env, repo, task, &[]);
    crate::support::git_with(
        env,
        &path_of(&spawned),
        &cred(&spawned),
        &[
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            &format!("change {task}"),
        ],
    )
    .ok();
    spawned
}

/// The repository after five tasks: `pushed` (its branch on origin), `merged` (merged into
/// main), `empty` (no commit), `unlanded` (a commit nowhere else), all done; and `taken`, done,
/// whose branch the open task `reuser` now uses.
fn five_done_tasks() -> (TestEnv, std::path::PathBuf) {
    let (env, repo) = installed();
    let pushed = task_with_a_commit(&env, &repo, "pushed");
    push(
        &env,
        &path_of(&pushed),
        &cred(&pushed),
        &["-q", "-u", "origin", "hand/pushed"],
    )
    .ok();
    env.hand(&repo, &["teardown", "pushed"]).ok();

    task_with_a_commit(&env, &repo, "merged");
    env.git(&repo, &["merge", "-q", "--ff-only", "hand/merged"]);
    // On main here, on no remote: teardown wants --force, prune counts it landed.
    env.hand(&repo, &["teardown", "merged", "--force"]).ok();

    spawn(&env, &repo, "empty", &[]);
    env.hand(&repo, &["teardown", "empty"]).ok();

    task_with_a_commit(&env, &repo, "unlanded");
    env.hand(&repo, &["teardown", "unlanded", "--force"]).ok();

    spawn(&env, &repo, "taken", &[]);
    env.hand(&repo, &["teardown", "taken"]).ok();
    spawn(&env, &repo, "reuser", &["--branch", "hand/taken"]);
    spawn(&env, &repo, "open", &[]);
    (env, repo)
}

#[test]
fn prune_branches_deletes_landed_branches_and_keeps_unlanded_and_open_ones() {
    let (env, repo) = five_done_tasks();
    let before: Vec<_> = ["pushed", "merged", "empty", "unlanded", "taken", "open"]
        .iter()
        .map(|t| branch_oid(&env, &repo, &format!("hand/{t}")).unwrap())
        .collect();

    let dry = env.hand(&repo, &["prune", "--branches", "--json"]).json();
    assert_eq!(dry["dry_run"], true);
    let names = |list: &serde_json::Value| -> Vec<String> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|d| d["branch"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        names(&dry["deleted"]),
        ["hand/empty", "hand/merged", "hand/pushed"]
    );
    assert_eq!(names(&dry["kept"]), ["hand/taken", "hand/unlanded"]);
    assert_eq!(dry["kept"][0]["why"][0], "task reuser is active on it");
    let unlanded = dry["kept"][1]["why"][0].as_str().unwrap();
    assert!(
        unlanded.starts_with("1 commit(s) on neither main nor a remote-tracking branch, e.g. ")
            && unlanded.ends_with(" change unlanded"),
        "{unlanded}"
    );
    assert_eq!(dry["deleted"][0]["tasks"][0], "empty");
    assert_eq!(dry["deleted"][2]["oid"], before[0].as_str());
    // A dry run deletes nothing.
    let text = env.hand(&repo, &["prune", "--branches"]).ok();
    assert!(text.contains("would delete: hand/pushed (was "), "{text}");
    assert!(
        text.contains("(dry run: git hand prune --branches --yes deletes them)"),
        "{text}"
    );
    for (t, oid) in ["pushed", "merged", "empty", "unlanded", "taken", "open"]
        .iter()
        .zip(&before)
    {
        assert_eq!(
            branch_oid(&env, &repo, &format!("hand/{t}")).as_ref(),
            Some(oid)
        );
    }

    let done = env
        .hand(&repo, &["prune", "--branches", "--yes", "--json"])
        .json();
    assert_eq!(done["dry_run"], false);
    assert_eq!(
        names(&done["deleted"]),
        ["hand/empty", "hand/merged", "hand/pushed"]
    );
    for gone in ["pushed", "merged", "empty"] {
        assert_eq!(
            branch_oid(&env, &repo, &format!("hand/{gone}")),
            None,
            "{gone}"
        );
    }
    for (kept, oid) in [
        ("unlanded", &before[3]),
        ("taken", &before[4]),
        ("open", &before[5]),
    ] {
        assert_eq!(
            branch_oid(&env, &repo, &format!("hand/{kept}")).as_ref(),
            Some(oid),
            "{kept}"
        );
    }
    // The deleted branch's upstream went with it, as `git branch -d` does.
    let config = env.git_run(
        &repo,
        &["config", "--get-regexp", "^branch\\.hand/pushed\\."],
    );
    assert_eq!(config.stdout, "", "left behind: {}", config.stdout);
    // Nothing left to delete; what is kept is said again.
    let again = env.hand(&repo, &["prune", "--branches", "--yes"]).ok();
    assert!(!again.contains("deleted:"), "{again}");
    assert!(
        again.contains("kept: hand/unlanded: 1 commit(s)"),
        "{again}"
    );
}

#[test]
fn prune_branches_keeps_a_branch_checked_out_in_a_worktree() {
    let (env, repo) = installed();
    spawn(&env, &repo, "a", &[]);
    env.hand(&repo, &["teardown", "a"]).ok();
    env.git(&repo, &["switch", "-q", "hand/a"]);
    let out = env.hand(&repo, &["prune", "--branches", "--yes"]).ok();
    assert_eq!(
        out,
        format!("kept: hand/a: checked out in {}\n", repo.display())
    );
    assert!(branch_oid(&env, &repo, "hand/a").is_some());
}

#[test]
fn prune_branches_keeps_a_branch_that_moved_after_it_was_proven_landed() {
    let (env, repo) = installed();
    spawn(&env, &repo, "a", &[]);
    env.hand(&repo, &["teardown", "a"]).ok();
    let pause = GitPause::new(&env, "delete", "update-ref -d");
    let prune = pause.start(&env, &repo, &["prune", "--branches", "--yes"]);
    pause.wait_until_paused();
    // Work lands on the branch between prune's proof and its deletion.
    let moved = env.git(
        &repo,
        &["commit-tree", "-p", "hand/a", "-m", "late", "HEAD^{tree}"],
    );
    env.git(&repo, &["update-ref", "refs/heads/hand/a", &moved]);
    pause.release();
    let out = finish(prune).ok();
    assert!(
        out.starts_with("kept: hand/a: it moved while prune ran"),
        "{out}"
    );
    assert_eq!(branch_oid(&env, &repo, "hand/a"), Some(moved));
}

#[test]
fn prune_branches_text_and_json_are_pinned() {
    let (env, repo) = five_done_tasks();
    let dry = env.hand(&repo, &["prune", "--branches"]).ok();
    let json = env.hand(&repo, &["prune", "--branches", "--json"]).json();
    let done = env.hand(&repo, &["prune", "--branches", "--yes"]).ok();
    let none = env.hand(&env.repo("other"), &["prune", "--branches"]).ok();
    let text = format!(
        "$ git hand prune --branches\n{dry}$ git hand prune --branches --json\n{json:#}\n\
         $ git hand prune --branches --yes\n{done}\
         $ git hand prune --branches   # a repository with no task\n{none}"
    );
    insta::assert_snapshot!(
        "prune_branches",
        short_oid_free(&crate::support::normalize(&env, &text))
    );
}

#[test]
fn prune_says_which_slot_it_removes_on_a_terminal_and_nothing_on_a_pipe() {
    let (env, repo) = installed();
    for t in ["a", "b"] {
        spawn(&env, &repo, t, &[]);
    }
    env.hand(&repo, &["teardown", "a"]).ok();
    let piped = env.hand(&repo, &["prune", "--yes"]);
    assert_eq!(piped.code, 0);
    assert_eq!(piped.stderr, "", "a pipe gets no progress");

    env.hand(&repo, &["teardown", "b"]).ok();
    // `script` gives the command a terminal for stdin, stdout and stderr.
    let command = format!("{} prune --yes", crate::support::BIN);
    let out = env.in_a_terminal(&command, &repo).output().unwrap();
    let seen = String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n");
    assert!(out.status.success(), "{seen}");
    let line = seen
        .lines()
        .find(|l| l.starts_with("git-hand: removing slot 2 ("))
        .unwrap_or_else(|| panic!("no progress line:\n{seen}"));
    assert!(line.ends_with(" files)..."), "{line}");
    assert!(seen.contains("removed: "), "{seen}");
}
