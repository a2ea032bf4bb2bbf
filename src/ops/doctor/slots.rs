//! Slots the ledger and the disk disagree about: known but gone, there but unknown, free but
//! holding files nobody owns.

use std::path::PathBuf;

use super::{Checkup, Finding, Problem, ProblemKind, record};
use crate::git::Git;
use crate::git::status::dirty_files;
use crate::ledger::{EndReason, IssueLease, Ledger, Task, TaskState, WorktreeKey};
use crate::ops::prune::{self, OnDisk};
use crate::ops::{Result, pool, pool::slot, task::spawn};

impl Checkup<'_> {
    /// Slots the ledger knows but the disk lost. A slot whose task is still spawning or tearing
    /// down is left alone: its directory may simply not exist *yet* (that task's process, or
    /// `stuck_tasks` once it is gone, settles it).
    pub(super) fn missing_slots(&self, ledger: &mut Ledger, out: &mut Vec<Problem>) -> Result<()> {
        let (git, common, repo_id, repair) = (
            &self.git,
            self.repo.loc.common_dir.as_path(),
            &self.repo_id,
            self.repair,
        );

        let slots = ledger.read(|v| pool::slots(v, repo_id))?;
        for info in slots
            .into_iter()
            .filter(|i| slot::prove(common, i.slot.path.as_path()).is_err_and(|e| e.is_gone()))
        {
            let task: Option<Task> = match &info.held {
                Some(t) => ledger.read(|v| v.task_by_lease(&t.lease_id))?,
                None => None,
            };
            if task.as_ref().is_some_and(|t| t.state != TaskState::Active) {
                continue;
            }
            let mut p = Problem {
                kind: ProblemKind::MissingSlot,
                subject: info.slot.path.to_string(),
                finding: Finding::MissingSlot {
                    n: info.slot.n,
                    task: task.as_ref().map(|t| (t.name.clone(), t.branch.clone())),
                },
                repaired: false,
            };
            if repair {
                if let Some(task) = &task {
                    spawn::abandon(ledger, task, EndReason::SlotMissing, IssueLease::Release)?;
                }
                p.repaired =
                    prune::remove_slot(git, common, ledger, &info.slot.path, OnDisk::Missing)?;
            }
            out.push(p);
        }
        Ok(())
    }

    /// Directories in this repository's pool that the ledger does not know as slots.
    pub(super) fn unknown_slots(&self, ledger: &mut Ledger, out: &mut Vec<Problem>) -> Result<()> {
        let (repo, repo_id, repair) = (self.repo, &self.repo_id, self.repair);
        let Ok(pool_dir) = std::fs::canonicalize(pool::pool_dir(repo, self.ctx.env(), repo_id)?)
        else {
            return Ok(());
        };
        let known = ledger.read(|v| pool::known_slot_paths(v, repo_id))?;
        let registered: Vec<PathBuf> = repo
            .linked_worktrees()?
            .into_iter()
            .map(|w| w.path)
            .collect();
        let Ok(entries) = std::fs::read_dir(&pool_dir) else {
            return Ok(());
        };
        for entry in entries.flatten() {
            let Some(n) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<i64>().ok())
            else {
                continue;
            };
            let path = pool::slot_path(&pool_dir, n, repo);
            let key = WorktreeKey::from_canonical(&path);
            if known.contains(&key) || !path.exists() {
                continue;
            }
            let is_worktree = registered.contains(&path);
            let mut p = Problem {
                kind: ProblemKind::UnknownSlot,
                subject: key.to_string(),
                finding: Finding::UnknownSlot {
                    key: key.to_string(),
                    worktree: is_worktree,
                },
                repaired: false,
            };
            if repair && is_worktree {
                ledger.write(|tx| tx.ensure_slot(repo_id, n, &key).map(|_| ()))?;
                record(ledger, &key, "adopted an unknown slot")?;
                p.repaired = true;
            }
            out.push(p);
        }
        Ok(())
    }

    /// Free slots that no spawn will take because they hold files or commits nobody owns any
    /// more (left by a git-hand older than the undo of failed spawns, or written by hand after a
    /// teardown): they count against `hand.maxSlots` for good. Reported with the commands that
    /// settle them; never reset by doctor, since whose work it is cannot be told.
    pub(super) fn unusable_free_slots(
        &self,
        ledger: &mut Ledger,
        out: &mut Vec<Problem>,
    ) -> Result<()> {
        let common = self.repo.loc.common_dir.as_path();
        let (slots, now) = ledger.read(|v| Ok((pool::slots(v, &self.repo_id)?, v.now())))?;
        for info in slots {
            let free = info.held.as_ref().is_none_or(|t| !t.is_live(now)) && info.tasks.is_empty();
            let path = info.slot.path.as_path();
            if !free || slot::prove(common, path).is_err() {
                continue;
            }
            if let Some(why) = pool::unseen_namespace(self.ctx.scan(), &info) {
                out.push(Problem {
                    kind: ProblemKind::UnusableSlot,
                    subject: info.slot.path.to_string(),
                    finding: Finding::UnusableUnseen {
                        n: info.slot.n,
                        why,
                    },
                    repaired: false,
                });
                continue;
            }
            let dirty = match dirty_files(&Git::new(path)) {
                Ok(files) if files.is_empty() => continue,
                Ok(files) => files,
                Err(e) => vec![format!("git status failed: {e}")],
            };
            out.push(Problem {
                kind: ProblemKind::UnusableSlot,
                subject: info.slot.path.to_string(),
                finding: Finding::UnusableDirty {
                    n: info.slot.n,
                    path: info.slot.path.to_string(),
                    files: dirty,
                },
                repaired: false,
            });
        }
        Ok(())
    }
}
