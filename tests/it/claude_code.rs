//! The real Claude Code CLI (pinned in `build-support/test-tools`) in repositories whose Claude
//! Code settings hand worktrees to git-hand, against the stand-in API ([`crate::claude_api`]):
//! whole sessions, started with `-w`, resumed, and fanning out to subagents, whose scripted Bash
//! commands commit and push in the slots git-hand leased them. Each `claude` runs contained
//! ([`TestEnv::contained`]), with a HOME of the test's own.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::claude_api::{ClaudeApi, Turn, marker};
use crate::support::{Run, TestEnv, hook_tools, remote_oid};

/// The directory holding the `claude` the tests run (installed by `build-support/test-tools`).
fn claude_dir() -> PathBuf {
    hook_tools()
        .iter()
        .find(|dir| dir.join("claude").is_file())
        .cloned()
        .expect("build-support/test-tools printed no directory holding claude")
}

/// Claude Code's hooks for git-hand in `repo`'s `.claude/settings.local.json`, as `git hand
/// install --claude` writes them (written here by hand until that lands; then this calls it).
fn install_claude_hooks(repo: &Path) {
    let entry = |event: &str| {
        json!([{"hooks": [{
            "type": "command",
            "command": format!("git-hand hook claude {event}"),
            "timeout": 900,
        }]}])
    };
    let settings = json!({"hooks": {
        "WorktreeCreate": entry("worktree-create"),
        "WorktreeRemove": entry("worktree-remove"),
        "SessionStart": entry("session-start"),
    }});
    std::fs::create_dir_all(repo.join(".claude")).unwrap();
    std::fs::write(
        repo.join(".claude/settings.local.json"),
        format!("{settings:#}\n"),
    )
    .unwrap();
}

/// A repository `app` with its bare origin, git-hand's git hooks and its Claude Code hooks.
fn claude_repo() -> (TestEnv, PathBuf) {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.hand(&repo, &["install"]).ok();
    install_claude_hooks(&repo);
    std::fs::write(
        env.path("home/.claude.json"),
        json!({"hasCompletedOnboarding": true}).to_string(),
    )
    .unwrap();
    (env, repo)
}

/// What one `claude -p` run did: its exit status and output, and the session it ran.
struct Session {
    id: String,
    run: Run,
}

/// Runs `claude <args> --output-format json` in `dir`, contained, against `api`, with the
/// binary under test first on `PATH` (the hooks call `git-hand`) and Bash (and Agent) allowed.
/// Asserts it succeeded and returns its session id.
#[track_caller]
fn claude(env: &TestEnv, api: &ClaudeApi, dir: &Path, args: &[&str]) -> Session {
    let path = format!(
        "{}:{}:/usr/local/bin:/usr/bin:/bin",
        TestEnv::bin_dir().display(),
        claude_dir().display()
    );
    let mut cmd = env.contained("claude", dir);
    cmd.args(args)
        .args(["--output-format", "json", "--allowedTools", "Bash,Agent"])
        .env("PATH", path)
        .env("SHELL", "/bin/bash")
        .env("ANTHROPIC_BASE_URL", api.base_url())
        .env("ANTHROPIC_API_KEY", "test")
        .env("DISABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1");
    let run = Run::from(cmd.output().unwrap());
    let result: Value = serde_json::from_str(run.stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "claude printed no JSON result ({e}), exit {}\nstdout:\n{}\nstderr:\n{}",
            run.code, run.stdout, run.stderr
        )
    });
    assert_eq!(
        (run.code, &result["is_error"]),
        (0, &json!(false)),
        "claude failed\nstdout:\n{}\nstderr:\n{}",
        run.stdout,
        run.stderr
    );
    let id = result["session_id"].as_str().unwrap().to_string();
    Session { id, run }
}

/// `git hand list --json`'s tasks (done ones too with `--all`).
fn tasks(env: &TestEnv, repo: &Path) -> Vec<Value> {
    let v = env.hand(repo, &["list", "--all", "--json"]).code(0).json();
    v["tasks"].as_array().unwrap().clone()
}

/// The task named `name`.
#[track_caller]
fn task(env: &TestEnv, repo: &Path, name: &str) -> Value {
    tasks(env, repo)
        .into_iter()
        .find(|t| t["task"] == name)
        .unwrap_or_else(|| panic!("no task {name}: {:#?}", tasks(env, repo)))
}

fn path_of(task: &Value) -> PathBuf {
    PathBuf::from(task["path"].as_str().unwrap())
}

/// Bash turns that write a file and commit and push it from the session's worktree: plain
/// commands, one git command a turn (Claude Code refuses a compound command running git in a
/// worktree-isolated session).
fn commit_and_push(file: &str, message: &str) -> Vec<Turn> {
    vec![
        Turn::Bash(format!("echo {message} > {file}")),
        Turn::Bash(format!("git add {file}")),
        Turn::Bash(format!("git commit -qm {message}")),
        Turn::Bash("git push -q origin HEAD".into()),
    ]
}

#[test]
fn a_session_made_with_w_commits_and_pushes_under_its_own_credential() {
    let (env, repo) = claude_repo();
    let origin = env.path("work/app-origin.git");
    let m = marker("first");
    let mut turns = vec![Turn::Bash("env".into())];
    turns.extend(commit_and_push("f.txt", "from-claude"));
    let api = ClaudeApi::start(vec![(m.clone(), turns)]);
    let s = claude(&env, &api, &repo, &["-w", "feat1", "-p", &m]);

    let t = task(&env, &repo, "feat1");
    assert_eq!(t["holder"], format!("claude:{}:feat1", s.id));
    assert_eq!(t["state"], "active");
    let lease = t["lease"]["lease_id"].as_str().unwrap();
    let shown = api.output_of(&m, "env");
    assert!(
        shown.contains(&format!("GIT_HAND_LEASE={lease}")),
        "the session's Bash does not carry its task's lease {lease}:\n{shown}"
    );
    let slot = path_of(&t);
    let tip = env.git(&slot, &["rev-parse", "HEAD"]);
    assert_eq!(env.git(&slot, &["log", "-1", "--format=%s"]), "from-claude");
    assert_eq!(remote_oid(&env, &origin, "hand/feat1"), Some(tip));
    for (command, out) in api.bash_outputs(&m) {
        assert!(!out.contains("git-hand:"), "`{command}` was refused:\n{out}");
    }
}
