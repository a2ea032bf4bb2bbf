//! A team ledger server that is frozen, not gone: every server process stopped (`SIGSTOP`), so
//! the kernel still completes TCP handshakes, acknowledges data and queues unix-socket
//! connections, and nothing ever answers. Keepalives and `tcp_user_timeout` never fire (the
//! link is fine) and the server's `statement_timeout` cannot (it is not running); only the
//! client's deadline on each wait for an answer (`read_timeout`, docs/team.md) ends a verb
//! that had connected. Before it, each of these waited forever.
//!
//! The server is frozen after git-hand connected: in the middle of a transaction at the library
//! level, at a paused git command through the binary, and between the connection's startup and
//! the schema check that opens a ledger ([`FreezeAt`], a relay that freezes the server before it
//! forwards that statement). A [`Thaw`] resumes every server process when it is dropped, so a
//! failing test never leaves a stopped server behind.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use git_hand::ledger::server::ServerUrl;
use git_hand::ledger::{Fate, Ledger, LedgerError, Resource};

use crate::pg::{self, Cluster, Database};
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
/// waiting after [`HUNG`]; either way the server's processes are resumed before it returns (the
/// scope's thaw), so a test needs no thaw of its own.
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
    Ledger::open_creating(ServerUrl::parse(url).unwrap()).unwrap()
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
    let (env, repo) = crate::support::installed_on(&url);
    let slot = path_of(&spawn(&env, &repo, "t1", &[]));

    let pause = GitPause::new(&env, "detach", "switch --detach");
    let child = pause.start(&env, &repo, &["teardown", "t1"]);
    let run = bounded(&cluster, || {
        pause.wait_until_paused();
        freeze(&cluster);
        pause.release();
        finish(child)
    });
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
    // The slot was detached before the server froze: the error says so (issue 22).
    assert!(
        run.stderr
            .contains("after the slot was detached from hand/t1")
            && !run.stderr.contains("nothing was changed"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);

    // Thawed, the same teardown completes.
    env.hand(&repo, &["teardown", "t1"]).ok();
    assert_eq!(db.psql("SELECT state FROM tasks"), "done");
    assert!(slot.exists());
}

/// A TCP relay to a private cluster that freezes the whole server before it forwards the first
/// client message containing a text, then forwards it: the connection's startup went through,
/// and the statement waits in a frozen server's socket. Freezing from outside could not be
/// timed between the startup and the first statement (the server answers in microseconds);
/// freezing before the verb starts ends it at the connect timeout instead, as an unreachable
/// server (tests/it/team_connect.rs).
struct FreezeAt {
    port: u16,
}

impl FreezeAt {
    /// Relays every connection to `cluster` on 127.0.0.1; the first one freezes the server at
    /// its first message containing `text` (one freeze, however many connections a verb makes).
    fn new(cluster: &Cluster, text: &'static str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server_port = cluster.port;
        let postmaster = cluster.pid().expect("the cluster's server runs");
        std::thread::spawn(move || {
            let mut first = true;
            for client in listener.incoming().flatten() {
                let server = TcpStream::connect(("127.0.0.1", server_port)).unwrap();
                let (c_in, s_out) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                let freeze = first.then_some((text, postmaster));
                first = false;
                std::thread::spawn(move || pump(c_in, s_out, freeze));
                std::thread::spawn(move || pump(server, client, None));
            }
        });
        Self { port }
    }

    /// The superuser's URL for `db` through the relay (no TLS: the relay reads the protocol),
    /// with the short deadlines.
    fn url(&self, db: &Database) -> String {
        format!(
            "postgres://{}:{}@127.0.0.1:{}/{}?sslmode=disable&{SHORT}",
            pg::SUPERUSER,
            pg::encode(pg::SUPERUSER_PASSWORD),
            self.port,
            db.name
        )
    }
}

/// Copies `from` to `to`; with `freeze` (a text and the postmaster), stops the server before
/// forwarding the first chunk that contains the text.
fn pump(mut from: TcpStream, mut to: TcpStream, mut freeze: Option<(&str, u32)>) {
    let mut buf = vec![0; 64 * 1024];
    while let Ok(n) = from.read(&mut buf) {
        if n == 0 {
            break;
        }
        let chunk = &buf[..n];
        if let Some((text, postmaster)) = freeze
            && chunk.windows(text.len()).any(|w| w == text.as_bytes())
        {
            freeze = None;
            // The postmaster's children: every backend and worker.
            let mut pids: Vec<u32> = crate::processes::children_of(postmaster)
                .into_iter()
                .map(|c| c.pid)
                .collect();
            pids.push(postmaster);
            assert!(signal("STOP", &pids) > 0, "no server process to stop");
        }
        if to.write_all(chunk).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

/// Runs `args` on a team ledger whose server freezes once the connection is made, before the
/// schema check that opens the ledger (a fresh database: nothing else runs first).
fn frozen_at_opening(args: &[&str]) -> (crate::support::Run, Database, u16) {
    frozen_at("ledger_meta", args)
}

/// Runs `args` on a team ledger whose server freezes before its first statement containing
/// `text` (on the verb's first connection).
fn frozen_at(text: &'static str, args: &[&str]) -> (crate::support::Run, Database, u16) {
    let cluster = pg::private_cluster();
    let db = cluster.database();
    let relay = FreezeAt::new(&cluster, text);
    let env = TestEnv::on_team_ledger(&relay.url(&db));
    let repo = env.repo("app");
    let run = bounded(&cluster, || env.hand(&repo, args));
    (run, db, relay.port)
}

#[test]
fn a_verb_whose_server_freezes_while_the_ledger_opens_fails_with_exit_3_as_a_lost_connection() {
    // `list` only reads (the schema check of `Ledger::open` with `Mode::Read`); `lease acquire` writes (the
    // migration's version check of `open`).
    for args in [&["list"][..], &["lease", "acquire", "42"]] {
        let (run, db, port) = frozen_at_opening(args);
        let run = run.code(3);
        assert!(
            run.stderr
                .contains("the connection to the team ledger at postgres://"),
            "{args:?}: {}",
            run.stderr
        );
        assert!(
            run.stderr
                .contains(&format!("127.0.0.1:{port}/{}", db.name)),
            "{args:?}: {}",
            run.stderr
        );
        assert!(
            run.stderr.contains("no answer within 2 s (read_timeout)"),
            "{args:?}: {}",
            run.stderr
        );
        assert!(
            run.stderr.contains("nothing was changed"),
            "{args:?}: {}",
            run.stderr
        );
        assert!(
            !run.stderr.contains(pg::SUPERUSER_PASSWORD),
            "{}",
            run.stderr
        );
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    }
}

/// doctor's first line on a team ledger is this machine's clock against the server's, read by
/// a statement of its own: a server that freezes there is a lost connection too (exit 3, as
/// every other wait), not a failure (exit 1) that reads as a fault of the ledger.
#[test]
fn doctor_whose_server_freezes_as_it_reads_the_servers_clock_fails_with_exit_3_as_a_lost_connection()
 {
    let (run, db, port) = frozen_at("SELECT hand_now()", &["doctor"]);
    let run = run.code(3);
    assert!(
        run.stderr
            .contains("the connection to the team ledger at postgres://"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains(&format!("127.0.0.1:{port}/{}", db.name)),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("no answer within 2 s (read_timeout)"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("nothing was changed"), "{}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
}
