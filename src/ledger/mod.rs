//! The ledger: one SQLite file per user that records every lease of every repository.
//!
//! This module owns the connection, its pragmas, the schema migrations and the two ways in:
//! [`Ledger::write`] (one `BEGIN IMMEDIATE` transaction) and [`Ledger::read`] (one read snapshot,
//! never a write). It knows nothing of git or of the command line; callers hand it paths and
//! names, it hands back domain values.

mod copy;
mod db;
mod events;
mod file;
mod ids;
mod leases;
mod lifecycle;
mod location;
pub mod recovery;
mod repos;
#[doc(hidden)]
pub mod schema;
pub mod server;
mod task_state;
mod tasks;
pub mod team;
mod tenure;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior};

use crate::clock::{Clock, Millis, SystemClock};
use db::Db;

pub use copy::{Conflict, Export, Imported};
pub use events::{Event, EventKind, EventScope, LoggedEvent, RepoEvents};
pub use ids::{LeaseId, RepoId, WorktreeKey};
pub use leases::{Acquire, By, Release, Renew};
pub use lifecycle::IssueLease;
pub use location::{LedgerLocation, Place, default_location, same_file, state_dir};
pub use repos::RegisteredRepo;
pub use schema::LATEST_VERSION;
pub use task_state::{EndReason, Step, TaskState};
pub use tasks::{NewTask, Slot, Task, Tasks};
pub use team::{Fate, Lost};
pub use tenure::{Resource, ResourceKind, Tenure, TenureState};

/// How long a writer waits for another writer before reporting "ledger busy, retry".
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// How often a waiting connection tries the lock again during its first [`FAST_POLL_FOR`], and
/// after it. See [`wait_for_the_lock`].
const FAST_POLL: Duration = Duration::from_micros(100);
const FAST_POLL_FOR: Duration = Duration::from_millis(20);
const SLOW_POLL: Duration = Duration::from_millis(1);

/// Everything that can go wrong with the ledger.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    #[error("cannot open the ledger at {}: {source}", path.display())]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot open the ledger at {}: {source}", path.display())]
    OpenSql {
        path: PathBuf,
        source: rusqlite::Error,
    },
    /// A file at the ledger's path that is no ledger git-hand made whole (empty, shorter than a
    /// page, not a database, no schema). It is never initialised again: only the process that
    /// creates a ledger initialises it.
    #[error(
        "the ledger at {} is damaged: {found}; nothing was changed and git-hand will not \
         replace it",
        path.display()
    )]
    Damaged { path: PathBuf, found: String },
    /// SQLite found a damaged page while working.
    #[error("the ledger is damaged ({0}); nothing was changed")]
    Malformed(rusqlite::Error),
    #[error(
        "the ledger file {} is mode {mode:04o}, open to other users, and cannot be made private \
         ({source}); nothing was changed",
        path.display()
    )]
    NotPrivate {
        path: PathBuf,
        mode: u32,
        source: std::io::Error,
    },
    #[error(
        "the ledger at {} has schema version {found}, newer than this git-hand understands \
         (version {supported}); upgrade git-hand",
        path.display()
    )]
    TooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    #[error("ledger busy, retry")]
    Busy,
    #[error("migrating the ledger to version {version} failed: {source}")]
    Migration {
        version: i64,
        source: rusqlite::Error,
    },
    #[error("ledger error: {0}")]
    Sql(rusqlite::Error),
    #[error("cannot make the ledger durable (fsync of {}): {source}", path.display())]
    Sync {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot create a random id: {0}")]
    Random(std::io::Error),
    #[error("the ledger holds a row it cannot read: {0}")]
    Corrupt(String),
    /// What a transaction relied on changed under it; the transaction was rolled back.
    #[error("the ledger changed while this ran ({0}); nothing was changed, run it again")]
    Raced(String),
    /// The team ledger's server could not be reached or refused the connection.
    #[error(transparent)]
    Server(Box<server::ServerError>),
    /// The team ledger's server refused a statement (or the connection broke in one).
    #[error("team ledger error: {}", pg_message(.0))]
    Pg(postgres::Error),
    /// The team ledger's server did not answer a statement within `read_timeout` (the
    /// connection was dropped). An operation, and opening a ledger, report it as
    /// [`LedgerError::ConnectionLost`].
    #[error("team ledger error: {0}")]
    NoAnswer(server::NoAnswer),
    #[error(
        "the team ledger at {at} has schema version {found}, newer than this git-hand \
         understands (version {supported}); upgrade git-hand"
    )]
    ServerTooNew {
        at: String,
        found: i64,
        supported: i64,
    },
    /// The role lacks a privilege a write needs (a read-only role); the transaction was rolled back.
    #[error(
        "role \"{}\" may not write the team ledger at {} ({}); nothing was changed: writing \
         needs the daily role (docs/team.md, Roles)",
        .0.user, .0.at, .0.reason
    )]
    ServerReadOnly(Box<team::Refusal>),
    /// The schema is older than this binary and the role may not migrate it.
    #[error(
        "the team ledger at {} has schema version {found}, older than this git-hand's \
         {supported}, and role \"{}\" may not migrate it ({}); nothing was changed: open it \
         once with the role that owns the schema (docs/team.md, Roles)",
        refusal.at, refusal.user, refusal.reason
    )]
    ServerCannotMigrate {
        found: i64,
        supported: i64,
        refusal: Box<team::Refusal>,
    },
    /// The connection to the team ledger broke during an operation that is not retried (or
    /// whose retry could not connect); what became of it is in [`team::Fate`].
    #[error(
        "the connection to the team ledger at {} broke ({}); {}",
        .0.at, .0.reason, match .0.fate {
            team::Fate::NothingWritten => "nothing was changed",
            team::Fate::Unknown => "it broke while this was being committed, so it may or may \
                                    not have been recorded",
        }
    )]
    ConnectionLost(Box<team::Lost>),
    /// A reading verb found an older schema: readers never migrate.
    #[error(
        "the team ledger at {at} has schema version {found}, older than this git-hand's \
         {supported}; a command that only reads does not migrate it: run git hand doctor once, \
         with the role that owns the schema"
    )]
    ServerNeedsMigration {
        at: String,
        found: i64,
        supported: i64,
    },
    #[error("migrating the team ledger to version {version} failed: {source}")]
    ServerMigration {
        version: i64,
        source: postgres::Error,
    },
}

impl From<server::ServerError> for LedgerError {
    fn from(e: server::ServerError) -> Self {
        LedgerError::Server(Box::new(e))
    }
}

/// What the server said, not only "db error" (the client library's own text for every error
/// the server sent): its message and SQLSTATE, or the client's error and its cause (a closed
/// connection, an I/O error). Server messages never carry the URL's password.
fn pg_message(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{} ({})", db.message(), db.code().code());
    }
    match std::error::Error::source(e) {
        Some(cause) => format!("{e}: {cause}"),
        None => e.to_string(),
    }
}

impl From<postgres::Error> for LedgerError {
    fn from(e: postgres::Error) -> Self {
        // A writer that waited `lock_timeout` for another's lock: as SQLite's busy.
        if e.code() == Some(&postgres::error::SqlState::LOCK_NOT_AVAILABLE) {
            LedgerError::Busy
        } else {
            LedgerError::Pg(e)
        }
    }
}

impl From<server::ClientError> for LedgerError {
    fn from(e: server::ClientError) -> Self {
        match e {
            server::ClientError::Pg(e) => e.into(),
            server::ClientError::NoAnswer(e) => LedgerError::NoAnswer(e),
        }
    }
}

/// A stored word no variant has (a row written by something else): the row cannot be read.
impl From<crate::word::Unknown> for LedgerError {
    fn from(e: crate::word::Unknown) -> Self {
        LedgerError::Corrupt(e.to_string())
    }
}

impl From<rusqlite::Error> for LedgerError {
    fn from(e: rusqlite::Error) -> Self {
        if is_busy(&e) {
            LedgerError::Busy
        } else if file::is_damage(&e) {
            LedgerError::Malformed(e)
        } else {
            LedgerError::Sql(e)
        }
    }
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

pub type Result<T, E = LedgerError> = std::result::Result<T, E>;

/// An open ledger.
pub struct Ledger {
    store: Store,
    path: PathBuf,
    clock: Box<dyn Clock>,
    /// How a commit reaches the disk, which decides what a durable commit still owes it.
    journal: Journal,
    /// Inside [`Ledger::write_relaxed`]: the commit is not durable, so it syncs nothing.
    relaxed: bool,
    /// What opening did that the user should hear about (a file made private).
    notices: Vec<String>,
}

/// A machine's id as the ledger records it (`repos`, `slots` and `tasks.machine`, and the
/// qualified keys of worktree resources): empty for a file ledger, whose every row is this
/// machine's. Shared, so that every transaction carries it without copying it.
pub type Machine = std::sync::Arc<str>;

impl std::fmt::Debug for Ledger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ledger")
            .field("place", &self.place())
            .finish_non_exhaustive()
    }
}

impl Ledger {
    /// Opens the ledger at `path` with the wall clock, migrating it to the latest schema, and
    /// creates it when there is no file there. A file that is there but is no ledger is refused
    /// ([`LedgerError::Damaged`]), never replaced. Whether a *missing* ledger may be created is
    /// the caller's question (the ledger cannot tell that stamps and pools name it).
    pub fn open(path: &Path) -> Result<Self> {
        Self::open_with_clock(path, Box::new(SystemClock))
    }

    /// Opens the ledger with an injected clock (tests and simulations).
    pub fn open_with_clock(path: &Path, clock: Box<dyn Clock>) -> Result<Self> {
        let on_disk = match file::inspect(path)? {
            Some(found) => found,
            None => {
                file::create(path, |conn| schema::migrate(conn, path))?;
                file::inspect(path)?.ok_or_else(|| LedgerError::Open {
                    path: path.to_path_buf(),
                    source: std::io::Error::other("the new ledger vanished as it was published"),
                })?
            }
        };
        Self::connect(path, on_disk, clock, Purpose::Write)
    }

    /// Connects to the team ledger at `url` (a PostgreSQL server), migrating its schema; every
    /// lease time comes from the server's clock unless `clock` is given (tests).
    pub fn open_team(url: &server::ServerUrl, clock: Option<Box<dyn Clock>>) -> Result<Self> {
        let mut team = team::Team::open(url, clock)?;
        let notices = std::mem::take(&mut team.notices);
        Ok(Self::team(team, notices))
    }

    fn team(team: team::Team, notices: Vec<String>) -> Self {
        Self {
            // A team ledger has no file; `place()` gives its URL (without the password).
            path: PathBuf::new(),
            store: Store::Team(Box::new(team)),
            clock: Box::new(SystemClock),
            journal: Journal::Server,
            relaxed: false,
            notices,
        }
    }

    /// Connects to the team ledger at `url` for a verb that only reads, changing nothing on the
    /// server: `Ok(None)` where git-hand never made a ledger in that database (the caller reads
    /// an empty one), an older schema refused ([`LedgerError::ServerNeedsMigration`]).
    pub fn open_team_existing(url: &server::ServerUrl) -> Result<Option<Self>> {
        let Some(mut team) = team::Team::open_existing(url)? else {
            return Ok(None);
        };
        let notices = std::mem::take(&mut team.notices);
        Ok(Some(Self::team(team, notices)))
    }

    /// This ledger as seen from machine `id` (a team ledger): its repositories, slots and
    /// tasks are that machine's, and its worktree resources are qualified with it. A file
    /// ledger is one machine and keeps the empty id.
    pub fn on_machine(mut self, id: &str) -> Self {
        if let Store::Team(team) = &mut self.store {
            team.machine = Machine::from(id);
        }
        self
    }

    /// The machine this ledger's transactions act for (empty: a file ledger).
    pub fn machine(&self) -> &str {
        match &self.store {
            Store::File(_) => "",
            Store::Team(team) => &team.machine,
        }
    }

    /// Creates the ledger at `path` with `init` run in the creating transaction, so no process
    /// ever sees it without what `init` wrote (`doctor --repair` rebuilding a lost ledger).
    /// `Ok(None)` when a file appeared at `path` first: nothing was written to it.
    pub fn create_with<T>(
        path: &Path,
        init: impl FnOnce(&Tx<'_>) -> Result<T>,
    ) -> Result<Option<T>> {
        let mut out = None;
        let published = file::create(path, |conn| {
            schema::migrate(conn, path)?;
            let tx = schema::immediate(conn)?;
            let now = SystemClock.now_ms().max(high_water_mark(Db::Sqlite(&tx))?);
            remember_now(Db::Sqlite(&tx), now)?;
            out = Some(init(&Tx::new(Db::Sqlite(&tx), now))?);
            tx.commit()?;
            Ok(())
        })?;
        Ok(out.filter(|_| published))
    }

    /// An empty ledger in memory: what a read-only verb sees where no ledger file exists yet, so
    /// that reading never creates one.
    pub fn empty() -> Result<Self> {
        let path = PathBuf::from(":memory:");
        let conn = Connection::open_in_memory().map_err(|source| LedgerError::OpenSql {
            path: path.clone(),
            source,
        })?;
        schema::migrate(&conn, &path)?;
        Ok(Self {
            store: Store::File(conn),
            path,
            clock: Box::new(SystemClock),
            journal: Journal::Memory,
            relaxed: false,
            notices: vec![],
        })
    }

    /// Opens an existing ledger for reading only: it is never created, and written only to
    /// migrate an old one. Returns `Ok(None)` when there is no ledger file; a file that is no
    /// ledger is an error, never read as an empty ledger. This is the pre-push allow path: a few
    /// `stat`s, one read and no write.
    pub fn open_existing(path: &Path) -> Result<Option<Self>> {
        match file::inspect(path)? {
            Some(on_disk) => {
                Self::connect(path, on_disk, Box::new(SystemClock), Purpose::Read).map(Some)
            }
            None => Ok(None),
        }
    }

    /// Opens the ledger at `path` for writing, as [`Ledger::open`] does, but never creates it:
    /// `Ok(None)` when there is no ledger file (a lease renewal running beside a command must
    /// not bring back a ledger that vanished).
    pub fn open_if_present(path: &Path) -> Result<Option<Self>> {
        match file::inspect(path)? {
            Some(on_disk) => {
                Self::connect(path, on_disk, Box::new(SystemClock), Purpose::Write).map(Some)
            }
            None => Ok(None),
        }
    }

    /// Connects to the ledger file found at `path`, which must hold git-hand's schema.
    fn connect(
        path: &Path,
        on_disk: file::OnDisk,
        clock: Box<dyn Clock>,
        purpose: Purpose,
    ) -> Result<Self> {
        let sql_err = |source| LedgerError::OpenSql {
            path: path.to_path_buf(),
            source,
        };
        // Never SQLITE_OPEN_CREATE: a file that vanished since `inspect` is an error, not a
        // new empty database.
        let mut conn = Connection::open_with_flags(
            path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(sql_err)?;
        configure(&mut conn)?;
        let found = match schema::user_version(&conn) {
            Err(LedgerError::Malformed(_)) | Ok(0) => return Err(file::damaged(path)),
            other => other?,
        };
        refuse_newer(found, path)?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        let journal = if purpose == Purpose::Read && found == LATEST_VERSION {
            // Reading needs neither foreign keys nor a journal check.
            Journal::Wal
        } else {
            conn.pragma_update(None, "foreign_keys", true)?;
            schema::migrate(&conn, path)?;
            if schema::ensure_wal(&conn)? {
                Journal::Wal
            } else {
                Journal::Rollback
            }
        };
        // Opening created the WAL if it was missing.
        sync_dir_if_wal_appeared(path, on_disk.had_wal)?;
        Ok(Self {
            store: Store::File(conn),
            path: path.to_path_buf(),
            clock,
            journal,
            relaxed: false,
            notices: on_disk.notices,
        })
    }

    /// What opening the ledger did that the user should hear about (a file made private), for
    /// the command line to print; taken once.
    pub fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    /// On a team ledger, this machine's clock against the server's, in milliseconds (positive:
    /// ahead); `None` for a file ledger, whose only clock is this machine's.
    pub fn clock_skew_ms(&mut self) -> Result<Option<i64>> {
        match &mut self.store {
            Store::File(_) => Ok(None),
            Store::Team(team) => team.clock_skew_ms().map(Some),
        }
    }

    /// Where this ledger is: its file, or the team ledger's URL (which prints without its
    /// password), as stamps record it and messages show it.
    pub fn place(&self) -> Place {
        match &self.store {
            Store::File(_) => Place::File(self.path.clone()),
            Store::Team(team) => Place::Server(team.url().clone()),
        }
    }

    /// Changes how long a writer waits for another before [`LedgerError::Busy`] (tests use a
    /// short one; the binary keeps the 5 s default).
    pub fn set_busy_timeout(&mut self, timeout: Duration) -> Result<()> {
        match &mut self.store {
            Store::File(conn) => wait_for_the_lock(conn, timeout),
            Store::Team(team) => team.set_lock_timeout(timeout),
        }
    }

    /// Runs `f` inside one `BEGIN IMMEDIATE` transaction and commits it when `f` succeeds.
    ///
    /// `now` inside the transaction is the later of the clock and the largest `now` the ledger
    /// has seen, and the ledger remembers it: a clock that went backwards can never extend a
    /// lease, because every expiry is computed from, and compared with, that high-water mark.
    pub fn write<T>(&mut self, f: impl FnOnce(&Tx<'_>) -> Result<T>) -> Result<T> {
        let conn = match &mut self.store {
            Store::File(conn) => conn,
            Store::Team(team) => return team.write(f),
        };
        let clock_now = self.clock.now_ms();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let seen = high_water_mark(Db::Sqlite(&tx))?;
        let now = clock_now.max(seen);
        if now > seen {
            remember_now(Db::Sqlite(&tx), now)?;
        }
        let out = f(&Tx::new(Db::Sqlite(&tx), now))?;
        tx.commit()?;
        // A relaxed commit owes nothing: it leaves the WAL to the durable one that follows it
        // (a truncation fsyncs the database, which is what relaxing avoids).
        match self.journal {
            _ if self.relaxed => {}
            Journal::Wal => self.keep_wal_short(),
            // The commit point is the deletion of the rollback journal, which SQLite no longer
            // syncs (`SQLITE_DISABLE_DIRSYNC`).
            Journal::Rollback => sync_dir_of(&self.path)?,
            Journal::Memory | Journal::Server => {}
        }
        Ok(out)
    }

    /// Like [`Ledger::write`], but the commit is not fsynced (WAL `synchronous=NORMAL`): it
    /// survives a crash of the process, not a power cut, until the next durable commit syncs the
    /// WAL. Only for bookkeeping that follows a durable intent and that recovery redoes when it is
    /// lost (spawn's activation, teardown's release and finish: `doctor` settles a `spawning` or
    /// `tearing-down` row). A token is never handed out by a relaxed commit.
    pub fn write_relaxed<T>(&mut self, f: impl FnOnce(&Tx<'_>) -> Result<T>) -> Result<T> {
        // A team ledger's commit is the server's to make durable: nothing to relax.
        let Store::File(conn) = &self.store else {
            return self.write(f);
        };
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        self.relaxed = true;
        let out = self.write(f);
        self.relaxed = false;
        if let Store::File(conn) = &self.store {
            conn.pragma_update(None, "synchronous", "FULL")?;
        }
        out
    }

    /// Like [`Ledger::write`], but the commit's fsync runs on another thread while the caller
    /// goes on: spawn records its intent, then runs git for milliseconds, and the disk write
    /// hides behind it. The commit is visible to every process at once; it is durable once
    /// [`PendingSync::wait`] returns, and nothing it records may be handed out (a credential, the
    /// slot's path on stdout) before that. Outside WAL mode it is an ordinary durable write.
    /// The thread also truncates a long WAL, on a connection of its own.
    pub fn write_syncing_meanwhile<T>(
        &mut self,
        f: impl FnOnce(&Tx<'_>) -> Result<T>,
    ) -> Result<(T, PendingSync)> {
        self.write_deferring_sync(f, WalTrim::OnItsOwnConnection)
    }

    /// Like [`Ledger::write_syncing_meanwhile`], but the thread only fsyncs: truncating a long
    /// WAL is left to this connection, whose caller calls [`Ledger::keep_wal_short`] where it
    /// waits anyway (spawn: while `git switch` runs). A second connection parses the whole
    /// schema again (~0.5 M instructions, a tenth of a spawn) only to truncate.
    pub fn write_syncing_wal_meanwhile<T>(
        &mut self,
        f: impl FnOnce(&Tx<'_>) -> Result<T>,
    ) -> Result<(T, PendingSync)> {
        self.write_deferring_sync(f, WalTrim::LeftToCaller)
    }

    fn write_deferring_sync<T>(
        &mut self,
        f: impl FnOnce(&Tx<'_>) -> Result<T>,
        trim: WalTrim,
    ) -> Result<(T, PendingSync)> {
        if self.journal != Journal::Wal {
            return Ok((self.write(f)?, PendingSync::done()));
        }
        let out = self.write_relaxed(f)?;
        let ledger = self.path.clone();
        let sync = move || sync_wal(&ledger, trim);
        let syncing = match std::thread::Builder::new().spawn(sync.clone()) {
            Ok(thread) => PendingSync {
                thread: Some(thread),
                wal: wal_path(&self.path),
            },
            // No thread to be had: sync here and now.
            Err(_) => {
                sync()?;
                PendingSync::done()
            }
        };
        Ok((out, syncing))
    }

    /// Truncates the WAL once it holds more than [`WAL_CHECKPOINT_BYTES`]. Every git-hand
    /// process is the first connection to open the ledger, and the first connection rebuilds the
    /// WAL index by reading every frame, so a long WAL slows every start-up (measured: ~10 ms at
    /// 1 MiB); SQLite's own checkpoints cannot restart the WAL across processes, because that
    /// rebuild forgets what was already checkpointed. The truncation never waits: with a reader
    /// in the way it is left to the next writer. Every durable commit does this itself; a caller
    /// of [`Ledger::write_syncing_wal_meanwhile`] calls it where it waits anyway.
    pub fn keep_wal_short(&mut self) {
        if let Store::File(conn) = &mut self.store
            && self.journal == Journal::Wal
            && wal_is_long(&wal_path(&self.path))
        {
            let _ = truncate_wal(conn);
            let _ = wait_for_the_lock(conn, BUSY_TIMEOUT);
        }
    }

    /// Like [`Ledger::write`], but on a team ledger a connection that breaks during the write
    /// (the server restarted, the backend was terminated, the network cut) is met with one
    /// more run of `f`, whole, on a new connection made within the connect timeout. Only for a
    /// write that re-running cannot change the outcome of, whether or not the first run
    /// committed: `why` says which one it is (see [`Idempotent`]), and the caller's comment
    /// says why. Every other write fails with [`LedgerError::ConnectionLost`] instead. On a
    /// file ledger there is no connection to lose: this is [`Ledger::write`].
    pub fn write_idempotent<T>(
        &mut self,
        why: Idempotent,
        f: impl Fn(&Tx<'_>) -> Result<T>,
    ) -> Result<T> {
        let _ = why;
        match &mut self.store {
            Store::Team(team) => team.write_retrying(f),
            Store::File(_) => self.write(f),
        }
    }

    /// [`Ledger::write_idempotent`] with [`Ledger::write_relaxed`]'s commit on a file ledger.
    pub fn write_relaxed_idempotent<T>(
        &mut self,
        why: Idempotent,
        f: impl Fn(&Tx<'_>) -> Result<T>,
    ) -> Result<T> {
        let _ = why;
        match &mut self.store {
            Store::Team(team) => team.write_retrying(f),
            Store::File(_) => self.write_relaxed(f),
        }
    }

    /// Runs `f` against one consistent read snapshot. Nothing is written. On a team ledger a
    /// connection that breaks is met with one more run of `f` on a new connection (a read
    /// changes nothing, so running it twice cannot either): `f` may run twice.
    pub fn read<T>(&mut self, f: impl Fn(&View<'_>) -> Result<T>) -> Result<T> {
        let conn = match &mut self.store {
            Store::File(conn) => conn,
            Store::Team(team) => return team.read(f),
        };
        let clock_now = self.clock.now_ms();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
        let now = clock_now.max(high_water_mark(Db::Sqlite(&tx))?);
        let out = f(&View::new(Db::Sqlite(&tx), now))?;
        tx.finish()?;
        Ok(out)
    }
}

/// Why a write may run a second time when its connection breaks ([`Ledger::write_idempotent`]):
/// running it again, whether or not the first run committed, gives the outcome one run gives.
/// Nothing else is: spawn's intent, teardown's pin and every other write fail instead. A spawn or
/// teardown retries its writes after git has changed the slot (a lost connection there must not
/// strand a task half made or half freed, issue 22).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Idempotent {
    /// Acquiring for one holder: when the first run committed, the second finds that holder's
    /// live tenure and returns it (`fresh: false`, the same lease id and token), never a second
    /// token; when it did not, the second is the first.
    AcquireBySameHolder,
    /// Renewing a tenure (by holder or lease id): a second renewal sets the expiry again from
    /// the server's later now, which is what the caller asked for.
    Renew,
    /// Releasing a tenure (by holder or lease id): when the first run committed, the second
    /// finds nothing of the caller's to release (and a lease id never ends another tenure). By
    /// lease id, the second run of a release whose `COMMIT` went unanswered reports the tenure
    /// ended as released, as the first did, even when someone acquired the resource in between.
    Release,
    /// Recording a task's step ([`Tx::set_task_step`]): a second run records the same step.
    SetStep,
    /// Ending a task ([`Tx::end_task`]): its leases are released by their lease ids (a second
    /// run finds them ended and releases nothing) and only a task not yet done is marked done.
    EndTask,
    /// Taking back a spawn's intent ([`Tx::withdraw_intent`]): its leases are released by their
    /// lease ids and only a row still `spawning` is deleted, so a second run finds nothing left.
    Withdraw,
    /// Activating a spawning task (spawn's last transaction): when the first run committed, the
    /// second finds the task active on the same lease and returns it as the first did; when it
    /// did not, the second is the first.
    Activate,
}

/// How the ledger's commits reach the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Journal {
    /// Write-ahead log: what git-hand sets up, and what a deferred sync relies on.
    Wal,
    /// A rollback journal (a ledger git-hand could not switch back to WAL yet): every commit
    /// is durable inline.
    Rollback,
    /// [`Ledger::empty`]: nothing reaches a disk.
    Memory,
    /// A team ledger: each commit is durable when the server acknowledges it.
    Server,
}

/// Where the ledger's rows live.
enum Store {
    /// The SQLite file (or memory, for [`Ledger::empty`]).
    File(Connection),
    /// A team ledger on a PostgreSQL server.
    Team(Box<team::Team>),
}

/// A commit of [`Ledger::write_syncing_meanwhile`] on its way to the disk (`thread` is `None`
/// once it is there).
#[must_use = "a commit is durable only once waited for"]
pub struct PendingSync {
    thread: Option<std::thread::JoinHandle<Result<()>>>,
    wal: PathBuf,
}

impl PendingSync {
    fn done() -> Self {
        Self {
            thread: None,
            wal: PathBuf::new(),
        }
    }

    /// Blocks until the commit is on disk.
    pub fn wait(self) -> Result<()> {
        match self.thread.map(std::thread::JoinHandle::join) {
            None => Ok(()),
            Some(Ok(synced)) => synced,
            Some(Err(_)) => Err(LedgerError::Sync {
                path: self.wal,
                source: std::io::Error::other("the thread syncing the ledger panicked"),
            }),
        }
    }
}

/// Who truncates a long WAL after a commit whose fsync runs on another thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WalTrim {
    /// The syncing thread, on a connection of its own.
    OnItsOwnConnection,
    /// The caller, on the ledger's connection ([`Ledger::keep_wal_short`]).
    LeftToCaller,
}

/// What [`Ledger::write_syncing_meanwhile`] leaves to another thread: fsync the WAL (which
/// makes the file durable whichever descriptor asks: SQLite's relaxed commit wrote the frames
/// and only skipped this call), then, unless the caller does it, the truncation a durable
/// commit does inline (it fsyncs the database too), on a connection of its own.
fn sync_wal(ledger: &Path, trim: WalTrim) -> Result<()> {
    let wal = wal_path(ledger);
    let sync_err = |source| LedgerError::Sync {
        path: wal.clone(),
        source,
    };
    std::fs::File::open(&wal)
        .and_then(|f| f.sync_data())
        .map_err(sync_err)?;
    if trim == WalTrim::OnItsOwnConnection
        && wal_is_long(&wal)
        && let Ok(conn) = Connection::open_with_flags(
            ledger,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
    {
        let _ = truncate_wal(&conn);
    }
    Ok(())
}

/// After opening: when the WAL did not exist before and does now, this process created it, and
/// its directory entry is made durable before anything commits into it. SQLite would do that
/// on the first sync of every WAL it opens, in every process, so it is built without
/// (`SQLITE_DISABLE_DIRSYNC`, .cargo/config.toml).
fn sync_dir_if_wal_appeared(ledger: &Path, had_wal: bool) -> Result<()> {
    let wal = wal_path(ledger);
    if !had_wal && wal.exists() {
        sync_dir_of(&wal)?;
    }
    Ok(())
}

fn wal_is_long(wal: &Path) -> bool {
    std::fs::metadata(wal).is_ok_and(|m| m.len() > WAL_CHECKPOINT_BYTES)
}

/// Checkpoints the whole WAL into the database and truncates it, unless that would wait for
/// another process: then it is left to the next writer. Leaves `conn` without a busy handler.
fn truncate_wal(conn: &Connection) -> Result<()> {
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
        true,
    )?;
    conn.busy_timeout(Duration::ZERO)?;
    conn.pragma_update(None, "wal_checkpoint", "TRUNCATE")?;
    Ok(())
}

/// Makes the directory entry of `file` durable.
fn sync_dir_of(file: &Path) -> Result<()> {
    let dir = file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|source| LedgerError::Sync {
            path: dir.to_path_buf(),
            source,
        })
}

/// SQLite's write-ahead log beside the ledger file.
fn wal_path(ledger: &Path) -> PathBuf {
    file::sibling(ledger, "-wal")
}

/// The largest `now` any writer has recorded.
fn high_water_mark(db: Db<'_>) -> Result<Millis> {
    Ok(db
        .once()
        .row("SELECT max_now FROM clock", &[], |r| r.get(0))?
        .unwrap_or(0))
}

/// Records `now` as the largest `now` any writer has seen.
fn remember_now(db: Db<'_>, now: Millis) -> Result<()> {
    db.once().exec("UPDATE clock SET max_now = ?1", &[&now])?;
    Ok(())
}

/// Connection settings every git-hand process relies on (none of them writes to the file).
///
/// Checkpoint-on-close is off: by default the last connection to close checkpoints the WAL,
/// fsyncs the database and deletes `-wal` and `-shm`, so every short-lived git-hand process
/// (and every pre-push read) paid extra fsyncs and recreated both files on the next open. With
/// it off the WAL persists, a commit costs the one fsync that makes a token durable before it is
/// handed out, and [`Ledger::keep_wal_short`] bounds the WAL instead.
///
/// The query planner's stability guarantee (QPSG) is on: a statement's plan never depends on the
/// values bound to it. Without it SQLite compiled some cached statements a second time when they
/// were run with a new value (0.7 M instructions of a 6.4 M spawn, 0.11 M of a pre-push), and a
/// short-lived process gains nothing from a plan tuned to one value: every lookup git-hand makes
/// is an equality on an indexed column, and the plans were checked to be the same
/// (docs/performance.md).
fn configure(conn: &mut Connection) -> Result<()> {
    wait_for_the_lock(conn, BUSY_TIMEOUT)?;
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
        true,
    )?;
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    Ok(())
}

/// Makes `conn` wait up to `timeout` for another process's lock, polling every [`FAST_POLL`] at
/// first. SQLite's own handler (behind `busy_timeout`) sleeps 1, 2, 5, 10, 15, 20, 25 ms and
/// more between tries: a spawn queued behind a commit that holds the lock for about a
/// millisecond overslept by several, and eight parallel spawns piled up behind each other.
fn wait_for_the_lock(conn: &mut Connection, timeout: Duration) -> Result<()> {
    let mut since: Option<std::time::Instant> = None;
    conn.busy_handler(Some(move |attempt: i32| {
        let waited = if attempt == 0 {
            since = Some(std::time::Instant::now());
            Duration::ZERO
        } else {
            since.map_or(Duration::ZERO, |t| t.elapsed())
        };
        if waited >= timeout {
            return false;
        }
        let nap = if waited < FAST_POLL_FOR {
            FAST_POLL
        } else {
            SLOW_POLL
        };
        std::thread::sleep(nap.min(timeout - waited));
        true
    }))?;
    Ok(())
}

/// The WAL size past which a writer truncates it (about 60 pages: a dozen lease operations).
const WAL_CHECKPOINT_BYTES: u64 = 256 * 1024;

/// Refuses a ledger from the future before anything can write to it.
fn refuse_newer(found: i64, path: &Path) -> Result<()> {
    if found > LATEST_VERSION {
        return Err(LedgerError::TooNew {
            path: path.to_path_buf(),
            found,
            supported: LATEST_VERSION,
        });
    }
    Ok(())
}

/// Why a connection is opened: reading an up-to-date ledger skips what only writers need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Purpose {
    Read,
    Write,
}

/// A read snapshot: the queries every path may run.
pub struct View<'a> {
    db: Db<'a>,
    now: Millis,
    /// See [`Machine`]: whose repositories, slots and tasks "this machine's" means.
    machine: Machine,
}

impl<'a> View<'a> {
    fn new(db: Db<'a>, now: Millis) -> Self {
        Self {
            db,
            now,
            machine: Machine::default(),
        }
    }

    /// This snapshot as seen from `machine` (a team ledger's [`Ledger::read`]; the server's
    /// pre-receive hook judging a lease another machine was granted).
    pub fn for_machine(&self, machine: &Machine) -> Self {
        Self {
            db: self.db,
            now: self.now,
            machine: machine.clone(),
        }
    }

    /// The instant this snapshot judges liveness against.
    pub fn now(&self) -> Millis {
        self.now
    }

    /// The machine this snapshot acts for: empty on a file ledger.
    pub fn machine(&self) -> &str {
        &self.machine
    }

    /// The worktree resource of this machine's worktree at `key` (see [`Resource::worktree_on`]).
    pub fn worktree(&self, key: &WorktreeKey) -> Resource {
        Resource::worktree_on(&self.machine, key)
    }
}

/// One write transaction. Reads are available through [`Tx::view`].
pub struct Tx<'a> {
    db: Db<'a>,
    now: Millis,
    machine: Machine,
    /// This is the second run of an [`Idempotent`] write whose first run's `COMMIT` was sent
    /// and never answered (see [`Tx::after_unanswered_commit`]).
    after_unanswered_commit: bool,
}

impl<'a> Tx<'a> {
    fn new(db: Db<'a>, now: Millis) -> Self {
        Self {
            db,
            now,
            machine: Machine::default(),
            after_unanswered_commit: false,
        }
    }

    /// Whether this is the second run of an [`Idempotent`] write whose first run sent its
    /// `COMMIT` and lost the answer: the first run may have done what this one is asked to, and
    /// others may have acted since (a release then finds its tenure already ended).
    pub fn retries_an_unanswered_commit(&self) -> bool {
        self.after_unanswered_commit
    }

    pub fn now(&self) -> Millis {
        self.now
    }
    /// The read queries, inside this transaction.
    pub fn view(&self) -> View<'a> {
        View {
            db: self.db,
            now: self.now,
            machine: self.machine.clone(),
        }
    }
}
