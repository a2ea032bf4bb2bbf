//! PID namespaces (issue 22, items 2 and 3): a process is judged through the `/proc` the scan
//! reads, which may show another namespace than the caller's own. A spawn in a container that
//! shares HOME and the ledger, or a scan from inside one, must never take a process it cannot
//! see for gone, nor a slot for empty.
//!
//! Every command that may outlive its test runs under `timeout -s KILL`, in a PID namespace
//! of its own (`unshare -fp --kill-child`, with `-m --mount-proc` where the test needs the
//! namespace's own `/proc`). A spawn is held in its setup command by a FIFO it reads after it
//! touched a marker: the test waits on the marker, never on time.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{BIN, Run, TestEnv, installed, path_of, wait_until};

/// How long a test waits for an event before it fails.
const DEADLINE: Duration = Duration::from_secs(120);

/// Whose `/proc` a contained command sees.
#[derive(Clone, Copy, Debug)]
enum Proc {
    /// The outer one (`unshare -fp`): the command is in a namespace below the one `/proc` shows.
    Outer,
    /// Its own (`unshare -fpm --mount-proc`).
    Own,
}

/// `git-hand ARGS` in `dir`, in a new PID namespace under a kill timeout.
fn in_namespace(env: &TestEnv, dir: &Path, proc: Proc, args: &[&str]) -> Command {
    let mut cmd = env.command("timeout", dir);
    cmd.args(["-s", "KILL", "120", "unshare", "-fp", "--kill-child"]);
    if let Proc::Own = proc {
        cmd.args(["-m", "--mount-proc"]);
    }
    cmd.arg(BIN).args(args);
    cmd
}

fn run(mut cmd: Command) -> Run {
    Run::from(cmd.output().unwrap())
}

/// A repository whose `hand.onCreate` touches `marker` and then waits until a line is written
/// to `fifo`: a spawn started there stays in its setup command until [`Held::release`].
struct Held {
    marker: PathBuf,
    fifo: PathBuf,
    child: Child,
}

impl Held {
    fn setup(env: &TestEnv, repo: &Path) -> (PathBuf, PathBuf) {
        let marker = env.path("setup-started");
        let fifo = env.path("setup-fifo");
        let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let cmd = format!(
            "touch '{}'; read line < '{}'",
            marker.display(),
            fifo.display()
        );
        env.git(repo, &["config", "hand.onCreate", &cmd]);
        (marker, fifo)
    }

    /// Starts `cmd` (a spawn) and waits until it is inside its setup command.
    fn start(env: &TestEnv, repo: &Path, mut cmd: Command) -> Self {
        let (marker, fifo) = Self::setup(env, repo);
        let child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let held = Held {
            marker,
            fifo,
            child,
        };
        wait_until(
            "the spawn runs its setup command",
            Instant::now() + DEADLINE,
            || held.marker.exists(),
        );
        held
    }

    /// Lets the setup command finish and returns the spawn's outcome.
    fn release(self) -> Run {
        std::fs::write(&self.fifo, "go\n").unwrap();
        Run::from(self.child.wait_with_output().unwrap())
    }
}

/// The open task `name` of the repository, from `list --json`.
fn task(env: &TestEnv, repo: &Path, name: &str) -> Option<serde_json::Value> {
    let listed = env.hand(repo, &["list", "--json"]).json();
    listed["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["task"] == name)
        .cloned()
}

/// A spawn in a PID namespace of its own, in its setup command, is still at work for a
/// `doctor` on the host, whichever `/proc` the spawn saw: its process is judged where it was
/// recorded. Before, the spawn recorded `getpid()` (its number inside its namespace: 1 or 2),
/// which names another process in the host's `/proc`, and doctor called the spawn stuck.
#[test]
fn a_spawn_in_another_pid_namespace_is_not_stuck_for_doctor() {
    for proc in [Proc::Outer, Proc::Own] {
        let (env, repo) = installed();
        let spawn = in_namespace(&env, &repo, proc, &["spawn", "a", "--json"]);
        let held = Held::start(&env, &repo, spawn);
        let doctor = env.hand(&repo, &["doctor"]);
        let spawned = held.release();
        assert_eq!(spawned.code, 0, "{proc:?}: {spawned:?}");
        assert!(
            !doctor.stdout.contains("stuck-spawn") && !doctor.stderr.contains("stuck-spawn"),
            "{proc:?}: doctor took a running spawn for stuck: {doctor:?}"
        );
        assert_eq!(task(&env, &repo, "a").unwrap()["state"], "active");
    }
}

/// From inside a namespace with its own `/proc`, a spawn running on the host cannot be seen:
/// doctor says so and `--repair` leaves it alone (before, it was "gone" and was abandoned).
#[test]
fn doctor_in_a_namespace_never_settles_a_spawn_it_cannot_see() {
    let (env, repo) = installed();
    let mut spawn = env.timed(BIN, &repo);
    spawn.args(["spawn", "a", "--json"]);
    let held = Held::start(&env, &repo, spawn);
    let look = run(in_namespace(&env, &repo, Proc::Own, &["doctor"]));
    assert!(
        look.stdout.contains("cannot see into") && !look.stdout.contains("its process is gone"),
        "{look:?}"
    );
    let repair = run(in_namespace(
        &env,
        &repo,
        Proc::Own,
        &["doctor", "--repair"],
    ));
    let spawned = held.release();
    assert_eq!(spawned.code, 0, "{spawned:?}\ndoctor --repair: {repair:?}");
    let a = task(&env, &repo, "a").expect("task a was ended by doctor --repair");
    assert_eq!(a["state"], "active", "{repair:?}");
}

/// The blocked `flock` waiters `/proc/locks` lists (`-> FLOCK ...`), as `dev:inode` fields.
fn blocked_flocks() -> Vec<String> {
    let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
    locks
        .lines()
        .filter(|l| l.contains("->"))
        .filter_map(|l| l.split_whitespace().nth(6).map(str::to_string))
        .collect()
}

/// Whether a process waits for a lock on `file` (whose inode ends its `dev:inode` field).
fn someone_waits_for(file: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(file) else {
        return false;
    };
    let inode = format!(":{}", meta.ino());
    blocked_flocks().iter().any(|f| f.ends_with(&inode))
}

/// The race itself: `doctor --repair` judged a spawn gone (here a row as a git-hand older than
/// the namespaces wrote it, whose pid names another process), waited for the slot's lock while
/// the spawn ran its setup command, and got it once the task was active. It must read the task
/// again under the lock and leave it: before, it reset the slot, removed the stamp, released the
/// lease and ended the live task.
#[test]
fn a_repair_that_waited_for_the_slot_leaves_a_task_that_became_active() {
    let (env, repo) = installed();
    let mut spawn = env.timed(BIN, &repo);
    spawn.args(["spawn", "a", "--json"]);
    let held = Held::start(&env, &repo, spawn);
    // The row as an older git-hand would have it for a spawn in another namespace: a pid of
    // another numbering (here: this one's with a start time that is not its process's).
    let conn = rusqlite::Connection::open(env.ledger()).unwrap();
    conn.busy_timeout(DEADLINE).unwrap();
    let changed = conn
        .execute(
            "UPDATE tasks SET pid_ns = NULL, pid_start = -1 WHERE name = 'a' AND state = 'spawning'",
            [],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(conn);
    let locks = env.git(&repo, &["rev-parse", "--git-common-dir"]);
    let locks = repo.join(locks).join("git-hand-locks");
    let lock_files: Vec<PathBuf> = std::fs::read_dir(&locks)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().contains("slot-"))
        .collect();
    assert_eq!(lock_files.len(), 1, "{lock_files:?}");
    let mut doctor = env.timed(BIN, &repo);
    let doctor = doctor
        .args(["doctor", "--repair"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until(
        "doctor --repair waits for the slot's lock",
        Instant::now() + DEADLINE,
        || someone_waits_for(&lock_files[0]),
    );
    let spawned = held.release();
    let doctor = Run::from(doctor.wait_with_output().unwrap());
    assert_eq!(spawned.code, 0, "{spawned:?}");
    let slot = path_of(&spawned.json());
    let a = task(&env, &repo, "a").expect("doctor --repair ended the live task");
    assert_eq!(a["state"], "active", "{doctor:?}");
    assert!(doctor.stdout.contains("left alone"), "{doctor:?}");
    assert_eq!(env.git(&slot, &["branch", "--show-current"]), "hand/a");
    let stamp = run({
        let mut c = env.timed(BIN, &slot);
        c.args(["status"]);
        c
    });
    assert_eq!(stamp.code, 0, "{stamp:?}");
}

/// A host process sits in a free slot; a spawn in a namespace with its own `/proc` cannot see
/// it, so it must not take that slot (before, it reset it under the process): the slot was
/// last used from the host's namespace. `list` and `doctor` there say why it is not used.
#[test]
fn a_spawn_in_a_namespace_never_reuses_a_slot_last_used_where_it_cannot_see() {
    let (env, repo) = installed();
    let a = crate::support::spawn(&env, &repo, "a", &[]);
    let slot = path_of(&a);
    env.hand(&repo, &["teardown", "a"]).ok();
    let mut sitter = Command::new("sleep")
        .arg("300")
        .current_dir(&slot)
        .spawn()
        .unwrap();
    let b = run(in_namespace(
        &env,
        &repo,
        Proc::Own,
        &["spawn", "b", "--json"],
    ));
    let listed = run(in_namespace(&env, &repo, Proc::Own, &["list"]));
    let doctor = run(in_namespace(&env, &repo, Proc::Own, &["doctor"]));
    sitter.kill().unwrap();
    sitter.wait().unwrap();
    assert_eq!(b.code, 0, "{b:?}");
    assert_ne!(
        path_of(&b.json()),
        slot,
        "the slot a host process sits in was reused"
    );
    assert!(b.stdout.contains("cannot see"), "{b:?}");
    assert!(listed.stdout.contains("cannot see"), "{listed:?}");
    assert!(doctor.stdout.contains("cannot see"), "{doctor:?}");
}

/// The tests' own containment (`timeout ... unshare -fp --kill-child`, `/proc` the outer one)
/// sees its own namespace and those below it: slots are reused there as on the host, and a
/// process the host puts in a free slot is seen and keeps the slot from being reused.
#[test]
fn contained_commands_still_reuse_slots() {
    let (env, repo) = installed();
    let a = run(in_namespace(
        &env,
        &repo,
        Proc::Outer,
        &["spawn", "a", "--json"],
    ));
    assert_eq!(a.code, 0, "{a:?}");
    let slot = path_of(&a.json());
    run(in_namespace(&env, &repo, Proc::Outer, &["teardown", "a"])).code(0);
    let b = run(in_namespace(
        &env,
        &repo,
        Proc::Outer,
        &["spawn", "b", "--json"],
    ));
    assert_eq!(b.code, 0, "{b:?}");
    let b = b.json();
    assert_eq!(path_of(&b), slot, "{b}");
    assert_eq!(b["slot_source"], "reused", "{b}");
    run(in_namespace(&env, &repo, Proc::Outer, &["teardown", "b"])).code(0);
    let mut sitter = Command::new("sleep")
        .arg("300")
        .current_dir(&slot)
        .spawn()
        .unwrap();
    let c = run(in_namespace(
        &env,
        &repo,
        Proc::Outer,
        &["spawn", "c", "--json"],
    ));
    sitter.kill().unwrap();
    sitter.wait().unwrap();
    assert_eq!(c.code, 0, "{c:?}");
    assert_ne!(path_of(&c.json()), slot, "{c:?}");
    assert!(c.stdout.contains("is inside it"), "{c:?}");
}

/// A spawn contained with `unshare -fp` (the outer `/proc`) that crashed is found stuck and
/// settled by `doctor --repair` on the host. Before, it recorded its pid inside its namespace
/// (1), which in the host's `/proc` is init: it was "still at work" for ever.
#[test]
fn a_crashed_spawn_in_a_namespace_below_is_settled() {
    let (env, repo) = installed();
    let mut spawn = in_namespace(&env, &repo, Proc::Outer, &["spawn", "a"]);
    spawn.env("GIT_HAND_FAILPOINT", "spawn-after-checkout");
    let crashed = run(spawn);
    assert_ne!(crashed.code, 0, "{crashed:?}");
    assert_eq!(task(&env, &repo, "a").unwrap()["state"], "spawning");
    let look = env.hand(&repo, &["doctor"]);
    assert!(look.stdout.contains("its process is gone"), "{look:?}");
    env.hand(&repo, &["doctor", "--repair"]).code(0);
    assert!(
        task(&env, &repo, "a").is_none(),
        "the crashed spawn was not settled"
    );
    crate::support::assert_consistent(&env, "after a contained spawn crashed");
}
