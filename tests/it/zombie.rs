//! A zombie never borrows the new holder's lease (issue 22, items 1, 12 and 13): in a slot leased
//! again, a shell still carrying the old credential is refused by every verb that acts on "this
//! worktree's task" (`env`, `renew`, `path`) in the verdict's words, changing nothing; no refusal
//! hands it the command that prints the live task's credential; its refusals name its own work
//! (its refused commits, by object id), never the new holder's branch as its own; and a slot
//! the new holder only claimed and let go is said to be free, not "held by" it.

use std::path::Path;

use serde_json::Value;

use crate::support::{TestEnv, cred, git_with, installed, leased_again, path_of, spawn};

/// `git hand ARGS` in `dir` with `vars` (a credential, or nothing) in its environment.
fn hand_with(
    env: &TestEnv,
    dir: &Path,
    vars: &[(String, String)],
    args: &[&str],
) -> crate::support::Run {
    let pairs: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    env.hand_env(dir, args, &pairs)
}

/// The slot lease a credential's holder sees in `status --json`.
fn lease_seen(env: &TestEnv, slot: &Path, vars: &[(String, String)]) -> Value {
    hand_with(env, slot, vars, &["status", "--json"]).json()["lease"].clone()
}

#[test]
fn env_and_renew_and_path_refuse_a_stale_credential_and_change_nothing() {
    let (env, repo) = installed();
    let first = spawn(&env, &repo, "a", &[]);
    env.hand(&repo, &["teardown", "a", "--force"]).ok();
    let b = spawn(&env, &repo, "b", &["--ttl", "1h"]);
    let slot = path_of(&b);
    assert_eq!(path_of(&first), slot, "b got a's slot");
    let (a, b_lease) = (cred(&first), b["lease_id"].as_str().unwrap().to_string());
    let before = lease_seen(&env, &slot, &cred(&b));
    for args in [
        &["env"][..],
        &["env", "--json"],
        &["env", "--shell", "fish"],
        &["renew"],
        &["renew", "--ttl", "1d", "--json"],
        &["path"],
    ] {
        let run = hand_with(&env, &slot, &a, args).code(3);
        let said = format!("{}{}", run.stdout, run.stderr);
        assert!(
            !said.contains(&b_lease),
            "{args:?} handed out b's lease:\n{said}"
        );
        assert!(
            run.stderr
                .contains("refused (stale): this worktree was leased again"),
            "{args:?}: {}",
            run.stderr
        );
        assert!(run.stderr.contains("nothing was changed"), "{}", run.stderr);
        assert!(!said.contains("git hand env b"), "{args:?}: {said}");
    }
    assert_eq!(
        lease_seen(&env, &slot, &cred(&b)),
        before,
        "b's lease was re-timed"
    );
    // Without a credential, the slot's holder: the README's own flows.
    let text = hand_with(&env, &slot, &[], &["env"]).ok();
    assert!(text.contains(&b_lease), "{text}");
    let text = hand_with(&env, &slot, &cred(&b), &["env"]).ok();
    assert!(text.contains(&b_lease), "{text}");
    hand_with(&env, &slot, &cred(&b), &["renew", "--ttl", "2h"]).ok();
}

#[test]
fn a_released_or_never_granted_credential_is_refused_in_the_verdicts_words() {
    let (env, repo) = installed();
    let a = spawn(&env, &repo, "a", &[]);
    let slot = path_of(&a);
    env.hand(&repo, &["teardown", "a", "--force"]).ok();
    let run = hand_with(&env, &slot, &cred(&a), &["env"]).code(3);
    assert!(run.stderr.contains("refused (released)"), "{}", run.stderr);
    let c = spawn(&env, &repo, "c", &[]);
    let never = vec![
        (
            "GIT_HAND_LEASE".to_string(),
            "0123456789abcdef0123456789abcdef".to_string(),
        ),
        ("GIT_HAND_TOKEN".to_string(), "1".to_string()),
    ];
    let run = hand_with(&env, &path_of(&c), &never, &["renew"]).code(3);
    assert!(
        run.stderr.contains("refused (unknown-lease)"),
        "{}",
        run.stderr
    );
    // A wrong token for c's own lease: judged, not swapped for the stamp's.
    let mut wrong = cred(&c);
    wrong[1].1 = "9".into();
    let run = hand_with(&env, &path_of(&c), &wrong, &["env"]).code(3);
    assert!(
        run.stderr.contains("refused (unknown-lease)"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_credential_of_another_worktrees_task_is_refused_by_env_and_renew() {
    let (env, repo) = installed();
    let x = spawn(&env, &repo, "x", &[]);
    let y = spawn(&env, &repo, "y", &[]);
    let y_lease = y["lease_id"].as_str().unwrap();
    for dir in [path_of(&y), repo.clone()] {
        for args in [&["env"][..], &["renew"], &["path"]] {
            let run = hand_with(&env, &dir, &cred(&x), args).code(2);
            assert!(
                run.stderr
                    .contains("task x's, whose slot is not this worktree"),
                "{args:?} in {}: {}",
                dir.display(),
                run.stderr
            );
            assert!(!run.stdout.contains(y_lease), "{}", run.stdout);
        }
    }
}

#[test]
fn no_refusal_hands_a_non_holder_the_command_that_prints_a_live_tasks_credential() {
    let (env, repo) = installed();
    let (slot, a, _b) = leased_again(&env, &repo, "a", "b");
    env.commit(&slot, "b.txt", "b's work\n");
    // From the main worktree, no credential: the branch fence.
    env.git(&repo, &["fetch", "-q", "origin"]);
    let run = git_with(
        &env,
        &repo,
        &[],
        &[
            "push",
            "origin",
            &format!(
                "{}:refs/heads/hand/b",
                env.git(&slot, &["rev-parse", "HEAD"])
            ),
        ],
    );
    assert_ne!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("belongs to live task b"),
        "{}",
        run.stderr
    );
    let check = hand_with(&env, &repo, &[], &["check"]);
    // In the slot under hand.requireCredential, with no credential (a zombie that lost it).
    env.git(&repo, &["config", "hand.requireCredential", "true"]);
    env.hand(&repo, &["install"]).ok();
    let no_cred = git_with(&env, &slot, &[], &["push", "origin", "HEAD"]);
    assert_ne!(no_cred.code, 0, "{}", no_cred.stderr);
    assert!(
        no_cred.stderr.contains("no-credential"),
        "{}",
        no_cred.stderr
    );
    let stale = git_with(&env, &slot, &cred(&a), &["push", "origin", "HEAD"]);
    for said in [&run.stderr, &check.stdout, &no_cred.stderr, &stale.stderr] {
        assert!(!said.contains("git hand env b"), "{said}");
    }
}

#[test]
fn a_slot_leased_again_and_let_go_is_said_to_be_free_not_held_by_the_one_who_let_go() {
    let (env, repo) = installed();
    let (slot, a, _b) = leased_again(&env, &repo, "a", "b");
    env.hand(&repo, &["teardown", "b", "--force"]).ok();
    let push = git_with(
        &env,
        &slot,
        &cred(&a),
        &["push", "origin", "HEAD:refs/heads/x"],
    );
    assert_ne!(push.code, 0, "{}", push.stderr);
    let commit = git_with(
        &env,
        &slot,
        &cred(&a),
        &["commit", "-q", "--allow-empty", "-m", "late"],
    );
    assert_ne!(commit.code, 0, "{}", commit.stderr);
    let check = hand_with(&env, &slot, &cred(&a), &["check"]);
    let status = hand_with(&env, &slot, &cred(&a), &["status"]).ok();
    for said in [&push.stderr, &commit.stderr, &check.stdout, &status] {
        assert!(said.contains("(stale)") || said.contains("stale"), "{said}");
        assert!(!said.contains("now held by"), "{said}");
        assert!(!said.contains("held by tester"), "{said}");
        assert!(said.contains("free"), "{said}");
    }
}

#[test]
fn a_zombies_push_refusal_names_its_refused_commit_never_the_new_holders_branch() {
    let (env, repo) = installed();
    let (slot, a, _b) = leased_again(&env, &repo, "a", "b");
    let b_head = env.commit(&slot, "b.txt", "b's work\n");
    std::fs::write(slot.join("a.txt"), "a's late work\n").unwrap();
    env.git(&slot, &["add", "a.txt"]);
    let commit = git_with(
        &env,
        &slot,
        &cred(&a),
        &["commit", "-q", "-m", "a's late work"],
    );
    assert_ne!(commit.code, 0, "{}", commit.stderr);
    let refused = commit
        .stderr
        .split_whitespace()
        .find(|w| w.len() == 40 && w.bytes().all(|b| b.is_ascii_hexdigit()))
        .unwrap_or_else(|| panic!("no commit named: {}", commit.stderr))
        .to_string();
    let push = git_with(&env, &slot, &cred(&a), &["push", "origin", "HEAD"]);
    let check = hand_with(&env, &slot, &cred(&a), &["check"]);
    for said in [&push.stderr, &check.stdout] {
        assert!(said.contains("stale"), "{said}");
        assert!(said.contains(&refused), "its own refused commit: {said}");
        assert!(said.contains(&format!("--base {refused}")), "{said}");
        assert!(!said.contains("safe in local branch hand/b"), "{said}");
        assert!(!said.contains("are in local branch hand/b"), "{said}");
        assert!(
            !said.contains(&format!("--base {}", &b_head[..10])),
            "{said}"
        );
        assert!(said.contains("HEAD here is on hand/b, the branch of task b: its commits are that task's work, not yours"), "{said}");
    }
    // The rescue it offers keeps the refused commit.
    let rescue = spawn(&env, &repo, "a-rescue", &["--base", &refused]);
    assert_eq!(env.git(&path_of(&rescue), &["rev-parse", "HEAD"]), refused);
}

#[test]
fn a_suggested_rescue_name_that_already_exists_gets_a_free_one() {
    let (env, repo) = installed();
    let (slot, a, _b) = leased_again(&env, &repo, "a", "b");
    spawn(&env, &repo, "a-rescue", &[]);
    env.git(&repo, &["branch", "hand/a-rescue-2"]);
    let commit = git_with(
        &env,
        &slot,
        &cred(&a),
        &["commit", "-q", "--allow-empty", "-m", "late"],
    );
    let push = git_with(&env, &slot, &cred(&a), &["push", "origin", "HEAD"]);
    for said in [&commit.stderr, &push.stderr] {
        assert!(said.contains("git hand spawn a-rescue-3 --base"), "{said}");
    }
}

#[test]
fn a_teardown_overtaken_names_no_holder_whose_lease_expired_too() {
    let (env, repo) = installed();
    let a = spawn(&env, &repo, "a", &["--ttl", "1s"]);
    // Real time for 1 s leases to expire.
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let b = spawn(&env, &repo, "b", &["--ttl", "1s"]);
    assert_eq!(path_of(&a), path_of(&b), "b took over a's expired slot");
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let said = env.hand(&repo, &["teardown", "a"]).ok();
    assert!(said.contains("its lease had already ended"), "{said}");
    assert!(!said.contains("belongs to"), "b's lease expired: {said}");
}
