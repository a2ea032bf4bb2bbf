//! A team ledger server that is frozen, not gone: every server process stopped (`SIGSTOP`), so
//! the kernel still completes TCP handshakes, acknowledges data and queues unix-socket
//! connections, and nothing ever answers. Keepalives and `tcp_user_timeout` never fire (the
//! link is fine) and the server's `statement_timeout` cannot (it is not running); only the
//! client's deadline on each wait for an answer (`read_timeout`, docs/team.md) ends a verb
//! that had connected. Before it, each of these waited forever.
//!
//! The server is frozen after git-hand connected: in the middle of a transaction at the library
//! level, and at a paused git command through the binary. A [`Thaw`] resumes every server
//! process when it is dropped, so a failing test never leaves a stopped server behind.

use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use git_hand::ledger::server::ServerUrl;
use git_hand::ledger::{Fate, Ledger, LedgerError, Resource};

use crate::pg::{self, Cluster};
use crate::support::{GitPause, TestEnv, finish, path_of, spawn};

/// What each URL here adds: a short deadline for an answer, and for connecting again.
const SHORT: &str = "read_timeout=2&connect_timeout=2";

/// Longer than any deadline here can take (a read, then a reconnection, each a few seconds):
/// a verb still waiting then is waiting forever.
const HUNG: Duration = Duration::from_secs(60);

/// Sends `signal` to each of `pids` and returns how many got it: one may have exited since it
/// was listed (a backend whose connection was dropped), which is no error.
fn signal(signal: &str, pids: &[u32]) -> usize {
    pids.iter()
        .filter(|pid| {
            Command::new("kill")
                .arg(format!("-{signal}"))
                .arg(pid.to_string())
                .stderr(std::process::Stdio::null())
                .status()
                .unwrap()
                .success()
        })
        .count()
}

/// Stops every process of `cluster`'s server: the postmaster and its children, the backends of
/// connections already made among them.
fn freeze(cluster: &Cluster) {
    let stopped = signal("STOP", &cluster.server_processes());
    assert!(stopped > 0, "no server process to stop");
}

/// Resumes every process of the cluster's server when dropped, whatever the test did.
struct Thaw<'a>(&'a Cluster);

impl Drop for Thaw<'_> {
    fn drop(&mut self) {
        signal("CONT", &self.0.server_processes());
    }
}

fn with_short_deadline(url: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{SHORT}")
}

/// Runs `op` on a thread of its own and returns what it returned, or panics when it is still
/// waiting after [`HUNG`] (the scope's thaw then lets it finish).
fn bounded<T: Send>(cluster: &Cluster, op: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        let _thaw = Thaw(cluster);
        let (tx, rx) = mpsc::channel();
        s.spawn(move || {
            let _ = tx.send(op());
        });
        match rx.recv_timeout(HUNG) {
            Ok(out) => out,
            Err(_) => panic!("still waiting for a frozen server after {HUNG:?}"),
        }
    })
}

fn issue(n: &str) -> Resource {
    Resource::issue("github.com/o/r", n)
}

fn open(url: &str) -> Ledger {
    Ledger::open_team(&ServerUrl::parse(url).unwrap(), None).unwrap()
}

#[test]
fn a_read_from_a_frozen_server_fails_by_the_read_timeout_with_nothing_changed() {
    let cluster = pg::private_cluster();
    let db = cluster.database();
    for url in [db.url(), db.tcp_url()] {
        let url = with_short_deadline(&url);
        let got = bounded(&cluster, || {
            let mut ledger = open(&url);
            let out = ledger.read(|v| {
                freeze(&cluster);
                v.held(&issue("1"))
            });
            out.map(|held| held.is_some())
        });
        signal("CONT", &cluster.server_processes());
        let Err(LedgerError::ConnectionLost(lost)) = got else {
            panic!("not a lost connection: {got:?}");
        };
        assert_eq!(lost.fate, Fate::NothingWritten);
        let e = LedgerError::ConnectionLost(lost).to_string();
        assert!(e.contains("no answer within 2 s (read_timeout)"), "{e}");
        assert!(e.contains(&format!("/{}", db.name)), "{e}");
        assert!(e.contains("nothing was changed"), "{e}");
    }
}

#[test]
fn a_write_whose_commit_meets_a_frozen_server_says_it_may_have_been_recorded() {
    let cluster = pg::private_cluster();
    let db = cluster.database();
    let url = with_short_deadline(&db.tcp_url());
    let got = bounded(&cluster, || {
        let mut ledger = open(&url);
        // Frozen once the transaction's statements ran: only its COMMIT meets the frozen server.
        ledger.write(|tx| {
            let got = tx.acquire(&issue("7"), "alice", None)?;
            freeze(&cluster);
            Ok(matches!(got, git_hand::ledger::Acquire::Acquired { .. }))
        })
    });
    signal("CONT", &cluster.server_processes());
    let Err(LedgerError::ConnectionLost(lost)) = got else {
        panic!("not a lost connection: {got:?}");
    };
    assert_eq!(lost.fate, Fate::Unknown);
    let e = LedgerError::ConnectionLost(lost).to_string();
    assert!(e.contains("no answer within 2 s (read_timeout)"), "{e}");
    assert!(e.contains("may or may not have been recorded"), "{e}");
}

#[test]
fn teardown_on_a_server_frozen_after_it_connected_fails_with_exit_3_naming_the_ledger() {
    let cluster = pg::private_cluster();
    let db = cluster.database();
    let url = with_short_deadline(&db.tcp_url());
    let env = TestEnv::on_team_ledger(&url);
    let repo = env.repo("app");
    env.hand(&repo, &["install"]).ok();
    let slot = path_of(&spawn(&env, &repo, "t1", &[]));

    let pause = GitPause::new(&env, "detach", "switch --detach");
    let child = pause.start(&env, &repo, &["teardown", "t1"]);
    let run = bounded(&cluster, || {
        pause.wait_until_paused();
        freeze(&cluster);
        pause.release();
        finish(child)
    });
    signal("CONT", &cluster.server_processes());
    let run = run.code(3);
    assert!(
        run.stderr.contains("no answer within 2 s (read_timeout)"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains(&format!("127.0.0.1:{}/{}", cluster.port, db.name)),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("nothing was changed"), "{}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);

    // Thawed, the same teardown completes.
    env.hand(&repo, &["teardown", "t1"]).ok();
    assert_eq!(db.psql("SELECT state FROM tasks"), "done");
    assert!(slot.exists());
}
