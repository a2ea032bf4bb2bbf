//! A SQLite connection as every git-hand process sets it up: how long and how often a writer
//! waits for another's lock, the settings no process may lack, and the refusal of a ledger from
//! a later git-hand.

use std::path::Path;
use std::time::Duration;

use rusqlite::Connection;

use super::{LATEST_VERSION, LedgerError, Result};

/// How long a writer waits for another writer before reporting "ledger busy, retry".
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// How often a waiting connection tries the lock again during its first [`FAST_POLL_FOR`], and
/// after it. See [`wait_for_the_lock`].
const FAST_POLL: Duration = Duration::from_micros(100);
const FAST_POLL_FOR: Duration = Duration::from_millis(20);
const SLOW_POLL: Duration = Duration::from_millis(1);

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
pub(super) fn configure(conn: &mut Connection) -> Result<()> {
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
pub(super) fn wait_for_the_lock(conn: &mut Connection, timeout: Duration) -> Result<()> {
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

/// Refuses a ledger from the future before anything can write to it.
pub(super) fn refuse_newer(found: i64, path: &Path) -> Result<()> {
    if found > LATEST_VERSION {
        return Err(LedgerError::TooNew {
            path: path.to_path_buf(),
            found,
            supported: LATEST_VERSION,
        });
    }
    Ok(())
}
