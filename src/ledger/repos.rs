//! Repositories: a random id minted on first use, and the realpath of the common dir.
//!
//! A repository is never identified by its origin URL: renaming a remote must not orphan leases.

use std::borrow::Cow;
use std::path::Path;

use super::ids::RepoId;
use super::{LedgerError, Result, Tx, View};

/// A repository the ledger has registered: its row in `repos`. (An opened repository, which
/// git reads, is `git::Repo`; the ledger never sees one.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisteredRepo {
    pub id: RepoId,
    pub common_dir: String,
}

/// A repository's key in `repos`: the realpath of its common dir (which the caller
/// canonicalized) as text, converted here and nowhere else.
fn dir_key(common_dir: &Path) -> Cow<'_, str> {
    common_dir.to_string_lossy()
}

impl View<'_> {
    /// The repository registered at `common_dir` (a realpath) on this machine, if any.
    pub fn repo_by_dir(&self, common_dir: &Path) -> Result<Option<RegisteredRepo>> {
        self.db.once().row(
            "SELECT id, common_dir FROM repos WHERE common_dir = ?1 AND machine = ?2",
            &[&dir_key(common_dir), &self.machine()],
            |r| {
                Ok(RegisteredRepo {
                    id: r.get(0)?,
                    common_dir: r.get(1)?,
                })
            },
        )
    }
}

impl Tx<'_> {
    /// The repository at `common_dir`, registered (as this machine's) with a fresh id if the
    /// ledger has not seen it here.
    pub fn ensure_repo(&self, common_dir: &Path) -> Result<RegisteredRepo> {
        if let Some(repo) = self.view().repo_by_dir(common_dir)? {
            return Ok(repo);
        }
        let id = RepoId::mint().map_err(LedgerError::Random)?;
        let common_dir = dir_key(common_dir).into_owned();
        self.db.once().exec(
            "INSERT INTO repos (id, common_dir, created_at, machine) VALUES (?1, ?2, ?3, ?4)",
            &[&id, &common_dir, &self.now, &self.view().machine()],
        )?;
        Ok(RegisteredRepo { id, common_dir })
    }
}
