//! The team ledger on a real PostgreSQL server (the harness's, `pg.rs`), at the library level:
//! what the database itself enforces whatever a client sends, tokens under concurrency (on both
//! backends), migrations, the roles of docs/team.md, and a server killed with `kill -9` while
//! sixteen clients contend.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use git_hand::ledger::server::ServerUrl;
use git_hand::ledger::team::schema::LATEST_VERSION;
use git_hand::ledger::{Acquire, By, LeaseId, Ledger, LedgerError, Release, Resource, Tenure};

use crate::pg::{self, Database};
use crate::support::wait_until;

fn issue(n: &str) -> Resource {
    Resource::issue("github.com/o/r", n)
}

fn open(url: &str) -> Result<Ledger, LedgerError> {
    Ledger::open_creating(ServerUrl::parse(url).unwrap())
}

fn acquired(ledger: &mut Ledger, res: &Resource, holder: &str) -> Tenure {
    match ledger.write(|tx| tx.acquire(res, holder, None)).unwrap() {
        Acquire::Acquired { tenure, .. } => tenure,
        Acquire::Held(t) => panic!("{} is held by {}", res.key, t.holder),
    }
}

fn release(ledger: &mut Ledger, tenure: &Tenure) {
    let released = ledger
        .write(|tx| tx.release(&tenure.resource, By::Lease(&tenure.lease_id)))
        .unwrap();
    assert!(
        matches!(released, Release::Released(Some(_))),
        "{released:?}"
    );
}

/// Everything in the database's `public` schema, as text: every column, constraint, index,
/// trigger and function, then every row of every table. Two equal dumps: nothing changed.
fn dump(db: &Database) -> String {
    let shape = db.psql(
        "SELECT string_agg(line, E'\\n' ORDER BY line) FROM (\
           SELECT format('column %s.%s %s %s %s', table_name, column_name, data_type, \
                         is_nullable, column_default) AS line \
             FROM information_schema.columns WHERE table_schema = 'public' \
           UNION ALL SELECT format('constraint %s %s', conname, pg_get_constraintdef(oid)) \
             FROM pg_constraint WHERE connamespace = 'public'::regnamespace \
           UNION ALL SELECT format('index %s', indexdef) FROM pg_indexes \
             WHERE schemaname = 'public' \
           UNION ALL SELECT format('trigger %s', pg_get_triggerdef(oid)) FROM pg_trigger \
             WHERE NOT tgisinternal \
           UNION ALL SELECT format('function %s', pg_get_functiondef(oid)) FROM pg_proc \
             WHERE pronamespace = 'public'::regnamespace \
           UNION ALL SELECT format('grant %s %s %s', table_name, grantee, privilege_type) \
             FROM information_schema.role_table_grants WHERE table_schema = 'public') lines",
    );
    let tables = db.psql(
        "SELECT string_agg(tablename, ' ' ORDER BY tablename) FROM pg_tables \
         WHERE schemaname = 'public'",
    );
    let mut out = shape;
    for table in tables.split_whitespace() {
        let rows = db.psql(&format!(
            "SELECT coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '') FROM {table} t"
        ));
        out.push_str(&format!("\n-- {table}\n{rows}"));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// 1. The database enforces the history rules, whatever the client sends.

/// A ledger with some history: issue 42 acquired and released (token 1, ended), then acquired
/// again (token 2, held); issue 43 acquired and released (token 1, ended).
struct History {
    db: Database,
    held: Tenure,
    ended: Tenure,
    /// Issue 43's ended tenure.
    other_ended: Tenure,
    r42: i64,
    r43: i64,
}

fn history() -> History {
    let db = pg::database();
    let mut ledger = open(&db.url()).unwrap();
    let ended = acquired(&mut ledger, &issue("42"), "alice");
    release(&mut ledger, &ended);
    let held = acquired(&mut ledger, &issue("42"), "bob");
    let other_ended = acquired(&mut ledger, &issue("43"), "carol");
    release(&mut ledger, &other_ended);
    let id = |key: &str| -> i64 {
        db.psql(&format!("SELECT id FROM resources WHERE key = '{key}'"))
            .parse()
            .unwrap()
    };
    let (r42, r43) = (id(&issue("42").key), id(&issue("43").key));
    assert_eq!((ended.token, held.token, other_ended.token), (1, 2, 1));
    History {
        db,
        held,
        ended,
        other_ended,
        r42,
        r43,
    }
}

/// One rule: what a client sends that breaks it, the error the database answers with, and what
/// enforces it (dropping that lets the statement through: see
/// [`each_rule_is_enforced_by_its_own_trigger_or_index`]).
struct Rule {
    name: &'static str,
    offence: String,
    refusal: &'static str,
    guard: &'static str,
}

fn rules(h: &History) -> Vec<Rule> {
    let (held, ended, other) = (
        h.held.lease_id.as_str(),
        h.ended.lease_id.as_str(),
        h.other_ended.lease_id.as_str(),
    );
    let (r42, r43) = (h.r42, h.r43);
    let never_deleted = "DROP TRIGGER tenures_are_never_deleted ON tenures";
    let identity = "DROP TRIGGER tenures_keep_their_identity ON tenures";
    let stay_ended = "DROP TRIGGER tenures_stay_ended ON tenures";
    let append_only = "DROP TRIGGER events_are_never_rewritten ON events";
    let identity_rule = "a tenure never changes its lease id, resource, token, holder or start";
    let rule = |name, offence: String, refusal, guard| Rule {
        name,
        offence,
        refusal,
        guard,
    };
    vec![
        rule(
            "a tenure is never deleted",
            format!("DELETE FROM tenures WHERE lease_id = '{ended}'"),
            "tenures are history and are never deleted",
            never_deleted,
        ),
        rule(
            "tenures are never truncated",
            "TRUNCATE tenures CASCADE".into(),
            "tenures are history and are never deleted",
            never_deleted,
        ),
        rule(
            "an ended tenure is never changed",
            format!("UPDATE tenures SET end_reason = 'rewritten' WHERE lease_id = '{ended}'"),
            "an ended tenure is never changed",
            stay_ended,
        ),
        rule(
            "an ended tenure is never reopened",
            format!("UPDATE tenures SET ended_at = NULL WHERE lease_id = '{other}'"),
            "an ended tenure is never changed",
            stay_ended,
        ),
        rule(
            "a tenure keeps its lease id",
            format!("UPDATE tenures SET lease_id = 'L-forged' WHERE lease_id = '{held}'"),
            identity_rule,
            identity,
        ),
        rule(
            "a tenure keeps its resource",
            format!("UPDATE tenures SET resource_id = {r43} WHERE lease_id = '{held}'"),
            identity_rule,
            identity,
        ),
        rule(
            "a tenure keeps its token",
            format!("UPDATE tenures SET token = 7 WHERE lease_id = '{held}'"),
            identity_rule,
            identity,
        ),
        rule(
            "a tenure keeps its holder",
            format!("UPDATE tenures SET holder = 'mallory' WHERE lease_id = '{held}'"),
            identity_rule,
            identity,
        ),
        rule(
            "a tenure keeps its start",
            format!("UPDATE tenures SET acquired_at = acquired_at - 1 WHERE lease_id = '{held}'"),
            identity_rule,
            identity,
        ),
        rule(
            "an event is never updated",
            "UPDATE events SET detail = 'rewritten'".into(),
            "the event log is append-only",
            append_only,
        ),
        rule(
            "an event is never deleted",
            "DELETE FROM events".into(),
            "the event log is append-only",
            append_only,
        ),
        rule(
            "events are never truncated",
            "TRUNCATE events".into(),
            "the event log is append-only",
            append_only,
        ),
        rule(
            "one held tenure per resource",
            format!(
                "UPDATE resources SET last_token = last_token + 1 WHERE id = {r42};\n\
                 INSERT INTO tenures (lease_id, resource_id, token, holder, acquired_at) \
                 VALUES ('L-second', {r42}, (SELECT last_token FROM resources WHERE id = {r42}), \
                 'mallory', 0)"
            ),
            "tenures_one_held_per_resource",
            "DROP INDEX tenures_one_held_per_resource",
        ),
        rule(
            "a tenure takes its resource's last token",
            format!(
                "INSERT INTO tenures (lease_id, resource_id, token, holder, acquired_at) \
                 VALUES ('L-skipped', {r43}, 5, 'mallory', 0)"
            ),
            "a tenure takes the token its resource last handed out",
            "DROP TRIGGER tenures_take_the_last_token ON tenures",
        ),
        rule(
            "the clock never goes back",
            "UPDATE clock SET max_now = max_now - 1".into(),
            "the ledger's clock only moves forward",
            "DROP TRIGGER clock_moves_forward ON clock",
        ),
        rule(
            "the clock is never deleted",
            "DELETE FROM clock".into(),
            "the ledger's clock is never deleted",
            "DROP TRIGGER clock_is_never_deleted ON clock",
        ),
        rule(
            "the schema's version never goes down",
            "UPDATE ledger_meta SET version = 0".into(),
            "the ledger's schema version never goes down",
            "DROP TRIGGER ledger_meta_only_grows ON ledger_meta",
        ),
        rule(
            "the schema's version is never deleted",
            "DELETE FROM ledger_meta".into(),
            "the ledger's schema version is never deleted",
            "DROP TRIGGER ledger_meta_is_never_deleted ON ledger_meta",
        ),
        rule(
            "a resource's last token never goes down",
            format!("UPDATE resources SET last_token = 1 WHERE id = {r42}"),
            "a resource keeps its kind and key and its tokens only grow",
            "DROP TRIGGER resources_tokens_only_grow ON resources",
        ),
    ]
}

/// `sql` in one transaction, through `psql` as the superuser: its error when it fails.
fn try_in_transaction(db: &Database, sql: &str) -> Result<String, String> {
    db.psql_on(&db.url(), &format!("BEGIN;\n{sql};\nCOMMIT;"))
}

#[test]
fn the_database_refuses_every_rewrite_of_history_whatever_the_client() {
    let h = history();
    let before = dump(&h.db);
    for rule in rules(&h) {
        let refused = try_in_transaction(&h.db, &rule.offence)
            .expect_err(&format!("{}: the server let it through", rule.name));
        assert!(
            refused.contains(rule.refusal),
            "{}: refused for another reason:\n{refused}",
            rule.name
        );
    }
    assert_eq!(dump(&h.db), before, "a refused statement changed something");
}

/// Each refusal above is the work of the trigger or index the rule names: without it, in a
/// scratch database, the same statement goes through (so the test above fails if it is lost).
#[test]
fn each_rule_is_enforced_by_its_own_trigger_or_index() {
    let rule_count = rules(&history()).len();
    for i in 0..rule_count {
        let h = history();
        let rule = rules(&h).swap_remove(i);
        h.db.psql(rule.guard);
        if let Err(e) = try_in_transaction(&h.db, &rule.offence) {
            panic!("{}: refused without {}:\n{e}", rule.name, rule.guard);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 2. Tokens strictly increase under concurrency, on both backends.

const CONTENDERS: usize = 16;
const GRANTS_EACH: usize = 6;

/// `CONTENDERS` threads, each with a ledger of its own from `open`, take turns on one issue
/// (acquire, release; a refusal while another holds it is tried again) until each was granted
/// it `GRANTS_EACH` times: the tokens granted are exactly 1..=N, each once.
fn tokens_are_exactly_one_to_n_under_contention(open: &(dyn Fn() -> Ledger + Sync)) {
    let start = Barrier::new(CONTENDERS);
    let granted: Vec<i64> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..CONTENDERS)
            .map(|i| {
                let start = &start;
                scope.spawn(move || {
                    let mut ledger = open();
                    let res = issue("42");
                    let holder = format!("agent-{i}");
                    start.wait();
                    let mut mine = Vec::new();
                    while mine.len() < GRANTS_EACH {
                        match ledger.write(|tx| tx.acquire(&res, &holder, None)).unwrap() {
                            Acquire::Acquired { tenure, fresh, .. } => {
                                assert!(fresh, "{holder} already held it");
                                mine.push(tenure.token);
                                release(&mut ledger, &tenure);
                            }
                            Acquire::Held(_) => {}
                        }
                    }
                    mine
                })
            })
            .collect();
        threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect()
    });
    let n = i64::try_from(CONTENDERS * GRANTS_EACH).unwrap();
    let distinct: BTreeSet<i64> = granted.iter().copied().collect();
    assert_eq!(distinct.len(), granted.len(), "a token was granted twice");
    assert_eq!(distinct, (1..=n).collect::<BTreeSet<i64>>());
}

#[test]
fn tokens_are_distinct_and_gapless_under_contention_on_postgres() {
    let db = pg::database();
    open(&db.url()).unwrap();
    tokens_are_exactly_one_to_n_under_contention(&|| open(&db.url()).unwrap());
}

#[test]
fn tokens_are_distinct_and_gapless_under_contention_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    Ledger::open_creating(&path).unwrap();
    tokens_are_exactly_one_to_n_under_contention(&|| Ledger::open_creating(&path).unwrap());
}

// ---------------------------------------------------------------------------------------------
// 3. Migrations.

fn version_rows(db: &Database) -> String {
    db.psql("SELECT string_agg(version::text, ',') FROM ledger_meta")
}

#[test]
fn a_fresh_database_gets_the_latest_schema() {
    let db = pg::database();
    open(&db.url()).unwrap();
    assert_eq!(version_rows(&db), LATEST_VERSION.to_string());
    assert_eq!(db.psql("SELECT to_regclass('tenures') IS NOT NULL"), "t");
}

#[test]
fn a_newer_schema_is_refused_and_left_untouched() {
    let db = pg::database();
    let mut ledger = open(&db.url()).unwrap();
    acquired(&mut ledger, &issue("42"), "alice");
    drop(ledger);
    let newer = LATEST_VERSION + 1;
    db.psql(&format!(
        "UPDATE ledger_meta SET version = {newer}; CREATE TABLE from_the_future (id int)"
    ));
    let before = dump(&db);
    let refused = open(&db.url()).unwrap_err();
    let said = refused.to_string();
    assert!(
        matches!(refused, LedgerError::ServerTooNew { found, supported, .. }
            if found == newer && supported == LATEST_VERSION),
        "{said}"
    );
    assert!(said.contains("newer than this git-hand"), "{said}");
    assert!(said.contains("upgrade git-hand"), "{said}");
    assert_eq!(dump(&db), before);
}

#[test]
fn eight_machines_opening_a_fresh_database_at_once_migrate_it_once() {
    let db = pg::database();
    let start = Barrier::new(8);
    std::thread::scope(|scope| {
        let opened: Vec<_> = (0..8)
            .map(|_| {
                scope.spawn(|| {
                    let url = ServerUrl::parse(&db.url()).unwrap();
                    start.wait();
                    Ledger::open_creating(&url).map(drop)
                })
            })
            .collect();
        for opened in opened {
            opened.join().unwrap().unwrap();
        }
    });
    assert_eq!(version_rows(&db), LATEST_VERSION.to_string());
    assert_eq!(db.psql("SELECT count(*) FROM clock"), "1");
}

// ---------------------------------------------------------------------------------------------
// 4. The roles of docs/team.md, created by its SQL as it is written there.

/// The SQL blocks of docs/team.md's "Roles" section: what a superuser runs on the server, and
/// then connected to the new database.
fn roles_sql() -> (String, String) {
    let doc = include_str!("../../docs/team.md");
    let section = doc
        .split("\n## ")
        .find(|s| s.starts_with("Roles\n"))
        .expect("docs/team.md has a \"## Roles\" section");
    let blocks: Vec<&str> = section
        .split("```sql\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .collect();
    assert_eq!(
        blocks.len(),
        2,
        "the Roles section's SQL blocks: {blocks:?}"
    );
    (blocks[0].to_owned(), blocks[1].to_owned())
}

/// A database and the three roles, made by docs/team.md's SQL with `git_hand` renamed to names
/// of this test's own (roles are the whole cluster's).
struct Roles {
    db: Database,
    owner: String,
    daily: String,
    reader: String,
}

fn roles() -> Roles {
    let host = pg::database();
    let mut db = host.clone();
    db.name = format!("{}_gh", host.name);
    let ours = |sql: &str| sql.replace("git_hand", &db.name);
    let (server, database) = roles_sql();
    host.psql(&ours(&server));
    db.psql(&ours(&database));
    let as_role = |role: &str, password: &str| db.url_as(&format!("{}_{role}", db.name), password);
    Roles {
        owner: as_role("owner", "change-me-owner"),
        daily: as_role("daily", "change-me-daily"),
        reader: as_role("reader", "change-me-reader"),
        db,
    }
}

#[test]
fn the_owner_role_migrates_and_the_daily_role_leases_and_records_tasks() {
    let r = roles();
    open(&r.owner).unwrap();
    assert_eq!(version_rows(&r.db), LATEST_VERSION.to_string());
    assert_eq!(
        r.db.psql("SELECT tableowner FROM pg_tables WHERE tablename = 'tenures'"),
        format!("{}_owner", r.db.name)
    );

    let mut ledger = open(&r.daily).unwrap();
    let res = issue("42");
    let mine = acquired(&mut ledger, &res, "alice");
    let renewed = ledger
        .write(|tx| tx.renew(&res, By::Lease(&mine.lease_id), Some(60_000)))
        .unwrap();
    assert!(
        matches!(renewed, git_hand::ledger::Renew::Renewed(_)),
        "{renewed:?}"
    );
    release(&mut ledger, &mine);
    let (task, withdrawn) = ledger
        .write(|tx| {
            let repo = tx.ensure_repo(std::path::Path::new("/src/app/.git"))?;
            let slot =
                git_hand::ledger::WorktreeKey::from_canonical(std::path::Path::new("/src/app-1"));
            tx.ensure_slot(&repo.id, 1, &slot)?;
            let lease = match tx.acquire(&Resource::worktree(&slot), "alice", None)? {
                Acquire::Acquired { tenure, .. } => tenure,
                Acquire::Held(t) => panic!("held by {}", t.holder),
            };
            let new = |name: &'static str| git_hand::ledger::NewTask {
                repo_id: &repo.id,
                name,
                slot_path: &slot,
                lease_id: &lease.lease_id,
                issue: None,
                issue_lease_id: None,
                branch: "hand/t1",
                base_oid: "0000000000000000000000000000000000000000",
                holder: "alice",
                pid: 1,
                pid_start: None,
                pid_ns: None,
                step: git_hand::ledger::Step::Active,
                remote: None,
                base_ref: None,
            };
            let task = tx.insert_task(&new("t1"))?;
            // A spawn withdrawn before it started is the one row git-hand deletes.
            let withdrawn = tx.insert_task(&git_hand::ledger::NewTask {
                step: git_hand::ledger::Step::Intent,
                ..new("t2")
            })?;
            tx.withdraw_intent(&withdrawn, git_hand::ledger::IssueLease::Keep)?;
            Ok((task, withdrawn))
        })
        .unwrap();
    let names =
        r.db.psql("SELECT string_agg(name, ',' ORDER BY name) FROM tasks");
    assert_eq!(names, "t1", "{task:?} {withdrawn:?}");

    // The daily role changes rows, never the schema, and the history stays history.
    for (ddl, refusal) in [
        (
            "CREATE TABLE mine (id int)",
            "permission denied for schema public",
        ),
        ("DROP TABLE events", "must be owner of table events"),
        (
            "ALTER TABLE tenures DISABLE TRIGGER ALL",
            "must be owner of table tenures",
        ),
        (
            "DELETE FROM tenures",
            "tenures are history and are never deleted",
        ),
        ("DELETE FROM events", "the event log is append-only"),
    ] {
        let refused = r.db.psql_on(&r.daily, ddl).expect_err(ddl);
        assert!(refused.contains(refusal), "{ddl}: {refused}");
    }
}

#[test]
fn the_read_only_role_reads_and_a_write_with_it_fails_clearly_changing_nothing() {
    let r = roles();
    let mut owner = open(&r.owner).unwrap();
    let held = acquired(&mut owner, &issue("42"), "alice");
    drop(owner);
    let before = dump(&r.db);

    let mut ledger = open(&r.reader).unwrap();
    let current = ledger.read(|v| v.current(&issue("42"))).unwrap();
    assert_eq!(current.map(|t| t.lease_id), Some(held.lease_id.clone()));
    let events = ledger.read(|v| v.events(10)).unwrap();
    assert!(
        events
            .iter()
            .any(|e| e.lease_id.as_ref() == Some(&held.lease_id)),
        "{events:?}"
    );
    let refused = ledger
        .write(|tx| tx.acquire(&issue("43"), "bob", None))
        .unwrap_err();
    let said = refused.to_string();
    let reader = format!("{}_reader", r.db.name);
    assert!(
        said.contains(&format!("role \"{reader}\" may not write the team ledger")),
        "{said}"
    );
    assert!(said.contains("nothing was changed"), "{said}");
    assert!(!said.contains("change-me-reader"), "{said}");
    // The connection is still good for reading.
    assert!(ledger.read(|v| v.current(&issue("42"))).unwrap().is_some());
    assert_eq!(
        dump(&r.db),
        before,
        "opening, reading or failing to write changed something"
    );
}

#[test]
fn a_role_that_may_not_migrate_is_refused_an_old_schema_clearly_and_changes_nothing() {
    let r = roles();
    let before = dump(&r.db);
    for (url, role) in [(&r.reader, "reader"), (&r.daily, "daily")] {
        let refused = open(url).unwrap_err();
        let said = refused.to_string();
        assert!(
            said.contains(&format!(
                "has schema version 0, older than this git-hand's {LATEST_VERSION}, and role \
                 \"{}_{role}\" may not migrate it",
                r.db.name
            )),
            "{said}"
        );
        assert!(
            said.contains("open it once with the role that owns"),
            "{said}"
        );
        assert_eq!(dump(&r.db), before, "{role} changed something");
    }
    open(&r.owner).unwrap();
    assert_eq!(version_rows(&r.db), LATEST_VERSION.to_string());
}

// ---------------------------------------------------------------------------------------------
// 5. The server killed (`kill -9`) while sixteen clients contend.

/// What the clients of [`a_server_killed_while_clients_contend_loses_no_acknowledged_token`]
/// share with the test.
struct Contest {
    url: String,
    /// Tokens granted (a commit that returned Ok), by every client together.
    granted: AtomicUsize,
    /// Set just before the server is killed: an error before it fails the test.
    killed: AtomicBool,
    /// Clients that have seen an error since the kill.
    saw_error: AtomicUsize,
    stop: AtomicBool,
    deadline: Instant,
}

/// Sets `stop` when dropped, so a failing test ends its clients at once.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// One client: acquires and releases issue 42 until told to stop, reconnecting after an error,
/// and returns every tenure it was told it got (lease id, token).
fn contend(i: usize, c: &Contest) -> Vec<(LeaseId, i64)> {
    let holder = format!("client-{i}");
    let res = issue("42");
    let mut told: Vec<(LeaseId, i64)> = Vec::new();
    let mut ledger: Option<Ledger> = None;
    let mut erred = false;
    let mut failed = |what: &str, e: LedgerError| {
        assert!(
            c.killed.load(Ordering::SeqCst),
            "client {i}: {what} failed with the server up: {e}"
        );
        if !erred {
            erred = true;
            c.saw_error.fetch_add(1, Ordering::SeqCst);
        }
    };
    while !c.stop.load(Ordering::SeqCst) {
        assert!(
            Instant::now() < c.deadline,
            "client {i} still runs at the deadline"
        );
        let l = match ledger.as_mut() {
            Some(l) => l,
            None => match open(&c.url) {
                Ok(l) => ledger.insert(l),
                Err(e) => {
                    failed("connecting", e);
                    // The server is down: try again shortly (real time, not an assumed speed).
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                }
            },
        };
        match l.write(|tx| tx.acquire(&res, &holder, None)) {
            // Not fresh: an acquisition whose commit succeeded though its answer was lost.
            Ok(Acquire::Acquired { tenure, .. }) => {
                if !told.iter().any(|(id, _)| id == &tenure.lease_id) {
                    told.push((tenure.lease_id.clone(), tenure.token));
                    c.granted.fetch_add(1, Ordering::SeqCst);
                }
                if let Err(e) = l.write(|tx| tx.release(&res, By::Lease(&tenure.lease_id))) {
                    failed("release", e);
                    ledger = None;
                }
            }
            Ok(Acquire::Held(_)) => {}
            Err(e) => {
                failed("acquire", e);
                ledger = None;
            }
        }
    }
    told
}

#[test]
fn a_server_killed_while_clients_contend_loses_no_acknowledged_token() {
    let cluster = pg::private_cluster();
    let db = cluster.database();
    open(&db.url()).unwrap();
    let c = Contest {
        url: db.url(),
        granted: AtomicUsize::new(0),
        killed: AtomicBool::new(false),
        saw_error: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
        deadline: Instant::now() + Duration::from_secs(120),
    };
    let told: BTreeMap<String, Vec<(LeaseId, i64)>> = std::thread::scope(|scope| {
        let _stop = StopOnDrop(&c.stop);
        let clients: Vec<_> = (0..CONTENDERS)
            .map(|i| {
                let c = &c;
                scope.spawn(move || (format!("client-{i}"), contend(i, c)))
            })
            .collect();
        wait_until("48 grants", c.deadline, || {
            c.granted.load(Ordering::SeqCst) >= 48
        });
        c.killed.store(true, Ordering::SeqCst);
        let pid = cluster.pid().unwrap();
        let killed = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        wait_until("every client saw an error", c.deadline, || {
            c.saw_error.load(Ordering::SeqCst) == CONTENDERS
        });
        cluster.start();
        let before = c.granted.load(Ordering::SeqCst);
        wait_until("32 grants after the restart", c.deadline, || {
            c.granted.load(Ordering::SeqCst) >= before + 32
        });
        c.stop.store(true, Ordering::SeqCst);
        clients.into_iter().map(|t| t.join().unwrap()).collect()
    });

    // Every tenure in the ledger, by lease id: its token and holder.
    let rows = db.psql("SELECT lease_id, token, holder FROM tenures ORDER BY token");
    let stored: BTreeMap<String, (i64, String)> = rows
        .lines()
        .map(|line| {
            let f: Vec<&str> = line.split('|').collect();
            (f[0].to_owned(), (f[1].parse().unwrap(), f[2].to_owned()))
        })
        .collect();
    let mut tokens_told = BTreeSet::new();
    for (holder, tenures) in &told {
        for (lease_id, token) in tenures {
            assert!(
                tokens_told.insert(*token),
                "token {token} was told to two clients"
            );
            assert_eq!(
                stored.get(lease_id.as_str()),
                Some(&(*token, holder.clone())),
                "{holder} was told it got token {token} as {lease_id}: not so in the ledger"
            );
        }
    }
    let last: i64 = db.psql("SELECT last_token FROM resources").parse().unwrap();
    let stored_tokens: BTreeSet<i64> = stored.values().map(|(t, _)| *t).collect();
    assert_eq!(stored_tokens.len(), stored.len(), "a token is stored twice");
    assert_eq!(stored_tokens, (1..=last).collect::<BTreeSet<i64>>());

    let mut ledger = open(&db.url()).unwrap();
    let res = issue("42");
    if let Some(held) = ledger.read(|v| v.held(&res)).unwrap() {
        release(&mut ledger, &held);
    }
    assert_eq!(acquired(&mut ledger, &res, "after").token, last + 1);
}

/// A statement the server refuses is reported with the server's own words and SQLSTATE, not the
/// client library's bare "db error".
#[test]
fn a_server_error_says_what_the_server_said() {
    let db = pg::database();
    let mut ledger = open(&db.url()).unwrap();
    db.psql("ALTER TABLE events RENAME TO events_elsewhere");
    let res = Resource::issue("github.com/o/r", "5");
    let err = ledger.write(|tx| tx.acquire(&res, "a", None)).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(r#"relation "events" does not exist (42P01)"#),
        "{text}"
    );
}
