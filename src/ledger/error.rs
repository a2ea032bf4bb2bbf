//! Everything that can go wrong with a ledger, file or team, and how the drivers' errors map
//! onto it (a busy SQLite file and a PostgreSQL lock timeout are both [`LedgerError::Busy`]).

use std::path::PathBuf;

use super::{file, server, team};

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
    #[error("team ledger error: {}", server::pg_message(.0))]
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
         {supported}; a command that only reads does not migrate it: run {doctor} once, with \
         the role that owns the schema",
        doctor = crate::hint::hand("doctor")
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

pub(super) fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

pub type Result<T, E = LedgerError> = std::result::Result<T, E>;
