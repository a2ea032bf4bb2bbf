//! `git hand list` worth reading (what git says of each task's worktree, whether its `--exec`
//! command runs), `git hand path`, and `git hand done` inside a slot.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{
    BIN, COMMAND_TIMEOUT, TestEnv, cred, installed, leased_again, path_of, push, spawn,
};

/// The `list --json` entry of a task.
fn listed(env: &TestEnv, repo: &Path, task: &str) -> Value {
    let v = env.hand(repo, &["list", "--json"]).code(0).json();
    v["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["task"] == task)
        .unwrap_or_else(|| panic!("{task} is not listed: {v:#}"))
        .clone()
}

/// The text row of a task in `git hand list`, split into its cells (two spaces apart).
fn row(env: &TestEnv, repo: &Path, task: &str) -> Vec<String> {
    let text = env.hand(repo, &["list"]).ok();
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("{task} ")))
        .unwrap_or_else(|| panic!("{task} is not listed:\n{text}"));
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect()
}

/// A commit in `dir` whose committer date is `secs_ago` seconds in the past.
fn commit_dated(env: &TestEnv, dir: &Path, file: &str, secs_ago: u64) {
    std::fs::write(dir.join(file), file).unwrap();
    env.git(dir, &["add", file]);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let date = format!("@{} +0000", now - secs_ago);
    let out = env
        .timed("git", dir)
        .args(["commit", "-q", "-m", file])
        .env("GIT_COMMITTER_DATE", &date)
        .env("GIT_AUTHOR_DATE", &date)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn list_shows_a_dirty_worktree_its_commits_ahead_and_behind_base_and_upstream_and_their_age() {
    let (env, repo) = installed();
    let a = spawn(&env, &repo, "a", &[]);
    spawn(&env, &repo, "b", &[]);
    let slot = path_of(&a);
    // Two commits pushed to hand/a (its upstream), then a third made two hours ago, unpushed,
    // and a file not added: dirty, 3 ahead of main, 1 ahead of the upstream.
    env.commit(&slot, "one", "1");
    env.commit(&slot, "two", "2");
    push(&env, &slot, &cred(&a), &["-q", "-u", "origin", "hand/a"]).ok();
    commit_dated(&env, &slot, "three", 2 * 3600 + 60);
    std::fs::write(slot.join("scratch"), "not added").unwrap();
    // main moves on by one commit, pushed: both tasks are one behind it.
    env.commit(&repo, "later", "on main");
    env.git(&repo, &["push", "-q", "origin", "main"]);

    let v = listed(&env, &repo, "a");
    let wt = &v["worktree"];
    assert_eq!(wt["dirty"], true, "{v:#}");
    assert_eq!(wt["head"], env.git(&slot, &["rev-parse", "HEAD"]));
    assert_eq!(wt["base_branch"]["ref"], "main");
    assert_eq!(wt["base_branch"]["ahead"], 3, "{v:#}");
    assert_eq!(wt["base_branch"]["behind"], 1, "{v:#}");
    assert_eq!(wt["upstream"]["ref"], "origin/hand/a");
    assert_eq!(wt["upstream"]["ahead"], 1, "{v:#}");
    assert_eq!(wt["upstream"]["behind"], 0, "{v:#}");
    let committed = env.git(
        &slot,
        &[
            "log",
            "-1",
            "--format=%cd",
            "--date=format-local:%Y-%m-%dT%H:%M:%S",
        ],
    );
    assert_eq!(wt["last_commit_at"], format!("{committed}.000Z"));
    assert_eq!(v["exec_running"], false);

    let b = listed(&env, &repo, "b");
    assert_eq!(b["worktree"]["dirty"], false, "{b:#}");
    assert_eq!(b["worktree"]["base_branch"]["ahead"], 0);
    assert_eq!(b["worktree"]["base_branch"]["behind"], 1);
    assert_eq!(b["worktree"]["upstream"], Value::Null);

    // TASK SLOT STATE TREE BASE UPSTREAM COMMITTED EXEC LEASE
    assert_eq!(
        row(&env, &repo, "a"),
        [
            "a",
            "1",
            "active",
            "dirty",
            "+3 -1",
            "+1 -0",
            "2h ago",
            "-",
            "open-ended"
        ]
    );
    let b_row = row(&env, &repo, "b");
    assert_eq!(b_row[..6], ["b", "2", "active", "clean", "+0 -1", "-"]);
}

#[test]
fn list_paths_and_long_add_the_directory_branch_token_holder_and_issue() {
    let (env, repo) = installed();
    let a = spawn(&env, &repo, "a", &["--issue", "7"]);
    let text = env.hand(&repo, &["list", "--long", "--paths"]).ok();
    let header: Vec<&str> = text.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header[header.len() - 5..],
        ["BRANCH", "TOKEN", "HOLDER", "ISSUE", "PATH"]
    );
    let cells: Vec<&str> = text
        .lines()
        .nth(1)
        .unwrap()
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    let path = path_of(&a).display().to_string();
    let holder = format!("tester@{}", host());
    assert_eq!(
        cells[cells.len() - 5..],
        ["hand/a", "1", holder.as_str(), "7", path.as_str()],
        "{text}"
    );
}

/// The host name a default holder is made of (the library's unit tests tie it to the kernel's).
fn host() -> String {
    git_hand::platform::machine::hostname()
}

/// A `spawn --exec` in the background whose command writes `started`, then waits for
/// `release` (for at most the command timeout). Dropping it releases the command and waits.
///
/// Not run in a PID namespace of its own (`TestEnv::contained`): the task row records the pid
/// git-hand sees, which `list`, outside that namespace, would look up as another process. It
/// runs under `timeout -s KILL`, which kills its whole process group, and the command's own
/// wait is bounded too.
struct Agent {
    child: Option<Child>,
    release: PathBuf,
}

impl Agent {
    fn start(env: &TestEnv, repo: &Path, task: &str) -> Self {
        let started = env.path(&format!("{task}-started"));
        let release = env.path(&format!("{task}-release"));
        let script = format!(
            ": > '{started}'; i=0; while [ ! -e '{release}' ] && [ $i -lt {limit} ]; do sleep 0.05; i=$((i+1)); done",
            started = started.display(),
            release = release.display(),
            limit = COMMAND_TIMEOUT.parse::<u32>().unwrap() * 20,
        );
        let child = env
            .timed(BIN, repo)
            .args(["spawn", task, "--exec", "--", "sh", "-c", &script])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(120);
        while !started.exists() {
            assert!(
                Instant::now() < deadline,
                "the --exec command never started"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        Self {
            child: Some(child),
            release,
        }
    }

    /// Lets the command end and waits for the spawn to exit.
    fn finish(&mut self) -> std::process::Output {
        std::fs::write(&self.release, "").unwrap();
        self.child.take().unwrap().wait_with_output().unwrap()
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        if self.child.is_some() {
            let _ = self.finish();
        }
    }
}

#[test]
fn list_says_whether_a_tasks_exec_command_still_runs() {
    let (env, repo) = installed();
    spawn(&env, &repo, "quiet", &[]);
    let mut agent = Agent::start(&env, &repo, "busy");
    assert_eq!(listed(&env, &repo, "busy")["exec_running"], true);
    assert_eq!(listed(&env, &repo, "quiet")["exec_running"], false);
    assert_eq!(row(&env, &repo, "busy")[7], "running");
    assert_eq!(row(&env, &repo, "quiet")[7], "-");
    let out = agent.finish();
    assert!(out.status.success(), "{out:?}");
    // The task stays active after its command ended; nothing runs for it any more.
    let v = listed(&env, &repo, "busy");
    assert_eq!(
        (v["state"].as_str(), &v["exec_running"]),
        (Some("active"), &Value::Bool(false))
    );
    assert_eq!(row(&env, &repo, "busy")[7], "-");
}

#[test]
fn path_prints_a_tasks_directory_and_refuses_an_unknown_or_done_task() {
    let (env, repo) = installed();
    let a = spawn(&env, &repo, "a", &[]);
    spawn(&env, &repo, "gone", &[]);
    env.hand(&repo, &["teardown", "gone"]).ok();
    let out = env.hand(&repo, &["path", "a"]).ok();
    assert_eq!(out, format!("{}\n", path_of(&a).display()));
    let v = env.hand(&repo, &["path", "a", "--json"]).code(0).json();
    assert_eq!(v["path"], a["path"]);
    assert_eq!(v["slot"], 1);
    // Inside the slot, the task is its own.
    let out = env.hand(&path_of(&a), &["path"]).ok();
    assert_eq!(out, format!("{}\n", path_of(&a).display()));
    let unknown = env.hand(&repo, &["path", "nosuch"]).code(1);
    assert!(unknown.stdout.is_empty(), "{unknown:?}");
    assert!(
        unknown.stderr.contains("no task named nosuch"),
        "{unknown:?}"
    );
    let done = env.hand(&repo, &["path", "gone"]).code(3);
    assert!(done.stdout.is_empty(), "{done:?}");
    assert!(done.stderr.contains("task gone is done"), "{done:?}");
}

#[test]
fn done_inside_a_slot_tears_down_its_own_task_and_refuses_outside_a_slot() {
    let (env, repo) = installed();
    let a = spawn(&env, &repo, "a", &[]);
    spawn(&env, &repo, "b", &[]);
    let outside = env.hand(&repo, &["done"]).code(2);
    assert!(
        outside.stderr.contains("not a leased slot; name the task"),
        "{outside:?}"
    );
    let out = env.hand(&path_of(&a), &["done"]).ok();
    assert!(
        out.starts_with(&format!(
            "task a done: slot {} is free",
            path_of(&a).display()
        )),
        "{out}"
    );
    let v = env.hand(&repo, &["list", "--all", "--json"]).code(0).json();
    let states: Vec<(&str, &str)> = v["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["task"].as_str().unwrap(), t["state"].as_str().unwrap()))
        .collect();
    assert_eq!(states, [("a", "done"), ("b", "active")]);
}

/// The slot's holder changed under a process still sitting in it: its `done`, with its own
/// (superseded) credential in the environment, ends its own task, never the new holder's.
#[test]
fn done_in_a_slot_with_a_superseded_credential_never_ends_the_new_holders_task() {
    let (env, repo) = installed();
    let (slot, first, _second) = leased_again(&env, &repo, "a", "b");
    let vars: Vec<(String, String)> = cred(&first);
    let pairs: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let out = env.hand_env(&slot, &["done"], &pairs).ok();
    assert_eq!(out, "task a was already done\n");
    let v = listed(&env, &repo, "b");
    assert_eq!(v["state"], "active");
    // Without the credential, the slot's own task is b's.
    let out = env.hand(&slot, &["done", "--json"]).code(0).json();
    assert_eq!(
        (out["task"].as_str(), out["outcome"].as_str()),
        (Some("b"), Some("freed"))
    );
}
