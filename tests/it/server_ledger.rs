//! The server judges with its own ledger (issue 22, item 5): over a local path or `file://`
//! receive-pack hands the pre-receive hook the pusher's environment (`GIT_HAND_LEDGER`, `HOME`,
//! `XDG_STATE_HOME`, `GIT_CONFIG_GLOBAL`), and none of it may choose the ledger the server
//! judges with: only the repository's own `hand.ledger`, which `install --server` writes.

use std::path::Path;

use crate::pre_receive::{refused_by_remote, served};
use crate::support::{Run, TestEnv, remote_oid, spawn};

/// A ledger of the pusher's own, with nothing in it: made by taking and releasing an issue
/// lease under it.
fn empty_ledger(env: &TestEnv, repo: &Path) -> String {
    let other = env.path("state/pushers-own.sqlite");
    let other = other.to_str().unwrap().to_string();
    let ledger = [("GIT_HAND_LEDGER", other.as_str())];
    env.hand_env(repo, &["lease", "acquire", "1"], &ledger).ok();
    env.hand_env(repo, &["lease", "release", "1"], &ledger).ok();
    assert!(Path::new(&other).exists());
    other
}

/// `git push --no-verify` of HEAD to `branch` over `file://` with `vars` in the pusher's
/// environment.
fn push_with(env: &TestEnv, dir: &Path, origin: &Path, branch: &str, vars: &[(&str, &str)]) -> Run {
    let mut cmd = env.contained("git", dir);
    cmd.env("RUST_BACKTRACE", "0");
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.args(["push", "--no-verify", "-q"])
        .arg(format!("file://{}", origin.display()))
        .arg(format!("HEAD:refs/heads/{branch}"));
    Run::from(cmd.output().unwrap())
}

#[test]
fn a_ledger_the_pusher_names_in_its_environment_is_refused_never_used() {
    let (env, repo, origin) = served();
    spawn(&env, &repo, "a", &[]);
    let empty = empty_ledger(&env, &repo);
    env.commit(&repo, "z.txt", "a zombie's work\n");
    let run = push_with(
        &env,
        &repo,
        &origin,
        "hand/a",
        &[("GIT_HAND_LEDGER", &empty)],
    );
    refused_by_remote(&run, "a ledger the pusher names is refused, never used");
    assert_eq!(remote_oid(&env, &origin, "hand/a"), None, "{}", run.stderr);
    // The server's own ledger named again by the pusher chooses nothing: the push is judged.
    let own = env.ledger();
    push_with(
        &env,
        &repo,
        &origin,
        "elsewhere",
        &[("GIT_HAND_LEDGER", own.to_str().unwrap())],
    )
    .ok();
}

#[test]
fn the_pushers_global_config_and_state_dir_never_choose_the_servers_ledger() {
    let (env, repo, origin) = served();
    spawn(&env, &repo, "a", &[]);
    let empty = empty_ledger(&env, &repo);
    let global = env.path("pushers-gitconfig");
    std::fs::write(&global, format!("[hand]\n\tledger = {empty}\n")).unwrap();
    env.commit(&repo, "z.txt", "a zombie's work\n");
    let pusher = [
        ("GIT_HAND_LEDGER", ""),
        ("GIT_CONFIG_GLOBAL", global.to_str().unwrap()),
    ];
    let run = push_with(&env, &repo, &origin, "hand/a", &pusher);
    refused_by_remote(&run, "branch hand/a belongs to live task a");
    assert_eq!(remote_oid(&env, &origin, "hand/a"), None);

    // With no hand.ledger of its own the server refuses, naming the command that sets it.
    env.git(&origin, &["config", "--local", "--unset", "hand.ledger"]);
    let run = push_with(&env, &repo, &origin, "elsewhere", &pusher);
    refused_by_remote(&run, "names no ledger in its own configuration");
    refused_by_remote(
        &run,
        &format!("git -C {} config hand.ledger", origin.display()),
    );
    assert_eq!(remote_oid(&env, &origin, "elsewhere"), None);
}

#[test]
fn install_server_writes_its_ledger_and_says_the_fence_covers_no_url_until_one_is_named() {
    let env = TestEnv::new();
    env.repo("app");
    let origin = env.path("work/app-origin.git").canonicalize().unwrap();
    let run = env.hand(&origin, &["install", "--server"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        env.git(&origin, &["config", "--local", "hand.ledger"]),
        env.ledger().to_str().unwrap()
    );
    assert!(
        run.stdout.contains(&format!(
            "branch fence: covers pushes to {}",
            origin.display()
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains("no hand.remoteUrl is set")
            && run.stderr.contains("config --add hand.remoteUrl <url>"),
        "{}",
        run.stderr
    );
    env.git(
        &origin,
        &["config", "--add", "hand.remoteUrl", "ssh://git@srv/app.git"],
    );
    let again = env.hand(&origin, &["install", "--server"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(
        again
            .stdout
            .contains("covers pushes to ssh://git@srv/app.git (hand.remoteUrl)")
    );
    assert!(
        !again.stderr.contains("no hand.remoteUrl"),
        "{}",
        again.stderr
    );
}

#[test]
fn doctor_on_a_server_without_hand_remote_url_says_its_branch_fence_covers_no_url() {
    let env = TestEnv::new();
    env.repo("app");
    let origin = env.path("work/app-origin.git").canonicalize().unwrap();
    env.hand(&origin, &["install", "--server"]).ok();
    let run = env.hand(&origin, &["doctor", "--json"]);
    assert!(
        run.stdout.contains("unfenced-remote")
            && run.stdout.contains("config --add hand.remoteUrl"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    env.git(
        &origin,
        &["config", "hand.remoteUrl", "ssh://git@srv/app.git"],
    );
    let run = env.hand(&origin, &["doctor", "--json"]);
    assert!(!run.stdout.contains("unfenced-remote"), "{}", run.stdout);
}
