//! The fence beside other hooks and when it lapses: a `git-hand hook` never re-enters itself
//! through a chained hook, `status`, `check`, `doctor` and `git hand` say when the hooks are not in
//! force for a worktree, spawn installs them before it leases anything, and the opt-outs
//! (`hand.installHooks=false`, `uninstall`) hold. Every push that could recurse runs contained.

use std::path::Path;

use serde_json::Value;

use crate::pool::{path_of, spawn};
use crate::support::{Run, TestEnv};

/// The credential a spawn printed, as environment pairs.
fn cred(v: &Value) -> Vec<(String, String)> {
    vec![
        (
            "GIT_HAND_LEASE".into(),
            v["lease_id"].as_str().unwrap().into(),
        ),
        ("GIT_HAND_TOKEN".into(), v["token"].to_string()),
    ]
}

/// `git push <args>` from `dir` with the credential, contained: a hook that recursed is killed
/// with everything it started.
fn push(env: &TestEnv, dir: &Path, cred: &[(String, String)], args: &[&str]) -> Run {
    let mut cmd = env.contained("git", dir);
    cmd.arg("push").args(args);
    for (k, v) in cred {
        cmd.env(k, v);
    }
    Run::from(cmd.output().unwrap())
}

fn write_hook(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A stale holder (a) and the current one (b) of the same slot.
fn stale_and_current(env: &TestEnv, repo: &Path) -> (std::path::PathBuf, Value, Value) {
    let a = spawn(env, repo, "a", &[]);
    env.hand(repo, &["teardown", "a"]).ok();
    let b = spawn(env, repo, "b", &[]);
    assert_eq!(path_of(&a), path_of(&b), "b got a's slot");
    (path_of(&b), a, b)
}

#[test]
fn a_chained_hook_that_calls_git_hand_again_is_judged_once_and_never_recurses() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let hooks = repo.join(".git/hooks");
    let log = env.path("hook-runs");
    // The docs' old advice, twice over: a hand-written pre-push whose first line runs git-hand's
    // check, then a "manager" script that runs it again. Each counts how deep it is and gives
    // up past a few levels, so the old code fails here instead of forking without bound.
    let counted = |name: &str, then: &str| {
        format!(
            "#!/bin/sh\nn=$(( ${{DEPTH_{name}:-0}} + 1 )); export DEPTH_{name}=$n\n\
             echo {name} >> {log}\n\
             if [ $n -gt 3 ]; then echo \"{name} recursed $n deep\" >&2; exit 97; fi\n\
             git-hand hook pre-push \"$@\" || exit $?\n{then}",
            log = log.display()
        )
    };
    write_hook(
        &hooks.join("manager-pre-push"),
        &counted("manager", "exit 0\n"),
    );
    write_hook(
        &hooks.join("pre-push"),
        &counted(
            "hand",
            "exec \"$(dirname \"$0\")/manager-pre-push\" \"$@\"\n",
        ),
    );
    env.hand(&repo, &["install"]).ok();
    assert!(hooks.join("pre-push.git-hand-chained").exists());
    let (slot, a, b) = stale_and_current(&env, &repo);
    env.commit(&slot, "z.txt", "late\n");

    let _ = std::fs::remove_file(&log);
    let run = push(&env, &slot, &cred(&a), &["origin", "HEAD"]);
    assert_ne!(run.code, 0, "the stale push went through:\n{}", run.stderr);
    assert!(!run.stderr.contains("recursed"), "{}", run.stderr);
    assert_eq!(
        run.stderr.matches("push refused").count(),
        1,
        "one verdict:\n{}",
        run.stderr
    );
    let runs = std::fs::read_to_string(&log).unwrap();
    assert_eq!(runs, "hand\nmanager\n", "each hook ran once");

    let _ = std::fs::remove_file(&log);
    let run = push(&env, &slot, &cred(&b), &["-q", "origin", "HEAD"]);
    assert_eq!(run.code, 0, "the current push was refused:\n{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "hand\nmanager\n");
}
