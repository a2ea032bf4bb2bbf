//! Claude Code's hooks without Claude Code (issue 23, items 2, 3 and 4): the real binary's
//! `git-hand hook claude worktree-create|worktree-remove|session-start` handed the JSON object
//! Claude Code sends on stdin, in real repositories, and the session's Bash commands played by
//! plain git with `CLAUDE_CODE_SESSION_ID` (and what `SessionStart` exported) in their
//! environment. The stories against the real Claude Code CLI live elsewhere.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::{
    BIN, Run, TestEnv, commit_file_with, git_with, installed, push, remote_oid, spawn,
};

/// Session ids as Claude Code makes them.
const S1: &str = "0b6c2f1e-5a4d-4c3b-9e8f-000000000001";
const S2: &str = "0b6c2f1e-5a4d-4c3b-9e8f-000000000002";
const S3: &str = "0b6c2f1e-5a4d-4c3b-9e8f-000000000003";

/// `git-hand hook claude <event>` in `dir`, `input` on its stdin, `vars` in its environment.
fn hook(env: &TestEnv, dir: &Path, event: &str, input: &str, vars: &[(&str, &str)]) -> Run {
    crate::support::claude_hook(env, dir, event, input, vars)
}

/// What `WorktreeCreate` hands the hook: `session` (none, like the desktop app), the project
/// directory and the worktree name.
fn create_input(session: Option<&str>, cwd: &Path, name: &str) -> String {
    let mut v = json!({
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": cwd,
        "hook_event_name": "WorktreeCreate",
        "name": name,
    });
    if let Some(s) = session {
        v["session_id"] = json!(s);
    }
    v.to_string()
}

/// `worktree-create` for `session` and `name` in `repo`, asserting success: the slot's path,
/// which is stdout's one line, and stderr.
#[track_caller]
fn create(env: &TestEnv, repo: &Path, session: Option<&str>, name: &str) -> (PathBuf, String) {
    let run = hook(
        env,
        repo,
        "worktree-create",
        &create_input(session, repo, name),
        &[],
    );
    let stderr = run.stderr.clone();
    let stdout = run.ok();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "stdout holds the path alone:\n{stdout}");
    let path = PathBuf::from(lines[0]);
    assert!(path.is_absolute(), "{stdout}");
    assert!(path.is_dir(), "{stdout}");
    (path, stderr)
}

/// `worktree-remove` of `path`, with a session id that need not be the one that made it.
fn remove(env: &TestEnv, repo: &Path, path: &Path, session: &str) -> Run {
    let input = json!({
        "session_id": session,
        "cwd": repo,
        "hook_event_name": "WorktreeRemove",
        "worktree_path": path,
    });
    hook(env, repo, "worktree-remove", &input.to_string(), &[])
}

/// `session-start` of `session` in `dir`, appending to `env_file` (`CLAUDE_ENV_FILE`).
fn session_start(env: &TestEnv, dir: &Path, session: &str, env_file: &Path) -> Run {
    let input = json!({
        "session_id": session,
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": dir,
        "hook_event_name": "SessionStart",
        "source": "resume",
    });
    hook(
        env,
        dir,
        "session-start",
        &input.to_string(),
        &[("CLAUDE_ENV_FILE", env_file.to_str().unwrap())],
    )
}

/// The open tasks (`list --json`).
fn tasks(env: &TestEnv, repo: &Path) -> Vec<Value> {
    let v = env.hand(repo, &["list", "--json"]).code(0).json();
    v["tasks"].as_array().unwrap().clone()
}

/// The open task named `task`.
#[track_caller]
fn task(env: &TestEnv, repo: &Path, name: &str) -> Value {
    tasks(env, repo)
        .into_iter()
        .find(|t| t["task"] == name)
        .unwrap_or_else(|| panic!("no open task {name}"))
}

/// The free slots' paths (`list --json`).
fn free_slots(env: &TestEnv, repo: &Path) -> Vec<PathBuf> {
    let v = env.hand(repo, &["list", "--json"]).code(0).json();
    v["free_slots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| PathBuf::from(s["path"].as_str().unwrap()))
        .collect()
}

/// The credential of a task's lease as `SessionStart` exports it.
fn cred_of(t: &Value) -> Vec<(String, String)> {
    vec![
        (
            "GIT_HAND_LEASE".into(),
            t["lease"]["lease_id"].as_str().unwrap().into(),
        ),
        ("GIT_HAND_TOKEN".into(), t["lease"]["token"].to_string()),
        ("GIT_HAND_TASK".into(), t["task"].as_str().unwrap().into()),
    ]
}

/// `CLAUDE_CODE_SESSION_ID=<session>` (plus `more`), as a session's Bash commands carry it.
fn in_session(session: &str, more: &[(String, String)]) -> Vec<(String, String)> {
    let mut vars = vec![("CLAUDE_CODE_SESSION_ID".to_string(), session.to_string())];
    vars.extend_from_slice(more);
    vars
}

fn tip(env: &TestEnv, dir: &Path, rev: &str) -> String {
    env.git(dir, &["rev-parse", rev])
}

/// A stale session: session S1's task `feat1` made by `worktree-create`, torn down, and its
/// slot leased again by a person's `spawn feat2`. Returns (the slot, S1's task as listed while
/// it was live, feat2's spawn JSON).
fn stale_session(env: &TestEnv, repo: &Path) -> (PathBuf, Value, Value) {
    let (slot, _) = create(env, repo, Some(S1), "feat1");
    let old = task(env, repo, "feat1");
    env.hand(repo, &["teardown", "feat1"]).ok();
    let new = spawn(env, repo, "feat2", &[]);
    assert_eq!(PathBuf::from(new["path"].as_str().unwrap()), slot);
    (slot, old, new)
}

#[test]
fn worktree_create_prints_only_the_slot_path_and_leases_it_to_the_session() {
    let (env, repo) = installed();
    let (slot, stderr) = create(&env, &repo, Some(S1), "feat1");
    assert!(stderr.contains("git-hand: leased"), "{stderr}");
    assert!(stderr.contains(S1), "{stderr}");
    assert!(
        stderr.contains("task feat1 on branch hand/feat1"),
        "{stderr}"
    );
    let t = task(&env, &repo, "feat1");
    assert_eq!(t["holder"], format!("claude:{S1}:feat1"));
    assert_eq!(t["branch"], "hand/feat1");
    assert_eq!(PathBuf::from(t["path"].as_str().unwrap()), slot);
    // Open-ended unless hand.claudeTtl says otherwise.
    assert_eq!(t["lease"]["expires_at"], Value::Null);
    assert_eq!(
        env.git(&slot, &["symbolic-ref", "HEAD"]),
        "refs/heads/hand/feat1"
    );
}

#[test]
fn worktree_create_branches_from_origin_head_when_the_origin_names_one() {
    let (env, repo) = installed();
    env.git(&repo, &["remote", "set-head", "origin", "-a"]);
    let pushed = tip(&env, &repo, "origin/main");
    // Local main runs ahead of the origin: Claude Code would branch from origin/HEAD.
    let local = env.commit(&repo, "local.txt", "not pushed\n");
    assert_ne!(pushed, local);
    let (slot, _) = create(&env, &repo, Some(S1), "feat1");
    assert_eq!(tip(&env, &slot, "HEAD"), pushed);
}

#[test]
fn worktree_create_branches_from_head_without_an_origin_head() {
    let (env, repo) = installed();
    assert_ne!(
        env.git_run(
            &repo,
            &["rev-parse", "-q", "--verify", "refs/remotes/origin/HEAD"]
        )
        .code,
        0
    );
    let local = env.commit(&repo, "local.txt", "not pushed\n");
    let (slot, _) = create(&env, &repo, Some(S1), "feat1");
    assert_eq!(tip(&env, &slot, "HEAD"), local);
}

#[test]
fn a_retry_gets_the_same_slot_and_lease_and_another_name_or_session_another_slot() {
    let (env, repo) = installed();
    let (first, _) = create(&env, &repo, Some(S1), "feat1");
    let leased = task(&env, &repo, "feat1")["lease"].clone();
    let (again, stderr) = create(&env, &repo, Some(S1), "feat1");
    assert_eq!(again, first);
    assert!(stderr.contains("retry"), "{stderr}");
    let after = task(&env, &repo, "feat1")["lease"].clone();
    assert_eq!(after["lease_id"], leased["lease_id"]);
    assert_eq!(after["token"], leased["token"]);

    // A subagent with isolation: worktree shares its parent's session id.
    let (subagent, _) = create(&env, &repo, Some(S1), "agent-a1b2");
    assert_ne!(subagent, first);
    assert_eq!(
        task(&env, &repo, "agent-a1b2")["holder"],
        format!("claude:{S1}:agent-a1b2")
    );

    let (other, _) = create(&env, &repo, Some(S2), "feat1");
    assert_ne!(other, first);
    assert_ne!(other, subagent);
    let variant = task(&env, &repo, "feat1-2");
    assert_eq!(variant["holder"], format!("claude:{S2}:feat1"));
    assert_eq!(PathBuf::from(variant["path"].as_str().unwrap()), other);
    assert_eq!(tasks(&env, &repo).len(), 3);
}

#[test]
fn a_retry_after_the_first_worktree_create_died_halfway_settles_it_and_leases_a_slot() {
    let (env, repo) = installed();
    // Claude Code kills a hook at its timeout: the first attempt dies once its intent is
    // recorded (and, the second time, while its slot is being prepared).
    for point in ["spawn-after-intent", "spawn-after-checkout"] {
        let name = format!("feat-{point}");
        let died = hook(
            &env,
            &repo,
            "worktree-create",
            &create_input(Some(S1), &repo, &name),
            &[("GIT_HAND_FAILPOINT", point)],
        );
        assert_ne!(died.code, 0, "{point}: {}", died.stderr);
        assert_eq!(task(&env, &repo, &name)["state"], "spawning", "{point}");
        let (path, stderr) = create(&env, &repo, Some(S1), &name);
        let leased: Vec<Value> = tasks(&env, &repo)
            .into_iter()
            .filter(|t| t["holder"] == format!("claude:{S1}:{name}"))
            .collect();
        assert_eq!(leased.len(), 1, "{point}: one open task: {leased:?}");
        assert_eq!(leased[0]["state"], "active", "{point}");
        assert_eq!(PathBuf::from(leased[0]["path"].as_str().unwrap()), path);
        assert!(!stderr.contains("retry"), "{point}: a new spawn: {stderr}");
    }
    crate::support::assert_consistent(&env, "after the retries");
}

#[test]
fn a_name_whose_branch_an_ended_task_kept_gets_a_variant_and_the_branch_keeps_its_commits() {
    let (env, repo) = installed();
    let (slot, _) = create(&env, &repo, Some(S1), "feat1");
    commit_file_with(&env, &slot, &in_session(S1, &[]), "work.txt").ok();
    let work = tip(&env, &slot, "HEAD");
    remove(&env, &repo, &slot, S1).code(0);
    // Another session, and the same one, asking for the name again the next day.
    for session in [S2, S1] {
        let (again, stderr) = create(&env, &repo, Some(session), "feat1");
        assert!(stderr.contains("feat1-"), "{stderr}");
        assert_ne!(tip(&env, &again, "HEAD"), work);
    }
    assert_eq!(
        task(&env, &repo, "feat1-2")["holder"],
        format!("claude:{S2}:feat1")
    );
    assert_eq!(
        task(&env, &repo, "feat1-3")["holder"],
        format!("claude:{S1}:feat1")
    );
    assert_eq!(tip(&env, &repo, "refs/heads/hand/feat1"), work);
}

#[test]
fn a_name_that_differs_only_in_case_from_a_task_or_a_kept_branch_gets_a_variant() {
    let (env, repo) = installed();
    // A person's open task `fix`: a session asking for `Fix` gets `Fix-2`, not a refusal
    // (Claude Code has no fallback), and not `fix`'s slot.
    let person = spawn(&env, &repo, "fix", &[]);
    let (slot, _) = create(&env, &repo, Some(S1), "Fix");
    assert_ne!(slot, PathBuf::from(person["path"].as_str().unwrap()));
    let variant = task(&env, &repo, "Fix-2");
    assert_eq!(variant["holder"], format!("claude:{S1}:Fix"));
    assert_eq!(PathBuf::from(variant["path"].as_str().unwrap()), slot);
    // A branch an ended task kept, `hand/feat`: `Feat` gets `Feat-2`.
    spawn(&env, &repo, "feat", &[]);
    env.hand(&repo, &["teardown", "feat"]).ok();
    create(&env, &repo, Some(S2), "Feat");
    assert_eq!(
        task(&env, &repo, "Feat-2")["holder"],
        format!("claude:{S2}:Feat")
    );
    // A name that is no such pair is its own.
    create(&env, &repo, Some(S3), "fixes");
    assert_eq!(
        task(&env, &repo, "fixes")["holder"],
        format!("claude:{S3}:fixes")
    );
}

#[test]
fn a_name_a_persons_task_holds_gets_a_variant_never_that_tasks_slot() {
    let (env, repo) = installed();
    let person = spawn(&env, &repo, "feat1", &[]);
    let persons_slot = PathBuf::from(person["path"].as_str().unwrap());
    let (slot, _) = create(&env, &repo, Some(S1), "feat1");
    assert_ne!(slot, persons_slot);
    let variant = task(&env, &repo, "feat1-2");
    assert_eq!(PathBuf::from(variant["path"].as_str().unwrap()), slot);
    let kept = task(&env, &repo, "feat1");
    assert_eq!(kept["holder"], person["holder"]);
    assert_eq!(kept["lease"]["lease_id"], person["lease_id"]);
}

/// `worktree-create` for each (session, name) of `asks`, all started at once: the paths they
/// printed, in order.
fn create_at_once(env: &TestEnv, repo: &Path, asks: &[(&str, &str)]) -> Vec<PathBuf> {
    let commands = asks
        .iter()
        .enumerate()
        .map(|(i, (session, name))| {
            let file = env.path(&format!("input-{i}.json"));
            std::fs::write(&file, create_input(Some(session), repo, name)).unwrap();
            let mut cmd = env.timed(BIN, repo);
            cmd.args(["hook", "claude", "worktree-create"])
                .stdin(std::fs::File::open(&file).unwrap());
            cmd
        })
        .collect();
    env.all_at_once(commands)
        .iter()
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .collect()
}

/// The open tasks as (holder, task, path), sorted.
fn held(env: &TestEnv, repo: &Path) -> Vec<(String, String, PathBuf)> {
    let mut held: Vec<_> = tasks(env, repo)
        .iter()
        .map(|t| {
            (
                t["holder"].as_str().unwrap().to_string(),
                t["task"].as_str().unwrap().to_string(),
                PathBuf::from(t["path"].as_str().unwrap()),
            )
        })
        .collect();
    held.sort();
    held
}

#[test]
fn two_sessions_asking_at_once_for_one_name_get_two_slots_and_two_tasks() {
    let (env, repo) = installed();
    let paths = create_at_once(&env, &repo, &[(S1, "feat1"), (S2, "feat1")]);
    assert_ne!(paths[0], paths[1]);
    let held = held(&env, &repo);
    assert_eq!(held.len(), 2, "{held:?}");
    assert_eq!(held[0].0, format!("claude:{S1}:feat1"));
    assert_eq!(held[1].0, format!("claude:{S2}:feat1"));
    assert_eq!(held[0].2, paths[0]);
    assert_eq!(held[1].2, paths[1]);
    let mut names = [held[0].1.clone(), held[1].1.clone()];
    names.sort();
    assert_eq!(names, ["feat1", "feat1-2"]);
}

#[test]
fn two_subagents_of_one_session_asking_at_once_get_two_slots() {
    let (env, repo) = installed();
    let paths = create_at_once(&env, &repo, &[(S1, "agent-a1"), (S1, "agent-b2")]);
    assert_ne!(paths[0], paths[1]);
    let held = held(&env, &repo);
    let want = [
        (
            format!("claude:{S1}:agent-a1"),
            "agent-a1".to_string(),
            paths[0].clone(),
        ),
        (
            format!("claude:{S1}:agent-b2"),
            "agent-b2".to_string(),
            paths[1].clone(),
        ),
    ];
    assert_eq!(held, want);
}

#[test]
fn without_a_session_id_the_worktree_is_keyed_by_its_name_and_says_so() {
    let (env, repo) = installed();
    let (slot, stderr) = create(&env, &repo, None, "feat1");
    assert!(stderr.contains("no session id"), "{stderr}");
    assert!(stderr.contains("worktree name"), "{stderr}");
    let t = task(&env, &repo, "feat1");
    assert_eq!(t["holder"], "claude::feat1");
    let (again, _) = create(&env, &repo, None, "feat1");
    assert_eq!(again, slot);
    assert_eq!(
        task(&env, &repo, "feat1")["lease"]["lease_id"],
        t["lease"]["lease_id"]
    );
    assert_eq!(tasks(&env, &repo).len(), 1);
}

#[test]
fn an_untrusted_handconfig_stops_the_session_with_ways_out_a_session_can_take() {
    let (env, repo) = installed();
    std::fs::write(repo.join(".handconfig"), "[hand]\n\tonCreate = echo made\n").unwrap();
    env.git(&repo, &["add", ".handconfig"]);
    env.git(&repo, &["commit", "-q", "-m", "handconfig"]);
    let run = hook(
        &env,
        &repo,
        "worktree-create",
        &create_input(Some(S1), &repo, "feat1"),
        &[("RUST_BACKTRACE", "0")],
    );
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.stdout.is_empty(), "{run:?}");
    assert!(run.stderr.contains("git hand trust"), "{run:?}");
    assert!(run.stderr.contains("claude -w <name>"), "{run:?}");
    // A session's hook takes no flags: spawn's `--no-setup` is no way out for it.
    assert!(!run.stderr.contains("--no-setup"), "{run:?}");
    assert!(tasks(&env, &repo).is_empty());
    env.hand(&repo, &["trust"]).code(0);
    let (slot, _) = create(&env, &repo, Some(S1), "feat1");
    assert!(slot.is_dir());
}

#[test]
fn bad_input_exits_2_with_a_clear_error_and_leases_nothing() {
    let (env, repo) = installed();
    let cwd = repo.to_str().unwrap();
    let cases: Vec<(String, &str)> = vec![
        (String::new(), "is empty"),
        ("  \n".into(), "is empty"),
        ("{\"cwd\":".into(), "is not JSON"),
        ("[1]".into(), "not an object"),
        ("\"feat1\"".into(), "not an object"),
        (json!({"cwd": cwd}).to_string(), "names no worktree"),
        (
            json!({"cwd": cwd, "name": "feat1", "session_id": "a:b"}).to_string(),
            "is not a session id",
        ),
        (
            json!({"cwd": cwd, "name": "feat1", "session_id": 7}).to_string(),
            "not a string",
        ),
        (
            json!({"cwd": cwd, "name": 7}).to_string(),
            "field of the wrong type",
        ),
    ];
    for (input, says) in cases {
        let run = hook(&env, &repo, "worktree-create", &input, &[]);
        assert_eq!(run.code, 2, "{input:?}: {run:?}");
        assert!(run.stdout.is_empty(), "{input:?}: {run:?}");
        assert!(
            run.stderr.contains("git-hand: error:"),
            "{input:?}: {run:?}"
        );
        assert!(
            run.stderr.contains(says),
            "{input:?} should say {says}: {run:?}"
        );
    }
    let v = env.hand(&repo, &["list", "--json"]).code(0).json();
    assert_eq!(v["tasks"], json!([]));
    assert_eq!(v["free_slots"], json!([]));
    assert_eq!(env.git(&repo, &["branch", "--list", "hand/*"]), "");
    assert_eq!(
        env.git(&repo, &["worktree", "list", "--porcelain"])
            .lines()
            .filter(|l| l.starts_with("worktree "))
            .count(),
        1
    );
}

#[test]
fn worktree_create_outside_a_git_repository_fails_and_leases_nothing() {
    let (env, repo) = installed();
    let plain = env.path("work/plain");
    std::fs::create_dir_all(&plain).unwrap();
    let run = hook(
        &env,
        &plain,
        "worktree-create",
        &create_input(Some(S1), &plain, "feat1"),
        &[],
    );
    assert_ne!(run.code, 0, "{run:?}");
    assert!(run.stdout.is_empty(), "{run:?}");
    assert!(run.stderr.contains("not in a git repository"), "{run:?}");
    assert_eq!(tasks(&env, &repo), Vec::<Value>::new());
}

#[test]
fn session_start_appends_the_sessions_own_lease_and_sourcing_it_passes_check() {
    let (env, repo) = installed();
    // The stamp alone no longer passes: only what the file exports can.
    env.git(&repo, &["config", "hand.requireCredential", "true"]);
    let (slot, _) = create(&env, &repo, Some(S1), "feat1");
    assert_ne!(env.hand(&slot, &["check"]).code, 0);
    let t = task(&env, &repo, "feat1");
    let file = env.path("claude-env");
    std::fs::write(&file, "export EARLIER=1\n").unwrap();
    let run = session_start(&env, &slot, S1, &file);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "", "SessionStart's stdout reaches the model");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("export EARLIER=1\n"), "{text}");
    for (k, v) in cred_of(&t) {
        assert!(text.contains(&format!("export {k}={v}\n")), "{text}");
    }
    assert!(!text.contains("GIT_CONFIG_KEY"), "{text}");
    let mut sh = env.timed("sh", &slot);
    sh.args(["-c", r#". "$1" && git hand check"#, "sh"])
        .arg(&file);
    let run = Run::from(sh.output().unwrap());
    assert_eq!(run.code, 0, "{run:?}");
}

#[test]
fn session_start_with_the_remote_fence_on_also_exports_the_push_options() {
    let (env, repo) = installed();
    env.git(&repo, &["config", "hand.remoteFence", "true"]);
    let (slot, _) = create(&env, &repo, Some(S1), "feat1");
    let t = task(&env, &repo, "feat1");
    let file = env.path("claude-env");
    session_start(&env, &slot, S1, &file).code(0);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("GIT_CONFIG_KEY_"), "{text}");
    let mut sh = env.timed("sh", &slot);
    sh.args([
        "-c",
        r#". "$1" && git config --get-all push.pushOption && git hand check >/dev/null"#,
        "sh",
    ])
    .arg(&file);
    let run = Run::from(sh.output().unwrap());
    let options = run.ok();
    let lease = t["lease"]["lease_id"].as_str().unwrap();
    let token = &t["lease"]["token"];
    assert_eq!(
        options,
        format!("hand.lease={lease}\nhand.token={token}\nhand.task=feat1\n")
    );
}

#[test]
fn session_start_of_a_session_that_never_held_the_slot_appends_nothing() {
    let (env, repo) = installed();
    let person = spawn(&env, &repo, "mine", &[]);
    let persons_slot = PathBuf::from(person["path"].as_str().unwrap());
    let (sessions_slot, _) = create(&env, &repo, Some(S1), "feat1");
    let file = env.path("claude-env");
    for slot in [&persons_slot, &sessions_slot] {
        let run = session_start(&env, slot, S2, &file);
        assert_eq!(run.code, 0, "{run:?}");
        assert_eq!(run.stdout, "");
        assert!(!file.exists(), "appended for {}", slot.display());
    }
}

#[test]
fn a_stale_session_gets_its_own_old_lease_never_the_new_holders_and_is_warned() {
    let (env, repo) = installed();
    let (slot, old, new) = stale_session(&env, &repo);
    let file = env.path("claude-env");
    let run = session_start(&env, &slot, S1, &file);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("no longer the slot's"), "{run:?}");
    assert!(run.stderr.contains("refused"), "{run:?}");
    let text = std::fs::read_to_string(&file).unwrap();
    for (k, v) in cred_of(&old) {
        assert!(text.contains(&format!("export {k}={v}\n")), "{text}");
    }
    assert!(!text.contains(new["lease_id"].as_str().unwrap()), "{text}");
    assert!(!text.contains("feat2"), "{text}");
}

#[test]
fn a_stale_sessions_commit_is_refused_and_the_new_holders_branch_untouched() {
    let (env, repo) = installed();
    let (slot, _, _) = stale_session(&env, &repo);
    let before = tip(&env, &slot, "hand/feat2");
    let run = commit_file_with(&env, &slot, &in_session(S1, &[]), "zombie.txt");
    assert_ne!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("leased again"), "{run:?}");
    assert_eq!(tip(&env, &slot, "hand/feat2"), before);
    // The same commit from another session, or from no session, is the stamp's: the new
    // holder's.
    let run = git_with(
        &env,
        &slot,
        &in_session(S3, &[]),
        &["commit", "-q", "-m", "add zombie.txt"],
    );
    assert_eq!(run.code, 0, "{run:?}");
    commit_file_with(&env, &slot, &[], "plain.txt").ok();
}

#[test]
fn a_stale_sessions_push_is_refused_and_the_remote_branch_untouched() {
    let (env, repo) = installed();
    let (slot, _, _) = stale_session(&env, &repo);
    let origin = env.path("work/app-origin.git");
    // The new holder has work of its own, not pushed yet.
    commit_file_with(&env, &slot, &[], "theirs.txt").ok();
    let run = push(
        &env,
        &slot,
        &in_session(S1, &[]),
        &["-q", "origin", "hand/feat2"],
    );
    assert_ne!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("leased again"), "{run:?}");
    assert_eq!(remote_oid(&env, &origin, "hand/feat2"), None);
    push(
        &env,
        &slot,
        &in_session(S3, &[]),
        &["-q", "origin", "hand/feat2"],
    )
    .ok();
    assert_eq!(
        remote_oid(&env, &origin, "hand/feat2"),
        Some(tip(&env, &slot, "hand/feat2"))
    );
}

#[test]
fn git_hand_env_in_a_stale_session_is_refused_never_the_new_holders_credential() {
    let (env, repo) = installed();
    let (slot, _, new) = stale_session(&env, &repo);
    let run = env.hand_env(&slot, &["env"], &[("CLAUDE_CODE_SESSION_ID", S1)]);
    assert_ne!(run.code, 0, "{run:?}");
    assert!(
        !run.stdout.contains(new["lease_id"].as_str().unwrap()),
        "the new holder's credential handed to a stale session: {run:?}"
    );
    // Without the session id, the person in the slot gets it as before.
    let run = env.hand(&slot, &["env"]);
    assert!(run.ok().contains(new["lease_id"].as_str().unwrap()));
}

#[test]
fn a_live_session_commits_and_pushes_with_its_session_id() {
    let (env, repo) = installed();
    let (slot, _) = create(&env, &repo, Some(S1), "feat1");
    let t = task(&env, &repo, "feat1");
    let origin = env.path("work/app-origin.git");
    commit_file_with(&env, &slot, &in_session(S1, &[]), "a.txt").ok();
    let with_cred = in_session(S1, &cred_of(&t));
    commit_file_with(&env, &slot, &with_cred, "b.txt").ok();
    push(&env, &slot, &with_cred, &["-q", "origin", "hand/feat1"]).ok();
    assert_eq!(
        remote_oid(&env, &origin, "hand/feat1"),
        Some(tip(&env, &slot, "HEAD"))
    );
}

#[test]
fn a_subagents_commit_with_its_sessions_other_slot_credential_passes_only_in_the_session() {
    let (env, repo) = installed();
    let (_a, _) = create(&env, &repo, Some(S1), "feat1");
    let (b, _) = create(&env, &repo, Some(S1), "agent-x");
    // What SessionStart exported where the session started: slot A's lease.
    let a_cred = cred_of(&task(&env, &repo, "feat1"));
    let before = tip(&env, &b, "HEAD");
    let run = commit_file_with(&env, &b, &a_cred, "outside.txt");
    assert_ne!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("git-hand"), "{run:?}");
    assert_eq!(tip(&env, &b, "HEAD"), before);
    let run = git_with(
        &env,
        &b,
        &in_session(S1, &a_cred),
        &["commit", "-q", "-m", "add outside.txt"],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_ne!(tip(&env, &b, "HEAD"), before);
}

#[test]
fn worktree_remove_ends_a_clean_sessions_task_and_keeps_its_commits() {
    let (env, repo) = installed();
    let (slot, _) = create(&env, &repo, Some(S1), "feat1");
    commit_file_with(&env, &slot, &in_session(S1, &[]), "work.txt").ok();
    let work = tip(&env, &slot, "HEAD");
    // Claude Code may send any session id with it.
    let run = remove(&env, &repo, &slot, S2);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("task feat1 ended"), "{run:?}");
    assert_eq!(tasks(&env, &repo), Vec::<Value>::new());
    assert_eq!(free_slots(&env, &repo), [slot]);
    assert_eq!(tip(&env, &repo, "refs/heads/hand/feat1"), work);
}

#[test]
fn worktree_remove_leaves_a_slot_with_uncommitted_changes_open() {
    let (env, repo) = installed();
    let (slot, _) = create(&env, &repo, Some(S1), "feat1");
    std::fs::write(slot.join("README"), "changed\n").unwrap();
    std::fs::write(slot.join("new.txt"), "new\n").unwrap();
    let run = remove(&env, &repo, &slot, S1);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("left open"), "{run:?}");
    assert!(run.stderr.contains("git hand teardown"), "{run:?}");
    assert_eq!(
        task(&env, &repo, "feat1")["holder"],
        format!("claude:{S1}:feat1")
    );
    assert_eq!(
        std::fs::read_to_string(slot.join("README")).unwrap(),
        "changed\n"
    );
    assert_eq!(
        std::fs::read_to_string(slot.join("new.txt")).unwrap(),
        "new\n"
    );
}

#[test]
fn a_stale_sessions_worktree_remove_leaves_the_new_holders_task_alone() {
    let (env, repo) = installed();
    let (slot, _) = create(&env, &repo, Some(S1), "feat1");
    env.hand(&repo, &["teardown", "feat1"]).ok();
    let (again, _) = create(&env, &repo, Some(S2), "feat2");
    assert_eq!(again, slot);
    let live = task(&env, &repo, "feat2");
    // S1 exits and Claude Code removes the worktree it was given: now S2's.
    let run = remove(&env, &repo, &slot, S1);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("as it is"), "{run:?}");
    assert_eq!(task(&env, &repo, "feat2")["lease"], live["lease"]);
    // S2's own removal ends it.
    remove(&env, &repo, &slot, S2).code(0);
    assert_eq!(tasks(&env, &repo), Vec::<Value>::new());
}

#[test]
fn worktree_remove_changes_nothing_it_did_not_make() {
    let (env, repo) = installed();
    let person = spawn(&env, &repo, "mine", &[]);
    let persons_slot = PathBuf::from(person["path"].as_str().unwrap());
    let (_, _) = create(&env, &repo, Some(S1), "feat1");
    let plain = env.path("work/plain");
    std::fs::create_dir_all(&plain).unwrap();
    let before = tasks(&env, &repo);
    for path in [
        persons_slot.clone(),
        repo.clone(),
        plain,
        env.path("work/missing"),
    ] {
        let run = remove(&env, &repo, &path, S1);
        assert_eq!(run.code, 0, "{}: {run:?}", path.display());
        assert!(
            run.stderr.contains("as it is"),
            "{}: {run:?}",
            path.display()
        );
        let after = tasks(&env, &repo);
        let leases = |ts: &[Value]| -> Vec<Value> {
            ts.iter().map(|t| t["lease"]["lease_id"].clone()).collect()
        };
        assert_eq!(leases(&after), leases(&before), "{}", path.display());
    }
    assert!(persons_slot.join("README").is_file());
}

#[test]
fn claude_codes_settings_file_in_a_slot_is_excluded_so_the_slot_comes_back_for_reuse() {
    let (env, repo) = installed();
    let (slot, _) = create(&env, &repo, Some(S1), "feat1");
    let exclude = std::fs::read_to_string(repo.join(".git/info/exclude")).unwrap();
    assert!(exclude.contains("# git-hand:"), "{exclude}");
    assert!(
        exclude.lines().any(|l| l == "/.claude/settings.local.json"),
        "{exclude}"
    );
    std::fs::create_dir_all(slot.join(".claude")).unwrap();
    std::fs::write(slot.join(".claude/settings.local.json"), "{}\n").unwrap();
    assert_eq!(env.git(&slot, &["status", "--porcelain"]), "");
    let run = remove(&env, &repo, &slot, S1);
    assert!(run.stderr.contains("task feat1 ended"), "{run:?}");
    let (next, _) = create(&env, &repo, Some(S2), "feat2");
    assert_eq!(next, slot);
    // A second lease adds no second block.
    let again = std::fs::read_to_string(repo.join(".git/info/exclude")).unwrap();
    assert_eq!(again, exclude);
}

#[test]
fn hand_claude_ttl_makes_a_sessions_lease_expire() {
    let (env, repo) = installed();
    env.git(&repo, &["config", "hand.claudeTtl", "1s"]);
    let (slot, _) = create(&env, &repo, Some(S1), "feat1");
    let t = task(&env, &repo, "feat1");
    assert_ne!(t["lease"]["expires_at"], Value::Null);
    // Past the lease's end, whatever the machine's speed: the lease ends by the clock.
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let before = tip(&env, &slot, "HEAD");
    let run = commit_file_with(&env, &slot, &in_session(S1, &cred_of(&t)), "late.txt");
    assert_ne!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("expired"), "{run:?}");
    assert_eq!(tip(&env, &slot, "HEAD"), before);
}

// Found in review: each of these failed before its fix.

#[test]
fn a_stale_sessions_unnamed_teardown_leaves_the_new_holders_task_alone() {
    let (env, repo) = installed();
    let (slot, _, _) = stale_session(&env, &repo);
    // The stale session's Bash carries its session id and (hooks not reaching it) no credential.
    let run = env.hand_env(&slot, &["teardown"], &[("CLAUDE_CODE_SESSION_ID", S1)]);
    assert_eq!(
        task(&env, &repo, "feat2")["task"],
        "feat2",
        "a stale session's teardown ended the new holder's task: {run:?}"
    );
    assert_ne!(run.code, 0, "{run:?}");
}

/// `hand.requireCredential` and subagents do not mix: a subagent carries no credential of its
/// own slot (Claude Code runs no SessionStart for it), and the session id never grants one.
/// docs/agents.md says so; the refusal is the usual `no-credential`.
#[test]
fn under_require_credential_a_subagents_commit_without_a_credential_is_refused() {
    let (env, repo) = installed();
    env.git(&repo, &["config", "hand.requireCredential", "true"]);
    // The parent started in the project directory: SessionStart exported nothing.
    let (b, _) = create(&env, &repo, Some(S1), "agent-a1b2c3");
    let before = tip(&env, &b, "HEAD");
    let run = commit_file_with(&env, &b, &in_session(S1, &[]), "sub.txt");
    assert_ne!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("no-credential"), "{run:?}");
    assert_eq!(tip(&env, &b, "HEAD"), before);
}

#[test]
fn a_long_worktree_name_still_gets_a_slot() {
    let (env, repo) = installed();
    let name = "x".repeat(170);
    let (slot, _) = create(&env, &repo, Some(S1), &name);
    assert!(slot.is_dir());
}

#[test]
fn the_hooks_hold_on_a_team_ledger() {
    let db = crate::pg::database();
    let (env, repo) = crate::support::installed_on(&db.url());
    let (slot, _) = create(&env, &repo, Some(S1), "feat1");
    let file = env.path("env-file");
    session_start(&env, &slot, S1, &file).ok();
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("GIT_HAND_LEASE=")
    );
    commit_file_with(&env, &slot, &in_session(S1, &[]), "live.txt").ok();
    assert_eq!(remove(&env, &repo, &slot, S1).code, 0);
    let (again, _) = create(&env, &repo, Some(S2), "feat2");
    assert_eq!(again, slot);
    let before = tip(&env, &slot, "HEAD");
    let run = commit_file_with(&env, &slot, &in_session(S1, &[]), "zombie.txt");
    assert_ne!(run.code, 0, "{run:?}");
    assert_eq!(tip(&env, &slot, "HEAD"), before);
}

#[test]
fn two_sessions_without_a_session_id_asking_for_one_name_never_share_a_live_slot() {
    let (env, repo) = installed();
    let (first, _) = create(&env, &repo, None, "feat1");
    // The first desktop session runs in its slot.
    let mut sitting = std::process::Command::new("sleep")
        .arg("60")
        .current_dir(&first)
        .spawn()
        .unwrap();
    let second = hook(
        &env,
        &repo,
        "worktree-create",
        &create_input(None, &repo, "feat1"),
        &[],
    );
    sitting.kill().unwrap();
    sitting.wait().unwrap();
    let second = PathBuf::from(second.stdout.trim());
    assert_ne!(
        second, first,
        "a second session was handed a live session's slot"
    );
}
