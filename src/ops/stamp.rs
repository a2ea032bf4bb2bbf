//! The stamp: a small file in a slot's private admin dir (`git rev-parse --git-dir`, never the
//! work tree, so no commit can carry it) naming the tenure the slot was leased for and the ledger
//! that granted it. The pre-push hook reads it when the environment carries no credential, and
//! follows its ledger path so a hook run under another `HOME` still checks the right ledger.

use std::io::Write;
use std::path::{Path, PathBuf};

const FILE: &str = "git-hand-stamp";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    pub lease_id: String,
    pub token: i64,
    pub task: String,
    pub ledger: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum StampError {
    #[error("cannot write the stamp in {}: {source}", dir.display())]
    Write {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read the stamp in {}: {source}", dir.display())]
    Read {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("the stamp in {} is damaged ({why})", dir.display())]
    Damaged { dir: PathBuf, why: String },
}

pub fn path(admin_dir: &Path) -> PathBuf {
    admin_dir.join(FILE)
}

/// Writes the stamp atomically (temp file, then rename), so a reader never sees half of one.
pub fn write(admin_dir: &Path, stamp: &Stamp) -> Result<(), StampError> {
    let err = |source| StampError::Write {
        dir: admin_dir.to_path_buf(),
        source,
    };
    let mut tmp = tempfile::NamedTempFile::new_in(admin_dir).map_err(err)?;
    write!(
        tmp,
        "# git-hand: the lease this worktree was stamped for\nlease_id={}\ntoken={}\ntask={}\nledger={}\n",
        stamp.lease_id,
        stamp.token,
        stamp.task,
        stamp.ledger.display()
    )
    .map_err(err)?;
    tmp.persist(path(admin_dir)).map_err(|e| err(e.error))?;
    Ok(())
}

/// Reads the stamp; `Ok(None)` when there is none.
pub fn read(admin_dir: &Path) -> Result<Option<Stamp>, StampError> {
    let text = match std::fs::read_to_string(path(admin_dir)) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(StampError::Read {
                dir: admin_dir.to_path_buf(),
                source,
            });
        }
    };
    parse(&text).map(Some).map_err(|why| StampError::Damaged {
        dir: admin_dir.to_path_buf(),
        why,
    })
}

fn parse(text: &str) -> Result<Stamp, String> {
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
            .map(str::to_string)
            .ok_or_else(|| format!("no {key}"))
    };
    let lease_id = field("lease_id")?;
    if !crate::ids::is_lease_id(&lease_id) {
        return Err(format!("lease_id {lease_id:?} is not 32 hex characters"));
    }
    let token = field("token")?
        .parse()
        .map_err(|_| "token is not a number".to_string())?;
    Ok(Stamp {
        lease_id,
        token,
        task: field("task")?,
        ledger: PathBuf::from(field("ledger")?),
    })
}

/// Reads the stamp for a lease check: damage becomes an error that says how to get out of it.
pub fn read_checked(admin_dir: &Path) -> super::Result<Option<Stamp>> {
    read(admin_dir).map_err(|e| {
        super::Error::failed(
            format!("{e}; this worktree's lease cannot be checked"),
            vec![format!(
                "rm {}   # then present the credential: eval \"$(git hand env <task>)\"",
                path(admin_dir).display()
            )],
        )
    })
}

/// The error when the ledger a stamp names is gone: nothing can be checked, nothing is lost.
pub fn ledger_gone(ledger: &Path, admin_dir: &Path) -> super::Error {
    super::Error::failed(
        format!(
            "this worktree was leased from the ledger {}, which is gone, so its lease cannot be \
             checked; your commits stay in this worktree",
            ledger.display()
        ),
        vec![
            format!(
                "put {} back (the stamp {} names it)",
                ledger.display(),
                path(admin_dir).display()
            ),
            "git hand spawn <task>-rescue --base HEAD   # or continue under a new lease".into(),
        ],
    )
}

/// Removes the stamp; a missing one is fine.
pub fn remove(admin_dir: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(path(admin_dir)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamp_round_trips_and_rejects_damage() {
        let dir = tempfile::tempdir().unwrap();
        let stamp = Stamp {
            lease_id: "ab".repeat(16),
            token: 7,
            task: "t".into(),
            ledger: "/l/ledger.sqlite".into(),
        };
        write(dir.path(), &stamp).unwrap();
        assert_eq!(read(dir.path()).unwrap(), Some(stamp));
        std::fs::write(
            path(dir.path()),
            "lease_id=zz\ntoken=1\ntask=t\nledger=/l\n",
        )
        .unwrap();
        assert!(read(dir.path()).is_err());
        remove(dir.path()).unwrap();
        remove(dir.path()).unwrap();
        assert_eq!(read(dir.path()).unwrap(), None);
    }
}
