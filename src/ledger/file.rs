//! The ledger file on disk: creating it so that no process ever sees it half made, telling a
//! damaged file from a ledger, and keeping the file and its WAL private.
//!
//! Only the process that creates a ledger initialises it: the schema is built in a temporary
//! file in the same directory and published with a hard link, which never replaces anything. So
//! a file at the ledger's path without git-hand's schema (empty, shorter than a page, not an
//! SQLite database, `user_version` 0) was never a ledger git-hand made whole: it is damage,
//! refused and left as found, never initialised again (issue 10: an emptied ledger used to be
//! re-created, its tasks gone, its tokens restarted at 1).

use std::fs::{DirBuilder, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::{LedgerError, Result};

/// The smallest SQLite page: a database file is a whole number of pages, so anything shorter
/// than one is no database (SQLite itself reads such a file as an empty one).
pub(super) const MIN_PAGE: u64 = 512;

/// What SQLite writes at the start of every database file.
const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// The ledger's files as found before connecting.
#[derive(Debug)]
pub(super) struct OnDisk {
    /// The WAL existed before this process opened the ledger.
    pub had_wal: bool,
    /// What was done to the files that the user should hear about.
    pub notices: Vec<String>,
}

/// Looks at the ledger file, its WAL and shared-memory file without opening them: `None` when
/// there is no ledger file. Files open to other users are made private (a lease id is a
/// credential, and a ledger others can write lets them forge leases). A file too short to be a
/// database is refused here; the rest of the damage SQLite reports when it reads the header.
///
/// This runs on the pre-push allow path: three `stat`s and, rarely, a `chmod`.
pub(super) fn inspect(path: &Path) -> Result<Option<OnDisk>> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        // A WAL without its database is what is left of a ledger, and SQLite would replay it
        // into the next one created here.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return match std::fs::metadata(sibling(path, "-wal")) {
                Ok(wal) if wal.len() > 0 => Err(damaged(path)),
                _ => Ok(None),
            };
        }
        Err(source) => {
            return Err(LedgerError::Open {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let mut notices = vec![];
    make_private(path, &meta, &mut notices)?;
    let wal = sibling(path, "-wal");
    let had_wal = match std::fs::metadata(&wal) {
        Ok(m) => {
            make_private(&wal, &m, &mut notices)?;
            true
        }
        Err(_) => false,
    };
    let shm = sibling(path, "-shm");
    if let Ok(m) = std::fs::metadata(&shm) {
        make_private(&shm, &m, &mut notices)?;
    }
    if meta.len() < MIN_PAGE {
        return Err(damaged(path));
    }
    Ok(Some(OnDisk { had_wal, notices }))
}

/// Makes a ledger file `0600` when group or others may use it, and says so.
fn make_private(path: &Path, meta: &std::fs::Metadata, notices: &mut Vec<String>) -> Result<()> {
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o077 == 0 {
        return Ok(());
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(|source| {
        LedgerError::NotPrivate {
            path: path.to_path_buf(),
            mode,
            source,
        }
    })?;
    notices.push(format!(
        "tightened {} from {mode:04o} to 0600: a ledger others can read or write exposes and \
         forges leases",
        path.display()
    ));
    Ok(())
}

/// The error for a file at the ledger's path that is no usable ledger, saying what it is.
pub(super) fn damaged(path: &Path) -> LedgerError {
    LedgerError::Damaged {
        path: path.to_path_buf(),
        found: describe(path),
    }
}

/// What is at `path`, in words, for a file that is no usable ledger.
pub(super) fn describe(path: &Path) -> String {
    let wal = std::fs::metadata(sibling(path, "-wal"))
        .map(|m| format!(" (beside a WAL of {} bytes)", m.len()))
        .unwrap_or_default();
    let len = match std::fs::metadata(path) {
        Ok(m) => m.len(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return format!("the file is missing{wal}");
        }
        Err(e) => return format!("it cannot be read ({e}){wal}"),
    };
    let mut head = [0u8; 16];
    let read = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    match len {
        0 => format!("it is empty (0 bytes){wal}"),
        1 => format!("it is 1 byte long, shorter than any SQLite page{wal}"),
        n if n < MIN_PAGE => format!("it is {n} bytes long, shorter than any SQLite page{wal}"),
        n if read < 16 || &head != SQLITE_HEADER => {
            format!("it is not an SQLite database ({n} bytes){wal}")
        }
        n => format!("it is an SQLite database of {n} bytes without git-hand's schema{wal}"),
    }
}

/// Whether an SQLite error means the file is not (or no longer) a sound database.
pub(super) fn is_damage(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt)
    )
}

/// Builds a ledger with `build` in a temporary file beside `path` and publishes it there unless
/// a file already is. Returns whether this process published it; a process that lost the race
/// opens the winner's ledger, so any number of processes creating one at once share one.
///
/// `build` runs on a connection to the temporary file; when it returns, the file is switched to
/// WAL, closed (which checkpoints and removes its WAL), fsynced, linked into place and the
/// directory entry made durable. The directory is created `0700` and the file `0600`.
pub(super) fn create(path: &Path, build: impl FnOnce(&Connection) -> Result<()>) -> Result<bool> {
    let open_err = |source| LedgerError::Open {
        path: path.to_path_buf(),
        source,
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.exists() {
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(open_err)?;
    }
    let name = path
        .file_name()
        .map_or_else(|| "ledger".into(), |n| n.to_string_lossy().into_owned());
    let suffix = crate::ids::random_hex(6).map_err(LedgerError::Random)?;
    let tmp = Scratch(dir.join(format!(".{name}.new-{}-{suffix}", std::process::id())));
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp.0)
        .map_err(open_err)?;
    {
        let conn = Connection::open(&tmp.0).map_err(|source| LedgerError::OpenSql {
            path: tmp.0.clone(),
            source,
        })?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        build(&conn)?;
        conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))?;
        conn.close().map_err(|(_, e)| LedgerError::from(e))?;
    }
    std::fs::File::open(&tmp.0)
        .and_then(|f| f.sync_all())
        .map_err(|source| LedgerError::Sync {
            path: tmp.0.clone(),
            source,
        })?;
    match std::fs::hard_link(&tmp.0, path) {
        Ok(()) => {
            sync_dir_of(path)?;
            Ok(true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(source) => Err(LedgerError::Open {
            path: path.to_path_buf(),
            source: std::io::Error::new(
                source.kind(),
                format!(
                    "cannot publish the new ledger with a hard link from {} ({source}); \
                     git-hand needs a file system with hard links for its ledger",
                    tmp.0.display()
                ),
            ),
        }),
    }
}

/// A temporary ledger being built; removed (with anything SQLite left beside it) when dropped.
/// Once published, the link at the ledger's path keeps the file.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        for suffix in ["", "-journal", "-wal", "-shm"] {
            let _ = std::fs::remove_file(sibling(&self.0, suffix));
        }
    }
}

/// `ledger.sqlite` + `-wal` → `ledger.sqlite-wal`.
pub(super) fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Makes the directory entry of `file` durable.
pub(super) fn sync_dir_of(file: &Path) -> Result<()> {
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
