//! The real Claude Code CLI (pinned in `build-support/test-tools`) in repositories whose Claude
//! Code settings hand worktrees to git-hand (`git hand install --claude`), against the stand-in
//! API ([`crate::claude_api`]): whole sessions, started with `-w`, resumed, fanning out to
//! subagents, and removing their worktrees with the ExitWorktree tool, whose scripted Bash
//! commands commit and push in the slots git-hand leased them. Each `claude` runs contained
//! ([`TestEnv::contained`]), with a HOME of the test's own. The hook command is run directly
//! only for what a real session cannot send (a retry, malformed input).

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

/// A repository `app` with its bare origin, set up the way a user sets it up: `git hand install
/// --claude` writes git-hand's git hooks and its Claude Code hooks (in `.claude/settings.local.json`:
/// each entry calls the `git-hand` on `PATH`, else the one that installed it, with a timeout
/// covering `hand.setupTimeout`), so every session here goes through git-hand's own entries.
fn claude_repo() -> (TestEnv, PathBuf) {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let installed = env.hand(&repo, &["install", "--claude", "--json"]).json();
    assert_eq!(installed["claude"]["outcome"], "installed", "{installed}");
    std::fs::write(
        env.path("home/.claude.json"),
        json!({"hasCompletedOnboarding": true}).to_string(),
    )
    .unwrap();
    (env, repo)
}

/// The session one `claude -p` run ran.
struct Session {
    id: String,
    /// What `claude` printed on stderr.
    stderr: String,
}

/// Runs `claude <args> --output-format json` in `dir`, contained, against `api`, with the
/// binary under test first on `PATH` (the hooks call `git-hand`) and Bash and ExitWorktree
/// allowed (Agent runs without being named here, measured with 2.1.328; it is named all the
/// same). No permission mode is needed, as root too. Asserts it succeeded and returns its session id.
#[track_caller]
fn claude(env: &TestEnv, api: &ClaudeApi, dir: &Path, args: &[&str]) -> Session {
    let path = format!(
        "{}:{}:/usr/local/bin:/usr/bin:/bin",
        TestEnv::bin_dir().display(),
        claude_dir().display()
    );
    let mut cmd = env.contained("claude", dir);
    cmd.args(args)
        .args([
            "--output-format",
            "json",
            "--allowedTools",
            "Bash,Agent,ExitWorktree",
        ])
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
    Session {
        id,
        stderr: run.stderr,
    }
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
        assert!(
            !out.contains("git-hand:"),
            "`{command}` was refused:\n{out}"
        );
    }
}

/// `git-hand hook claude <event>` in `dir` with `input` on stdin, contained, as Claude Code runs
/// a hook command (`/bin/sh -c`, the JSON object on stdin).
fn hook(env: &TestEnv, dir: &Path, event: &str, input: &str) -> Run {
    use std::io::Write;
    let mut cmd = env.contained("/bin/sh", dir);
    cmd.args(["-c", &format!("git-hand hook claude {event}")])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    Run::from(child.wait_with_output().unwrap())
}

/// A directory's realpath, as the ledger keys a slot.
fn real(dir: &str) -> PathBuf {
    std::fs::canonicalize(dir.trim()).unwrap()
}

/// Whether `slot` is among `list`'s free slots.
fn is_free(env: &TestEnv, repo: &Path, slot: &Path) -> bool {
    let v = env.hand(repo, &["list", "--json"]).code(0).json();
    v["free_slots"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| Path::new(s["path"].as_str().unwrap()) == slot)
}

/// The tip of `rev` in `dir`.
fn tip(env: &TestEnv, dir: &Path, rev: &str) -> String {
    env.git(dir, &["rev-parse", rev])
}

#[test]
fn two_sessions_asking_for_one_name_get_two_slots() {
    let (env, repo) = claude_repo();
    let (m1, m2) = (marker("one"), marker("two"));
    let api = ClaudeApi::start(vec![
        (m1.clone(), vec![Turn::Bash("pwd".into())]),
        (m2.clone(), vec![Turn::Bash("pwd".into())]),
    ]);
    // The first session's task is still open when the second asks for the same name.
    let s1 = claude(&env, &api, &repo, &["-w", "feat1", "-p", &m1]);
    let s2 = claude(&env, &api, &repo, &["-w", "feat1", "-p", &m2]);

    let (t1, t2) = (task(&env, &repo, "feat1"), task(&env, &repo, "feat1-2"));
    assert_eq!(t1["holder"], format!("claude:{}:feat1", s1.id));
    assert_eq!(t2["holder"], format!("claude:{}:feat1", s2.id));
    assert_eq!(
        (&t1["state"], &t2["state"]),
        (&json!("active"), &json!("active"))
    );
    assert_ne!(path_of(&t1), path_of(&t2));
    assert_eq!(real(&api.output_of(&m1, "pwd")), path_of(&t1));
    assert_eq!(real(&api.output_of(&m2, "pwd")), path_of(&t2));
}

#[test]
fn two_parallel_subagents_of_one_session_get_two_slots_and_commit_in_them() {
    let (env, repo) = claude_repo();
    let (parent, a, b) = (marker("parent"), marker("agent-a"), marker("agent-b"));
    // Each subagent's first command marks its arrival and waits (bounded) for the other's: both
    // see both marks only if Claude Code runs the two at once.
    let meet = env.path("meet");
    std::fs::create_dir(&meet).unwrap();
    let barrier = |me: &str, other: &str| {
        let m = meet.display();
        Turn::Bash(format!(
            "touch {m}/{me}; for i in $(seq 1200); do [ -e {m}/{other} ] && break; sleep 0.05; done; ls {m}"
        ))
    };
    let (barrier_a, barrier_b) = (barrier("a", "b"), barrier("b", "a"));
    let command = |t: &Turn| match t {
        Turn::Bash(c) => c.clone(),
        _ => unreachable!(),
    };
    let (meet_a, meet_b) = (command(&barrier_a), command(&barrier_b));
    let api = ClaudeApi::start(vec![
        (parent.clone(), vec![Turn::TwoAgents(a.clone(), b.clone())]),
        (
            a.clone(),
            vec![
                barrier_a,
                Turn::Bash("pwd".into()),
                Turn::Bash("git commit -q --allow-empty -m from-agent-a".into()),
            ],
        ),
        (b.clone(), vec![barrier_b, Turn::Bash("pwd".into())]),
    ]);
    let s = claude(&env, &api, &repo, &["-p", &parent]);

    assert_eq!(
        api.output_of(&a, &meet_a).trim(),
        "a\nb",
        "the subagents ran one after the other"
    );
    assert_eq!(
        api.output_of(&b, &meet_b).trim(),
        "a\nb",
        "the subagents ran one after the other"
    );
    let prefix = format!("claude:{}:agent-", s.id);
    let agents: Vec<Value> = tasks(&env, &repo)
        .into_iter()
        .filter(|t| t["holder"].as_str().unwrap().starts_with(&prefix))
        .collect();
    assert_eq!(agents.len(), 2, "{agents:#?}");
    let (slot_a, slot_b) = (
        real(&api.output_of(&a, "pwd")),
        real(&api.output_of(&b, "pwd")),
    );
    assert_ne!(slot_a, slot_b);
    let mut slots: Vec<PathBuf> = agents.iter().map(path_of).collect();
    slots.sort();
    let mut seen = vec![slot_a.clone(), slot_b];
    seen.sort();
    assert_eq!(slots, seen);
    let out = api.output_of(&a, "git commit -q --allow-empty -m from-agent-a");
    assert!(
        !out.contains("git-hand:"),
        "the subagent's commit was refused:\n{out}"
    );
    assert_eq!(
        env.git(&slot_a, &["log", "-1", "--format=%s"]),
        "from-agent-a"
    );
}

#[test]
fn a_subagent_of_a_w_session_commits_and_pushes_in_its_own_slot_carrying_the_parents_lease() {
    let (env, repo) = claude_repo();
    let origin = env.path("work/app-origin.git");
    let (parent, sub) = (marker("parent"), marker("sub"));
    let (commit, push) = (
        "git commit -q --allow-empty -m from-the-subagent",
        "git push -q origin HEAD",
    );
    let api = ClaudeApi::start(vec![
        (parent.clone(), vec![Turn::Agent(sub.clone())]),
        (
            sub.clone(),
            vec![
                Turn::Bash("env".into()),
                Turn::Bash(commit.into()),
                Turn::Bash(push.into()),
            ],
        ),
    ]);
    let s = claude(&env, &api, &repo, &["-w", "feat1", "-p", &parent]);

    let prefix = format!("claude:{}:agent-", s.id);
    let agent = tasks(&env, &repo)
        .into_iter()
        .find(|t| t["holder"].as_str().unwrap().starts_with(&prefix))
        .unwrap_or_else(|| panic!("no subagent task: {:#?}", tasks(&env, &repo)));
    // Claude Code runs no SessionStart for a subagent: its Bash sources the parent's env file,
    // so it carries the parent's lease (feat1's), not its own slot's.
    let parents = task(&env, &repo, "feat1")["lease"]["lease_id"].clone();
    assert!(
        api.output_of(&sub, "env")
            .contains(&format!("GIT_HAND_LEASE={}", parents.as_str().unwrap())),
        "{}",
        api.output_of(&sub, "env")
    );
    for command in [commit, push] {
        let out = api.output_of(&sub, command);
        assert!(
            !out.contains("git-hand:"),
            "`{command}` was refused:\n{out}"
        );
    }
    let slot = path_of(&agent);
    assert_eq!(
        env.git(&slot, &["log", "-1", "--format=%s"]),
        "from-the-subagent"
    );
    let branch = agent["branch"].as_str().unwrap();
    assert_eq!(
        remote_oid(&env, &origin, branch),
        Some(tip(&env, &slot, "HEAD"))
    );
}

#[test]
fn a_session_resumed_while_its_task_is_live_commits_and_pushes() {
    let (env, repo) = claude_repo();
    let origin = env.path("work/app-origin.git");
    let (m1, m2) = (marker("start"), marker("resume"));
    let mut resumed = commit_and_push("r.txt", "resumed");
    resumed.push(Turn::Bash("env".into()));
    let api = ClaudeApi::start(vec![
        (m1.clone(), vec![Turn::Bash("pwd".into())]),
        (m2.clone(), resumed),
    ]);
    let s = claude(&env, &api, &repo, &["-w", "feat1", "-p", &m1]);
    let slot = path_of(&task(&env, &repo, "feat1"));
    // Claude Code keeps a session's transcript under its directory: it is resumed from there.
    let again = claude(&env, &api, &slot, &["--resume", &s.id, "-p", &m2]);
    assert_eq!(again.id, s.id);

    let t = task(&env, &repo, "feat1");
    assert_eq!(t["holder"], format!("claude:{}:feat1", s.id));
    let lease = t["lease"]["lease_id"].as_str().unwrap();
    assert!(
        api.output_of(&m2, "env")
            .contains(&format!("GIT_HAND_LEASE={lease}"))
    );
    for (command, out) in api.bash_outputs(&m2) {
        assert!(
            !out.contains("git-hand:"),
            "`{command}` was refused:\n{out}"
        );
    }
    assert_eq!(env.git(&slot, &["log", "-1", "--format=%s"]), "resumed");
    assert_eq!(
        remote_oid(&env, &origin, "hand/feat1"),
        Some(tip(&env, &slot, "HEAD"))
    );
}

/// What a stale session's resumed run did in the slot its task had.
struct StaleRun {
    api: ClaudeApi,
    marker: String,
    /// The lease the session's task had.
    old_lease: String,
    /// `other`'s spawn: the task that has the slot now.
    other: Value,
}

const STALE_COMMIT: &str = "git commit -q --allow-empty -m from-the-stale-session";
const STALE_PUSH: &str = "git push -q origin HEAD";

/// A session made with `-w feat1`, its task torn down and its slot spawned to task `other`,
/// then the session resumed in that slot (after `before_resume`), trying to commit and push.
/// Asserts that the new holder's branch moved neither here nor in origin.
fn stale_session_resumed(before_resume: impl Fn(&TestEnv, &Path, &str)) -> StaleRun {
    let (env, repo) = claude_repo();
    let origin = env.path("work/app-origin.git");
    let (m1, m2) = (marker("before"), marker("stale"));
    let api = ClaudeApi::start(vec![
        (m1.clone(), vec![Turn::Bash("pwd".into())]),
        (
            m2.clone(),
            vec![
                Turn::Bash("env".into()),
                Turn::Bash(STALE_COMMIT.into()),
                Turn::Bash(STALE_PUSH.into()),
            ],
        ),
    ]);
    let s = claude(&env, &api, &repo, &["-w", "feat1", "-p", &m1]);
    let first = task(&env, &repo, "feat1");
    let slot = path_of(&first);
    let old_lease = first["lease"]["lease_id"].as_str().unwrap().to_string();
    env.hand(&repo, &["teardown", "feat1"]).ok();
    let other = crate::support::spawn(&env, &repo, "other", &[]);
    assert_eq!(
        crate::support::path_of(&other),
        slot,
        "other got feat1's slot"
    );
    let (other_tip, other_remote) = (
        tip(&env, &repo, "hand/other"),
        remote_oid(&env, &origin, "hand/other"),
    );
    before_resume(&env, &repo, &s.id);

    claude(&env, &api, &slot, &["--resume", &s.id, "-p", &m2]);

    assert_eq!(tip(&env, &repo, "hand/other"), other_tip);
    assert_eq!(remote_oid(&env, &origin, "hand/other"), other_remote);
    assert_eq!(remote_oid(&env, &origin, "hand/feat1"), None);
    assert_eq!(task(&env, &repo, "other")["state"], "active");
    StaleRun {
        api,
        marker: m2,
        old_lease,
        other,
    }
}

impl StaleRun {
    /// Asserts the resumed session's commit and push were refused as stale.
    #[track_caller]
    fn assert_refused(&self) {
        for command in [STALE_COMMIT, STALE_PUSH] {
            let out = self.api.output_of(&self.marker, command);
            assert!(
                out.contains("git-hand:") && out.contains("stale"),
                "`{command}` was not refused as stale:\n{out}"
            );
        }
    }
}

#[test]
fn a_session_resumed_after_its_slot_went_to_another_task_is_refused_at_commit_and_push() {
    let stale = stale_session_resumed(|_, _, _| {});
    // SessionStart handed it its own, now stale, lease: never the new holder's.
    let shown = stale.api.output_of(&stale.marker, "env");
    assert!(
        shown.contains(&format!("GIT_HAND_LEASE={}", stale.old_lease)),
        "{shown}"
    );
    assert!(
        !shown.contains(stale.other["lease_id"].as_str().unwrap()),
        "{shown}"
    );
    stale.assert_refused();
}

#[test]
fn a_stale_session_resumed_where_no_hook_reaches_it_is_refused_by_its_session_id() {
    // No settings (the hooks do not reach the session) and no env file left from its first run:
    // its Bash carries no lease at all, only CLAUDE_CODE_SESSION_ID.
    let stale = stale_session_resumed(|env, repo, session| {
        std::fs::remove_file(repo.join(".claude/settings.local.json")).unwrap();
        let env_files = env.path("home/.claude/session-env").join(session);
        std::fs::remove_dir_all(env_files).unwrap();
    });
    let shown = stale.api.output_of(&stale.marker, "env");
    assert!(!shown.contains("GIT_HAND_LEASE="), "{shown}");
    stale.assert_refused();
}

/// Turns that end a session's work the one way a `-p` session removes its worktree (it never
/// runs `WorktreeRemove` at exit, measured with 2.1.328): load the deferred ExitWorktree tool,
/// call it with `remove`, which runs the `WorktreeRemove` hook in the worktree being removed,
/// then `pwd`, to see where the session went.
fn remove_the_worktree() -> Vec<Turn> {
    vec![
        Turn::load_tools(&["ExitWorktree"]),
        Turn::remove_worktree(),
        Turn::Bash("pwd".into()),
    ]
}

/// What ExitWorktree answered the session.
fn exit_worktree_result(api: &ClaudeApi, marker: &str) -> String {
    let results = api.tool_outputs(marker, "ExitWorktree");
    assert_eq!(results.len(), 1, "{results:#?}");
    results[0].1.clone()
}

/// Asserts Claude Code left `slot` to git-hand after the hook (it deletes nothing of a
/// worktree a hook made) and the session went back to the repository, and that `doctor` finds
/// nothing wrong: the slot is still a sound git-hand slot.
#[track_caller]
fn assert_left_to_git_hand(env: &TestEnv, api: &ClaudeApi, m: &str, repo: &Path, slot: &Path) {
    assert!(slot.join(".git").exists(), "{} is gone", slot.display());
    assert_eq!(real(&api.output_of(m, "pwd")), repo.canonicalize().unwrap());
    let doctor = env.hand(repo, &["doctor", "--json"]);
    assert_eq!(doctor.code, 0, "doctor found problems:\n{}", doctor.stdout);
}

/// Adds another tool's `WorktreeRemove` entry beside git-hand's (Claude Code runs both): it
/// writes the JSON object it was given and its cwd to the returned file, one line each.
fn record_worktree_remove(env: &TestEnv, repo: &Path) -> PathBuf {
    let record = env.path("worktree-remove.seen");
    let file = repo.join(".claude/settings.local.json");
    let mut settings: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let command = format!("cat > {0}; echo >> {0}; pwd >> {0}", record.display());
    settings["hooks"]["WorktreeRemove"]
        .as_array_mut()
        .unwrap()
        .push(json!({"hooks": [{"type": "command", "command": command}]}));
    std::fs::write(&file, format!("{settings:#}\n")).unwrap();
    record
}

#[test]
fn exit_worktree_remove_after_a_session_committed_ends_its_task_keeping_the_commit() {
    let (env, repo) = claude_repo();
    let m = marker("commit");
    let mut turns = commit_and_push("c.txt", "kept");
    turns.pop();
    turns.extend(remove_the_worktree());
    let api = ClaudeApi::start(vec![(m.clone(), turns)]);
    let s = claude(&env, &api, &repo, &["-w", "feat1", "-p", &m]);

    let t = task(&env, &repo, "feat1");
    let slot = path_of(&t);
    assert!(
        exit_worktree_result(&api, &m).contains("removed worktree"),
        "{}",
        exit_worktree_result(&api, &m)
    );
    assert_eq!(
        (&t["state"], &t["done_reason"]),
        (&json!("done"), &json!("torn-down")),
        "{t:#}"
    );
    let open = env.hand(&repo, &["list", "--json"]).code(0).json();
    assert_eq!(open["tasks"], json!([]), "{open:#}");
    let log = env.hand(&repo, &["log", "--json"]).code(0).json();
    let ended = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["kind"] == "task-done" && e["holder"] == format!("claude:{}:feat1", s.id));
    assert!(
        ended,
        "the log names no end of the session's task:\n{log:#}"
    );
    // The branch keeps the session's commit.
    assert_eq!(
        env.git(&repo, &["log", "-1", "--format=%s", "hand/feat1"]),
        "kept"
    );
    assert!(is_free(&env, &repo, &slot));
    assert_left_to_git_hand(&env, &api, &m, &repo, &slot);
    // The slot goes to the next task, clean.
    let next = crate::support::spawn(&env, &repo, "next", &[]);
    assert_eq!(crate::support::path_of(&next), slot);
    assert_eq!(env.git(&slot, &["status", "--porcelain", "--ignored"]), "");
}

#[test]
fn exit_worktree_remove_after_a_session_left_uncommitted_work_keeps_it_and_the_task_open() {
    let (env, repo) = claude_repo();
    let seen = record_worktree_remove(&env, &repo);
    let m = marker("dirty");
    let mut turns = vec![Turn::Bash("echo wip > wip.txt".into())];
    turns.extend(remove_the_worktree());
    let api = ClaudeApi::start(vec![(m.clone(), turns)]);
    let s = claude(&env, &api, &repo, &["-w", "feat1", "-p", &m]);

    let t = task(&env, &repo, "feat1");
    let slot = path_of(&t);
    // The hooks ran, in the worktree being removed, with its path.
    let seen = std::fs::read_to_string(&seen).unwrap();
    let (input, cwd) = seen.split_once('\n').unwrap();
    let input: Value = serde_json::from_str(input).unwrap();
    assert_eq!(input["hook_event_name"], "WorktreeRemove");
    assert_eq!(real(input["worktree_path"].as_str().unwrap()), slot);
    assert_eq!(real(cwd), slot);
    assert_eq!(t["state"], "active", "{t:#}");
    assert_eq!(
        std::fs::read_to_string(slot.join("wip.txt")).unwrap(),
        "wip\n"
    );
    assert!(!is_free(&env, &repo, &slot));
    assert_left_to_git_hand(&env, &api, &m, &repo, &slot);
    // Claude Code ignores the hook's outcome: it tells the model the worktree was removed, and
    // the hook's "left open" on stderr reaches neither the model nor `claude -p`'s stderr.
    // `git hand list` is where the open task shows.
    assert!(exit_worktree_result(&api, &m).contains("removed worktree"));
    assert!(!s.stderr.contains("left open"), "{}", s.stderr);
}

#[test]
fn a_retried_worktree_create_of_a_real_session_gets_its_slot_and_lease_back() {
    let (env, repo) = claude_repo();
    let m = marker("retry");
    let api = ClaudeApi::start(vec![(m.clone(), vec![])]);
    let s = claude(&env, &api, &repo, &["-w", "feat1", "-p", &m]);
    let before = task(&env, &repo, "feat1");
    let input = json!({"session_id": s.id, "transcript_path": "/nonexistent/t.jsonl",
                       "cwd": repo, "hook_event_name": "WorktreeCreate", "name": "feat1"});

    let run = hook(&env, &repo, "worktree-create", &input.to_string());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(PathBuf::from(run.stdout.trim()), path_of(&before));
    let after = task(&env, &repo, "feat1");
    assert_eq!(after["lease"]["lease_id"], before["lease"]["lease_id"]);
    assert_eq!(after["lease"]["token"], before["lease"]["token"]);
    assert_eq!(tasks(&env, &repo).len(), 1);
}

#[test]
fn worktree_create_with_empty_or_malformed_stdin_says_why_and_leases_nothing() {
    let (env, repo) = claude_repo();
    let no_name = json!({"session_id": "0b6c2f1e-5a4d-4c3b-9e8f-123456789abc", "cwd": repo,
                         "hook_event_name": "WorktreeCreate"});
    for input in [
        "",
        "{not json",
        "[]",
        "{\"session_id\": 7}",
        &no_name.to_string(),
    ] {
        let run = hook(&env, &repo, "worktree-create", input);
        assert_ne!(run.code, 0, "{input:?} was accepted: {}", run.stdout);
        assert_eq!(run.stdout, "", "{input:?}");
        assert!(run.stderr.contains("git-hand"), "{input:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("nothing was leased"),
            "{input:?}: {}",
            run.stderr
        );
        assert!(tasks(&env, &repo).is_empty(), "{input:?} leased a slot");
    }
}
