//! `git hand status` and `git hand check` in a slot say whether its pushes present the lease to
//! the remote (issue 15, item 3): what the client knows, `hand.remoteFence`, and no more (whether
//! the remote checks them is the server's `git hand install --server`). Pinned, text and JSON.

use crate::support::{Shown, installed, path_of, shot, spawn};

#[test]
fn pinned_status_and_check_in_a_slot_say_the_remote_fence_is_on() {
    let (env, repo) = installed();
    env.git(&repo, &["config", "hand.remoteFence", "true"]);
    let slot = path_of(&spawn(&env, &repo, "t1", &[]));
    let status = env.hand(&slot, &["status"]).code(0);
    let check = env.hand(&slot, &["check"]).code(0);
    let json = env.hand(&slot, &["status", "--json"]).code(0);
    insta::assert_snapshot!(
        [
            shot(&env, "git hand status", &status, Shown::Text),
            shot(&env, "git hand check", &check, Shown::Text),
            shot(&env, "git hand status --json", &json, Shown::Json),
        ]
        .join("\n")
    );
    assert_eq!(json.json()["remote_fence"], true);
    // The main worktree is no slot: nothing is said there about a slot's pushes.
    let main = env.hand(&repo, &["status"]).code(0);
    assert!(!main.stdout.contains("remote fence"), "{}", main.stdout);
    assert_eq!(
        env.hand(&repo, &["status", "--json"]).json()["remote_fence"],
        true
    );
}

#[test]
fn status_says_the_remote_fence_is_unknown_when_the_setting_does_not_parse() {
    let (env, repo) = installed();
    let slot = path_of(&spawn(&env, &repo, "t1", &[]));
    env.git(&repo, &["config", "hand.remoteFence", "maybe"]);
    let status = env.hand(&slot, &["status"]).code(0);
    let check = env.hand(&slot, &["check"]).code(0);
    let json = env.hand(&slot, &["status", "--json"]).code(0).json();
    insta::assert_snapshot!(
        [
            shot(&env, "git hand status", &status, Shown::Text),
            shot(&env, "git hand check", &check, Shown::Text),
        ]
        .join("\n")
    );
    assert_eq!(json["remote_fence"], serde_json::Value::Null);
    assert!(
        json["remote_fence_error"]
            .as_str()
            .is_some_and(|e| e.contains("hand.remoteFence")),
        "{json}"
    );
}
