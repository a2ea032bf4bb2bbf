//! Worktrees git still lists whose directory is gone and that are no slot of ours.

use super::{Checkup, Finding, Problem, ProblemKind};
use crate::ledger::{Ledger, WorktreeKey};
use crate::ops::{Result, pool, pool::slot};

impl Checkup<'_> {
    /// Worktrees git still lists whose directory is gone and that are no slot of ours.
    pub(super) fn prunable_worktrees(
        &self,
        ledger: &mut Ledger,
        out: &mut Vec<Problem>,
    ) -> Result<()> {
        let (repo, git, repo_id, repair) = (self.repo, &self.git, &self.repo_id, self.repair);
        let known = ledger.read(|v| pool::known_slot_paths(v, repo_id))?;
        let gone: Vec<_> = repo
            .linked_worktrees()?
            .into_iter()
            .filter(|w| !w.exists && !known.contains(&WorktreeKey::from_canonical(&w.path)))
            .collect();
        for w in gone {
            let path = w.path.to_string_lossy().into_owned();
            let locked = w.lock_reason.is_some();
            let mut p = Problem {
                kind: ProblemKind::PrunableWorktree,
                subject: path.clone(),
                finding: Finding::PrunableWorktree { path, locked },
                repaired: false,
            };
            if repair && !locked {
                let _lock = slot::lock_worktree_list(&repo.loc.common_dir)?;
                git.run(&["worktree", "prune"])?;
                p.repaired = true;
            }
            out.push(p);
        }
        Ok(())
    }
}
