//! The remote checks the token (issue 15, item 2): `git hand install --server` in the bare
//! repository clients push to installs a pre-receive hook that judges the lease each push
//! presents in its push options, so a push that skips the client hooks (`--no-verify`, a clone
//! without git-hand) is still fenced. Real git, pushes over `file://` (receive-pack runs the
//! hook), one SQLite ledger shared by the clients and the server (`GIT_HAND_LEDGER`).

use std::path::{Path, PathBuf};

use crate::support::{Run, TestEnv, leased_again, path_of, remote_oid, spawn};

/// `app` with git-hand's client hooks, and its bare origin with the server hook, which reads
/// the clients' ledger.
pub(crate) fn served() -> (TestEnv, PathBuf, PathBuf) {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.hand(&repo, &["install"]).ok();
    let origin = env.path("work/app-origin.git").canonicalize().unwrap();
    env.hand(&origin, &["install", "--server"]).ok();
    (env, repo, origin)
}

/// The push options a spawn's credential presents (`hand.lease`, `hand.token`, `hand.task`).
pub(crate) fn options(v: &serde_json::Value, task: &str) -> Vec<String> {
    vec![
        format!("hand.lease={}", v["lease_id"].as_str().unwrap()),
        format!("hand.token={}", v["token"]),
        format!("hand.task={task}"),
    ]
}

/// Asserts the remote refused the push, saying `words` in its `remote:` lines.
#[track_caller]
pub(crate) fn refused_by_remote(run: &Run, words: &str) {
    assert_ne!(run.code, 0, "the push landed:\n{}", run.stderr);
    assert!(
        run.stderr.contains(words),
        "{words:?} not in:\n{}",
        run.stderr
    );
}

/// `git push --no-verify` (the client hooks skipped) over `file://`, with `-o` for each option,
/// contained: only the remote judges.
pub(crate) fn push_past_hooks(
    env: &TestEnv,
    dir: &Path,
    origin: &Path,
    opts: &[String],
    refs: &[&str],
) -> Run {
    let mut cmd = env.contained("git", dir);
    cmd.args(["push", "--no-verify", "-q"]);
    for o in opts {
        cmd.args(["-o", o]);
    }
    cmd.arg(format!("file://{}", origin.display())).args(refs);
    Run::from(cmd.output().unwrap())
}

pub(crate) fn log_of(env: &TestEnv, repo: &Path) -> String {
    env.hand(repo, &["log", "--json"]).json().to_string()
}

#[test]
fn install_server_chains_a_pre_receive_hook_and_turns_push_options_on() {
    let env = TestEnv::new();
    env.repo("app");
    let origin = env.path("work/app-origin.git").canonicalize().unwrap();
    let theirs = "#!/bin/sh\ncat >/dev/null\necho ran > \"$GIT_DIR/their-hook-ran\"\n";
    crate::support::write_hook(&origin.join("hooks/pre-receive"), theirs, 0o755);

    let out = env.hand(&origin, &["install", "--server", "--json"]).json();
    assert_eq!(out["outcome"], "installed");
    assert_eq!(out["hooks"][0]["hook"], "pre-receive");
    assert_eq!(out["hooks"][0]["change"], "chained");
    assert_eq!(out["advertised_push_options"], true);
    assert_eq!(
        env.git(&origin, &["config", "receive.advertisePushOptions"]),
        "true"
    );
    let chained = origin.join("hooks/pre-receive.git-hand-chained");
    assert_eq!(std::fs::read_to_string(&chained).unwrap(), theirs);

    let again = env.hand(&origin, &["install", "--server", "--json"]).json();
    assert_eq!(again["outcome"], "unchanged", "{again}");

    // The chained hook still runs on a push, before git-hand judges it.
    let clone = env.path("work/app");
    env.git(
        &clone,
        &["push", "-q", "origin", "main:refs/heads/elsewhere"],
    );
    assert!(origin.join("their-hook-ran").exists());
}

#[test]
fn install_server_is_refused_in_a_repository_with_a_work_tree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let run = env.hand(&repo, &["install", "--server"]).code(2);
    assert!(run.stderr.contains("bare repository"), "{}", run.stderr);
    assert!(!repo.join(".git/hooks/pre-receive").exists());
}

#[test]
fn a_zombies_no_verify_push_is_refused_by_the_remote_and_the_holders_passes() {
    let (env, repo, origin) = served();
    let (slot, a, b) = leased_again(&env, &repo, "a", "b");
    let work = env.commit(&slot, "z.txt", "written by a's zombie\n");

    let refused = push_past_hooks(
        &env,
        &slot,
        &origin,
        &options(&a, "a"),
        &["HEAD:refs/heads/hand/b"],
    );
    refused_by_remote(
        &refused,
        "remote: git-hand: push refused by the remote (stale)",
    );
    assert!(
        refused.stderr.contains("it is now held by"),
        "{}",
        refused.stderr
    );
    assert!(
        !refused.stderr.contains("--no-verify"),
        "{}",
        refused.stderr
    );
    assert_eq!(remote_oid(&env, &origin, "hand/b"), None);
    // Its own (ended) task's branch is no way around it: the stale lease is judged wherever it goes.
    let own = push_past_hooks(
        &env,
        &slot,
        &origin,
        &options(&a, "a"),
        &["HEAD:refs/heads/hand/a"],
    );
    assert_ne!(own.code, 0, "{}", own.stderr);
    assert_eq!(remote_oid(&env, &origin, "hand/a"), None);
    assert!(log_of(&env, &repo).contains("push refused: stale"));

    push_past_hooks(
        &env,
        &slot,
        &origin,
        &options(&b, "b"),
        &["HEAD:refs/heads/hand/b"],
    )
    .ok();
    assert_eq!(
        remote_oid(&env, &origin, "hand/b").as_deref(),
        Some(work.as_str())
    );
}

#[test]
fn a_clone_without_git_hand_is_refused_on_a_live_tasks_branch_and_allowed_elsewhere() {
    let (env, repo, origin) = served();
    let a = spawn(&env, &repo, "a", &[]);
    let work = env.path("work");
    env.git(&work, &["clone", "-q", origin.to_str().unwrap(), "plain"]);
    let plain = work.join("plain");
    assert!(
        !plain.join(".git/hooks/pre-push").exists(),
        "no git-hand in this clone"
    );
    let mine = env.commit(&plain, "p.txt", "from a clone without git-hand\n");

    let refused = push_past_hooks(&env, &plain, &origin, &[], &["HEAD:refs/heads/hand/a"]);
    refused_by_remote(
        &refused,
        "remote: git-hand: push refused by the remote: branch hand/a belongs to live task a",
    );
    assert!(
        refused
            .stderr
            .contains("if you hold task a: push it from the task's slot"),
        "the way out: {}",
        refused.stderr
    );
    assert_eq!(remote_oid(&env, &origin, "hand/a"), None);
    assert!(log_of(&env, &repo).contains("branch hand/a belongs to live task a"));

    // Deleting the branch is updating it too.
    let slot = path_of(&a);
    env.commit(&slot, "a.txt", "a's work\n");
    push_past_hooks(
        &env,
        &slot,
        &origin,
        &options(&a, "a"),
        &["HEAD:refs/heads/hand/a"],
    )
    .ok();
    let delete = push_past_hooks(&env, &plain, &origin, &[], &[":refs/heads/hand/a"]);
    assert_ne!(delete.code, 0, "{}", delete.stderr);
    assert!(remote_oid(&env, &origin, "hand/a").is_some());

    push_past_hooks(&env, &plain, &origin, &[], &["HEAD:refs/heads/feature"]).ok();
    assert_eq!(
        remote_oid(&env, &origin, "feature").as_deref(),
        Some(mine.as_str())
    );

    // Once the task is torn down its branch is no longer fenced.
    env.hand(&repo, &["teardown", "a", "--force"]).ok();
    push_past_hooks(&env, &plain, &origin, &[], &["+HEAD:refs/heads/hand/a"]).ok();
}

#[test]
fn a_push_of_many_refs_with_one_live_tasks_branch_among_them_lands_none() {
    let (env, repo, origin) = served();
    spawn(&env, &repo, "a", &[]);
    let mut refs: Vec<String> = (0..99)
        .map(|i| format!("HEAD:refs/heads/bulk-{i}"))
        .collect();
    refs.push("HEAD:refs/heads/hand/a".into());
    let refs: Vec<&str> = refs.iter().map(String::as_str).collect();
    let refused = push_past_hooks(&env, &repo, &origin, &[], &refs);
    refused_by_remote(&refused, "branch hand/a belongs to live task a");
    assert_eq!(
        remote_oid(&env, &origin, "bulk-0"),
        None,
        "pre-receive is all or nothing"
    );

    push_past_hooks(&env, &repo, &origin, &[], &refs[..99]).ok();
    assert!(remote_oid(&env, &origin, "bulk-98").is_some());
}

/// Both halves of issue 15 together: with `hand.remoteFence` on, a process that loaded its
/// credential with `git hand env` presents it on every push. A zombie pushing past the client
/// hooks presents its own stale lease and the remote refuses it; the current holder, the same
/// way, passes.
#[test]
fn a_zombie_under_its_env_credential_is_refused_by_the_remote_and_the_holder_passes() {
    let (env, repo, origin) = served();
    env.git(&repo, &["config", "hand.remoteFence", "true"]);
    let a = spawn(&env, &repo, "a", &[]);
    let slot = path_of(&a);
    let zombie_credential = env.hand(&repo, &["env", "a"]).ok();
    env.hand(&repo, &["teardown", "a"]).ok();
    env.git(&repo, &["branch", "-q", "-D", "hand/a"]);
    let b = spawn(&env, &repo, "b", &[]);
    assert_eq!(path_of(&b), slot, "b reuses a's slot");
    env.commit(&slot, "z.txt", "written by a's zombie\n");
    let url = format!("file://{}", origin.display());
    let push_as = |credential: &str| {
        let script =
            format!("{credential}\ngit push --no-verify -q '{url}' HEAD:refs/heads/hand/b");
        let mut cmd = env.contained("sh", &slot);
        cmd.args(["-c", &script]);
        Run::from(cmd.output().unwrap())
    };

    let refused = push_as(&zombie_credential);
    assert_ne!(
        refused.code, 0,
        "the zombie's push landed:\n{}",
        refused.stderr
    );
    assert!(
        refused
            .stderr
            .contains("remote: git-hand: push refused by the remote (stale)"),
        "{}",
        refused.stderr
    );
    assert_eq!(remote_oid(&env, &origin, "hand/b"), None);

    let holder_credential = env.hand(&repo, &["env", "b"]).ok();
    let passed = push_as(&holder_credential);
    assert_eq!(passed.code, 0, "{}", passed.stderr);
    assert!(remote_oid(&env, &origin, "hand/b").is_some());
}

/// Points `repo`'s origin at the ssh URL `url`, reached through an `ssh` that runs the requested
/// git command on this machine against `origin` (`core.sshCommand`, `ssh.variant=simple`): tasks
/// record the ssh spelling, as in a team's clone, while git really pushes over ssh's transport
/// (receive-pack on the far side of a pipe) to the bare repository with the server hook. No
/// rewrite (`url.*.insteadOf`) is used: git-hand records a remote with rewrites applied.
fn origin_over_ssh(env: &TestEnv, repo: &Path, origin: &Path, url: &str) {
    let ssh = env.path("bin/fake-ssh");
    let script = format!(
        "#!/bin/sh\n# $1: the host, $2: the command (git-receive-pack 'o/app.git')\nverb=${{2%% *}}\nexec git \"${{verb#git-}}\" '{}'\n",
        origin.display()
    );
    crate::support::write_hook(&ssh, &script, 0o755);
    env.git(repo, &["config", "core.sshCommand", ssh.to_str().unwrap()]);
    env.git(repo, &["config", "ssh.variant", "simple"]);
    env.git(repo, &["remote", "set-url", "origin", url]);
}

#[test]
fn a_task_recorded_against_an_ssh_url_is_fenced_where_the_server_names_that_url() {
    let (env, repo, origin) = served();
    origin_over_ssh(&env, &repo, &origin, "git@Git.Example:o/app.git");
    let a = spawn(&env, &repo, "a", &[]);
    let work = env.path("work");
    env.git(&work, &["clone", "-q", origin.to_str().unwrap(), "plain"]);
    let plain = work.join("plain");
    env.commit(&plain, "p.txt", "from a clone without git-hand\n");

    // The server knows only its own path: the ssh spelling's task is not fenced yet.
    push_past_hooks(&env, &plain, &origin, &[], &["HEAD:refs/heads/hand/a"]).ok();

    // Named in another spelling of the same URL (normalized as tasks record it).
    env.git(
        &origin,
        &[
            "config",
            "--add",
            "hand.remoteUrl",
            "https://git.example/o/app",
        ],
    );
    let theirs = env.commit(&plain, "q.txt", "more from the plain clone\n");
    let refused = push_past_hooks(&env, &plain, &origin, &[], &["+HEAD:refs/heads/hand/a"]);
    refused_by_remote(&refused, "branch hand/a belongs to live task a");
    assert_ne!(
        remote_oid(&env, &origin, "hand/a").as_deref(),
        Some(theirs.as_str())
    );

    // The holder, pushing over ssh with its lease as push options, passes.
    let slot = path_of(&a);
    let mine = env.commit(&slot, "a.txt", "a's work\n");
    let mut cmd = env.contained("git", &slot);
    cmd.args(["push", "--no-verify", "-q", "-f"]);
    for o in options(&a, "a") {
        cmd.args(["-o", &o]);
    }
    cmd.args(["origin", "HEAD:refs/heads/hand/a"]);
    Run::from(cmd.output().unwrap()).ok();
    assert_eq!(
        remote_oid(&env, &origin, "hand/a").as_deref(),
        Some(mine.as_str())
    );
}

#[test]
fn a_push_to_a_symbolic_alias_of_a_live_tasks_branch_is_refused_and_the_holders_passes() {
    let (env, repo, origin) = served();
    let a = spawn(&env, &repo, "a", &[]);
    let slot = path_of(&a);
    env.commit(&slot, "a.txt", "a's work\n");
    push_past_hooks(
        &env,
        &slot,
        &origin,
        &options(&a, "a"),
        &["HEAD:refs/heads/hand/a"],
    )
    .ok();
    env.git(
        &origin,
        &["symbolic-ref", "refs/heads/alias", "refs/heads/hand/a"],
    );
    let before = remote_oid(&env, &origin, "hand/a");
    let work = env.path("work");
    env.git(&work, &["clone", "-q", origin.to_str().unwrap(), "plain"]);
    let plain = work.join("plain");
    env.git(&plain, &["checkout", "-q", "-B", "x", "origin/hand/a"]);
    env.commit(&plain, "p.txt", "from a clone without git-hand\n");

    let refused = push_past_hooks(&env, &plain, &origin, &[], &["HEAD:refs/heads/alias"]);
    refused_by_remote(
        &refused,
        "branch hand/a (pushed as alias) belongs to live task a",
    );
    assert_eq!(remote_oid(&env, &origin, "hand/a"), before);

    // The holder's push through the alias passes, and moves the task's branch.
    let mine = env.commit(&slot, "b.txt", "more of a's work\n");
    push_past_hooks(
        &env,
        &slot,
        &origin,
        &options(&a, "a"),
        &["HEAD:refs/heads/alias"],
    )
    .ok();
    assert_eq!(
        remote_oid(&env, &origin, "hand/a").as_deref(),
        Some(mine.as_str())
    );
}

#[test]
fn a_reftable_server_resolves_a_symbolic_alias_too() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.hand(&repo, &["install"]).ok();
    let origin = env.path("work/table.git");
    env.git(
        &env.path("work"),
        &["init", "-q", "--bare", "--ref-format=reftable", "table.git"],
    );
    let origin = origin.canonicalize().unwrap();
    env.hand(&origin, &["install", "--server"]).ok();
    env.git(&origin, &["config", "hand.requireLease", "main"]);
    push_past_hooks(&env, &repo, &origin, &[], &["HEAD:refs/heads/feature"]).ok();
    env.git(
        &origin,
        &["symbolic-ref", "refs/heads/master", "refs/heads/main"],
    );
    let refused = push_past_hooks(&env, &repo, &origin, &[], &["HEAD:refs/heads/master"]);
    refused_by_remote(
        &refused,
        "branch main (pushed as master) takes only a current lease",
    );
    assert_eq!(remote_oid(&env, &origin, "main"), None);
}

#[test]
fn a_server_without_a_ledger_refuses_every_push_and_says_where_it_looked() {
    let env = TestEnv::new();
    env.repo("app");
    let origin = env.path("work/app-origin.git").canonicalize().unwrap();
    env.hand(&origin, &["install", "--server"]).ok();
    let _ = std::fs::remove_file(env.ledger()); // As a hook running under another HOME finds it.
    let clone = env.path("work/app");
    let run = Run::from(
        env.contained("git", &clone)
            .args([
                "push",
                "--no-verify",
                "-q",
                "origin",
                "main:refs/heads/elsewhere",
            ])
            .output()
            .unwrap(),
    );
    assert_ne!(run.code, 0, "the push landed:\n{}", run.stderr);
    for words in [
        "push refused by the remote: it cannot check leases",
        &env.ledger().display().to_string(),
        "from the repository's own hand.ledger",
        "hand.ledger",
    ] {
        assert!(
            run.stderr.contains(words),
            "{words:?} not in:\n{}",
            run.stderr
        );
    }
    assert_eq!(remote_oid(&env, &origin, "elsewhere"), None);
}
