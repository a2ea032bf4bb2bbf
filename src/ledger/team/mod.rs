//! The team ledger: the same ledger on a PostgreSQL server every machine of a team shares.
//!
//! The ledger's operations run here unchanged, through [`Db::Pg`]: the same Rust code and the
//! same SQL as on SQLite (`db.rs` lists the SQL both accept), so one engine test suite proves
//! both (tests/it/engine.rs).
//!
//! **One writer at a time, by a row lock.** A write transaction (READ COMMITTED) starts by
//! updating the one row of `clock`, which every writer updates first; a second writer waits for
//! that row until the first commits, and then every statement it runs sees what the first
//! wrote. That is SQLite's `BEGIN IMMEDIATE`, the rule the engine's check-then-write operations
//! were written and proved for, with no serialization failures to retry (SERIALIZABLE would
//! abort and re-run operations, and an acquire is not safe to re-run blindly once its commit may
//! have happened). A writer waits at most `lock_timeout` (5 s, as SQLite's busy timeout), then
//! reports the ledger busy. A read runs in one REPEATABLE READ, READ ONLY snapshot and takes no
//! lock, so a read-only role can list, log and answer pre-push.
//!
//! **One clock.** Every lease time comes from the server's clock (`hand_now()`, the schema's
//! reading of `clock_timestamp()`), never the machine's, and never earlier than the largest
//! time any writer recorded: a machine whose clock is wrong can neither extend nor expire a
//! lease. Tests inject a clock at the library
//! level ([`Team::open`] with `Some(clock)`), as they do for SQLite.

pub mod schema;

use std::cell::RefCell;
use std::time::Duration;

use super::db::{Db, PgTx};
use super::server::{self, ServerUrl};
use super::{LedgerError, Result, Tx, View};
use crate::clock::{Clock, Millis};

/// Now on the server, in milliseconds since the epoch (the schema's `hand_now()`).
const SERVER_NOW: &str = "hand_now()";

/// The server refused a role a privilege: where, which role, and the server's words.
#[derive(Debug)]
pub struct Refusal {
    /// The ledger's URL, without its password.
    pub at: String,
    pub user: String,
    pub reason: String,
}

/// An open connection to a team ledger.
pub struct Team {
    client: postgres::Client,
    url: ServerUrl,
    /// `None`: the server's clock (the binary). `Some`: an injected clock (tests).
    clock: Option<Box<dyn Clock>>,
    /// What connecting found that the user should hear about (an ignored password file).
    pub(super) notices: Vec<String>,
}

impl std::fmt::Debug for Team {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Team")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl Team {
    /// Connects to the team ledger at `url` and migrates its schema to this binary's version
    /// (refusing a newer one untouched).
    pub fn open(url: &ServerUrl, clock: Option<Box<dyn Clock>>) -> Result<Self> {
        let mut found = Vec::new();
        let mut client = server::connect(url, &mut found)?;
        client.batch_execute("SET lock_timeout = '5s'")?;
        schema::migrate(&mut client, &url.to_string())?;
        Ok(Self {
            client,
            url: url.clone(),
            clock,
            notices: found.into_iter().map(|n| n.to_string()).collect(),
        })
    }

    pub fn url(&self) -> &ServerUrl {
        &self.url
    }

    /// How long a writer waits for another (tests use a short one).
    pub fn set_lock_timeout(&mut self, timeout: Duration) -> Result<()> {
        let ms = i64::try_from(timeout.as_millis())
            .unwrap_or(i64::MAX)
            .max(1);
        self.client
            .batch_execute(&format!("SET lock_timeout = {ms}"))?;
        Ok(())
    }

    /// One write transaction: the clock row first (the writers' lock), then `f`, then commit.
    /// A role that may not write (a read-only role) gets [`LedgerError::ServerReadOnly`]; the
    /// transaction is rolled back.
    pub fn write<T>(&mut self, f: impl FnOnce(&Tx<'_>) -> Result<T>) -> Result<T> {
        self.write_tx(f).map_err(|e| match permission_denied(&e) {
            Some(reason) => LedgerError::ServerReadOnly(Box::new(Refusal {
                at: self.url.to_string(),
                user: self.url.user.clone(),
                reason,
            })),
            None => e,
        })
    }

    fn write_tx<T>(&mut self, f: impl FnOnce(&Tx<'_>) -> Result<T>) -> Result<T> {
        let injected = self.clock.as_ref().map(|c| c.now_ms());
        let mut tx = self
            .client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::ReadCommitted)
            .start()?;
        let now: Millis = match injected {
            Some(now) => tx
                .query_one(
                    "UPDATE clock SET max_now = GREATEST(max_now, $1) RETURNING max_now",
                    &[&now],
                )?
                .get(0),
            None => tx
                .query_one(
                    &format!(
                        "UPDATE clock SET max_now = GREATEST(max_now, {SERVER_NOW}) \
                         RETURNING max_now"
                    ),
                    &[],
                )?
                .get(0),
        };
        let cell = RefCell::new(tx);
        let out = {
            let shared: &RefCell<dyn PgTx + '_> = &cell;
            f(&Tx::new(Db::Pg(shared), now))?
        };
        cell.into_inner().commit()?;
        Ok(out)
    }

    /// One read snapshot; nothing is written and no lock is taken.
    pub fn read<T>(&mut self, f: impl FnOnce(&View<'_>) -> Result<T>) -> Result<T> {
        let injected = self.clock.as_ref().map(|c| c.now_ms());
        let mut tx = self
            .client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()?;
        let now: Millis = match injected {
            Some(now) => tx
                .query_one("SELECT GREATEST(max_now, $1) FROM clock", &[&now])?
                .get(0),
            None => tx
                .query_one(
                    &format!("SELECT GREATEST(max_now, {SERVER_NOW}) FROM clock"),
                    &[],
                )?
                .get(0),
        };
        let cell = RefCell::new(tx);
        let out = {
            let shared: &RefCell<dyn PgTx + '_> = &cell;
            f(&View::new(Db::Pg(shared), now))?
        };
        cell.into_inner().commit()?;
        Ok(out)
    }

    /// How far this machine's clock is ahead of the server's (negative: behind), in
    /// milliseconds: the server's time against the middle of this machine's readings taken
    /// around one round trip. Nothing depends on it (every lease time is the server's); `doctor`
    /// reports it.
    pub fn clock_skew_ms(&mut self) -> Result<i64> {
        let before = crate::clock::SystemClock.now_ms();
        let server: Millis = self
            .client
            .query_one(&format!("SELECT {SERVER_NOW}"), &[])?
            .get(0);
        let after = crate::clock::SystemClock.now_ms();
        Ok(before + (after - before) / 2 - server)
    }
}

/// The server's words when `e` is its refusal for lack of a privilege (a table the role may not
/// write, a schema it may not create in, a table it does not own).
fn permission_denied(e: &LedgerError) -> Option<String> {
    let pg = match e {
        LedgerError::Pg(pg) | LedgerError::ServerMigration { source: pg, .. } => pg,
        _ => return None,
    };
    let db = pg.as_db_error()?;
    (db.code() == &postgres::error::SqlState::INSUFFICIENT_PRIVILEGE)
        .then(|| db.message().to_string())
}
