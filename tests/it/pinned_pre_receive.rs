//! The server's refusals, word for word (issue 15): the `remote:` lines a pusher reads when the
//! pre-receive hook of `git hand install --server` refuses a push, for every verdict a presented
//! lease can get and for each fence (a live task's branch, `hand.requireLease`). They speak of
//! the push options a push presents and the client-side way out, never of the server's
//! environment. Real pushes over `file://` past the client hooks; only git-hand's `remote:`
//! lines are pinned (git's own lines around them vary with its version).

use std::path::Path;

use crate::pre_receive::{options, served};
use crate::support::{NEVER_GRANTED, Run, Shown, TestEnv, leased_again, path_of, shot, spawn};

/// A push presenting `opts` to `branch`, as the pusher sees the remote's refusal.
fn pushed(
    env: &TestEnv,
    dir: &Path,
    origin: &Path,
    opts: &[String],
    who: &str,
    branch: &str,
) -> String {
    pushed_as(env, dir, origin, opts, &[], who, branch)
}

/// [`pushed`], with `vars` in the pusher's environment (receive-pack hands them to the hook, as
/// a host sets its own).
fn pushed_as(
    env: &TestEnv,
    dir: &Path,
    origin: &Path,
    opts: &[String],
    vars: &[(&str, &str)],
    who: &str,
    branch: &str,
) -> String {
    let target = format!("HEAD:refs/heads/{branch}");
    let mut cmd = env.contained("git", dir);
    cmd.args(["push", "--no-verify", "-q"]);
    for o in opts {
        cmd.args(["-o", o]);
    }
    cmd.arg(format!("file://{}", origin.display())).arg(&target);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let run = Run::from(cmd.output().unwrap());
    assert_ne!(run.code, 0, "{who}: the push landed\n{}", run.stderr);
    let remote_lines = Run {
        code: run.code,
        stdout: String::new(),
        stderr: run
            .stderr
            .lines()
            .filter(|l| l.starts_with("remote:"))
            .map(|l| format!("{l}\n"))
            .collect(),
    };
    shot(
        env,
        &format!("git push --no-verify <origin> {target}   # {who}"),
        &remote_lines,
        Shown::Text,
    )
}

/// The `push-refused` events' details, as `git hand log --json --all-repos` shows them (the
/// server records against the bare repository, which is no client's).
fn refusal_details(env: &TestEnv, repo: &Path) -> String {
    let log = env.hand(repo, &["log", "--json", "--all-repos"]).json();
    let details: Vec<String> = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "push-refused")
        .map(|e| format!("{}\n", e["detail"].as_str().unwrap_or_default()))
        .collect();
    let run = Run {
        code: 0,
        stdout: details.concat(),
        stderr: String::new(),
    };
    shot(
        env,
        "git hand log --json --all-repos   # push-refused details",
        &run,
        Shown::Text,
    )
}

fn raw(lease: &str, token: &str) -> Vec<String> {
    vec![format!("hand.lease={lease}"), format!("hand.token={token}")]
}

#[test]
fn pinned_remote_refusals_of_stale_released_and_unknown_leases() {
    let (env, repo, origin) = served();
    let (slot, a, _b) = leased_again(&env, &repo, "a", "b");
    env.commit(&slot, "z.txt", "written by a's zombie\n");
    let c = spawn(&env, &repo, "c", &[]);
    env.hand(&repo, &["teardown", "c", "--force"]).ok();
    let text = [
        pushed(
            &env,
            &slot,
            &origin,
            &options(&a, "a"),
            "a's lease, after b took the slot",
            "hand/b",
        ),
        pushed(
            &env,
            &slot,
            &origin,
            &options(&c, "c"),
            "c's lease, after its teardown",
            "hand/c",
        ),
        pushed(
            &env,
            &slot,
            &origin,
            &raw("zz", "3"),
            "a lease option that does not parse",
            "feature",
        ),
        pushed(
            &env,
            &slot,
            &origin,
            &raw(&"a".repeat(32), "x"),
            "a token option that does not parse",
            "feature",
        ),
        pushed(
            &env,
            &slot,
            &origin,
            &["hand.token=3".to_string()],
            "a token option without a lease",
            "feature",
        ),
        pushed(
            &env,
            &slot,
            &origin,
            &raw(NEVER_GRANTED, "1"),
            "a lease the ledger never granted",
            "feature",
        ),
    ]
    .join("\n");
    insta::assert_snapshot!(text);
}

#[test]
fn pinned_remote_refusal_of_an_expired_lease_and_its_event_naming_the_pusher() {
    let (env, repo, origin) = served();
    let a = spawn(&env, &repo, "a", &["--ttl", "1s"]);
    let slot = path_of(&a);
    env.commit(&slot, "a.txt", "a's work\n");
    // Real time passing for a 1 s lease to expire.
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let text = [
        pushed_as(
            &env,
            &slot,
            &origin,
            &options(&a, "a"),
            &[("GL_USERNAME", "alice")],
            "a's expired lease, through GitLab",
            "hand/a",
        ),
        refusal_details(&env, &repo),
    ]
    .join("\n");
    insta::assert_snapshot!(text);
}

#[test]
fn pinned_remote_refusals_of_a_live_tasks_branch_and_a_branch_that_requires_a_lease() {
    let (env, repo, origin) = served();
    env.git(
        &origin,
        &["config", "--add", "hand.requireLease", "release/*"],
    );
    spawn(&env, &repo, "a", &[]);
    let other = env.repo("other");
    env.hand(&other, &["install"]).ok();
    let x = spawn(&env, &other, "x", &[]);
    let text = [
        pushed(&env, &repo, &origin, &[], "no lease", "hand/a"),
        pushed(&env, &repo, &origin, &[], "no lease", "release/1"),
        pushed(
            &env,
            &repo,
            &origin,
            &options(&x, "x"),
            "the current lease of another repository's task",
            "release/1",
        ),
        refusal_details(&env, &repo),
    ]
    .join("\n");
    insta::assert_snapshot!(text);
}

#[test]
fn pinned_remote_refusals_through_a_symbolic_alias_for_a_bad_pattern_and_without_a_ledger() {
    let (env, repo, origin) = served();
    env.git(&origin, &["config", "--add", "hand.requireLease", "main"]);
    env.git(
        &origin,
        &["symbolic-ref", "refs/heads/master", "refs/heads/main"],
    );
    spawn(&env, &repo, "a", &[]);
    env.git(
        &origin,
        &["symbolic-ref", "refs/heads/alias", "refs/heads/hand/a"],
    );
    env.commit(&repo, "n.txt", "new work\n");
    let mut text = vec![
        pushed(&env, &repo, &origin, &[], "master -> main", "master"),
        pushed(&env, &repo, &origin, &[], "alias -> hand/a", "alias"),
    ];
    env.git(
        &origin,
        &["config", "--add", "hand.requireLease", "refs/tags/v*"],
    );
    text.push(pushed(
        &env,
        &repo,
        &origin,
        &[],
        "a pattern under refs/tags",
        "feature",
    ));
    env.git(
        &origin,
        &["config", "--unset", "hand.requireLease", "^refs/tags"],
    );
    // The hook inherits the pusher's environment over file://: a ledger path with nothing there.
    let nowhere = env.path("state/nowhere.sqlite");
    text.push(pushed_as(
        &env,
        &repo,
        &origin,
        &[],
        &[("GIT_HAND_LEDGER", nowhere.to_str().unwrap())],
        "no ledger where the hook looks",
        "feature",
    ));
    insta::assert_snapshot!(text.join("\n"));
}
