//! Pinned errors (issue 12): the text (not `--json`, which `pinned.rs` pins) of every error a
//! user can reach from a test, with its exit status and hints: usage errors, preconditions,
//! teardown's refusals, renew and env outside their lease, the ledger's troubles. Beside them
//! the text of the outcomes that warn: a spawn that skipped slots, `prune`, each `doctor`
//! finding (and `--repair`), install's warnings and the notices that the hooks lapsed.
//!
//! Snapshots in `tests/it/snapshots/`, normalized by `support::normalize`; accept a change of
//! wording as `pinned.rs` says (`INSTA_UPDATE=always cargo test --locked pinned_errors::`).

use crate::support::{GitPause, TestEnv, cred, finish, installed, path_of, said, said_each, spawn};

#[test]
fn the_text_of_each_usage_error() {
    let (env, repo) = installed();
    spawn(&env, &repo, "a", &["--holder", "alice"]);
    let text = said_each(
        &env,
        &repo,
        &[
            &["spawn", ".hidden"],
            &["spawn", "a b"],
            &["spawn", "-bad"],
            &["spawn"],
            &["spawn", "b", "--branch", "bad..name"],
            &["spawn", "b", "--branch", "bad name"],
            &["spawn", "b", "--ttl", "forever"],
            &["spawn", "b", "--ttl", "0s"],
            &["spawn", "b", "--base", "no-such-rev"],
            &["spawn", "b", "--issue", "has space"],
            &["spawn", "b", "--holder", ""],
            &["spawn", "b", "--print-path", "--json"],
            &["spawn", "b", "--exec"],
            &["nosuch"],
            &["list", "--nosuch"],
            &["--json"],
            &["renew"],
            &["env"],
            &["renew", "a", "--ttl", "soon"],
            &["lease", "acquire", "bad id"],
            &["lease", "release", "7", "--lease", "xyz"],
            &["lease"],
        ],
    );
    env.git(&repo, &["config", "hand.maxSlots", "abc"]);
    let text = text + &said_each(&env, &repo, &[&["spawn", "b"], &["list"]]);
    insta::assert_snapshot!("usage", text);
}

#[test]
fn the_text_outside_a_repository_and_in_an_empty_one() {
    let env = TestEnv::new();
    let outside = env.path("work");
    let text = said_each(
        &env,
        &outside,
        &[
            &[],
            &["list"],
            &["spawn", "a"],
            &["status"],
            &["check"],
            &["teardown", "a"],
            &["install"],
            &["doctor"],
            &["lease", "acquire", "7"],
            &["lease", "list"],
            &["log"],
        ],
    );
    let empty = env.path("work/empty");
    env.git(&outside, &["init", "-q", "-b", "main", "empty"]);
    let text = text
        + &said_each(
            &env,
            &empty,
            &[&["spawn", "a"], &[], &["status"], &["list"], &["check"]],
        );
    env.git(&empty, &["config", "init.defaultBranch", "main"]);
    let text = text + &said_each(&env, &empty, &[&["spawn", "a"]]);
    // origin/HEAD names a branch with no commit.
    let origin_head = "refs/remotes/origin/HEAD";
    env.git(
        &empty,
        &["symbolic-ref", origin_head, "refs/remotes/origin/trunk"],
    );
    let text = text + &said_each(&env, &empty, &[&["spawn", "a"]]);
    insta::assert_snapshot!("outside_and_empty", text);
}

#[test]
fn the_text_of_a_failed_exec_command() {
    let (env, repo) = installed();
    let text = said_each(
        &env,
        &repo,
        &[
            &["spawn", "agent", "--exec", "--", "false"],
            &["spawn", "killed", "--exec", "--", "sh", "-c", "kill -9 $$"],
        ],
    );
    insta::assert_snapshot!("exec_failed", text);
}

#[test]
fn the_text_of_each_precondition_error() {
    let (env, repo) = installed();
    spawn(&env, &repo, "a", &["--holder", "alice"]);
    env.hand(&repo, &["lease", "acquire", "7", "--holder", "bob"])
        .ok();
    env.git(&repo, &["branch", "hand/d"]);
    let text = said_each(
        &env,
        &repo,
        &[
            &["spawn", "a", "--holder", "bob"],
            &["spawn", "c", "--branch", "hand/a"],
            &["spawn", "c", "--branch", "main"],
            &["spawn", "d"],
            &["spawn", "e", "--issue", "7"],
            &["lease", "renew", "7", "--holder", "carol"],
            &["lease", "release", "7", "--holder", "carol"],
            &[
                "lease",
                "release",
                "7",
                "--holder",
                "bob",
                "--lease",
                &"0".repeat(32),
            ],
            &["lease", "release", "7", "--lease", &"0".repeat(32)],
            &["lease", "renew", "8", "--holder", "bob"],
            &["teardown", "nosuch"],
            &["renew", "nosuch"],
            &["env", "nosuch"],
        ],
    );
    // A branch of an open task that is not checked out in its slot.
    let g = path_of(&spawn(&env, &repo, "g", &[]));
    env.git(&g, &["switch", "-q", "--detach"]);
    let text = text + &said_each(&env, &repo, &[&["spawn", "c", "--branch", "hand/g"]]);
    // The pool full at hand.maxSlots: one slot leased, the other free but dirty.
    env.git(&repo, &["config", "hand.maxSlots", "3"]);
    let b = path_of(&spawn(&env, &repo, "b", &[]));
    env.hand(&repo, &["teardown", "b"]).ok();
    std::fs::write(b.join("wip.txt"), "x\n").unwrap();
    let text = text + &said_each(&env, &repo, &[&["spawn", "f"]]);
    insta::assert_snapshot!("precondition", text);
}

#[test]
fn the_text_of_each_teardown_refusal() {
    let (env, repo) = installed();
    let untracked = path_of(&spawn(&env, &repo, "untracked", &[]));
    std::fs::write(untracked.join("scratch.txt"), "wip\n").unwrap();
    let modified = path_of(&spawn(&env, &repo, "modified", &[]));
    std::fs::write(modified.join("README"), "changed\n").unwrap();
    let unlanded = path_of(&spawn(&env, &repo, "unlanded", &[]));
    env.commit(&unlanded, "feature.txt", "work\n");
    std::fs::write(unlanded.join("scratch.txt"), "wip\n").unwrap();
    let detached = path_of(&spawn(&env, &repo, "detached", &[]));
    env.git(&detached, &["switch", "-q", "--detach"]);
    env.commit(&detached, "lost.txt", "on no branch\n");
    let spawning = env.hand_env(
        &repo,
        &["spawn", "spawning"],
        &[("GIT_HAND_FAILPOINT", "spawn-after-intent")],
    );
    assert_ne!(spawning.code, 0, "{}", spawning.stderr);
    let text = said_each(
        &env,
        &repo,
        &[
            &["teardown", "untracked"],
            &["teardown", "modified"],
            &["teardown", "unlanded"],
            &["teardown", "detached"],
            &["teardown", "detached", "--force"],
            &["teardown", "spawning"],
            &["teardown", "unlanded", "--force"],
            &["teardown", "unlanded"],
        ],
    );
    // A second teardown while the first is held at its detach.
    let pause = GitPause::new(&env, "slow-teardown", "switch --detach");
    let slow = pause.start(&env, &repo, &["teardown", "modified", "--force"]);
    pause.wait_until_paused();
    let text = text + &said_each(&env, &repo, &[&["teardown", "modified", "--force"]]);
    pause.release();
    finish(slow).ok();
    insta::assert_snapshot!("teardown", text);
}

#[test]
fn the_text_of_renew_and_env_on_a_lease_that_is_gone() {
    let (env, repo) = installed();
    let a = spawn(&env, &repo, "a", &["--ttl", "1s"]);
    let i = spawn(&env, &repo, "i", &["--issue", "42", "--holder", "alice"]);
    spawn(&env, &repo, "done", &[]);
    env.hand(&repo, &["teardown", "done"]).ok();
    env.hand(&repo, &["lease", "acquire", "8", "--ttl", "1s"])
        .ok();
    // alice's issue lease released by hand and taken by bob; her slot lease lives.
    env.hand(&repo, &["lease", "release", "42", "--holder", "alice"])
        .ok();
    env.hand(&repo, &["lease", "acquire", "42", "--holder", "bob"])
        .ok();
    // Real time passing for the 1 s leases to expire.
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let slot = path_of(&a);
    let text = said_each(
        &env,
        &repo,
        &[
            &["renew", "a"],
            &["env", "a"],
            &["renew", "i"],
            &["env", "i"],
            &["renew", "done"],
            &["env", "done"],
            &["lease", "renew", "8"],
        ],
    ) + &said(&env, &slot, &["renew"], &cred(&a))
        + &said(&env, &slot, &["env"], &cred(&a))
        + &said(&env, &path_of(&i), &["renew"], &cred(&i));
    insta::assert_snapshot!("lease_gone", text);
}
