//! The stamp: a small file in a slot's private admin dir (`git rev-parse --git-dir`, never the
//! work tree, so no commit can carry it) naming the tenure the slot was leased for and the ledger
//! that granted it. The pre-push hook reads it when the environment carries no credential, and
//! follows its ledger so a hook run under another `HOME` still checks the right ledger. A team
//! ledger is recorded by its URL without the password (`ServerUrl`'s `Display`): the stamp is
//! a file on disk, and the password stays in `GIT_HAND_LEDGER`, `hand.ledger` or `~/.pgpass`.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::ledger::{LeaseId, Place};

const FILE: &str = "git-hand-stamp";

/// Beside the stamp when `hand.requireCredential` is true: the reference-transaction shim must
/// know, without starting a process, that a ref update without a credential is to be judged
/// (refused) in this slot. Kept in step with the setting by `spawn` (every slot of the
/// repository, before its own stamp), `git hand install` and `git hand doctor --repair`; a
/// setting changed by hand takes effect for ref updates at the next of those.
const REQUIRE_FILE: &str = "git-hand-require-credential";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    pub lease_id: LeaseId,
    pub token: i64,
    pub task: String,
    pub ledger: Place,
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
    /// The `REQUIRE_FILE` marker could not be put in step with `hand.requireCredential`.
    #[error("cannot mark the slot for hand.requireCredential: {source}")]
    Mark {
        dir: PathBuf,
        source: std::io::Error,
    },
}

pub fn path(admin_dir: &Path) -> PathBuf {
    admin_dir.join(FILE)
}

/// Writes the stamp atomically (temp file, then rename), so a reader never sees half of one.
/// A stamp [`parse`] would refuse (a newline in the ledger path would end its line early, a
/// path that is not UTF-8 would be written as another path) is not written at all.
pub fn write(admin_dir: &Path, stamp: &Stamp) -> Result<(), StampError> {
    let err = |source| StampError::Write {
        dir: admin_dir.to_path_buf(),
        source,
    };
    let ledger = match &stamp.ledger {
        Place::File(path) => path.to_str().unwrap_or_default().to_string(),
        server => server.to_string(),
    };
    let text = format!(
        "# git-hand: the lease this worktree was stamped for\nlease_id={}\ntoken={}\ntask={}\nledger={ledger}\n",
        stamp.lease_id, stamp.token, stamp.task,
    );
    if let Err(why) = parse(&text) {
        return Err(err(std::io::Error::other(format!(
            "{why} (ledger {:?})",
            stamp.ledger
        ))));
    }
    let mut tmp = tempfile::NamedTempFile::new_in(admin_dir).map_err(err)?;
    tmp.write_all(text.as_bytes()).map_err(err)?;
    tmp.persist(path(admin_dir)).map_err(|e| err(e.error))?;
    Ok(())
}

/// Writes the stamp after putting the `REQUIRE_FILE` marker in step with `required`, so the
/// stamp never stands without the marker its worktree needs.
pub(crate) fn write_marked(
    admin_dir: &Path,
    stamp: &Stamp,
    required: bool,
) -> Result<(), StampError> {
    mark_required(admin_dir, required).map_err(|source| StampError::Mark {
        dir: admin_dir.to_path_buf(),
        source,
    })?;
    write(admin_dir, stamp)
}

/// Puts the [`REQUIRE_FILE`] marker in `admin_dir` when `required`, removes it otherwise.
pub(crate) fn mark_required(admin_dir: &Path, required: bool) -> std::io::Result<()> {
    let marker = admin_dir.join(REQUIRE_FILE);
    match required {
        true if !marker.exists() => std::fs::write(
            &marker,
            "# git-hand: hand.requireCredential is true (read by the reference-transaction hook)\n",
        ),
        true => Ok(()),
        false => match std::fs::remove_file(&marker) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        },
    }
}

/// [`mark_required`] for every linked worktree of the repository at `common_dir` that carries a
/// stamp (the slots and adopted worktrees git-hand leased): a directory listing and a stat each.
pub(crate) fn refresh_required(common_dir: &Path, required: bool) -> std::io::Result<()> {
    for admin in crate::git::link::admin_dirs(common_dir)? {
        if path(&admin).exists() {
            mark_required(&admin, required)?;
        }
    }
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

/// The keys of a stamp, each on one `key=value` line.
const KEYS: [&str; 4] = ["lease_id", "token", "task", "ledger"];

/// Parses a stamp. Every field must be well formed: a stamp is a credential, and one whose
/// fields could mean two things must not be trusted. Comments (`#`) and blank lines are
/// skipped; keys a later git-hand may add are ignored; a known key twice is damage.
fn parse(text: &str) -> Result<Stamp, String> {
    let mut values: [Option<&str>; 4] = [None; 4];
    for line in text.lines() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .ok_or_else(|| format!("line {line:?} is not key=value"))?;
        if let Some(i) = KEYS.iter().position(|k| *k == key)
            && values[i].replace(value).is_some()
        {
            return Err(format!("{key} appears twice"));
        }
    }
    let [lease_id, token, task, ledger] = values;
    fn field<'a>(value: Option<&'a str>, key: &str) -> Result<&'a str, String> {
        value.ok_or_else(|| format!("no {key}"))
    }
    let lease_id = field(lease_id, "lease_id")?;
    let lease_id = LeaseId::parse(lease_id)
        .ok_or_else(|| format!("lease_id {lease_id:?} is not 32 hex characters"))?;
    let token = field(token, "token")?;
    let token = Some(token)
        .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|t| t.parse::<i64>().ok())
        .filter(|t| *t > 0)
        .ok_or_else(|| format!("token {token:?} is not a positive integer"))?;
    let task = field(task, "task")?;
    if crate::ops::repo::names::task_name(task).is_err() {
        return Err(format!("task {task:?} is not a task name"));
    }
    let ledger = field(ledger, "ledger")?;
    if ledger.chars().any(crate::ops::repo::names::is_deceptive) {
        return Err(format!("ledger {ledger:?} has control characters"));
    }
    let ledger = if crate::ledger::server::is_server_url(ledger) {
        let url = crate::ledger::server::ServerUrl::parse(ledger)
            .map_err(|e| format!("ledger {ledger:?} is not a team ledger URL ({e})"))?;
        Place::Server(url)
    } else if Path::new(ledger).is_absolute() {
        Place::File(PathBuf::from(ledger))
    } else {
        return Err(format!(
            "ledger {ledger:?} is not an absolute path without control characters"
        ));
    };
    Ok(Stamp {
        lease_id,
        token,
        task: task.to_string(),
        ledger,
    })
}

/// Reads the stamp for a lease check: damage becomes an error that says how to get out of it.
pub(crate) fn read_checked(admin_dir: &Path) -> crate::ops::Result<Option<Stamp>> {
    read(admin_dir).map_err(|e| {
        super::PoolError::StampUnreadable {
            stamp: path(admin_dir),
            reason: e.to_string(),
        }
        .into()
    })
}

/// The error when the ledger a stamp names is gone: nothing can be checked, nothing is lost.
pub(crate) fn ledger_gone(ledger: &Place, admin_dir: &Path) -> crate::ops::Error {
    super::PoolError::LedgerGone {
        ledger: ledger.to_string(),
        stamp: path(admin_dir),
    }
    .into()
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
            lease_id: LeaseId::parse(&"ab".repeat(16)).unwrap(),
            token: 7,
            task: "t".into(),
            ledger: Place::File("/l/ledger.sqlite".into()),
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

    #[test]
    fn a_stamp_with_a_malformed_field_is_damaged() {
        let id = "ab".repeat(16);
        let good = format!("lease_id={id}\ntoken=1\ntask=t\nledger=/l\n");
        assert!(parse(&good).is_ok());
        assert!(parse(&format!("# comment\n\n{good}future_key=x\n")).is_ok());
        for bad in [
            format!("lease_id={id}\ntoken=-1\ntask=t\nledger=/l\n"),
            format!("lease_id={id}\ntoken=0\ntask=t\nledger=/l\n"),
            format!("lease_id={id}\ntoken=+1\ntask=t\nledger=/l\n"),
            format!("lease_id={id}\ntoken= 1\ntask=t\nledger=/l\n"),
            format!("lease_id={id}\ntoken=1\ntask=a/../b\nledger=/l\n"),
            format!("lease_id={id}\ntoken=1\ntask=\nledger=/l\n"),
            format!("lease_id={id}\ntoken=1\ntask=t\nledger=relative\n"),
            format!("lease_id={id}\ntoken=1\ntask=t\nledger=/l\u{202E}x\n"),
            format!("lease_id={id}\ntoken=1\ntask=t\nledger=/l\nledger=/other\n"),
            format!("{good}lease_id={}\n", "cd".repeat(16)),
            format!("{good}garbage\n"),
            format!("lease_id={id}\ntoken=1\ntask=t\n"),
        ] {
            assert!(parse(&bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_stamp_whose_ledger_path_would_break_its_lines_is_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let stamp = Stamp {
            lease_id: LeaseId::parse(&"ab".repeat(16)).unwrap(),
            token: 7,
            task: "t".into(),
            ledger: Place::File("/l/a\nlease_id=forged/ledger.sqlite".into()),
        };
        assert!(write(dir.path(), &stamp).is_err());
        assert_eq!(read(dir.path()).unwrap(), None, "nothing was written");
    }

    #[test]
    fn a_team_ledger_is_stamped_by_its_url_without_the_password() {
        let dir = tempfile::tempdir().unwrap();
        let url =
            crate::ledger::server::ServerUrl::parse("postgres://hand:s3cret@db:6543/team").unwrap();
        let stamp = Stamp {
            lease_id: LeaseId::parse(&"ab".repeat(16)).unwrap(),
            token: 7,
            task: "t".into(),
            ledger: Place::Server(url),
        };
        write(dir.path(), &stamp).unwrap();
        let text = std::fs::read_to_string(path(dir.path())).unwrap();
        assert!(
            text.contains("ledger=postgres://hand@db:6543/team\n"),
            "{text}"
        );
        assert!(!text.contains("s3cret"), "{text}");
        let Some(Place::Server(read_back)) = read(dir.path()).unwrap().map(|s| s.ledger) else {
            panic!("not a team ledger");
        };
        assert_eq!(read_back.to_string(), "postgres://hand@db:6543/team");
        assert!(read_back.password.is_none());
    }
}
