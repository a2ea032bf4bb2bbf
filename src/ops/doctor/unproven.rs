//! Slots whose directory is not the worktree git-hand made (an orphan, a symlink, a stray
//! directory): nothing may run git in them, so `--repair` sets them aside, keeping their files.

use std::path::Path;

use super::{Checkup, Finding, Problem, ProblemKind, SetAside, record};
use crate::git::Git;
use crate::ledger::{EndReason, IssueLease, Ledger, TaskState, WorktreeKey};
use crate::ops::{Result, pool, pool::slot, task::spawn};

impl Checkup<'_> {
    /// Slots whose directory is there but is not the worktree git-hand made: an orphan whose
    /// admin dir was lost (the repository cloned again in place) and whose `.git` now resolves
    /// to another slot's, a symlink put in a slot's place, or a directory that is no worktree.
    /// Nothing may run git in them. `--repair` ends the task that held one, takes the slot out of
    /// the pool in the ledger (its number comes back at the same path, with its token history),
    /// and sets the directory aside: a symlink is removed (never what it leads to); a directory
    /// moves to `<pool>/orphaned/`, its `.git` renamed so no git command there acts on another
    /// worktree. Its files are kept.
    pub(super) fn unproven_slots(&self, ledger: &mut Ledger, out: &mut Vec<Problem>) -> Result<()> {
        let common = self.repo.loc.common_dir.as_path();
        let slots = ledger.read(|v| pool::slots(v, &self.repo_id))?;
        for info in slots {
            let path = info.slot.path.as_path();
            let why = match slot::prove(common, path) {
                Ok(_) => continue,
                Err(e) if e.is_gone() => continue,
                Err(e) => e,
            };
            let task = match &info.held {
                Some(t) => ledger.read(|v| v.task_by_lease(&t.lease_id))?,
                None => None,
            };
            // A spawn creating it right now (or one that crashed: `stuck_tasks` settles it).
            if task.as_ref().is_some_and(|t| t.state != TaskState::Active) {
                continue;
            }
            let mut set_aside_as = None;
            if self.repair {
                if let Some(task) = &task {
                    spawn::abandon(ledger, task, EndReason::SlotUnproven, IssueLease::Release)?;
                }
                set_aside_as = Some(
                    match set_aside(ledger, self.repo, &self.git, &info.slot.path)? {
                        Some(kept) => {
                            record(ledger, &info.slot.path, &format!("set aside: {kept}"))?;
                            SetAside::Kept(kept)
                        }
                        None => SetAside::LeasedMeanwhile,
                    },
                );
            }
            let p = Problem {
                kind: ProblemKind::UnprovenSlot,
                subject: info.slot.path.to_string(),
                repaired: matches!(set_aside_as, Some(SetAside::Kept(_))),
                finding: Finding::UnprovenSlot {
                    n: info.slot.n,
                    why,
                    task: task.map(|t| (t.name, t.branch)),
                    set_aside: set_aside_as,
                },
            };
            out.push(p);
        }
        Ok(())
    }
}

/// Takes an unproven slot out of the pool: retired in the ledger first (no tenure may hold it,
/// as prune retires a slot), then on disk, under the slot's lock. Returns where its files went, or `None`
/// when it was leased meanwhile.
fn set_aside(
    ledger: &mut Ledger,
    repo: &crate::git::Repo,
    git: &Git,
    path: &WorktreeKey,
) -> Result<Option<String>> {
    let common = repo.loc.common_dir.as_path();
    let _lock = slot::SlotLock::acquire(common, path.as_path())?;
    let retired = ledger.write(|tx| tx.remove_free_slot(path))?;
    if !retired {
        return Ok(None);
    }
    let p = Path::new(path);
    let failed = |e: std::io::Error| {
        crate::ops::Error::from(super::DoctorError::CannotSetAside {
            path: path.to_string(),
            reason: e.to_string(),
        })
    };
    let meta = std::fs::symlink_metadata(p).map_err(failed)?;
    if meta.file_type().is_symlink() || !meta.is_dir() {
        std::fs::remove_file(p).map_err(failed)?;
        if let Some(n_dir) = p.parent() {
            let _ = std::fs::remove_dir(n_dir); // only when empty
        }
        forget_registration(repo, git, p)?;
        return Ok(Some(format!(
            "removed {path} (not a directory; nothing it led to was touched)"
        )));
    }
    // `<pool>/<n>/<repo>` goes to `<pool>/orphaned/<n>-<ms>`.
    let n_dir = p.parent().unwrap_or(p);
    let pool = n_dir.parent().unwrap_or(n_dir);
    let n = n_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let aside = pool.join("orphaned").join(format!("{n}-{}", {
        use crate::clock::Clock;
        crate::clock::SystemClock.now_ms()
    }));
    std::fs::create_dir_all(&aside).map_err(failed)?;
    let dest = aside.join(p.file_name().unwrap_or_default());
    std::fs::rename(p, &dest).map_err(failed)?;
    crate::git::link::disarm(&dest).map_err(failed)?;
    let _ = std::fs::remove_dir(n_dir);
    forget_registration(repo, git, p)?;
    Ok(Some(format!("its files are in {}", dest.display())))
}

/// Once an unproven slot is out of the way, git may still list the slot git-hand made there
/// (locked, its directory gone): that registration goes too, so the slot can be made again at
/// its path and `git worktree list` stops naming it. An orphan's own registration is already
/// gone (that is what made it an orphan); another slot's is never touched.
fn forget_registration(repo: &crate::git::Repo, git: &Git, path: &Path) -> Result<()> {
    let listed = repo
        .linked_worktrees()?
        .into_iter()
        .any(|w| w.path == path && !w.exists);
    if listed {
        let _lock = slot::lock_worktree_list(&repo.loc.common_dir)?;
        git.run(&["worktree", "remove", "-f", "-f", &path.to_string_lossy()])?;
    }
    Ok(())
}
