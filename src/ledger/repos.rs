//! Repositories: a random id minted on first use, and the realpath of the common dir.
//!
//! A repository is never identified by its origin URL: renaming a remote must not orphan leases.

use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use super::ids::RepoId;
use super::{LedgerError, Result, Tx, View};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Repo {
    pub id: RepoId,
    pub common_dir: String,
}

impl View<'_> {
    pub fn repo_by_dir(&self, common_dir: &str) -> Result<Option<Repo>> {
        Ok(self
            .conn
            .query_row(
                "SELECT id, common_dir FROM repos WHERE common_dir = ?1",
                [common_dir],
                |r| {
                    Ok(Repo {
                        id: r.get(0)?,
                        common_dir: r.get(1)?,
                    })
                },
            )
            .optional()?)
    }
}

impl Tx<'_> {
    /// The repository at `common_dir`, registered with a fresh id if the ledger has not seen it.
    pub fn ensure_repo(&self, common_dir: &str) -> Result<Repo> {
        if let Some(repo) = self.view().repo_by_dir(common_dir)? {
            return Ok(repo);
        }
        let id = RepoId::mint().map_err(LedgerError::Random)?;
        self.conn.execute(
            "INSERT INTO repos (id, common_dir, created_at) VALUES (?1, ?2, ?3)",
            params![id, common_dir, self.now],
        )?;
        Ok(Repo {
            id,
            common_dir: common_dir.to_string(),
        })
    }
}
