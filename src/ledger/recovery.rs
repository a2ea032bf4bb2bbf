//! What `git hand doctor` needs from a ledger file that may be wrong: a diagnosis that creates,
//! migrates and writes nothing; a copy through SQLite's backup API; moving a file that is no
//! ledger aside; and the rows a rebuilt ledger starts with.
//!
//! The copy goes through SQLite because git-hand keeps its WAL between processes: the newest
//! rows often live only there, and copying `ledger.sqlite` alone loses them (issue 10).

use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;

use super::events::EventKind;
use super::file::{self, sibling};
use super::ids::RepoId;
use super::tenure::Resource;
use super::{LATEST_VERSION, LedgerError, Result, Tx, schema};
use crate::clock::Millis;

/// The ledger's tables, in the order a diagnosis counts them.
const TABLES: &[&str] = &["repos", "resources", "tenures", "events", "slots", "tasks"];

/// How many lines of SQLite's integrity report a diagnosis keeps.
const REPORT_LINES: usize = 5;

/// The state of the ledger file, as `doctor` sees it before trusting it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Health {
    /// No file (and no WAL) at the ledger's path.
    Missing,
    /// A file that is no ledger (empty, shorter than a page, not an SQLite database, no
    /// schema, or a WAL without its database): nothing in it can be read as a ledger.
    Unusable {
        found: String,
    },
    /// Written by a newer git-hand.
    TooNew {
        found: i64,
        supported: i64,
    },
    /// A ledger that SQLite's check finds damaged, and what can still be read of it.
    Damaged {
        report: Vec<String>,
        readable: Vec<TableCount>,
    },
    Healthy,
}

/// The rows of one table, or why they could not be counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableCount {
    pub table: &'static str,
    pub rows: std::result::Result<i64, String>,
}

impl std::fmt::Display for TableCount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.rows {
            Ok(n) => write!(f, "{} {n}", self.table),
            Err(e) => write!(f, "{} unreadable ({e})", self.table),
        }
    }
}

/// The diagnosis and what looking did that the user should hear about.
#[derive(Debug)]
pub(crate) struct Diagnosis {
    pub health: Health,
    pub notices: Vec<String>,
}

/// Looks at the ledger at `path` without creating, migrating or writing it: SQLite's
/// `quick_check`, and for a damaged ledger how many rows of each table can still be read.
pub(crate) fn diagnose(path: &Path) -> Result<Diagnosis> {
    let unusable = |found| Diagnosis {
        health: Health::Unusable { found },
        notices: vec![],
    };
    let on_disk = match file::inspect(path) {
        Ok(None) => {
            return Ok(Diagnosis {
                health: Health::Missing,
                notices: vec![],
            });
        }
        Ok(Some(found)) => found,
        Err(LedgerError::Damaged { found, .. }) => return Ok(unusable(found)),
        Err(e) => return Err(e),
    };
    let notices = on_disk.notices;
    let mut conn = open_raw(path)?;
    let health = match schema::user_version(&conn) {
        Ok(0) | Err(LedgerError::Malformed(_)) => Health::Unusable {
            found: file::describe(path),
        },
        Ok(v) if v > LATEST_VERSION => Health::TooNew {
            found: v,
            supported: LATEST_VERSION,
        },
        Ok(_) => check(&mut conn),
        Err(e) => return Err(e),
    };
    drop(conn);
    super::wal::sync_dir_if_wal_appeared(path, on_disk.had_wal)?;
    Ok(Diagnosis { health, notices })
}

/// SQLite's `quick_check`, then, when it finds damage, what can still be counted.
fn check(conn: &mut Connection) -> Health {
    let report: std::result::Result<Vec<String>, rusqlite::Error> = conn
        .prepare("PRAGMA quick_check")
        .and_then(|mut stmt| stmt.query_map([], |r| r.get(0))?.collect());
    let report = match report {
        Ok(lines) if lines == ["ok"] => return Health::Healthy,
        Ok(lines) => lines,
        Err(e) => vec![e.to_string()],
    };
    let mut kept: Vec<String> = report.iter().take(REPORT_LINES).cloned().collect();
    if report.len() > REPORT_LINES {
        kept.push(format!("and {} more", report.len() - REPORT_LINES));
    }
    Health::Damaged {
        report: kept,
        readable: count_rows(conn),
    }
}

fn count_rows(conn: &Connection) -> Vec<TableCount> {
    TABLES
        .iter()
        .map(|&table| TableCount {
            table,
            rows: conn
                .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
                .map_err(|e| e.to_string()),
        })
        .collect()
}

/// A connection to an existing file, never creating it, with git-hand's busy handling.
fn open_raw(path: &Path) -> Result<Connection> {
    let mut conn = Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|source| LedgerError::OpenSql {
        path: path.to_path_buf(),
        source,
    })?;
    super::connection::configure(&mut conn)?;
    Ok(conn)
}

/// What [`backup`] copied.
#[derive(Debug, Clone)]
pub struct Copied {
    pub to: PathBuf,
    pub rows: Vec<TableCount>,
}

/// Copies the ledger at `path` into a new file `to` (`0600`, never replacing one) with SQLite's
/// backup API, which reads through the WAL: the copy holds every committed row, in one file
/// that any SQLite opens alone. A damaged page is copied as it is.
pub fn backup(path: &Path, to: &Path) -> Result<Copied> {
    if !path.exists() {
        return Err(LedgerError::Open {
            path: path.to_path_buf(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        });
    }
    let src = open_raw(path)?;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(to)
        .map_err(|source| LedgerError::Open {
            path: to.to_path_buf(),
            source,
        })?;
    let copied = copy_into(&src, to);
    if copied.is_err() {
        for suffix in ["", "-journal", "-wal", "-shm"] {
            let _ = std::fs::remove_file(sibling(to, suffix));
        }
    }
    copied
}

fn copy_into(src: &Connection, to: &Path) -> Result<Copied> {
    let mut dst = Connection::open(to).map_err(|source| LedgerError::OpenSql {
        path: to.to_path_buf(),
        source,
    })?;
    {
        use rusqlite::backup::StepResult;
        let copy = rusqlite::backup::Backup::new(src, &mut dst)?;
        let since = std::time::Instant::now();
        // All pages in one step, under one read lock: a writer meanwhile cannot restart it.
        loop {
            match copy.step(-1)? {
                StepResult::Done => break,
                _ if since.elapsed() > super::connection::BUSY_TIMEOUT => {
                    return Err(LedgerError::Busy);
                }
                _ => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    }
    // The pages went straight into the file, which is complete now. Its copied header says
    // WAL; switching a sound copy to a rollback journal lets any SQLite open it read-only too
    // (a damaged copy cannot switch, and stays as complete in WAL mode).
    let _ = dst.query_row("PRAGMA journal_mode = DELETE", [], |_| Ok(()));
    let rows = count_rows(&dst);
    dst.close().map_err(|(_, e)| LedgerError::from(e))?;
    std::fs::File::open(to)
        .and_then(|f| f.sync_all())
        .map_err(|source| LedgerError::Sync {
            path: to.to_path_buf(),
            source,
        })?;
    super::file::sync_dir_of(to)?;
    Ok(Copied {
        to: to.to_path_buf(),
        rows,
    })
}

/// Moves a file that is no ledger (and its WAL and shared memory) aside to
/// `<path>.damaged-<at>`, never replacing anything, and returns the new path. The WAL goes
/// first: a WAL left behind would be replayed into the next ledger created at `path`.
pub(crate) fn move_aside(path: &Path, at: Millis) -> Result<PathBuf> {
    let aside = sibling(path, &format!(".damaged-{at}"));
    for suffix in ["-wal", "-shm", ""] {
        let from = sibling(path, suffix);
        if std::fs::symlink_metadata(&from).is_err() {
            continue;
        }
        let to = sibling(&aside, suffix);
        std::fs::hard_link(&from, &to)
            .and_then(|()| std::fs::remove_file(&from))
            .map_err(|source| LedgerError::Open {
                path: from.clone(),
                source: std::io::Error::new(
                    source.kind(),
                    format!("cannot move it aside to {}: {source}", to.display()),
                ),
            })?;
    }
    super::file::sync_dir_of(path)?;
    Ok(aside)
}

impl Tx<'_> {
    /// Registers a repository under the id the caller chose: a rebuilt ledger gives it the
    /// six characters its pool directory is named after, so its slots stay where they are.
    pub(crate) fn restore_repo(&self, common_dir: &str, id: &RepoId) -> Result<()> {
        self.db.once().exec(
            "INSERT INTO repos (id, common_dir, created_at, machine) VALUES (?1, ?2, ?3, ?4)",
            &[id, &common_dir, &self.now, &self.view().machine()],
        )?;
        Ok(())
    }

    /// Appends an event about the ledger itself (no resource), as a migration's.
    pub(crate) fn log_ledger_event(&self, kind: EventKind, detail: &str) -> Result<()> {
        self.db.once().exec(
            "INSERT INTO events (at, kind, detail) VALUES (?1, ?2, ?3)",
            &[&self.now, &kind.to_string(), &detail],
        )?;
        Ok(())
    }

    /// Makes the next token of `resource` larger than `token`: a rebuilt ledger never issues
    /// again a token that a stamp shows was issued.
    pub(crate) fn raise_last_token(&self, resource: &Resource, token: i64) -> Result<()> {
        self.db.once().exec(
            "INSERT INTO resources (kind, key, last_token) VALUES (?1, ?2, ?3) \
             ON CONFLICT (kind, key) DO UPDATE SET last_token = excluded.last_token \
             WHERE excluded.last_token > resources.last_token",
            &[&resource.kind.to_string(), &resource.key, &token.max(0)],
        )?;
        Ok(())
    }
}
