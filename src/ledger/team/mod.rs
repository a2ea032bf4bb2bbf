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
//! level ([`super::Ledger::with_clock`]), as they do for SQLite.
//!
//! **A dropped connection.** When the connection breaks (the server restarted, the backend was
//! terminated, the network cut: [`connection_lost`]), a read runs again on a new connection (it
//! changes nothing), and so does a write its caller declared safe to re-run
//! ([`Team::write_retrying`], behind [`super::Retry::Once`]): once, on a
//! connection made within the URL's connect timeout. Every other write fails with
//! [`LedgerError::ConnectionLost`], which says whether its commit may have happened: a break
//! before `COMMIT` was sent leaves nothing written (the server rolls back a transaction whose
//! connection is gone); a break while committing leaves it unknown, and re-running blindly
//! could do it twice.

pub mod schema;

use std::cell::RefCell;
use std::time::{Duration, Instant};

use postgres::types::Type;

use super::db::{Db, PgTx};
use super::server::{self, Client, ServerUrl};
use super::{LedgerError, Machine, Result, Tx, View};
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

/// A write or read whose connection broke: where, why, and what became of it.
#[derive(Debug)]
pub struct Lost {
    /// The ledger's URL, without its password.
    pub at: String,
    /// What the client library said (and, when reconnecting failed too, what that said).
    pub reason: String,
    pub fate: Fate,
}

/// What a broken connection did to the operation it was running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// It broke before `COMMIT` was sent (or in a read): nothing was written.
    NothingWritten,
    /// It broke while committing: the commit may or may not have happened.
    Unknown,
}

/// How long a writer waits for another, unless a test sets it ([`Team::set_lock_timeout`]).
const LOCK_TIMEOUT: Duration = Duration::from_secs(5);

/// The connect timeout a URL without one gets for reconnecting (as `connect`'s default).
const RECONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a reconnection waits between attempts at a server that is not accepting yet (one
/// restarting): real time the server needs, not a guess at a speed.
const RECONNECT_PAUSE: Duration = Duration::from_millis(100);

/// An open connection to a team ledger.
pub struct Team {
    client: Client,
    url: ServerUrl,
    /// Set again on every new connection.
    lock_timeout: Duration,
    /// `None`: the server's clock (the binary). `Some`: an injected clock (tests,
    /// [`super::Ledger::with_clock`]).
    pub(super) clock: Option<Box<dyn Clock>>,
    /// What connecting found that the user should hear about (an ignored password file).
    pub(super) notices: Vec<String>,
    /// The machine every transaction acts for (its repositories, slots and tasks; its worktree
    /// resources' qualifier): set by [`super::Ledger::on_machine`].
    pub(super) machine: Machine,
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
    pub fn open(url: &ServerUrl) -> Result<Self> {
        let mut found = Vec::new();
        let client = connect(url, &mut found, LOCK_TIMEOUT).map_err(|e| opening(e, url))?;
        Ok(Self::connected(client, url, found))
    }

    /// Connects for a verb that only reads: nothing is created or migrated on the server.
    /// `Ok(None)` where git-hand never made a ledger in this database; see
    /// [`schema::check_for_reading`].
    pub fn open_existing(url: &ServerUrl) -> Result<Option<Self>> {
        let mut found = Vec::new();
        let mut client = server::connect(url, &mut found, LOCK_TIMEOUT)?;
        if !schema::check_for_reading(&mut client, &url.to_string()).map_err(|e| opening(e, url))? {
            return Ok(None);
        }
        Ok(Some(Self::connected(client, url, found)))
    }

    /// A team ledger on `client`, acting for no machine until [`super::Ledger::on_machine`].
    fn connected(client: Client, url: &ServerUrl, found: Vec<server::Notice>) -> Self {
        Self {
            client,
            url: url.clone(),
            lock_timeout: LOCK_TIMEOUT,
            clock: None,
            notices: found.into_iter().map(|n| n.to_string()).collect(),
            machine: Machine::default(),
        }
    }

    pub fn url(&self) -> &ServerUrl {
        &self.url
    }

    /// How long a writer waits for another (tests use a short one).
    pub(crate) fn set_lock_timeout(&mut self, timeout: Duration) -> Result<()> {
        set_lock_timeout(&mut self.client, timeout)?;
        self.lock_timeout = timeout;
        Ok(())
    }

    /// One write transaction: the clock row first (the writers' lock), then `f`, then commit.
    /// A role that may not write (a read-only role) gets [`LedgerError::ServerReadOnly`]; the
    /// transaction is rolled back. A broken connection is never retried here: the error
    /// ([`LedgerError::ConnectionLost`]) says whether the commit may have happened.
    pub fn write<T>(&mut self, f: impl FnOnce(&Tx<'_>) -> Result<T>) -> Result<T> {
        self.reconnect_if_closed()?;
        let out = self.write_tx(f, false);
        self.refusal(out)
    }

    /// Like [`Team::write`], but a broken connection is met with one more run of `f`, whole, on
    /// a new connection: only for an operation whose second run cannot change the outcome
    /// whether or not the first one committed (the caller says why,
    /// [`super::Retry::Once`]).
    ///
    /// When the first run's `COMMIT` went unanswered, the second run's [`Tx`] says so
    /// ([`Tx::retries_an_unanswered_commit`]): a release then takes its tenure already ended as
    /// released for the first run's work, whoever acquired the resource in between.
    pub(crate) fn write_retrying<T>(&mut self, f: impl Fn(&Tx<'_>) -> Result<T>) -> Result<T> {
        let out = self.once_more_if_lost(|team, unanswered| team.write_tx(&f, unanswered));
        self.refusal(out)
    }

    /// Runs `run` (on a connection reopened first if it is closed) and, if the connection is
    /// lost, once more on a new one, telling the second run whether the first one's `COMMIT`
    /// went unanswered: what [`Team::read`], [`Team::write_retrying`] and
    /// [`Team::clock_skew_ms`] do alike.
    fn once_more_if_lost<T>(
        &mut self,
        mut run: impl FnMut(&mut Self, bool) -> Result<T>,
    ) -> Result<T> {
        self.reconnect_if_closed()?;
        match run(self, false) {
            Err(LedgerError::ConnectionLost(lost)) => {
                let unanswered = lost.fate == Fate::Unknown;
                self.reconnect(*lost)?;
                run(self, unanswered)
            }
            other => other,
        }
    }

    /// A role's refusal to write said as such.
    fn refusal<T>(&self, out: Result<T>) -> Result<T> {
        out.map_err(|e| match permission_denied(&e) {
            Some(reason) => LedgerError::ServerReadOnly(Box::new(Refusal {
                at: self.url.to_string(),
                user: self.url.user.clone(),
                reason,
            })),
            None => e,
        })
    }

    /// One run of a write; `retrying_unanswered`: it runs again after a `COMMIT` whose answer
    /// was lost.
    fn write_tx<T>(
        &mut self,
        f: impl FnOnce(&Tx<'_>) -> Result<T>,
        retrying_unanswered: bool,
    ) -> Result<T> {
        let url = &self.url;
        let before_commit = |e: LedgerError| lost(e, url, Fate::NothingWritten);
        let machine = self.machine.clone();
        let injected = self.clock.as_ref().map(|c| c.now_ms());
        let mut tx = self
            .client
            .transaction_with(postgres::IsolationLevel::ReadCommitted, false)
            .map_err(|e| before_commit(e.into()))?;
        // The writers' lock and the transaction's `now` in one statement.
        let now = clock_row(
            &mut tx,
            &format!(
                "UPDATE clock SET max_now = GREATEST(max_now, coalesce($1, {SERVER_NOW})) \
                 RETURNING max_now"
            ),
            injected,
        )
        .map_err(before_commit)?;
        let cell = RefCell::new(tx);
        let out = {
            let shared: &RefCell<dyn PgTx + '_> = &cell;
            let tx = Tx {
                db: Db::Pg(shared),
                now,
                machine: machine.clone(),
                after_unanswered_commit: retrying_unanswered,
            };
            f(&tx).map_err(before_commit)?
        };
        cell.into_inner()
            .commit()
            .map_err(|e| lost(e.into(), url, Fate::Unknown))?;
        Ok(out)
    }

    /// One read snapshot; nothing is written and no lock is taken. A broken connection is met
    /// with one more run on a new connection: a read changes nothing, so running it again
    /// cannot either.
    pub fn read<T>(&mut self, f: impl Fn(&View<'_>) -> Result<T>) -> Result<T> {
        self.once_more_if_lost(|team, _| team.read_tx(&f))
    }

    fn read_tx<T>(&mut self, f: impl FnOnce(&View<'_>) -> Result<T>) -> Result<T> {
        let url = &self.url;
        let broke = |e: LedgerError| lost(e, url, Fate::NothingWritten);
        let machine = self.machine.clone();
        let injected = self.clock.as_ref().map(|c| c.now_ms());
        let mut tx = self
            .client
            .transaction_with(postgres::IsolationLevel::RepeatableRead, true)
            .map_err(|e| broke(e.into()))?;
        let now = clock_row(
            &mut tx,
            &format!("SELECT GREATEST(max_now, coalesce($1, {SERVER_NOW})) FROM clock"),
            injected,
        )
        .map_err(broke)?;
        let cell = RefCell::new(tx);
        let out = {
            let shared: &RefCell<dyn PgTx + '_> = &cell;
            f(&View::new(Db::Pg(shared), now).for_machine(&machine)).map_err(broke)?
        };
        cell.into_inner().commit().map_err(|e| broke(e.into()))?;
        Ok(out)
    }

    /// A connection the client already knows is closed (an earlier operation broke it) is
    /// replaced before anything is sent: nothing was attempted on it, so nothing is ambiguous.
    fn reconnect_if_closed(&mut self) -> Result<()> {
        if self.client.is_closed() {
            self.client = self.connect_again()?;
        }
        Ok(())
    }

    /// A new connection after `lost`, made within the URL's connect timeout, waiting out a
    /// server that does not accept connections yet (one restarting). When none can be made,
    /// the error is `lost` (what became of the operation is what the caller must hear), with
    /// why reconnecting failed.
    fn reconnect(&mut self, mut lost: Lost) -> Result<()> {
        match self.connect_again() {
            Ok(client) => {
                self.client = client;
                Ok(())
            }
            Err(e) => {
                lost.reason = format!("{}; connecting again failed: {e}", lost.reason);
                Err(LedgerError::ConnectionLost(Box::new(lost)))
            }
        }
    }

    fn connect_again(&self) -> Result<Client> {
        let deadline = Instant::now() + self.url.connect_timeout.unwrap_or(RECONNECT_TIMEOUT);
        loop {
            match connect(&self.url, &mut Vec::new(), self.lock_timeout) {
                Err(LedgerError::Server(e))
                    if e.is_unreachable() && Instant::now() + RECONNECT_PAUSE < deadline =>
                {
                    std::thread::sleep(RECONNECT_PAUSE);
                }
                other => return other,
            }
        }
    }

    /// How far this machine's clock is ahead of the server's (negative: behind), in
    /// milliseconds: the server's time against the middle of this machine's readings taken
    /// around one round trip. Nothing depends on it (every lease time is the server's); `doctor`
    /// reports it. It is a read: a broken connection, or a server that stops answering, is met
    /// as [`Team::read`] meets it (once more on a new connection, then a lost connection, exit 3),
    /// not as a failure of the ledger.
    pub fn clock_skew_ms(&mut self) -> Result<i64> {
        self.once_more_if_lost(|team, _| team.clock_skew_once())
    }

    fn clock_skew_once(&mut self) -> Result<i64> {
        let url = &self.url;
        let before = crate::clock::SystemClock.now_ms();
        let rows = self
            .client
            .query_typed(&format!("SELECT {SERVER_NOW}"), &[])
            .map_err(|e| lost(e.into(), url, Fate::NothingWritten))?;
        let server: Millis = rows
            .first()
            .map(|r| r.get(0))
            .ok_or_else(|| LedgerError::Corrupt("hand_now() returned no row".into()))?;
        let after = crate::clock::SystemClock.now_ms();
        Ok(before + (after - before) / 2 - server)
    }
}

/// The clock row's one value (`sql` reads or updates it, `$1` the injected time if any): the
/// transaction's `now`, in one round trip.
fn clock_row(
    tx: &mut server::Transaction<'_>,
    sql: &str,
    injected: Option<Millis>,
) -> Result<Millis> {
    let rows = tx.query_typed(sql, &[(&injected, Type::INT8)])?;
    rows.first()
        .map(|r| r.get(0))
        .ok_or_else(|| LedgerError::Corrupt("the clock table has no row".into()))
}

/// A connection to `url` with the writers' `lock_timeout`, its schema migrated to this
/// binary's version (a newer one refused untouched).
fn connect(
    url: &ServerUrl,
    notices: &mut Vec<server::Notice>,
    lock_timeout: Duration,
) -> Result<Client> {
    let mut client = server::connect(url, notices, lock_timeout)?;
    schema::migrate(&mut client, &url.to_string())?;
    Ok(client)
}

fn set_lock_timeout(client: &mut Client, timeout: Duration) -> Result<()> {
    let ms = i64::try_from(timeout.as_millis())
        .unwrap_or(i64::MAX)
        .max(1);
    client.batch_execute(&format!("SET lock_timeout = {ms}"))?;
    Ok(())
}

/// `e`, met while a ledger was being opened (the schema's version read or a migration run after
/// connecting), said as a connection lost during an operation: the server that stops answering
/// there is the same server, and the user's next step is the same (exit 3, try again once it
/// answers). Nothing was changed: the operation never started, and a migration whose `COMMIT`
/// went unanswered is either done or not, which the next opening finds out and finishes (its
/// version check runs under the migration lock).
fn opening(e: LedgerError, url: &ServerUrl) -> LedgerError {
    lost(e, url, Fate::NothingWritten)
}

/// `e` as [`LedgerError::ConnectionLost`] with `fate` when it says the connection broke, or
/// that the server did not answer within `read_timeout` (the connection is dropped then).
fn lost(e: LedgerError, url: &ServerUrl, fate: Fate) -> LedgerError {
    let reason = match e {
        LedgerError::NoAnswer(no_answer) => no_answer.to_string(),
        LedgerError::Pg(pg) if connection_lost(&pg) => server::pg_message(&pg),
        other => return other,
    };
    LedgerError::ConnectionLost(Box::new(Lost {
        at: url.to_string(),
        reason,
        fate,
    }))
}

/// Whether `e` says the connection is gone, rather than a statement refused: the client found
/// it closed, the socket failed, or the server ended the session (a terminated backend gets
/// `FATAL: terminating connection due to administrator command`, a server shutting down or
/// crashing likewise; a FATAL error always ends the session).
pub(crate) fn connection_lost(e: &postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    if let Some(db) = e.as_db_error() {
        use postgres::error::Severity;
        return matches!(
            db.parsed_severity(),
            Some(Severity::Fatal | Severity::Panic)
        ) || db.code().code().starts_with("08");
    }
    std::error::Error::source(e).is_some_and(|cause| cause.is::<std::io::Error>())
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
