//! Settings a team commits (`.handconfig`) and setup commands (`hand.onCreate`, `hand.onReuse`,
//! `hand.onTeardown`), through the binary with real git and a real ledger. Every command that
//! may run a setup command runs contained (`TestEnv::contained`): its own PID namespace, under a
//! kill timeout (off Linux, the harness's process group under its own kill timeout).
//!
//! Snapshots in `tests/it/snapshots/` (`INSTA_UPDATE=always cargo test --locked setup::`).

use std::path::{Path, PathBuf};

use crate::support::{BIN, Run, Shown, TestEnv, assert_consistent, installed, path_of, shot};

/// `git-hand ARGS` in `dir`, contained: a setup command it starts dies with it.
fn hand(env: &TestEnv, dir: &Path, args: &[&str]) -> Run {
    let mut cmd = env.contained(BIN, dir);
    cmd.args(args);
    Run::from(cmd.output().unwrap())
}

/// Commits `text` as the repository's `.handconfig`.
fn commit_handconfig(env: &TestEnv, repo: &Path, text: &str) {
    std::fs::write(repo.join(".handconfig"), text).unwrap();
    env.git(repo, &["add", ".handconfig"]);
    env.git(repo, &["commit", "-q", "-m", "handconfig"]);
}

/// The open tasks the ledger lists for the repository.
fn open_tasks(env: &TestEnv, repo: &Path) -> Vec<serde_json::Value> {
    let run = env.hand(repo, &["list", "--json"]);
    let listed = run.json();
    listed["tasks"].as_array().cloned().unwrap_or_default()
}

/// The slot's `git status --porcelain` (untracked files included): empty when clean.
fn status(env: &TestEnv, slot: &Path) -> String {
    env.git(slot, &["status", "--porcelain", "--untracked-files=all"])
}

fn slot_one(env: &TestEnv) -> PathBuf {
    let pools = env.path("data/git-hand/pools");
    let pool = std::fs::read_dir(&pools).unwrap().next().unwrap().unwrap();
    pool.path().join("1/app")
}

#[test]
fn git_config_wins_over_handconfig_which_wins_over_the_default() {
    let (env, repo) = installed();
    commit_handconfig(
        &env,
        &repo,
        "[hand]\n\tmaxSlots = 1\n\trequireCredential = true\n\tfenceRefs = false\n\tledger = /elsewhere\n",
    );
    // The file's maxSlots holds: one slot, so a second task finds the pool full.
    crate::support::spawn(&env, &repo, "a", &[]);
    let full = env.hand(&repo, &["spawn", "b"]).code(3);
    assert!(
        full.stderr.contains("the pool is full (1 slots"),
        "{}",
        full.stderr
    );
    // Git config (local) over the file, and `git -c` over both.
    env.git(&repo, &["config", "hand.maxSlots", "2"]);
    env.git(&repo, &["config", "hand.requireCredential", "false"]);
    crate::support::spawn(&env, &repo, "b", &[]);
    let text = env.hand(&repo, &["config"]);
    let json = env.hand_env(
        &repo,
        &["config", "--json"],
        &[("GIT_CONFIG_PARAMETERS", "'hand.fenceRefs'='true'")],
    );
    let json = json.code(0);
    insta::assert_snapshot!(
        "config_precedence",
        shot(&env, "git hand config", &text, Shown::Text)
            + &shot(
                &env,
                "git -c hand.fenceRefs=true hand config --json",
                &json,
                Shown::Json
            )
    );
}

/// `git hand config` lists every key git-hand reads (this machine's id and the server's keys
/// too, which only git's configuration sets) and every value of a multi-valued key, each whole:
/// a pattern with a space in it stays one value.
#[test]
fn config_lists_every_key_and_every_value_of_a_multi_valued_one() {
    let (env, repo) = installed();
    commit_handconfig(
        &env,
        &repo,
        "[hand]\n\tinclude = .env\n\tinclude = my dir/\n\tmachine = shared\n\tremoteUrl = git@example.com:o/app.git\n",
    );
    env.git(&repo, &["config", "hand.machine", "not a machine"]);
    let text = env.hand(&repo, &["config"]).code(0);
    let json = env.hand(&repo, &["config", "--json"]).code(0).json();
    let setting = |json: &serde_json::Value, key: &str| {
        let all = json["settings"].as_array().unwrap().clone();
        all.into_iter().find(|s| s["key"] == key).unwrap()
    };
    let include = setting(&json, "hand.include");
    assert_eq!(include["values"], serde_json::json!([".env", "my dir/"]));
    assert_eq!(
        (&include["value"], &include["multi"]),
        (&serde_json::Value::Null, &serde_json::json!(true))
    );
    let machine = setting(&json, "hand.machine");
    assert_eq!(machine["values"], serde_json::json!(["not a machine"]));
    assert!(
        machine["problem"]
            .as_str()
            .unwrap()
            .contains("hand.machine"),
        "{machine}"
    );
    assert_eq!(
        json["ignored"],
        serde_json::json!(["hand.machine", "hand.remoteUrl"])
    );

    // The server's bare repository: no .handconfig, its keys from git's configuration.
    let server = env.path("work/server.git");
    env.git(&env.path("work"), &["init", "-q", "--bare", "server.git"]);
    // A blank value (which the hook skips) and a password (which is never shown) among them.
    for url in [
        "git@example.com:o/app.git",
        "https://ci:tok3n@example.com/o/app",
        "",
    ] {
        env.git(&server, &["config", "--add", "hand.remoteUrl", url]);
    }
    for pattern in ["main", "release/*"] {
        env.git(&server, &["config", "--add", "hand.requireLease", pattern]);
    }
    env.git(&server, &["config", "hand.machine", "git-server"]);
    let bare = env.hand(&server, &["config"]).code(0);
    let bare_json = env.hand(&server, &["config", "--json"]).code(0).json();
    let urls = setting(&bare_json, "hand.remoteUrl");
    assert_eq!(
        urls["values"],
        serde_json::json!([
            "git@example.com:o/app.git",
            "https://ci:***@example.com/o/app"
        ])
    );
    assert_eq!(urls["origin"], "git");
    let required = setting(&bare_json, "hand.requireLease");
    assert_eq!(required["values"], serde_json::json!(["main", "release/*"]));
    let machine = setting(&bare_json, "hand.machine");
    assert_eq!(
        (&machine["value"], &machine["problem"]),
        (&serde_json::json!("git-server"), &serde_json::Value::Null)
    );
    insta::assert_snapshot!(
        "config_every_key",
        shot(&env, "git hand config", &text, Shown::Text)
            + &shot(&env, "git -C server.git hand config", &bare, Shown::Text)
    );
}

#[test]
fn a_bad_value_in_handconfig_names_the_file() {
    let (env, repo) = installed();
    commit_handconfig(&env, &repo, "[hand]\n\tmaxSlots = lots\n");
    let run = env.hand(&repo, &["spawn", "a"]).code(2);
    insta::assert_snapshot!(
        "bad_value",
        shot(&env, "git hand spawn a", &run, Shown::Text)
    );
}

#[test]
fn an_untrusted_handconfig_runs_nothing_and_leases_nothing() {
    let (env, repo) = installed();
    let marker = env.path("marker");
    commit_handconfig(
        &env,
        &repo,
        &format!("[hand]\n\tonCreate = touch {}\n", marker.display()),
    );
    let refused = hand(&env, &repo, &["spawn", "a"]).code(3);
    assert!(!marker.exists(), "an untrusted command ran");
    assert!(open_tasks(&env, &repo).is_empty(), "a task was recorded");
    assert!(
        !env.path("data/git-hand/pools").exists(),
        "a pool was made for a refused spawn"
    );
    // --no-setup: the task is spawned, and still nothing runs.
    let spawned = hand(&env, &repo, &["spawn", "a", "--no-setup", "--json"]).code(0);
    assert!(!marker.exists(), "--no-setup ran the command");
    assert_eq!(open_tasks(&env, &repo).len(), 1);
    assert!(path_of(&spawned.json()).is_dir());
    insta::assert_snapshot!(
        "untrusted",
        shot(&env, "git hand spawn a", &refused, Shown::Text)
    );
}

#[test]
fn a_trusted_handconfig_that_changes_asks_again() {
    let (env, repo) = installed();
    let log = env.path("log");
    let config = |word: &str| {
        format!(
            "[hand]\n\tonCreate = echo {word} >> {}\n\tonReuse = echo {word} >> {}\n",
            log.display(),
            log.display()
        )
    };
    commit_handconfig(&env, &repo, &config("first"));
    let trusted = env.hand(&repo, &["trust"]).code(0);
    hand(&env, &repo, &["spawn", "a"]).code(0);
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "first\n");
    env.hand(&repo, &["teardown", "a"]).code(0);
    commit_handconfig(&env, &repo, &config("second"));
    let asked = hand(&env, &repo, &["spawn", "b"]).code(3);
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "first\n",
        "a changed file ran"
    );
    let shown = env.hand(&repo, &["config"]).code(0);
    env.hand(&repo, &["trust"]).code(0);
    hand(&env, &repo, &["spawn", "b"]).code(0);
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "first\nsecond\n");
    insta::assert_snapshot!(
        "trust_again",
        shot(&env, "git hand trust", &trusted, Shown::Text)
            + &shot(
                &env,
                "git hand spawn b   # after the file changed",
                &asked,
                Shown::Text
            )
            + &shot(&env, "git hand config", &shown, Shown::Text)
    );
}

#[test]
fn a_failing_setup_fails_the_spawn_and_leaves_the_slot_free_and_clean() {
    let (env, repo) = installed();
    // From git config: the user's own command needs no trust.
    env.git(
        &repo,
        &[
            "config",
            "hand.onCreate",
            "echo preparing; touch half-made; echo broken >&2; exit 3",
        ],
    );
    let failed = hand(&env, &repo, &["spawn", "a"]).code(1);
    let slot = slot_one(&env);
    assert!(slot.is_dir(), "the new slot was removed instead of kept");
    assert_eq!(status(&env, &slot), "", "the slot was left dirty");
    assert!(open_tasks(&env, &repo).is_empty(), "the task stayed open");
    assert_consistent(&env, "after a failed setup");
    // The slot is free: the next spawn gets it (a reuse runs hand.onReuse, unset here).
    let again = hand(&env, &repo, &["spawn", "a", "--no-setup", "--json"]).code(0);
    assert_eq!(path_of(&again.json()), slot);
    assert!(!env.git(&repo, &["branch", "--list", "hand/a"]).is_empty());
    insta::assert_snapshot!(
        "failing_setup",
        shot(&env, "git hand spawn a", &failed, Shown::Text)
    );
}

#[test]
fn a_setup_past_its_timeout_is_killed_with_everything_it_started() {
    let (env, repo) = installed();
    // A `sleep` under a name of this test's own (its temporary directory is unique), so the
    // look afterwards sees only what this setup started.
    let sleeper = env.path("setup-sleeper");
    let sleep = ["/bin/sleep", "/usr/bin/sleep"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap();
    std::os::unix::fs::symlink(sleep, &sleeper).unwrap();
    let sleeper = sleeper.display().to_string();
    env.git(&repo, &["config", "hand.setupTimeout", "1s"]);
    env.git(
        &repo,
        &[
            "config",
            "hand.onCreate",
            &format!("echo waiting; '{sleeper}' 300 & '{sleeper}' 300"),
        ],
    );
    // Inside the containment, before it kills what is left there: every process, with its
    // state (the dead are zombies until someone reaps them) and its whole command line (`-ww`:
    // never cut). `ps -A -o` takes the same options on procps and BSD `ps`.
    let script = format!("{BIN} spawn slow; echo \"exit $?\"; ps -A -ww -o stat= -o args=");
    let mut cmd = env.contained("sh", &repo);
    cmd.args(["-c", &script]);
    let run = Run::from(cmd.output().unwrap());
    assert!(run.stdout.contains("exit 1"), "{run:?}");
    // What still ran this setup's sleeps (a `sleep` or the setup's own `sh`).
    let left: Vec<&str> = run
        .stdout
        .lines()
        .filter(|line| {
            let state = line.split_whitespace().next().unwrap_or("Z");
            !state.starts_with('Z') && line.contains(&sleeper)
        })
        .collect();
    // Killed now, in case one escaped the containment too (found by its own command line, as
    // a pid of the list may be another process's by now).
    for pid in crate::processes::running_with_args(&[sleeper.as_ref(), "300".as_ref()]) {
        let _ = std::process::Command::new("kill")
            .args(["-s", "KILL", &pid.to_string()])
            .status();
    }
    assert!(
        left.is_empty(),
        "a process outlived the timeout: {left:#?}\n{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("was still running after 1s, so it was killed"),
        "{}",
        run.stderr
    );
    let slot = slot_one(&env);
    assert_eq!(status(&env, &slot), "");
    assert!(open_tasks(&env, &repo).is_empty());
    assert_consistent(&env, "after a setup timed out");
    hand(&env, &repo, &["spawn", "slow", "--no-setup"]).code(0);
}

#[test]
fn on_create_runs_in_a_new_slot_and_on_reuse_in_a_reused_one_with_the_credential() {
    let (env, repo) = installed();
    let log = env.path("log");
    let line = |word: &str| {
        format!(
            "echo {word} \"$GIT_HAND_TASK\" \"$GIT_HAND_TOKEN\" \"$(pwd)\" >> {}",
            log.display()
        )
    };
    env.git(&repo, &["config", "hand.onCreate", &line("create")]);
    env.git(&repo, &["config", "hand.onReuse", &line("reuse")]);
    let first = hand(&env, &repo, &["spawn", "a", "--json"]).code(0);
    let slot = path_of(&first.json());
    env.hand(&repo, &["teardown", "a"]).code(0);
    let second = hand(&env, &repo, &["spawn", "b", "--json"]).code(0);
    assert_eq!(path_of(&second.json()), slot);
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        format!(
            "create a 1 {}\nreuse b 2 {}\n",
            slot.display(),
            slot.display()
        )
    );
    // The output is on stderr, prefixed with the task's name; stdout stays the JSON.
    insta::assert_snapshot!(
        "on_reuse",
        shot(&env, "git hand spawn b --json", &second, Shown::Json)
    );
}

#[test]
fn on_teardown_runs_before_anything_is_discarded_and_its_failure_stops_the_teardown() {
    let (env, repo) = installed();
    let log = env.path("log");
    env.git(
        &repo,
        &[
            "config",
            "hand.onTeardown",
            &format!(
                "echo \"$GIT_HAND_TASK\" >> {}; test -e ok || exit 4",
                log.display()
            ),
        ],
    );
    let v = crate::support::spawn(&env, &repo, "a", &[]);
    let slot = path_of(&v);
    std::fs::write(slot.join("README"), "edited\n").unwrap();
    let failed = hand(&env, &repo, &["teardown", "a", "--force"]).code(1);
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "a\n");
    assert_eq!(
        std::fs::read_to_string(slot.join("README")).unwrap(),
        "edited\n",
        "a failed onTeardown let --force discard the changes"
    );
    assert_eq!(open_tasks(&env, &repo).len(), 1, "the task ended");
    // What the command leaves behind is judged like the task's own files.
    std::fs::write(slot.join("ok"), "").unwrap();
    let blocked = hand(&env, &repo, &["teardown", "a"]).code(3);
    assert!(blocked.stderr.contains("ok"), "{}", blocked.stderr);
    std::fs::remove_file(slot.join("ok")).unwrap();
    hand(&env, &repo, &["teardown", "a", "--force", "--no-setup"]).code(0);
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "a\na\n");
    assert!(open_tasks(&env, &repo).is_empty());
    assert_eq!(status(&env, &slot), "");
    insta::assert_snapshot!(
        "on_teardown",
        shot(&env, "git hand teardown a --force", &failed, Shown::Text)
    );
}

/// `git hand config` shows `hand.remoteUrl` as the server's hook reads it: blank values skipped
/// and said so (the hook ignores them), and a password in a URL masked, in text and JSON (as
/// `hand.ledger`'s is).
#[test]
fn config_shows_remote_urls_as_the_hook_reads_them_without_their_password() {
    let env = TestEnv::new();
    let server = env.path("work/server.git");
    std::fs::create_dir_all(env.path("work")).unwrap();
    env.git(&env.path("work"), &["init", "-q", "--bare", "server.git"]);
    for url in [
        "https://ci:tok3n@example.com/o/app",
        "",
        "  ",
        "git@example.com:o/app.git",
    ] {
        env.git(&server, &["config", "--add", "hand.remoteUrl", url]);
    }
    let text = env.hand(&server, &["config"]).code(0);
    let rows: Vec<&str> = text
        .stdout
        .lines()
        .filter(|l| l.starts_with("hand.remoteUrl"))
        .collect();
    assert_eq!(rows.len(), 2, "{}", text.stdout);
    assert!(
        rows[0].contains("https://ci:***@example.com/o/app"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout
            .contains("note: hand.remoteUrl: 2 empty values skipped (the hook ignores them)"),
        "{}",
        text.stdout
    );
    let json = env.hand(&server, &["config", "--json"]).code(0);
    for out in [&text.stdout, &text.stderr, &json.stdout, &json.stderr] {
        assert!(!out.contains("tok3n"), "the password is shown: {out}");
    }
    let json = json.json();
    let urls = json["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["key"] == "hand.remoteUrl")
        .unwrap()
        .clone();
    assert_eq!(
        urls["values"],
        serde_json::json!([
            "https://ci:***@example.com/o/app",
            "git@example.com:o/app.git"
        ])
    );
    assert_eq!(
        urls["note"],
        "hand.remoteUrl: 2 empty values skipped (the hook ignores them)"
    );
}

#[test]
fn config_shows_the_ledger_in_effect_when_git_hand_ledger_overrides_git_config() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.git(
        &repo,
        &["config", "hand.ledger", "/elsewhere/ledger.sqlite"],
    );
    let json = env.hand(&repo, &["config", "--json"]).code(0).json();
    let ledger = json["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["key"] == "hand.ledger")
        .unwrap()
        .clone();
    assert_eq!(ledger["value"], env.ledger().to_str().unwrap(), "{ledger}");
    assert_eq!(ledger["origin"], "env", "{ledger}");
    assert!(
        ledger["note"]
            .as_str()
            .is_some_and(|n| n.contains("GIT_HAND_LEDGER overrides hand.ledger from git config")),
        "{ledger}"
    );
    let text = env.hand(&repo, &["config"]).code(0);
    assert!(text.stdout.contains("GIT_HAND_LEDGER"), "{}", text.stdout);
}

#[test]
fn config_in_a_server_repository_warns_that_no_url_is_fenced_without_hand_remote_url() {
    let env = TestEnv::new();
    env.repo("app");
    let origin = env.path("work/app-origin.git").canonicalize().unwrap();
    let shown = env.hand(&origin, &["config"]).code(0);
    assert!(
        shown.stdout.contains("hand.remoteUrl is not set")
            && shown.stdout.contains("config --add hand.remoteUrl <url>"),
        "{}",
        shown.stdout
    );
    env.git(
        &origin,
        &["config", "hand.remoteUrl", "ssh://git@srv/app.git"],
    );
    let shown = env.hand(&origin, &["config"]).code(0);
    assert!(!shown.stdout.contains("is not set"), "{}", shown.stdout);
}
