//! What a repository hands git-hand can neither hang it nor fool the user: a `.handconfig` that
//! is a symlink to `/dev/zero`, a FIFO or a file of 2 MiB is refused by name (status, config,
//! spawn and the pre-push hook all end, under a kill timeout and a memory limit); a setup command
//! holding an escape sequence is shown escaped, and `git hand trust` approves it only when asked.

use std::path::Path;

use crate::support::{BIN, Run, TestEnv, cred, installed, path_of, spawn};

/// `git-hand ARGS` in `dir`, in its own PID namespace, killed after
/// [`COMMAND_TIMEOUT`](crate::support::COMMAND_TIMEOUT) and
/// limited to 2 GiB of address space: before the fix, reading `/dev/zero` grew by gigabytes a
/// second, and a test of it must not take the machine with it. Off Linux (no `prlimit`, no PID
/// namespaces): [`TestEnv::contained`], without the memory limit.
#[cfg(target_os = "linux")]
fn bounded(
    env: &TestEnv,
    program: &str,
    dir: &Path,
    args: &[&str],
    vars: &[(String, String)],
) -> Run {
    let mut cmd = env.command("timeout", dir);
    cmd.args([
        "-s",
        "KILL",
        crate::support::COMMAND_TIMEOUT,
        "prlimit",
        "--as=2147483648",
        "unshare",
        "-fp",
        "--kill-child",
        "--mount-proc",
        program,
    ])
    .args(args);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    Run::from(cmd.output().unwrap())
}

/// See the Linux `bounded`.
#[cfg(not(target_os = "linux"))]
fn bounded(
    env: &TestEnv,
    program: &str,
    dir: &Path,
    args: &[&str],
    vars: &[(String, String)],
) -> Run {
    let mut cmd = env.contained(program, dir);
    cmd.args(args);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    Run::from(cmd.output().unwrap())
}

/// Runs `status`, `config`, `spawn` and a push from `slot` (its pre-push hook) with the main
/// worktree's `.handconfig` in place, and asserts each ended refused, saying `why` of the file.
fn each_verb_refuses(
    env: &TestEnv,
    repo: &Path,
    slot: &Path,
    creds: &[(String, String)],
    why: &str,
) {
    let file = repo.join(".handconfig");
    let said = format!("{} {why}", file.display());
    for args in [&["status"][..], &["config"], &["spawn", "b"]] {
        let run = bounded(env, BIN, repo, args, &[]);
        assert!(
            run.code != 0 && run.code != 137,
            "git hand {args:?} did not refuse (exit {}):\n{}",
            run.code,
            run.stderr
        );
        assert!(
            run.stderr.contains(&said),
            "git hand {args:?} did not name the file:\n{}",
            run.stderr
        );
    }
    env.commit(slot, "work.txt", "work\n");
    let push = bounded(env, "git", slot, &["push", "-q", "origin", "HEAD"], creds);
    assert!(
        push.code != 0 && push.code != 137,
        "the push was not refused (exit {}):\n{}",
        push.code,
        push.stderr
    );
    assert!(
        push.stderr
            .lines()
            .any(|l| l.starts_with("git-hand: ") && l.contains(&said)),
        "the pre-push hook did not name the file:\n{}",
        push.stderr
    );
}

/// A repository with one task spawned (`a`), before its `.handconfig` is made hostile.
fn with_a_task() -> (
    TestEnv,
    std::path::PathBuf,
    std::path::PathBuf,
    Vec<(String, String)>,
) {
    let (env, repo) = installed();
    let a = spawn(&env, &repo, "a", &[]);
    (env, repo, path_of(&a), cred(&a))
}

#[test]
fn a_handconfig_committed_as_a_symlink_to_dev_zero_is_refused_not_read() {
    let (env, repo, slot, creds) = with_a_task();
    std::os::unix::fs::symlink("/dev/zero", repo.join(".handconfig")).unwrap();
    env.git(&repo, &["add", ".handconfig"]);
    env.git(&repo, &["commit", "-q", "-m", "zero"]);
    each_verb_refuses(
        &env,
        &repo,
        &slot,
        &creds,
        "is a symbolic link, which git-hand does not follow",
    );
}

#[test]
fn a_handconfig_that_is_a_fifo_is_refused_without_waiting_for_a_writer() {
    let (env, repo, slot, creds) = with_a_task();
    let fifo = repo.join(".handconfig");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    each_verb_refuses(
        &env,
        &repo,
        &slot,
        &creds,
        "is not a regular file (it is a FIFO)",
    );
}

#[test]
fn a_handconfig_over_one_mebibyte_is_refused() {
    let (env, repo, slot, creds) = with_a_task();
    let mut text = String::from("[hand]\n");
    while text.len() < 2 << 20 {
        text.push_str("\t# padding padding padding padding padding padding padding\n");
    }
    env.commit(&repo, ".handconfig", &text);
    each_verb_refuses(&env, &repo, &slot, &creds, "is larger than 1 MiB");
}

/// The setup command the tester committed: an `ESC[8m` (conceal) hides what follows it on a
/// terminal.
const HIDDEN: &str = "echo hello\x1b[8m; touch PWNED";
const SHOWN: &str = "\"echo hello\\e[8m; touch PWNED\"";

#[test]
fn a_setup_command_with_an_escape_sequence_is_shown_escaped_and_trusted_only_when_asked() {
    let (env, repo) = installed();
    env.commit(
        &repo,
        ".handconfig",
        &format!("[hand]\n\tonCreate = \"{HIDDEN}\"\n"),
    );
    let file = repo.join(".handconfig");

    let refused = bounded(&env, BIN, &repo, &["spawn", "a"], &[]).code(3);
    assert!(
        !refused.stderr.contains('\x1b'),
        "raw ESC shown:\n{}",
        refused.stderr
    );
    assert!(
        refused
            .stderr
            .contains(&format!("asks to run hand.onCreate = {SHOWN}")),
        "{}",
        refused.stderr
    );

    let trust = env.hand(&repo, &["trust"]).code(1);
    assert!(
        !trust.stderr.contains('\x1b'),
        "raw ESC shown:\n{}",
        trust.stderr
    );
    assert!(
        trust.stderr.contains(&format!(
            "not trusted: {} holds control or bidirectional-formatting characters",
            file.display()
        )),
        "{}",
        trust.stderr
    );
    assert!(
        trust
            .stderr
            .contains("  line 2: \"onCreate = \\\"echo hello\\e[8m; touch PWNED\\\"\"\n"),
        "{}",
        trust.stderr
    );
    assert!(
        trust
            .stderr
            .contains("git hand trust --allow-control-characters"),
        "{}",
        trust.stderr
    );
    // Nothing was approved: the spawn is still refused, and nothing ran.
    bounded(&env, BIN, &repo, &["spawn", "a"], &[]).code(3);
    assert!(!repo.join("PWNED").exists());

    let config = env.hand(&repo, &["config"]).code(0);
    assert!(
        !config.stdout.contains('\x1b'),
        "raw ESC shown:\n{}",
        config.stdout
    );

    let allowed = env
        .hand(&repo, &["trust", "--allow-control-characters"])
        .code(0);
    assert!(
        !allowed.stdout.contains('\x1b'),
        "raw ESC shown:\n{}",
        allowed.stdout
    );
    assert!(
        allowed
            .stdout
            .contains(&format!("  hand.onCreate = {SHOWN}\n")),
        "{}",
        allowed.stdout
    );
    // What runs is what was shown; the line that says so shows it escaped (the command's own
    // output is its own).
    let spawned = bounded(&env, BIN, &repo, &["spawn", "a"], &[]).code(0);
    assert!(
        spawned.stderr.contains(&format!(
            "git-hand: a: running hand.onCreate (.handconfig): {SHOWN}\n"
        )),
        "{}",
        spawned.stderr
    );
    let slot = path_of(&env.hand(&repo, &["list", "--json"]).json()["tasks"][0]);
    assert!(
        slot.join("PWNED").exists(),
        "the trusted command did not run whole"
    );
}

#[test]
fn a_quoted_escape_in_a_value_is_a_control_character_too() {
    let (env, repo) = installed();
    env.commit(
        &repo,
        ".handconfig",
        "[hand]\n\tonCreate = \"echo a\\b\\b\\b\\bsafe\"\n",
    );
    let trust = env.hand(&repo, &["trust"]).code(1);
    assert!(
        trust
            .stderr
            .contains("hand.onCreate = \"echo a\\b\\b\\b\\bsafe\""),
        "{}",
        trust.stderr
    );
}

#[test]
fn trust_before_any_ledger_makes_the_state_directory_private() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.commit(&repo, ".handconfig", "[hand]\n\tonCreate = true\n");
    env.hand(&repo, &["trust"]).code(0);
    assert!(!env.ledger().exists(), "trust made a ledger");
    for dir in ["state/git-hand", "state/git-hand/trusted"] {
        let mode = crate::support::mode(&env.path(dir)) & 0o777;
        assert_eq!(mode, 0o700, "{dir} is {mode:o}");
    }
}

#[test]
fn an_included_file_name_with_an_escape_sequence_is_shown_escaped() {
    let (env, repo) = installed();
    env.commit(&repo, ".gitignore", "*.local\n");
    env.git(&repo, &["config", "--add", "hand.include", "*.local"]);
    std::fs::write(repo.join("a\x1b[8mb.local"), "x\n").unwrap();
    std::fs::write(repo.join("\x1b[2Jc.local"), "y\n").unwrap();
    let spawned = bounded(&env, BIN, &repo, &["spawn", "a"], &[]).code(0);
    assert!(
        !spawned.stderr.contains('\x1b'),
        "raw ESC shown:\n{}",
        spawned.stderr
    );
    assert!(
        spawned.stderr.contains("\"a\\e[8mb.local\""),
        "{}",
        spawned.stderr
    );
}

#[test]
fn the_log_shows_a_holder_and_a_detail_escaped() {
    let (env, repo) = installed();
    spawn(&env, &repo, "a", &[]);
    // A refusal's detail names what a pusher's environment said (another machine's or a
    // server's row on a shared ledger): here written straight into the ledger.
    let conn = rusqlite::Connection::open(env.ledger()).unwrap();
    let added = conn
        .execute(
            "INSERT INTO events (at, kind, resource_kind, resource_key, lease_id, token, holder, detail) \
             SELECT at, kind, resource_kind, resource_key, lease_id, token, ?1, ?2 FROM events \
             WHERE resource_key IS NOT NULL ORDER BY id DESC LIMIT 1",
            ["eve\x1b[8m@host", "pushed by\x1b[2J mallory"],
        )
        .unwrap();
    assert_eq!(added, 1);
    drop(conn);
    let log = env.hand(&repo, &["log"]).code(0);
    assert!(
        !log.stdout.contains('\x1b'),
        "raw ESC shown:\n{}",
        log.stdout
    );
    assert!(log.stdout.contains("\"eve\\e[8m@host\""), "{}", log.stdout);
    assert!(
        log.stdout.contains("\"pushed by\\e[2J mallory\""),
        "{}",
        log.stdout
    );
}
