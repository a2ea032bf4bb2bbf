//! The tasks of Claude Code sessions in `git hand list`, `path --session` and `teardown
//! --session` (issue 23, item 6). A session's task is any task whose holder is
//! `claude:<session id>:<worktree name>` (`claude::<name>` without a session id): these tests make
//! one with `spawn --holder`, as the WorktreeCreate hook does, and put a process in its slot
//! with a `sleep` whose directory is the slot (bounded, killed and reaped by [`Sitter`]).

use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use serde_json::{Value, json};

use crate::support::{BIN, COMMAND_TIMEOUT, Run, TestEnv, installed, path_of, spawn};

const SID: &str = "0b6c2f1e-5a4d-4c3b-9e8f-123456789abc";
const OTHER_SID: &str = "9d8c7b6a-1111-4222-8333-444455556666";

fn holder(session: &str, name: &str) -> String {
    format!("claude:{session}:{name}")
}

/// A task spawned for worktree `name` of `session`, named `task`: its slot.
fn session_task(env: &TestEnv, repo: &Path, task: &str, session: &str, name: &str) -> PathBuf {
    path_of(&spawn(
        env,
        repo,
        task,
        &["--holder", &holder(session, name)],
    ))
}

/// A process sitting in a directory: killed and reaped when dropped (so a failed assertion
/// leaves nothing behind), and it exits by itself after the command timeout anyway.
struct Sitter(Child);

impl Sitter {
    fn in_dir(dir: &Path) -> Self {
        Self(
            Command::new("sleep")
                .arg(COMMAND_TIMEOUT)
                .current_dir(dir)
                .spawn()
                .unwrap(),
        )
    }
}

impl Drop for Sitter {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Each task's `claude` in `list --json`, by task name.
fn claude_of(v: &Value) -> Vec<(String, Value)> {
    v["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["task"].as_str().unwrap().to_string(), t["claude"].clone()))
        .collect()
}

/// Each row of `list`'s text, as its cells (two spaces apart), header first.
fn rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .take_while(|l| !l.starts_with("free slots"))
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect()
        })
        .collect()
}

/// The cell of `column` in each task's row, by task name.
fn column(text: &str, column: &str) -> Vec<(String, String)> {
    let rows = rows(text);
    let at = rows[0]
        .iter()
        .position(|c| c == column)
        .unwrap_or_else(|| panic!("no {column} column:\n{text}"));
    rows[1..]
        .iter()
        .map(|r| (r[0].clone(), r[at].clone()))
        .collect()
}

fn pairs(want: &[(&str, &str)]) -> Vec<(String, String)> {
    want.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn list_says_which_tasks_are_claude_sessions_and_whether_a_process_sits_in_each_slot() {
    let (env, repo) = installed();
    spawn(&env, &repo, "plain", &[]);
    let before = env.hand(&repo, &["list"]).ok();
    assert!(
        !before.contains("CLAUDE"),
        "a list without sessions changed:\n{before}"
    );
    let feat1 = session_task(&env, &repo, "feat1", SID, "feat1");
    session_task(&env, &repo, "agent-a1", SID, "agent-a1");
    spawn(&env, &repo, "by-name", &["--holder", "claude::by-name"]);
    let sitter = Sitter::in_dir(&feat1);
    let v = env.hand(&repo, &["list", "--json"]).code(0).json();
    let text = env.hand(&repo, &["list"]).ok();
    let long = env.hand(&repo, &["list", "--long"]).ok();
    drop(sitter);
    let after = env.hand(&repo, &["list", "--json"]).code(0).json();
    assert_eq!(
        claude_of(&v),
        vec![
            ("plain".into(), Value::Null),
            (
                "feat1".into(),
                json!({"session": SID, "name": "feat1", "process": "alive"})
            ),
            (
                "agent-a1".into(),
                json!({"session": SID, "name": "agent-a1", "process": "gone"})
            ),
            (
                "by-name".into(),
                json!({"session": null, "name": "by-name", "process": "gone"})
            ),
        ]
    );
    assert_eq!(
        column(&text, "CLAUDE"),
        pairs(&[
            ("plain", "-"),
            ("feat1", "alive"),
            ("agent-a1", "gone"),
            ("by-name", "gone")
        ])
    );
    // The columns before it are as they were; LEASE follows it.
    let header = &rows(&text)[0];
    assert_eq!(header[header.len() - 3..], ["EXEC", "CLAUDE", "LEASE"]);
    assert_eq!(
        column(&long, "SESSION"),
        pairs(&[
            ("plain", "-"),
            ("feat1", SID),
            ("agent-a1", SID),
            ("by-name", "-")
        ])
    );
    assert_eq!(
        column(&long, "WORKTREE"),
        pairs(&[
            ("plain", "-"),
            ("feat1", "feat1"),
            ("agent-a1", "agent-a1"),
            ("by-name", "by-name")
        ])
    );
    assert_eq!(claude_of(&after)[1].1["process"], "gone", "{after:#}");
}

/// A done session's task is still a session's; nothing is looked at in a slot it left.
#[test]
fn list_all_names_the_session_of_a_done_task_without_looking_into_its_old_slot() {
    let (env, repo) = installed();
    let slot = session_task(&env, &repo, "feat1", SID, "feat1");
    env.hand(&repo, &["teardown", "feat1"]).ok();
    let _sitter = Sitter::in_dir(&slot);
    let v = env.hand(&repo, &["list", "--all", "--json"]).code(0).json();
    assert_eq!(
        claude_of(&v),
        vec![(
            "feat1".into(),
            json!({"session": SID, "name": "feat1", "process": null})
        )]
    );
    let text = env.hand(&repo, &["list", "--all"]).ok();
    assert_eq!(column(&text, "CLAUDE"), pairs(&[("feat1", "-")]));
}

/// `git-hand ARGS` in a PID namespace of its own with its own `/proc`, under a kill timeout.
#[cfg(target_os = "linux")]
fn with_own_proc(env: &TestEnv, dir: &Path, args: &[&str]) -> Run {
    let mut cmd = env.contained_with_own_proc(BIN, dir);
    cmd.args(args);
    Run::from(cmd.output().unwrap())
}

/// A `list` whose `/proc` cannot see the namespace the slot was leased from does not see the
/// process sitting there either: it says `unknown`, never `gone`.
#[test]
#[cfg(target_os = "linux")] // about PID namespaces
fn list_says_unknown_where_its_proc_cannot_see_the_namespace_the_slot_was_leased_from() {
    let (env, repo) = installed();
    let slot = session_task(&env, &repo, "feat1", SID, "feat1");
    let _sitter = Sitter::in_dir(&slot);
    let inside = with_own_proc(&env, &repo, &["list", "--json"])
        .code(0)
        .json();
    let text = with_own_proc(&env, &repo, &["list"]).code(0).stdout;
    let host = env.hand(&repo, &["list", "--json"]).code(0).json();
    assert_eq!(
        inside["tasks"][0]["claude"]["process"], "unknown",
        "{inside:#}"
    );
    assert_eq!(column(&text, "CLAUDE"), pairs(&[("feat1", "unknown")]));
    assert_eq!(host["tasks"][0]["claude"]["process"], "alive", "{host:#}");
}

#[test]
fn path_session_prints_the_sessions_task_and_its_own_among_its_subagents() {
    let (env, repo) = installed();
    let feat1 = session_task(&env, &repo, "feat1", SID, "feat1");
    let other = session_task(&env, &repo, "other", OTHER_SID, "feat1-elsewhere");
    let said = env.hand(&repo, &["path", "--session", SID]).ok();
    assert_eq!(said, format!("{}\n", feat1.display()));
    assert_eq!(
        env.hand(&repo, &["path", "--session", OTHER_SID]).ok(),
        format!("{}\n", other.display())
    );
    // Its subagents' worktrees do not hide the session's own.
    session_task(&env, &repo, "agent-a1", SID, "agent-a1");
    session_task(&env, &repo, "agent-b2", SID, "agent-b2");
    let v = env
        .hand(&repo, &["path", "--session", SID, "--json"])
        .code(0)
        .json();
    assert_eq!(v["task"], "feat1", "{v:#}");
    assert_eq!(v["path"], feat1.to_str().unwrap());
    // A second worktree of its own: the session's task is no longer one; each is named.
    session_task(&env, &repo, "feat2", SID, "feat2");
    let refused = env.hand(&repo, &["path", "--session", SID]).code(2);
    assert!(refused.stdout.is_empty(), "{refused:?}");
    assert!(
        refused
            .stderr
            .contains(&format!("session {SID} has 4 open tasks")),
        "{refused:?}"
    );
    for task in ["feat1", "agent-a1", "agent-b2", "feat2"] {
        assert!(
            refused
                .stderr
                .contains(&format!("hint: git hand path {task}   # worktree {task}\n")),
            "{task}: {refused:?}"
        );
    }
    let v = env
        .hand(&repo, &["path", "--session", SID, "--json"])
        .code(2)
        .json();
    assert_eq!(v["error"]["kind"], "usage", "{v:#}");
    assert_eq!(v["error"]["hints"].as_array().unwrap().len(), 4, "{v:#}");
}

#[test]
fn path_and_teardown_refuse_a_bad_or_unknown_session_and_a_session_with_a_task_name() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    for verb in ["path", "teardown"] {
        let bad = env.hand(&repo, &[verb, "--session", "no such:id"]).code(2);
        assert!(bad.stderr.contains("not a session id"), "{verb}: {bad:?}");
    }
    assert!(
        !env.ledger().exists(),
        "a bad session id opened (and created) the ledger"
    );
    spawn(&env, &repo, "feat1", &["--holder", &holder(SID, "feat1")]);
    for verb in ["path", "teardown"] {
        let unknown = env.hand(&repo, &[verb, "--session", OTHER_SID]).code(1);
        assert!(
            unknown
                .stderr
                .contains(&format!("session {OTHER_SID} has no open task")),
            "{verb}: {unknown:?}"
        );
        assert!(
            unknown.stderr.contains("hint: git hand list"),
            "{verb}: {unknown:?}"
        );
        let both = env.hand(&repo, &[verb, "feat1", "--session", SID]).code(2);
        assert!(
            both.stderr.contains("cannot be used with"),
            "{verb}: {both:?}"
        );
    }
    // Nothing of the session was touched by those.
    let v = env.hand(&repo, &["list", "--json"]).code(0).json();
    assert_eq!(v["tasks"][0]["state"], "active", "{v:#}");
}

/// The state of each task `list --all --json` shows, by name.
fn states(env: &TestEnv, repo: &Path) -> Vec<(String, String)> {
    let v = env.hand(repo, &["list", "--all", "--json"]).code(0).json();
    v["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["task"].as_str().unwrap().to_string(),
                t["state"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn teardown_session_ends_every_task_of_the_session_and_keeps_one_holding_work() {
    let (env, repo) = installed();
    session_task(&env, &repo, "feat1", SID, "feat1");
    let agent = session_task(&env, &repo, "agent-a1", SID, "agent-a1");
    session_task(&env, &repo, "other", OTHER_SID, "other");
    spawn(&env, &repo, "plain", &[]);
    std::fs::write(agent.join("scratch.txt"), "work in progress").unwrap();
    let first = env
        .hand(&repo, &["teardown", "--session", SID, "--json"])
        .code(3);
    let v = first.json();
    assert_eq!(v["session"], SID, "{v:#}");
    let tasks = v["tasks"].as_array().unwrap();
    assert_eq!(
        tasks
            .iter()
            .map(|t| (t["task"].as_str().unwrap(), t["outcome"].as_str().unwrap()))
            .collect::<Vec<_>>(),
        vec![("feat1", "freed"), ("agent-a1", "refused")],
        "{v:#}"
    );
    assert_eq!(tasks[1]["error"]["kind"], "precondition", "{v:#}");
    assert!(
        first
            .stderr
            .contains("git-hand: error: task agent-a1 has work that is not landed"),
        "{first:?}"
    );
    assert!(tasks[0].get("error").is_none(), "{v:#}");
    // The refused task's work is where it was, and no other session's task was touched.
    assert_eq!(
        std::fs::read_to_string(agent.join("scratch.txt")).unwrap(),
        "work in progress"
    );
    assert_eq!(
        states(&env, &repo),
        pairs(&[
            ("feat1", "done"),
            ("agent-a1", "active"),
            ("other", "active"),
            ("plain", "active")
        ])
    );
    // As `teardown <task>`: --force discards it, and the text says each task's end.
    let second = env.hand(&repo, &["teardown", "--session", SID, "--force"]);
    let out = second.ok();
    assert!(
        out.starts_with("task agent-a1 done: slot ") && out.lines().count() == 1,
        "{out}"
    );
    assert!(out.contains("discarded 1 uncommitted file(s)"), "{out}");
    assert_eq!(
        states(&env, &repo),
        pairs(&[
            ("feat1", "done"),
            ("agent-a1", "done"),
            ("other", "active"),
            ("plain", "active")
        ])
    );
    // A session with no open task left is unknown.
    env.hand(&repo, &["teardown", "--session", SID]).code(1);
}

/// `git hand list` typed inside a session's slot finds itself there, and the `git` it runs
/// under: neither is the session.
#[test]
fn list_run_inside_a_sessions_slot_does_not_count_itself_or_its_git() {
    let (env, repo) = installed();
    let slot = session_task(&env, &repo, "agent-a1", SID, "agent-a1");
    // Not under `timeout`, which would sit in the slot too: `list` only reads, and returns.
    for (program, args) in [
        (BIN, &["list", "--json"][..]),
        ("git", &["hand", "list", "--json"][..]),
    ] {
        let out = env.command(program, &slot).args(args).output().unwrap();
        let run = Run::from(out).code(0);
        assert_eq!(
            run.json()["tasks"][0]["claude"]["process"],
            "gone",
            "{program}: {run:?}"
        );
    }
}
