//! `hand.requireLease` on the server (issue 15): a bare repository with `git hand install
//! --server` refuses any update of a branch matching one of its patterns (creation, update or
//! deletion) unless the push presents a current lease of one of this repository's tasks; and
//! every refusal event names the pusher where the server says who pushed. Real pushes over
//! `file://` (receive-pack runs the hook, with the pusher's environment), one SQLite ledger.

use std::path::{Path, PathBuf};

use crate::pre_receive::{options, push_past_hooks, refused_by_remote, served};
use crate::support::{Run, TestEnv, leased_again, path_of, remote_oid, spawn};

/// Every event of the shared ledger, as `git hand log --json --all-repos` shows them (the
/// server's refusals are recorded against the bare repository, which is no client's).
fn all_events(env: &TestEnv, repo: &Path) -> String {
    env.hand(repo, &["log", "--json", "--all-repos"])
        .json()
        .to_string()
}

/// A clone of `origin` without git-hand, with one commit of its own.
fn plain_clone(env: &TestEnv, origin: &Path) -> PathBuf {
    let work = env.path("work");
    env.git(&work, &["clone", "-q", origin.to_str().unwrap(), "plain"]);
    let plain = work.join("plain");
    assert!(
        !plain.join(".git/hooks/pre-push").exists(),
        "no git-hand here"
    );
    env.commit(&plain, "p.txt", "from a clone without git-hand\n");
    plain
}

fn require(env: &TestEnv, origin: &Path, patterns: &[&str]) {
    for pattern in patterns {
        env.git(origin, &["config", "--add", "hand.requireLease", pattern]);
    }
}

#[test]
fn a_protected_branch_is_refused_to_a_clone_without_git_hand_and_other_branches_pass() {
    let (env, repo, origin) = served();
    require(&env, &origin, &["main"]);
    spawn(&env, &repo, "a", &[]);
    let plain = plain_clone(&env, &origin);
    let before = remote_oid(&env, &origin, "main");

    let run = push_past_hooks(&env, &plain, &origin, &[], &["HEAD:refs/heads/main"]);
    refused_by_remote(
        &run,
        "remote: git-hand: push refused by the remote: branch main takes only a current lease",
    );
    assert!(
        run.stderr.contains("hand.requireLease=main"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("this push presents no lease"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("git hand env <task>"), "{}", run.stderr);
    assert!(!run.stderr.contains("--no-verify"), "{}", run.stderr);
    assert_eq!(remote_oid(&env, &origin, "main"), before);
    let log = all_events(&env, &repo);
    assert!(
        log.contains("branch main matches hand.requireLease=main and no lease was presented"),
        "{log}"
    );

    let mine = env.git(&plain, &["rev-parse", "HEAD"]);
    push_past_hooks(&env, &plain, &origin, &[], &["HEAD:refs/heads/mainline"]).ok();
    assert_eq!(remote_oid(&env, &origin, "mainline"), Some(mine));
}

#[test]
fn the_holders_current_lease_passes_a_protected_branch_and_a_stale_one_is_refused_as_stale() {
    let (env, repo, origin) = served();
    require(&env, &origin, &["main"]);
    let (slot, a, b) = leased_again(&env, &repo, "a", "b");
    let work = env.commit(&slot, "b.txt", "b's work\n");

    let bare = push_past_hooks(&env, &slot, &origin, &[], &["HEAD:refs/heads/main"]);
    refused_by_remote(&bare, "hand.requireLease=main");
    let stale = push_past_hooks(
        &env,
        &slot,
        &origin,
        &options(&a, "a"),
        &["HEAD:refs/heads/main"],
    );
    refused_by_remote(
        &stale,
        "remote: git-hand: push refused by the remote (stale)",
    );
    assert_ne!(
        remote_oid(&env, &origin, "main").as_deref(),
        Some(work.as_str())
    );

    push_past_hooks(
        &env,
        &slot,
        &origin,
        &options(&b, "b"),
        &["HEAD:refs/heads/main"],
    )
    .ok();
    assert_eq!(
        remote_oid(&env, &origin, "main").as_deref(),
        Some(work.as_str())
    );
}

#[test]
fn a_current_lease_of_another_repositorys_task_is_refused_on_a_protected_branch() {
    let (env, repo, origin) = served();
    require(&env, &origin, &["release/*"]);
    let other = env.repo("other");
    env.hand(&other, &["install"]).ok();
    let theirs = spawn(&env, &other, "x", &[]);
    let ours = spawn(&env, &repo, "a", &[]);

    let run = push_past_hooks(
        &env,
        &repo,
        &origin,
        &options(&theirs, "x"),
        &["HEAD:refs/heads/release/1"],
    );
    refused_by_remote(&run, "is task x's, recorded against");
    assert!(
        run.stderr.contains("not against this repository"),
        "{}",
        run.stderr
    );
    // An unlisted spelling of this repository is one setting away, and the refusal says which.
    assert!(
        run.stderr
            .contains("is a URL of this repository: git config --add hand.remoteUrl "),
        "{}",
        run.stderr
    );
    assert_eq!(remote_oid(&env, &origin, "release/1"), None);
    assert!(
        all_events(&env, &repo).contains("the lease presented is task x's, of another repository"),
        "the refusal is recorded"
    );

    // This repository's task's current lease passes, from any directory.
    push_past_hooks(
        &env,
        &repo,
        &origin,
        &options(&ours, "a"),
        &["HEAD:refs/heads/release/1"],
    )
    .ok();
    assert!(remote_oid(&env, &origin, "release/1").is_some());
}

#[test]
fn deleting_a_protected_branch_without_a_lease_is_refused() {
    let (env, repo, origin) = served();
    let plain = plain_clone(&env, &origin);
    push_past_hooks(&env, &plain, &origin, &[], &["HEAD:refs/heads/release/1"]).ok();
    require(&env, &origin, &["release/*"]);

    let run = push_past_hooks(&env, &plain, &origin, &[], &[":refs/heads/release/1"]);
    refused_by_remote(&run, "branch release/1 takes only a current lease");
    assert!(remote_oid(&env, &origin, "release/1").is_some());

    // Under a lease of this repository's task the deletion goes through.
    let a = spawn(&env, &repo, "a", &[]);
    push_past_hooks(
        &env,
        &path_of(&a),
        &origin,
        &options(&a, "a"),
        &[":refs/heads/release/1"],
    )
    .ok();
    assert_eq!(remote_oid(&env, &origin, "release/1"), None);
}

#[test]
fn patterns_match_one_component_with_a_star_any_with_two_and_may_name_refs_heads() {
    // No task yet: a protected branch is refused all the same (no lease can be current).
    let (env, _repo, origin) = served();
    require(&env, &origin, &["refs/heads/release/*", "team/**", ""]);
    let plain = plain_clone(&env, &origin);
    let push = |branch: &str| {
        push_past_hooks(
            &env,
            &plain,
            &origin,
            &[],
            &[&format!("HEAD:refs/heads/{branch}")],
        )
    };

    for protected in ["release/1", "team/a", "team/a/b"] {
        refused_by_remote(&push(protected), &format!("branch {protected} takes only"));
        assert_eq!(remote_oid(&env, &origin, protected), None, "{protected}");
    }
    for free in ["release/1/rc", "teams/a", "feature"] {
        push(free).ok();
        assert!(remote_oid(&env, &origin, free).is_some(), "{free}");
    }
}

/// A push over `file://` past the client hooks with `vars` in the pusher's environment, which
/// receive-pack hands to the server hook as a host would set them.
fn push_as(env: &TestEnv, dir: &Path, origin: &Path, vars: &[(&str, &str)], branch: &str) -> Run {
    let mut cmd = env.contained("git", dir);
    cmd.args(["push", "--no-verify", "-q"])
        .arg(format!("file://{}", origin.display()))
        .arg(format!("HEAD:refs/heads/{branch}"));
    for (k, v) in vars {
        cmd.env(k, v);
    }
    Run::from(cmd.output().unwrap())
}

#[test]
fn every_refusal_event_names_the_pusher_the_server_names() {
    let (env, repo, origin) = served();
    require(&env, &origin, &["main", "release/*"]);
    spawn(&env, &repo, "a", &[]);
    let plain = plain_clone(&env, &origin);

    // What the host sets, the branch pushed, what the event says.
    type Host<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a str);
    let hosts: [Host; 5] = [
        (
            &[("GL_USERNAME", "gl-alice"), ("REMOTE_USER", "web-bob")],
            "main",
            "pushed by gl-alice (GL_USERNAME)",
        ),
        (
            &[("GITEA_PUSHER_NAME", "gitea-carol")],
            "release/1",
            "pushed by gitea-carol (GITEA_PUSHER_NAME)",
        ),
        (
            &[("GITHUB_USER_LOGIN", "octo-dan")],
            "hand/a",
            "pushed by octo-dan (GITHUB_USER_LOGIN)",
        ),
        (
            &[("REMOTE_USER", "web-erin")],
            "main",
            "pushed by web-erin (REMOTE_USER)",
        ),
        (
            &[
                ("SSH_CONNECTION", "192.0.2.7 50000 192.0.2.1 22"),
                ("USER", "git"),
            ],
            "main",
            "pushed by git (ssh account)",
        ),
    ];
    for (vars, branch, words) in hosts {
        let run = push_as(&env, &plain, &origin, vars, branch);
        assert_ne!(run.code, 0, "{branch}: {}", run.stderr);
        let log = all_events(&env, &repo);
        assert!(log.contains(words), "{words:?} not in {log}");
    }
    // A local push without any of them names no one.
    push_as(&env, &plain, &origin, &[("USER", "me")], "main");
    let log = all_events(&env, &repo);
    assert_eq!(log.matches("pushed by").count(), 5, "{log}");
}

#[test]
fn a_push_to_a_symbolic_alias_of_a_protected_branch_is_refused() {
    // receive-pack writes through a symbolic ref: `master` moves `main`.
    let (env, repo, origin) = served();
    require(&env, &origin, &["main"]);
    spawn(&env, &repo, "a", &[]);
    env.git(
        &origin,
        &["symbolic-ref", "refs/heads/master", "refs/heads/main"],
    );
    let plain = plain_clone(&env, &origin);
    let before = remote_oid(&env, &origin, "main");

    let run = push_past_hooks(&env, &plain, &origin, &[], &["HEAD:refs/heads/master"]);
    refused_by_remote(
        &run,
        "branch main (pushed as master) takes only a current lease",
    );
    assert_eq!(remote_oid(&env, &origin, "main"), before);

    // A chain of aliases is followed to the branch it writes.
    env.git(
        &origin,
        &["symbolic-ref", "refs/heads/trunk", "refs/heads/master"],
    );
    let run = push_past_hooks(&env, &plain, &origin, &[], &["HEAD:refs/heads/trunk"]);
    refused_by_remote(
        &run,
        "branch main (pushed as trunk) takes only a current lease",
    );
    assert_eq!(remote_oid(&env, &origin, "main"), before);
}

#[test]
fn an_invalid_require_lease_pattern_refuses_every_push_and_names_the_fix() {
    for bad in ["refs/tags/v*", "release/[12", "release/", "a..b"] {
        let (env, repo, origin) = served();
        spawn(&env, &repo, "a", &[]);
        require(&env, &origin, &[bad]);
        let plain = plain_clone(&env, &origin);
        let run = push_past_hooks(&env, &plain, &origin, &[], &["HEAD:refs/heads/feature"]);
        refused_by_remote(&run, &format!("hand.requireLease={bad:?}"));
        assert!(
            run.stderr
                .contains("config --fixed-value --unset-all hand.requireLease"),
            "{bad}: {}",
            run.stderr
        );
        assert_eq!(remote_oid(&env, &origin, "feature"), None, "{bad}");

        let shown = env.hand(&origin, &["config"]).ok();
        assert!(
            shown.contains(&format!("problem: hand.requireLease={bad:?}")),
            "{bad}: {shown}"
        );
    }
}

/// The command a refusal names for an invalid pattern takes it away, given twice and with spaces
/// around it as it was; the push then passes.
#[test]
fn the_fix_an_invalid_pattern_names_takes_every_copy_of_it_away() {
    let (env, repo, origin) = served();
    spawn(&env, &repo, "a", &[]);
    require(&env, &origin, &[" refs/tags/v* ", " refs/tags/v* ", "main"]);
    let plain = plain_clone(&env, &origin);
    let run = push_past_hooks(&env, &plain, &origin, &[], &["HEAD:refs/heads/feature"]);
    refused_by_remote(&run, "hand.requireLease=\"refs/tags/v*\"");
    let fix = run
        .stderr
        .lines()
        .find_map(|l| {
            l.split_once("on the server, run: ")
                .map(|(_, c)| c.to_string())
        })
        .unwrap_or_else(|| panic!("no command named: {}", run.stderr));
    let mut sh = env.command("sh", &origin);
    sh.args(["-c", &fix]);
    Run::from(sh.output().unwrap()).ok();
    assert_eq!(
        env.git(&origin, &["config", "--get-all", "hand.requireLease"]),
        "main"
    );
    push_past_hooks(&env, &plain, &origin, &[], &["HEAD:refs/heads/feature"]).ok();
}

#[test]
fn config_shows_require_lease_as_the_hook_reads_it() {
    let (env, _repo, origin) = served();
    require(&env, &origin, &[" main ", "", "release/*"]);
    let shown = env.hand(&origin, &["config"]).ok();
    let rows: Vec<&str> = shown
        .lines()
        .filter(|l| l.starts_with("hand.requireLease"))
        .collect();
    assert_eq!(rows.len(), 2, "{shown}");
    assert!(
        shown.contains("note: hand.requireLease: 1 empty value skipped"),
        "{shown}"
    );
    assert!(!shown.contains("problem:"), "{shown}");
    let json = env.hand(&origin, &["config", "--json"]).json();
    let entry = json["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["key"] == "hand.requireLease")
        .unwrap()
        .clone();
    assert_eq!(entry["values"], serde_json::json!(["main", "release/*"]));
}
