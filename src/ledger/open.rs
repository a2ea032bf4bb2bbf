//! The one way to open a ledger, [`Ledger::open`]: a place (a file or a team ledger's URL) and
//! a [`Mode`] that says whether it may be created and whether it may be migrated. Two more ways
//! make a ledger rather than open one: [`Ledger::create_with`] (a file born with rows in it) and
//! [`Ledger::empty`] (memory, for a reader where there is no file).

use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::connection::{configure, refuse_newer};
use super::db::Db;
use super::tx::{Tx, high_water_mark, remember_now};
use super::wal::sync_dir_if_wal_appeared;
use super::{Journal, Ledger, LedgerError, Place, Result, Store, file, schema, team};
use crate::clock::{Clock, SystemClock};

/// What opening a ledger may do to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// For writing, creating it where there is none: a missing file is made with the latest
    /// schema, a server's schema is made or migrated. Whether a *missing* file may be created
    /// is the caller's question (the ledger cannot tell that stamps and pools name it).
    Create,
    /// For writing, never creating it: `Ok(None)` where there is no file (a lease renewal
    /// running beside a command must not bring back a ledger that vanished). An old schema is
    /// migrated.
    Write,
    /// For a verb that only reads: never created; a file is written only to migrate an old one,
    /// a server's schema never (an older one is refused, [`LedgerError::ServerNeedsMigration`];
    /// none is `Ok(None)`, which the caller reads as an empty ledger). This is the pre-push
    /// allow path: a few `stat`s, one read and no write.
    Read,
}

impl Ledger {
    /// Opens the ledger at `place` as `mode` allows, with the wall clock (a team ledger: the
    /// server's). `Ok(None)` only where `mode` may not create it and there is none. A file that
    /// is there but is no ledger is refused ([`LedgerError::Damaged`]), never replaced.
    pub fn open(place: impl Into<Place>, mode: Mode) -> Result<Option<Self>> {
        match (place.into(), mode) {
            // Every writer of a server makes or migrates its schema: there `Write` is `Create`.
            (place, Mode::Create) | (place @ Place::Server(_), Mode::Write) => {
                Self::open_creating(place).map(Some)
            }
            (Place::File(path), mode) => match file::inspect(&path)? {
                Some(on_disk) => connect(&path, on_disk, mode).map(Some),
                None => Ok(None),
            },
            // Reading changes nothing on the server: no schema made where there is none, none
            // migrated.
            (Place::Server(url), Mode::Read) => {
                Ok(team::Team::open_existing(&url)?.map(Self::team))
            }
        }
    }

    /// [`Ledger::open`] with [`Mode::Create`], which always gives a ledger.
    pub fn open_creating(place: impl Into<Place>) -> Result<Self> {
        match place.into() {
            Place::File(path) => create_or_open_file(&path),
            Place::Server(url) => Ok(Self::team(team::Team::open(&url)?)),
        }
    }

    /// This ledger judging time by `clock` instead of the wall clock or the server's (tests and
    /// simulations; the binary never injects one).
    pub fn with_clock(mut self, clock: Box<dyn Clock>) -> Self {
        match &mut self.store {
            Store::File(_) => self.clock = clock,
            Store::Team(team) => team.clock = Some(clock),
        }
        self
    }

    fn team(mut team: team::Team) -> Self {
        let notices = std::mem::take(&mut team.notices);
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

    /// Creates the ledger at `path` with `init` run in the creating transaction, so no process
    /// ever sees it without what `init` wrote (`doctor --repair` rebuilding a lost ledger).
    /// `Ok(None)` when a file appeared at `path` first: nothing was written to it.
    pub(crate) fn create_with<T>(
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
}

/// [`Ledger::open_creating`] of a file: made with the latest schema where there is none.
fn create_or_open_file(path: &Path) -> Result<Ledger> {
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
    connect(path, on_disk, Mode::Create)
}

/// Connects to the ledger file found at `path`, which must hold git-hand's schema.
fn connect(path: &Path, on_disk: file::OnDisk, mode: Mode) -> Result<Ledger> {
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
    let journal = if mode == Mode::Read && found == super::LATEST_VERSION {
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
    Ok(Ledger {
        store: Store::File(conn),
        path: path.to_path_buf(),
        clock: Box::new(SystemClock),
        journal,
        relaxed: false,
        notices: on_disk.notices,
    })
}
