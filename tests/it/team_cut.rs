//! A team ledger's connection lost in the middle of a spawn or a teardown (issue 22, item 9):
//! once git has changed the slot, the operation's writes run again on a new connection, so a
//! terminated backend (or a restart the server comes back from in time) costs nothing; and when
//! the server stays away, the error says what was done, never "nothing was changed", and the
//! same command run again (after `doctor --repair` for a spawn) finishes the work.
//!
//! Each cut is at a known step: a git wrapper ([`GitPause`]) holds the process at the setup
//! command or at one of teardown's git steps while the test terminates its backend (and, for a
//! server that stays away, takes the [`Switch`] relay down first).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::pg::{self, Database};
use crate::support::{GitPause, Run, TestEnv, finish, installed_on, path_of, spawn};

/// Terminates every git-hand backend of `db` (waiting until each is gone) and returns how many
/// there were.
fn terminate_backends(db: &Database) -> usize {
    let out = db.psql(
        "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity \
         WHERE application_name = 'git-hand' AND datname = current_database() \
         AND pid <> pg_backend_pid()",
    );
    out.lines().filter(|l| *l == "t").count()
}

fn task_state(db: &Database) -> String {
    db.psql("SELECT state FROM tasks ORDER BY id DESC LIMIT 1")
}

/// A TCP relay to the shared cluster that can be taken down: while it is down, every new
/// connection is closed at once (a server that is not there yet). A connection it already
/// relays lives as long as its backend.
struct Switch {
    port: u16,
    down: Arc<AtomicBool>,
}

impl Switch {
    fn new() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let down: Arc<AtomicBool> = Arc::default();
        let d = down.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                if d.load(Ordering::SeqCst) {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let server = TcpStream::connect(("127.0.0.1", pg::cluster().port)).unwrap();
                pump(client.try_clone().unwrap(), server.try_clone().unwrap());
                pump(server, client);
            }
        });
        Self { port, down }
    }

    /// The superuser's URL for `db` through this relay; a reconnection gives up on a relay
    /// that is down after a second (the default waits five for a restarting server).
    fn url(&self, db: &Database) -> String {
        format!(
            "postgres://{}:{}@127.0.0.1:{}/{}?sslmode=disable&connect_timeout=1",
            pg::SUPERUSER,
            pg::encode(pg::SUPERUSER_PASSWORD),
            self.port,
            db.name
        )
    }

    fn set_down(&self, down: bool) {
        self.down.store(down, Ordering::SeqCst);
    }
}

/// Copies `from` to `to` until either end closes.
fn pump(mut from: TcpStream, mut to: TcpStream) {
    std::thread::spawn(move || {
        let mut buf = vec![0; 64 * 1024];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 || to.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
}

/// A repository on the team ledger at `url` whose new slots run a setup command that starts a
/// git the returned [`GitPause`] holds.
fn with_setup(url: &str) -> (TestEnv, std::path::PathBuf, GitPause) {
    let (env, repo) = installed_on(url);
    env.git(
        &repo,
        &[
            "config",
            "hand.onCreate",
            "git log -1 --format=format:setup-step",
        ],
    );
    let pause = GitPause::new(&env, "setup", "setup-step");
    (env, repo, pause)
}

#[track_caller]
fn never_says_nothing_changed(run: &Run) {
    assert!(
        !run.stderr.contains("nothing was changed"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
}

#[test]
fn spawn_whose_backend_is_terminated_during_its_setup_command_activates_on_a_new_connection() {
    let db = pg::database();
    let (env, repo, pause) = with_setup(&db.tcp_url());

    let child = pause.start(&env, &repo, &["spawn", "t1"]);
    pause.wait_until_paused();
    assert_eq!(terminate_backends(&db), 1);
    pause.release();
    finish(child).ok();
    assert_eq!(task_state(&db), "active");
    env.hand(&repo, &["teardown", "t1"]).ok();
}

#[test]
fn spawn_cut_off_for_good_during_its_setup_says_the_slot_is_ready_and_spawns_after_doctor_repair() {
    let db = pg::database();
    let relay = Switch::new();
    let (env, repo, pause) = with_setup(&relay.url(&db));

    let child = pause.start(&env, &repo, &["spawn", "t1"]);
    pause.wait_until_paused();
    relay.set_down(true);
    assert_eq!(terminate_backends(&db), 1);
    pause.release();
    let run = finish(child).code(3);
    never_says_nothing_changed(&run);
    assert!(
        run.stderr.contains("was made ready for task t1")
            && run.stderr.contains("still recorded as spawning"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("git hand doctor --repair"),
        "{}",
        run.stderr
    );
    relay.set_down(false);
    assert_eq!(task_state(&db), "spawning");

    // As the error said: doctor settles the spawn, and the same spawn then succeeds, on the
    // branch the first one made.
    env.hand(&repo, &["doctor", "--repair"]).ok();
    let spawned = spawn(&env, &repo, "t1", &[]);
    assert_eq!(task_state(&db), "active");
    assert_eq!(
        env.git(&path_of(&spawned), &["branch", "--show-current"])
            .trim(),
        "hand/t1"
    );
}

/// Spawns t1 with an uncommitted change and a file git does not track in its slot, so that a
/// forced teardown runs every git step it has.
fn dirty_task(env: &TestEnv, repo: &Path) -> std::path::PathBuf {
    let slot = path_of(&spawn(env, repo, "t1", &[]));
    std::fs::write(slot.join("README.md"), "changed\n").unwrap();
    std::fs::write(slot.join("scratch.txt"), "scratch\n").unwrap();
    slot
}

#[test]
fn teardown_whose_backend_is_terminated_at_each_git_step_completes_on_a_new_connection() {
    for step in ["reset --hard", "clean -d", "switch --detach"] {
        let db = pg::database();
        let (env, repo) = installed_on(&db.tcp_url());
        let slot = dirty_task(&env, &repo);

        let pause = GitPause::new(&env, "teardown", step);
        let child = pause.start(&env, &repo, &["teardown", "t1", "--force"]);
        pause.wait_until_paused();
        assert_eq!(terminate_backends(&db), 1, "{step}");
        pause.release();
        finish(child).ok();
        assert_eq!(task_state(&db), "done", "{step}");
        assert!(!slot.join("scratch.txt").exists(), "{step}");
    }
}

#[test]
fn teardown_cut_off_for_good_at_each_git_step_says_what_it_did_and_the_same_teardown_resumes() {
    for (step, said) in [
        ("reset --hard", "after uncommitted changes were discarded"),
        ("clean -d", "after uncommitted changes were discarded"),
        (
            "switch --detach",
            "after the slot was detached from hand/t1",
        ),
    ] {
        let db = pg::database();
        let relay = Switch::new();
        let (env, repo) = installed_on(&relay.url(&db));
        let slot = dirty_task(&env, &repo);

        let pause = GitPause::new(&env, "teardown", step);
        let child = pause.start(&env, &repo, &["teardown", "t1", "--force"]);
        pause.wait_until_paused();
        relay.set_down(true);
        assert_eq!(terminate_backends(&db), 1, "{step}");
        pause.release();
        let run = finish(child).code(3);
        never_says_nothing_changed(&run);
        assert!(
            run.stderr.contains(said) && run.stderr.contains("left tearing-down"),
            "{step}: {}",
            run.stderr
        );
        assert!(
            run.stderr.contains("git hand teardown t1   # again"),
            "{step}: {}",
            run.stderr
        );
        relay.set_down(false);
        assert_eq!(task_state(&db), "tearing-down", "{step}");

        env.hand(&repo, &["teardown", "t1", "--force"]).ok();
        assert_eq!(task_state(&db), "done", "{step}");
        assert!(!slot.join("scratch.txt").exists(), "{step}");
    }
}

#[test]
fn spawn_cut_off_for_good_while_git_makes_its_slot_keeps_its_leases_and_spawns_after_doctor_repair()
{
    let db = pg::database();
    let relay = Switch::new();
    let (env, repo) = installed_on(&relay.url(&db));
    let pause = GitPause::new(&env, "create", "worktree add");

    let child = pause.start(&env, &repo, &["spawn", "t1"]);
    pause.wait_until_paused();
    relay.set_down(true);
    assert_eq!(terminate_backends(&db), 1);
    pause.release();
    let run = finish(child).code(1);
    never_says_nothing_changed(&run);
    assert!(
        run.stderr
            .contains("so task t1 keeps its leases until doctor settles it"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("free"), "{}", run.stderr);
    relay.set_down(false);
    assert_eq!(task_state(&db), "spawning");

    env.hand(&repo, &["doctor", "--repair"]).ok();
    spawn(&env, &repo, "t1", &[]);
    assert_eq!(task_state(&db), "active");
}
