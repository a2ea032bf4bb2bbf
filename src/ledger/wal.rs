//! The write-ahead log beside a ledger file: its fsync on another thread, the directory entry
//! made durable when a process created it, and the truncation that keeps every start-up short.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;

use super::file::{sibling, sync_dir_of};
use super::{LedgerError, Result};

/// Who truncates a long WAL after a commit whose fsync runs on another thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WalTrim {
    /// The syncing thread, on a connection of its own.
    OnItsOwnConnection,
    /// The caller, on the ledger's connection ([`Ledger::keep_wal_short`]).
    LeftToCaller,
}

/// What a write with [`super::Durability::SyncedMeanwhile`] leaves to another thread: fsync the WAL (which
/// makes the file durable whichever descriptor asks: SQLite's relaxed commit wrote the frames
/// and only skipped this call), then, unless the caller does it, the truncation a durable
/// commit does inline (it fsyncs the database too), on a connection of its own.
pub(super) fn sync_wal(ledger: &Path, trim: WalTrim) -> Result<()> {
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
pub(super) fn sync_dir_if_wal_appeared(ledger: &Path, had_wal: bool) -> Result<()> {
    let wal = wal_path(ledger);
    if !had_wal && wal.exists() {
        sync_dir_of(&wal)?;
    }
    Ok(())
}

pub(super) fn wal_is_long(wal: &Path) -> bool {
    std::fs::metadata(wal).is_ok_and(|m| m.len() > WAL_CHECKPOINT_BYTES)
}

/// Checkpoints the whole WAL into the database and truncates it, unless that would wait for
/// another process: then it is left to the next writer. Leaves `conn` without a busy handler.
pub(super) fn truncate_wal(conn: &Connection) -> Result<()> {
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
        true,
    )?;
    conn.busy_timeout(Duration::ZERO)?;
    conn.pragma_update(None, "wal_checkpoint", "TRUNCATE")?;
    Ok(())
}

/// SQLite's write-ahead log beside the ledger file.
pub(super) fn wal_path(ledger: &Path) -> PathBuf {
    sibling(ledger, "-wal")
}

/// The WAL size past which a writer truncates it (about 60 pages: a dozen lease operations).
pub(super) const WAL_CHECKPOINT_BYTES: u64 = 256 * 1024;
