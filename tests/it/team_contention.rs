//! The team ledger when connections drop and machines contend (issue 14, item 5 and its Tests):
//! a connection that breaks is retried only where re-running cannot change the outcome
//! (release, renew, an acquire by the same holder) and never grants twice (a release whose
//! answer was lost is still a release when another machine acquired before the retry); every
//! other write fails with exit 3 saying what may have happened; and 2 × 8 processes on two
//! "machines" contend for one issue, then for one task.
//!
//! Connections are broken for real: `pg_terminate_backend` between two operations, and a TCP
//! relay ([`Cutter`]) between git-hand and the server that cuts one connection at an exact
//! point of the protocol (before a write reaches the server, or after the server committed it
//! and before its answer reaches git-hand). The library has no hook for this.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use git_hand::ledger::server::ServerUrl;
use git_hand::ledger::{
    Acquire, By, Durability, Fate, Idempotent, Ledger, LedgerError, Release, Renew, Resource, Retry,
};

use crate::pg::{self, Database};
use crate::support::{Run, TestEnv, finish, installed_on, killed_after};

fn issue(n: &str) -> Resource {
    Resource::issue("github.com/o/r", n)
}

fn open(url: &str) -> Ledger {
    Ledger::open_creating(ServerUrl::parse(url).unwrap()).unwrap()
}

/// Terminates every git-hand backend of `db` (as the brief's SQL, waiting until each is gone)
/// and returns how many there were.
fn terminate_backends(db: &Database) -> usize {
    let out = db.psql(
        "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity \
         WHERE application_name = 'git-hand' AND datname = current_database() \
         AND pid <> pg_backend_pid()",
    );
    out.lines().filter(|l| *l == "t").count()
}

/// The issue's tenures as `token:holder:ended?`, oldest first.
fn tenures(db: &Database) -> Vec<String> {
    let out = db.psql(
        "SELECT t.token || ':' || t.holder || ':' || (t.ended_at IS NOT NULL) \
         FROM tenures t JOIN resources r ON r.id = t.resource_id \
         WHERE r.kind = 'issue' ORDER BY t.token",
    );
    out.lines().map(str::to_string).collect()
}

// ---------------------------------------------------------------------------------------------
// A relay that cuts a connection where it is told to.

/// Where [`Cutter`] cuts the next connection that gets there (once).
#[derive(Debug, Clone, Copy)]
enum Cut {
    /// Instead of forwarding the client's message that contains this text: the statement never
    /// reaches the server.
    Before(&'static str),
    /// After forwarding the `COMMIT` of the transaction that sent this text: the server
    /// commits, and its answer never reaches the client.
    AnswerToCommitAfter(&'static str),
}

/// The simple-protocol `COMMIT` the client library sends to commit a transaction.
const COMMIT: &[u8] = b"Q\0\0\0\x0bCOMMIT\0";

/// What the relay runs once the server has answered a `COMMIT` it cuts the answer of, before
/// the client can see the cut: another machine acting between the commit and the retry.
type Meanwhile = Box<dyn FnOnce() + Send>;

/// A TCP relay to the shared cluster on 127.0.0.1 that cuts one connection at a [`Cut`].
struct Cutter {
    port: u16,
    plan: Arc<Mutex<Option<Cut>>>,
    meanwhile: Arc<Mutex<Option<Meanwhile>>>,
    cuts: Arc<AtomicUsize>,
}

impl Cutter {
    fn new() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let plan: Arc<Mutex<Option<Cut>>> = Arc::default();
        let meanwhile: Arc<Mutex<Option<Meanwhile>>> = Arc::default();
        let cuts: Arc<AtomicUsize> = Arc::default();
        let (p, m, c) = (plan.clone(), meanwhile.clone(), cuts.clone());
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let server = TcpStream::connect(("127.0.0.1", pg::cluster().port)).unwrap();
                relay(client, server, p.clone(), m.clone(), c.clone());
            }
        });
        Self {
            port,
            plan,
            meanwhile,
            cuts,
        }
    }

    /// The superuser's URL for `db` through this relay (no TLS: the relay reads the protocol).
    fn url(&self, db: &Database) -> String {
        format!(
            "postgres://{}:{}@127.0.0.1:{}/{}?sslmode=disable",
            pg::SUPERUSER,
            pg::encode(pg::SUPERUSER_PASSWORD),
            self.port,
            db.name
        )
    }

    fn arm(&self, cut: Cut) {
        *self.plan.lock().unwrap() = Some(cut);
    }

    /// Arms `cut` (an [`Cut::AnswerToCommitAfter`]) and runs `meanwhile` once the server has
    /// committed, before the client learns that the connection is cut: whatever the client
    /// does next (a retry) comes after it.
    fn arm_with(&self, cut: Cut, meanwhile: impl FnOnce() + Send + 'static) {
        *self.meanwhile.lock().unwrap() = Some(Box::new(meanwhile));
        self.arm(cut);
    }

    /// How many connections it has cut.
    fn cuts(&self) -> usize {
        self.cuts.load(Ordering::SeqCst)
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Counts the cut first: the client may look at the count as soon as its socket closes.
fn cut(a: &TcpStream, b: &TcpStream, cuts: &AtomicUsize) {
    cuts.fetch_add(1, Ordering::SeqCst);
    let _ = a.shutdown(Shutdown::Both);
    let _ = b.shutdown(Shutdown::Both);
}

/// Pumps both ways between `client` and `server`, cutting where `plan` says.
fn relay(
    client: TcpStream,
    server: TcpStream,
    plan: Arc<Mutex<Option<Cut>>>,
    meanwhile: Arc<Mutex<Option<Meanwhile>>>,
    cuts: Arc<AtomicUsize>,
) {
    // Set before the COMMIT is forwarded, so the server's next bytes are its answer to it.
    let swallow = Arc::new(AtomicBool::new(false));
    let (mut c_in, mut s_out) = (client.try_clone().unwrap(), server.try_clone().unwrap());
    let (c2, s2, cuts2, swallow2) = (
        client.try_clone().unwrap(),
        server,
        cuts.clone(),
        swallow.clone(),
    );
    std::thread::spawn(move || {
        let mut buf = vec![0; 64 * 1024];
        let mut commit_next = false;
        while let Ok(n) = c_in.read(&mut buf) {
            if n == 0 {
                break;
            }
            let chunk = &buf[..n];
            {
                let mut plan = plan.lock().unwrap();
                match *plan {
                    Some(Cut::Before(text)) if contains(chunk, text.as_bytes()) => {
                        *plan = None;
                        cut(&c_in, &s_out, &cuts);
                        return;
                    }
                    Some(Cut::AnswerToCommitAfter(text)) if contains(chunk, text.as_bytes()) => {
                        *plan = None;
                        commit_next = true;
                    }
                    _ => {}
                }
            }
            if commit_next && contains(chunk, COMMIT) {
                swallow.store(true, Ordering::SeqCst);
            }
            if s_out.write_all(chunk).is_err() {
                break;
            }
        }
        let _ = s_out.shutdown(Shutdown::Write);
    });
    std::thread::spawn(move || {
        let (mut s_in, mut c_out) = (s2, c2);
        let mut buf = vec![0; 64 * 1024];
        while let Ok(n) = s_in.read(&mut buf) {
            if n == 0 {
                break;
            }
            if swallow2.load(Ordering::SeqCst) {
                // The server has committed; its answer is dropped with the connection, after
                // what the test runs in between (the client still waits for the answer).
                if let Some(f) = meanwhile.lock().unwrap().take() {
                    f();
                }
                cut(&s_in, &c_out, &cuts2);
                return;
            }
            if c_out.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = c_out.shutdown(Shutdown::Write);
    });
}

// ---------------------------------------------------------------------------------------------
// The library.

#[test]
fn release_renew_acquire_and_read_after_a_terminated_backend_run_on_a_new_connection() {
    let db = pg::database();
    let mut ledger = open(&db.url());
    let res = issue("42");
    let acquire = |ledger: &mut Ledger, holder: &str| {
        ledger
            .write_with(
                Durability::Durable,
                Retry::Once(Idempotent::AcquireBySameHolder),
                |tx| tx.acquire(&res, holder, Some(60_000)),
            )
            .map(|(out, _)| out)
            .unwrap()
    };
    let Acquire::Acquired { tenure, .. } = acquire(&mut ledger, "alice") else {
        panic!("not acquired")
    };

    assert_eq!(terminate_backends(&db), 1);
    let renewed = ledger
        .write_with(Durability::Durable, Retry::Once(Idempotent::Renew), |tx| {
            tx.renew(&res, By::Holder("alice"), None)
        })
        .map(|(out, _)| out)
        .unwrap();
    assert!(
        matches!(renewed, Renew::Renewed(ref t) if t.lease_id == tenure.lease_id),
        "{renewed:?}"
    );

    assert_eq!(terminate_backends(&db), 1);
    let current = ledger.read(|v| v.current(&res)).unwrap();
    assert_eq!(current.map(|t| t.token), Some(1));

    assert_eq!(terminate_backends(&db), 1);
    let released = ledger
        .write_with(
            Durability::Durable,
            Retry::Once(Idempotent::Release),
            |tx| tx.release(&res, By::Lease(&tenure.lease_id)),
        )
        .map(|(out, _)| out)
        .unwrap();
    assert!(
        matches!(released, Release::Released(Some(_))),
        "{released:?}"
    );

    assert_eq!(terminate_backends(&db), 1);
    let Acquire::Acquired { tenure, fresh, .. } = acquire(&mut ledger, "bob") else {
        panic!("not acquired")
    };
    assert_eq!((tenure.token, fresh), (2, true));
    assert_eq!(tenures(&db), ["1:alice:true", "2:bob:false"]);
}

#[test]
fn a_write_not_declared_idempotent_fails_after_a_terminated_backend_and_changes_nothing() {
    let db = pg::database();
    let mut ledger = open(&db.url());
    let res = issue("7");
    ledger.read(|v| v.current(&res)).unwrap();

    assert_eq!(terminate_backends(&db), 1);
    let err = ledger
        .write(|tx| tx.acquire(&res, "alice", None))
        .unwrap_err();
    let LedgerError::ConnectionLost(lost) = &err else {
        panic!("not a lost connection: {err:?}")
    };
    assert_eq!(lost.fate, Fate::NothingWritten);
    assert!(err.to_string().contains("nothing was changed"), "{err}");
    assert!(tenures(&db).is_empty(), "{:?}", tenures(&db));

    // The broken connection is replaced before the next operation sends anything.
    let again = ledger.write(|tx| tx.acquire(&res, "alice", None)).unwrap();
    assert!(
        matches!(again, Acquire::Acquired { fresh: true, .. }),
        "{again:?}"
    );
    assert_eq!(tenures(&db), ["1:alice:false"]);
}

#[test]
fn an_acquire_whose_commit_landed_but_whose_answer_was_lost_returns_the_same_lease_and_token() {
    let db = pg::database();
    let relay = Cutter::new();
    let mut ledger = open(&relay.url(&db));
    let res = issue("42");

    relay.arm(Cut::AnswerToCommitAfter("UPDATE clock"));
    let got = ledger
        .write_with(
            Durability::Durable,
            Retry::Once(Idempotent::AcquireBySameHolder),
            |tx| tx.acquire(&res, "alice", None),
        )
        .map(|(out, _)| out)
        .unwrap();
    assert_eq!(relay.cuts(), 1, "the relay did not cut the connection");
    let Acquire::Acquired { tenure, fresh, .. } = got else {
        panic!("not acquired: {got:?}")
    };
    // The retry found the first run's tenure: the same lease, the same token, not fresh.
    assert_eq!((tenure.token, fresh), (1, false));
    let stored = db.psql("SELECT lease_id FROM tenures");
    assert_eq!(stored, tenure.lease_id.to_string());
    assert_eq!(tenures(&db), ["1:alice:false"]);
    let acquired = db.psql("SELECT count(*) FROM events WHERE kind = 'acquired'");
    assert_eq!(acquired, "1", "one acquisition, one token");
}

#[test]
fn a_release_whose_answer_was_lost_is_a_release_though_another_machine_acquired_before_the_retry() {
    let db = pg::database();
    let relay = Cutter::new();
    let mut laptop = open(&relay.url(&db)).on_machine("laptop");
    let res = issue("42");
    let Acquire::Acquired { tenure, .. } =
        laptop.write(|tx| tx.acquire(&res, "alice", None)).unwrap()
    else {
        panic!("not acquired")
    };

    // Between alice's committed release and its retry, bob (another machine, on a connection
    // of its own) acquires the issue.
    let (url, taken) = (db.url(), res.clone());
    relay.arm_with(Cut::AnswerToCommitAfter("UPDATE clock"), move || {
        let mut runner = open(&url).on_machine("runner");
        let got = runner.write(|tx| tx.acquire(&taken, "bob", None)).unwrap();
        assert!(
            matches!(got, Acquire::Acquired { fresh: true, .. }),
            "{got:?}"
        );
    });
    let released = laptop
        .write_with(
            Durability::Durable,
            Retry::Once(Idempotent::Release),
            |tx| tx.release(&res, By::Lease(&tenure.lease_id)),
        )
        .map(|(out, _)| out)
        .unwrap();
    assert_eq!(relay.cuts(), 1, "the relay did not cut the connection");
    // What the first run did: alice's tenure, ended as released; not bob's refusal.
    let Release::Released(Some(ended)) = released else {
        panic!("not released: {released:?}")
    };
    assert_eq!(ended.lease_id, tenure.lease_id);
    assert_eq!(ended.end_reason.as_deref(), Some("released"));
    assert_eq!(tenures(&db), ["1:alice:true", "2:bob:false"]);
    assert_eq!(
        db.psql("SELECT count(*) FROM events WHERE kind = 'refused'"),
        "0",
        "the retry logged a refusal"
    );
}

#[test]
fn a_write_whose_answer_was_lost_is_not_retried_and_says_it_may_have_happened() {
    let db = pg::database();
    let relay = Cutter::new();
    let mut ledger = open(&relay.url(&db));
    let res = issue("42");

    relay.arm(Cut::AnswerToCommitAfter("UPDATE clock"));
    let err = ledger
        .write(|tx| tx.acquire(&res, "alice", None))
        .unwrap_err();
    assert_eq!(relay.cuts(), 1);
    let LedgerError::ConnectionLost(lost) = &err else {
        panic!("not a lost connection: {err:?}")
    };
    assert_eq!(lost.fate, Fate::Unknown);
    assert!(err.to_string().contains("may or may not"), "{err}");
    // It did happen: that is why it must not run again blindly.
    assert_eq!(tenures(&db), ["1:alice:false"]);
}

// ---------------------------------------------------------------------------------------------
// Through the binary.

#[test]
fn lease_verbs_cut_off_before_their_write_reach_the_server_on_a_new_connection() {
    let db = pg::database();
    let relay = Cutter::new();
    let (env, repo) = installed_on(&relay.url(&db));
    let before = relay.cuts();

    relay.arm(Cut::Before("UPDATE clock"));
    let got = env
        .hand(
            &repo,
            &["lease", "acquire", "42", "--holder", "alice", "--json"],
        )
        .ok();
    assert_eq!(relay.cuts(), before + 1, "the relay did not cut");
    let got: serde_json::Value = serde_json::from_str(&got).unwrap();
    assert_eq!(
        (got["token"].as_i64(), got["fresh"].as_bool()),
        (Some(1), Some(true))
    );

    relay.arm(Cut::Before("UPDATE clock"));
    env.hand(&repo, &["lease", "renew", "42", "--holder", "alice"])
        .ok();
    assert_eq!(relay.cuts(), before + 2);

    relay.arm(Cut::Before("UPDATE clock"));
    env.hand(&repo, &["lease", "release", "42", "--holder", "alice"])
        .ok();
    assert_eq!(relay.cuts(), before + 3);
    assert_eq!(tenures(&db), ["1:alice:true"]);
}

#[test]
fn lease_acquire_whose_answer_was_lost_prints_the_lease_it_got_and_no_second_token() {
    let db = pg::database();
    let relay = Cutter::new();
    let (env, repo) = installed_on(&relay.url(&db));

    relay.arm(Cut::AnswerToCommitAfter("UPDATE clock"));
    let run = env
        .hand(
            &repo,
            &["lease", "acquire", "42", "--holder", "alice", "--json"],
        )
        .code(0);
    assert_eq!(relay.cuts(), 1, "the relay did not cut");
    let got = run.json();
    assert_eq!(got["token"], 1);
    assert_eq!(
        got["lease_id"].as_str().unwrap(),
        db.psql("SELECT lease_id FROM tenures")
    );
    assert_eq!(tenures(&db), ["1:alice:false"]);
}

#[test]
fn lease_release_whose_answer_was_lost_says_released_though_another_holder_acquired_meanwhile() {
    let db = pg::database();
    let relay = Cutter::new();
    let (env, repo) = installed_on(&relay.url(&db));
    let acquired = env
        .hand(
            &repo,
            &["lease", "acquire", "42", "--holder", "alice", "--json"],
        )
        .json();
    let lease = acquired["lease_id"].as_str().unwrap().to_string();
    let key = db.psql("SELECT key FROM resources WHERE kind = 'issue'");
    let (namespace, n) = key.rsplit_once('#').unwrap();
    let res = Resource::issue(namespace, n);

    // Between the committed release and its retry, bob acquires the issue on another machine.
    let url = db.url();
    relay.arm_with(Cut::AnswerToCommitAfter("UPDATE clock"), move || {
        let mut runner = open(&url).on_machine("runner");
        runner.write(|tx| tx.acquire(&res, "bob", None)).unwrap();
    });
    let run = env
        .hand(
            &repo,
            &["lease", "release", "42", "--lease", &lease, "--json"],
        )
        .code(0);
    assert_eq!(relay.cuts(), 1, "the relay did not cut");
    let released = run.json();
    assert_eq!(released["outcome"], "released", "{released}");
    assert_eq!(
        released["lease_id"].as_str(),
        Some(lease.as_str()),
        "{released}"
    );
    assert_eq!(released["holder"], "alice", "{released}");
    assert_eq!(tenures(&db), ["1:alice:true", "2:bob:false"]);
}

#[test]
fn spawn_whose_intent_answer_was_lost_fails_with_exit_3_naming_where_to_look() {
    let db = pg::database();
    let relay = Cutter::new();
    let (env, repo) = installed_on(&relay.url(&db));

    relay.arm(Cut::AnswerToCommitAfter("INSERT INTO tasks"));
    let run = env.hand(&repo, &["spawn", "t1"]).code(3);
    assert_eq!(relay.cuts(), 1, "the relay did not cut");
    assert!(
        run.stderr.contains("may or may not have been recorded"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("git hand list"), "{}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
}

#[test]
fn spawn_cut_off_as_it_records_preparing_a_claimed_free_slot_goes_on_on_a_new_connection() {
    let db = pg::database();
    let relay = Cutter::new();
    let (env, repo) = installed_on(&relay.url(&db));
    env.hand(&repo, &["spawn", "t1"]).ok();
    env.hand(&repo, &["teardown", "t1"]).ok();

    // The free slot is claimed, proven safe, then `preparing` is recorded: cut there (issue 22).
    relay.arm(Cut::Before("UPDATE tasks SET step"));
    env.hand(&repo, &["spawn", "t2"]).ok();
    assert_eq!(relay.cuts(), 1, "the relay did not cut");
    assert_eq!(
        db.psql("SELECT name || ':' || state FROM tasks ORDER BY id"),
        "t1:done\nt2:active"
    );
}

// ---------------------------------------------------------------------------------------------
// 2 × 8 processes contend.

/// Two "machines" on the team ledger at `url`: two HOMEs, two clones of one origin.
fn two_machines(url: &str) -> [(TestEnv, PathBuf); 2] {
    let (laptop, repo) = installed_on(url);
    let runner = TestEnv::on_team_ledger(url);
    let origin = laptop.path("work/app-origin.git");
    let work = runner.path("work");
    runner.git(&work, &["clone", "-q", origin.to_str().unwrap(), "app"]);
    let clone = work.join("app");
    runner.hand(&clone, &["install"]).ok();
    [(laptop, repo), (runner, clone)]
}

/// `git hand <args>` in `dir`, started now but held until its stdin closes (the start signal,
/// see [`go`]); killed after the harness's timeout.
fn held(env: &TestEnv, dir: &Path, args: &[String]) -> Child {
    let mut cmd: Command = killed_after(
        |killer| {
            let mut sh = env.command("sh", dir);
            sh.args(["-c", "read _ignored; exec \"$@\"", "sh", killer]);
            sh
        },
        "120",
    );
    cmd.arg(env!("CARGO_BIN_EXE_git-hand"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd.spawn().unwrap()
}

/// Lets every held process go at once (closing their stdin), and waits for all.
fn go(mut children: Vec<Child>) -> Vec<Run> {
    for child in &mut children {
        drop(child.stdin.take());
    }
    children.into_iter().map(finish).collect()
}

/// 16 processes, 8 per machine, each `git hand` with `args(machine, i)`, started together.
fn sixteen(
    machines: &[(TestEnv, PathBuf); 2],
    args: impl Fn(usize, usize) -> Vec<String>,
) -> Vec<Run> {
    let mut children = vec![];
    for (m, (env, dir)) in machines.iter().enumerate() {
        for i in 0..8 {
            children.push(held(env, dir, &args(m, i)));
        }
    }
    go(children)
}

#[test]
fn sixteen_acquires_on_two_machines_grant_token_1_once_and_refuse_fifteen_naming_the_holder() {
    let db = pg::database();
    let machines = two_machines(&db.tcp_url());
    let runs = sixteen(&machines, |m, i| {
        [
            "lease",
            "acquire",
            "42",
            "--holder",
            &format!("m{m}-p{i}"),
            "--json",
        ]
        .map(String::from)
        .to_vec()
    });

    let granted: Vec<&Run> = runs.iter().filter(|r| r.code == 0).collect();
    assert_eq!(granted.len(), 1, "{runs:#?}");
    let winner = granted[0].json();
    assert_eq!(winner["token"], 1);
    let holder = winner["holder"].as_str().unwrap();
    for run in runs.iter().filter(|r| r.code != 0) {
        assert_eq!(run.code, 3, "{run:#?}");
        let refused = run.json();
        assert_eq!(refused["outcome"], "held", "{run:#?}");
        assert_eq!(refused["holder"], holder, "{run:#?}");
    }
    assert_eq!(tenures(&db), [format!("1:{holder}:false")]);
    assert_eq!(
        db.psql("SELECT count(*) FROM events WHERE kind = 'refused'"),
        "15"
    );
}

#[test]
fn sixteen_spawns_of_one_task_for_one_issue_on_two_machines_leave_one_live_task_and_nothing_half_made()
 {
    let db = pg::database();
    let machines = two_machines(&db.tcp_url());
    // A holder each: the same holder spawning the same task again is given that task back.
    let runs = sixteen(&machines, |m, i| {
        let holder = format!("m{m}-p{i}");
        [
            "spawn", "fix-42", "--issue", "42", "--holder", &holder, "--json",
        ]
        .map(String::from)
        .to_vec()
    });

    let spawned: Vec<&Run> = runs.iter().filter(|r| r.code == 0).collect();
    assert_eq!(spawned.len(), 1, "{runs:#?}");
    for run in runs.iter().filter(|r| r.code != 0) {
        assert_eq!(run.code, 3, "{run:#?}");
        assert!(!run.stderr.contains("panicked"), "{run:#?}");
    }
    // One task, live; no row of a spawn that lost; held tenures: its slot and its issue.
    assert_eq!(
        db.psql("SELECT name || ':' || state FROM tasks"),
        "fix-42:active"
    );
    let held = db.psql(
        "SELECT r.kind || ':' || t.token FROM tenures t JOIN resources r ON r.id = t.resource_id \
         WHERE t.ended_at IS NULL ORDER BY r.kind",
    );
    assert_eq!(held, "issue:1\nworktree:1");
    let mut listed = 0;
    for (env, dir) in &machines {
        let list = env.hand(dir, &["list", "--json"]).ok();
        let list: serde_json::Value = serde_json::from_str(&list).unwrap();
        listed += list["tasks"].as_array().map_or(0, Vec::len);
        env.hand(dir, &["doctor"]).ok();
    }
    assert_eq!(listed, 1);
}
