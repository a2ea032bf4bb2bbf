//! The lease engine against both backends, with an injected clock (DESIGN §3): every test here
//! runs once on a real SQLite file (`name::sqlite`) and once on a real PostgreSQL database of the
//! harness's private cluster (`name::postgres`), the same code and the same assertions.

use std::rc::Rc;

use git_hand::clock::ManualClock;
use git_hand::ledger::server::ServerUrl;
use git_hand::ledger::{Acquire, By, LeaseId, Ledger, Release, Renew, Resource, Tenure};

const T0: i64 = 1_795_949_785_000;
const MIN: i64 = 60_000;

struct Engine {
    clock: Rc<ManualClock>,
    ledger: Ledger,
    issue: Resource,
    /// The temporary directory or database the ledger lives in, kept until the test ends.
    _home: Box<dyn std::any::Any>,
}

#[derive(Debug, Clone, Copy)]
enum Backend {
    Sqlite,
    Postgres,
}

fn engine_on(backend: Backend) -> Engine {
    let clock = Rc::new(ManualClock::new(T0));
    let injected = Box::new(clock.clone());
    let (ledger, home): (Ledger, Box<dyn std::any::Any>) = match backend {
        Backend::Sqlite => {
            let dir = tempfile::tempdir().unwrap();
            let ledger = Ledger::open_creating(dir.path().join("ledger.sqlite"))
                .map(|l| l.with_clock(injected));
            (ledger.unwrap(), Box::new(dir))
        }
        Backend::Postgres => {
            let db = crate::pg::database();
            let url = ServerUrl::parse(&db.url()).unwrap();
            (
                Ledger::open_creating(&url)
                    .map(|l| l.with_clock(injected))
                    .unwrap(),
                Box::new(db),
            )
        }
    };
    Engine {
        clock,
        ledger,
        issue: Resource::issue("github.com/o/r", "42"),
        _home: home,
    }
}

/// Each test, once per backend: `name::sqlite` and `name::postgres`. The body calls `engine()`.
macro_rules! on_both_backends {
    ($(fn $name:ident() $body:block)*) => {$(
        mod $name {
            use super::*;

            #[test]
            fn sqlite() {
                fn engine() -> Engine {
                    engine_on(Backend::Sqlite)
                }
                $body
            }

            #[test]
            fn postgres() {
                fn engine() -> Engine {
                    engine_on(Backend::Postgres)
                }
                $body
            }
        }
    )*};
}

impl Engine {
    fn acquire(&mut self, holder: &str, ttl: Option<i64>) -> Acquire {
        let res = self.issue.clone();
        self.ledger
            .write(|tx| tx.acquire(&res, holder, ttl))
            .unwrap()
    }
    fn acquired(&mut self, holder: &str, ttl: Option<i64>) -> Tenure {
        match self.acquire(holder, ttl) {
            Acquire::Acquired { tenure, .. } => tenure,
            other => panic!("expected Acquired, got {other:?}"),
        }
    }
    fn renew(&mut self, by: By<'_>, ttl: Option<i64>) -> Renew {
        let res = self.issue.clone();
        self.ledger.write(|tx| tx.renew(&res, by, ttl)).unwrap()
    }
    fn release(&mut self, by: By<'_>) -> Release {
        let res = self.issue.clone();
        self.ledger.write(|tx| tx.release(&res, by)).unwrap()
    }
    fn current(&mut self) -> Option<Tenure> {
        let res = self.issue.clone();
        self.ledger.read(|v| v.current(&res)).unwrap()
    }
}

on_both_backends! {
fn acquire_free_issue_gets_token_1() {
    let mut e = engine();
    let t = e.acquired("alice", Some(30 * MIN));
    assert_eq!(t.token, 1);
    assert_eq!(t.holder, "alice");
    assert_eq!(t.expires_at, Some(T0 + 30 * MIN));
    assert!(git_hand::ids::is_lease_id(t.lease_id.as_str()));
}

fn acquire_held_by_other_returns_held() {
    let mut e = engine();
    let a = e.acquired("alice", Some(30 * MIN));
    match e.acquire("bob", Some(30 * MIN)) {
        Acquire::Held(held) => assert_eq!(held, a),
        other => panic!("expected Held, got {other:?}"),
    }
}

fn acquire_by_same_holder_is_idempotent_keeps_token_updates_expiry() {
    let mut e = engine();
    let first = e.acquired("alice", Some(30 * MIN));
    e.clock.advance(10 * MIN);
    let second = e.acquired("alice", Some(60 * MIN));
    assert_eq!(second.lease_id, first.lease_id);
    assert_eq!(second.token, first.token);
    assert_eq!(second.expires_at, Some(T0 + 10 * MIN + 60 * MIN));
    assert_eq!(e.current().unwrap().expires_at, second.expires_at);
}

fn acquire_after_expiry_takes_over_and_bumps_token() {
    let mut e = engine();
    let a = e.acquired("alice", Some(MIN));
    e.clock.advance(MIN);
    match e.acquire("bob", Some(MIN)) {
        Acquire::Acquired {
            tenure,
            fresh,
            superseded,
        } => {
            assert!(fresh);
            assert_eq!(tenure.token, 2);
            assert_ne!(tenure.lease_id, a.lease_id);
            let old = superseded.unwrap();
            assert_eq!(old.lease_id, a.lease_id);
            assert_eq!(old.end_reason.as_deref(), Some("expired-superseded"));
        }
        other => panic!("expected takeover, got {other:?}"),
    }
}

fn renew_extends_expiry_keeps_token() {
    let mut e = engine();
    let a = e.acquired("alice", Some(30 * MIN));
    e.clock.advance(20 * MIN);
    match e.renew(By::Holder("alice"), None) {
        Renew::Renewed(t) => {
            assert_eq!(
                (t.lease_id.as_str(), t.token),
                (a.lease_id.as_str(), a.token)
            );
            assert_eq!(
                t.expires_at,
                Some(T0 + 50 * MIN),
                "renewal reuses the granted TTL"
            );
        }
        other => panic!("expected Renewed, got {other:?}"),
    }
    match e.renew(By::Lease(&a.lease_id), Some(5 * MIN)) {
        Renew::Renewed(t) => assert_eq!(t.expires_at, Some(T0 + 25 * MIN)),
        other => panic!("expected Renewed, got {other:?}"),
    }
}

fn renew_by_non_holder_returns_not_holder() {
    let mut e = engine();
    let a = e.acquired("alice", Some(30 * MIN));
    assert_eq!(
        e.renew(By::Holder("bob"), None),
        Renew::NotHolder(Some(a.clone()))
    );
    assert_eq!(
        e.renew(By::Lease(&LeaseId::parse(&"0".repeat(32)).unwrap()), None),
        Renew::NotHolder(Some(a))
    );
}

fn renew_after_expiry_returns_not_holder() {
    let mut e = engine();
    let a = e.acquired("alice", Some(MIN));
    e.clock.advance(MIN + 1);
    assert_eq!(e.renew(By::Holder("alice"), None), Renew::NotHolder(None));
    assert_eq!(
        e.renew(By::Lease(&a.lease_id), None),
        Renew::NotHolder(None)
    );
    assert_eq!(e.current(), None, "renewal never revives an expired tenure");
    assert_eq!(
        e.acquired("alice", Some(MIN)).token,
        2,
        "the holder must acquire again"
    );
}

fn release_by_holder_frees_the_issue() {
    let mut e = engine();
    let a = e.acquired("alice", None);
    match e.release(By::Holder("alice")) {
        Release::Released(Some(t)) => {
            assert_eq!(t.lease_id, a.lease_id);
            assert_eq!(t.end_reason.as_deref(), Some("released"));
        }
        other => panic!("expected Released, got {other:?}"),
    }
    assert_eq!(e.current(), None);
}

fn release_idempotent_when_absent() {
    let mut e = engine();
    assert_eq!(e.release(By::Holder("alice")), Release::Released(None));
    let a = e.acquired("alice", None);
    e.release(By::Lease(&a.lease_id));
    assert_eq!(e.release(By::Lease(&a.lease_id)), Release::Released(None));
    assert_eq!(e.release(By::Holder("alice")), Release::Released(None));
}

fn release_by_non_holder_refused() {
    let mut e = engine();
    let a = e.acquired("alice", Some(30 * MIN));
    assert_eq!(e.release(By::Holder("bob")), Release::NotHolder(a.clone()));
    assert_eq!(e.current(), Some(a));
}

fn release_of_expired_lease_by_anyone_succeeds() {
    let mut e = engine();
    let a = e.acquired("alice", Some(MIN));
    e.clock.advance(2 * MIN);
    match e.release(By::Holder("bob")) {
        Release::Released(Some(t)) => {
            assert_eq!(t.lease_id, a.lease_id);
            assert_eq!(
                t.ended_at,
                Some(T0 + MIN),
                "an expired tenure ended at its expiry"
            );
        }
        other => panic!("expected Released, got {other:?}"),
    }
}

fn released_issue_is_free_to_anyone() {
    let mut e = engine();
    e.acquired("alice", None);
    e.release(By::Holder("alice"));
    let b = e.acquired("bob", None);
    assert_eq!((b.holder.as_str(), b.token), ("bob", 2));
}

fn list_shows_only_live_leases() {
    let mut e = engine();
    let res = |id: &str| Resource::issue("ns", id);
    e.ledger
        .write(|tx| {
            tx.acquire(&res("1"), "a", Some(MIN))?;
            tx.acquire(&res("2"), "a", None)?;
            tx.acquire(&res("3"), "a", None)?;
            tx.release(&res("3"), By::Holder("a"))?;
            Ok(())
        })
        .unwrap();
    e.clock.advance(MIN);
    let live = e
        .ledger
        .read(|v| v.list(git_hand::ledger::ResourceKind::Issue, "ns#"))
        .unwrap();
    let keys: Vec<_> = live.iter().map(|t| t.resource.key.as_str()).collect();
    assert_eq!(keys, ["ns#2"]);
}

fn current_none_after_expiry() {
    let mut e = engine();
    e.acquired("alice", Some(MIN));
    e.clock.advance(MIN - 1);
    assert!(e.current().is_some());
    e.clock.advance(1);
    assert_eq!(e.current(), None);
}

fn open_ended_lease_never_expires() {
    let mut e = engine();
    let a = e.acquired("alice", None);
    e.clock.set(i64::MAX / 2);
    assert_eq!(e.current(), Some(a));
    assert!(matches!(e.acquire("bob", None), Acquire::Held(_)));
}

fn tenure_token_monotonic_across_holders() {
    let mut e = engine();
    let mut tokens = vec![];
    for holder in ["a", "b", "a"] {
        tokens.push(e.acquired(holder, Some(MIN)).token);
        e.clock.advance(MIN);
    }
    assert_eq!(tokens, [1, 2, 3]);
}

fn token_does_not_reset_after_release() {
    let mut e = engine();
    for want in 1..=3 {
        assert_eq!(e.acquired("alice", None).token, want);
        e.release(By::Holder("alice"));
    }
}

fn token_does_not_reset_after_expiry_and_reads() {
    let mut e = engine();
    e.acquired("alice", Some(MIN));
    e.clock.advance(5 * MIN);
    for _ in 0..3 {
        assert_eq!(e.current(), None);
        let _ = e
            .ledger
            .read(|v| v.list(git_hand::ledger::ResourceKind::Issue, ""))
            .unwrap();
    }
    assert_eq!(e.acquired("bob", None).token, 2);
}

fn old_lease_id_cannot_renew_or_release_a_newer_tenure() {
    let mut e = engine();
    let old = e.acquired("alice", Some(MIN));
    e.clock.advance(MIN);
    let new = e.acquired("alice", Some(MIN));
    assert_ne!(old.lease_id, new.lease_id);
    assert_eq!(
        e.renew(By::Lease(&old.lease_id), None),
        Renew::NotHolder(Some(new.clone()))
    );
    assert_eq!(
        e.release(By::Lease(&old.lease_id)),
        Release::NotHolder(new.clone())
    );
    assert_eq!(e.current(), Some(new));
}

fn clock_going_backwards_never_extends_a_lease() {
    let mut e = engine();
    e.acquired("alice", Some(10 * MIN));
    e.clock.advance(11 * MIN);
    assert_eq!(e.current(), None);
    // Any write records the instant it ran at (reads never write, so they cannot).
    let other = Resource::issue("github.com/o/r", "7");
    e.ledger
        .write(|tx| tx.acquire(&other, "carol", None))
        .unwrap();
    // The wall clock jumps back an hour: the lease must stay expired.
    e.clock.set(T0 - 60 * MIN);
    assert_eq!(
        e.current(),
        None,
        "a read must not see the expired lease again"
    );
    assert!(matches!(
        e.renew(By::Holder("alice"), None),
        Renew::NotHolder(None)
    ));
    // A new grant is measured from the latest instant the ledger has seen, not the clock.
    let b = e.acquired("bob", Some(10 * MIN));
    assert_eq!(b.acquired_at, T0 + 11 * MIN);
    assert_eq!(b.expires_at, Some(T0 + 21 * MIN));
}

fn every_operation_lands_in_the_event_log() {
    let mut e = engine();
    let a = e.acquired("alice", Some(MIN));
    e.acquire("bob", None);
    e.renew(By::Holder("alice"), None);
    e.release(By::Holder("alice"));
    let kinds: Vec<String> = e
        .ledger
        .read(|v| v.events(10))
        .unwrap()
        .into_iter()
        .map(|ev| ev.kind)
        .collect();
    assert_eq!(kinds, ["released", "renewed", "refused", "acquired"]);
    let of_a = e.ledger.read(|v| v.events_of_lease(&a.lease_id)).unwrap();
    assert_eq!(of_a.len(), 4);
}
}

/// One clock (issue 14): on a team ledger every lease time is the server's, never this
/// machine's. The server's clock is made an hour fast (its `hand_now()` replaced): a grant starts
/// an hour ahead of this machine, its expiry is measured from there, and the skew `doctor`
/// reports is that hour.
#[test]
fn a_team_ledger_times_leases_by_the_servers_clock() {
    const HOUR: i64 = 60 * MIN;
    let db = crate::pg::database();
    let url = ServerUrl::parse(&db.url()).unwrap();
    let mut ledger = Ledger::open_creating(&url).unwrap();
    db.psql(
        "CREATE OR REPLACE FUNCTION hand_now() RETURNS BIGINT LANGUAGE sql VOLATILE AS $$ \
         SELECT CAST(floor(extract(epoch FROM clock_timestamp()) * 1000) AS BIGINT) + 3600000 $$",
    );
    let machine_now = || git_hand::clock::Clock::now_ms(&git_hand::clock::SystemClock);
    let res = Resource::issue("github.com/o/r", "1");
    let before = machine_now();
    let Acquire::Acquired { tenure, .. } =
        ledger.write(|tx| tx.acquire(&res, "a", Some(MIN))).unwrap()
    else {
        panic!("a free issue is acquired")
    };
    let after = machine_now();
    assert!(
        (before + HOUR..=after + HOUR).contains(&tenure.acquired_at),
        "acquired at {}, not an hour past this machine's {before}..={after}",
        tenure.acquired_at
    );
    assert_eq!(tenure.expires_at, Some(tenure.acquired_at + MIN));
    let skew = ledger
        .clock_skew_ms()
        .unwrap()
        .expect("a team ledger has a server clock");
    assert!(
        (skew + HOUR).abs() < 1_000,
        "this machine is an hour behind: skew {skew} ms"
    );

    let dir = tempfile::tempdir().unwrap();
    let mut file = Ledger::open_creating(dir.path().join("ledger.sqlite")).unwrap();
    assert_eq!(file.clock_skew_ms().unwrap(), None);
}
