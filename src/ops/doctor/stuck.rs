//! Tasks left in `spawning` or `tearing-down` by a process that is gone: a crashed spawn is
//! undone, a crashed teardown finished.

use std::path::Path;

use super::{Checkup, Problem, ProblemKind, record};
use crate::ledger::{EndReason, IssueLease, LeaseId, Ledger, Step, Task, TaskState, WorktreeKey};
use crate::ops::procs::{self, ProcessId};
use crate::ops::slot::{self, SlotGuard, SpawnWork};
use crate::ops::teardown::{self, TeardownOptions};
use crate::ops::{Result, spawn, stamp};

impl Checkup<'_> {
    /// Tasks left in `spawning` or `tearing-down` by a process that is gone.
    pub(super) fn stuck_tasks(&self, ledger: &mut Ledger, out: &mut Vec<Problem>) -> Result<()> {
        let open = ledger.read(|v| v.tasks(&self.repo_id, crate::ledger::Tasks::Open))?;
        for task in open.into_iter().filter(process_is_gone) {
            let p = if task.state == TaskState::Spawning {
                self.stuck_spawn(ledger, &task)?
            } else {
                self.stuck_teardown(ledger, &task)?
            };
            out.push(p);
        }
        Ok(())
    }

    /// A spawn that stopped: `--repair` undoes it (see [`Checkup::undo_spawn`]).
    fn stuck_spawn(&self, ledger: &mut Ledger, task: &Task) -> Result<Problem> {
        let slot = task.slot_key();
        let mut p = Problem {
            kind: ProblemKind::StuckSpawn,
            subject: task.name.clone(),
            detail: format!(
                "spawn stopped at step {:?}; its process is gone",
                task.step.map_or("?", |s| s.as_str())
            ),
            action: if matches!(task.step, Some(Step::Preparing | Step::Creating)) {
                "put the slot back to a clean checkout, release its leases and mark it \
                 done; the branch stays"
            } else {
                "release its leases and mark it done; the slot's files and the branch stay"
            }
            .into(),
            repaired: false,
            command: None,
        };
        if self.repair {
            match self.undo_spawn(ledger, task) {
                Ok(()) => {
                    record(
                        ledger,
                        &slot,
                        &format!("abandoned the spawn of task {}", task.name),
                    )?;
                    p.repaired = true;
                }
                Err(e) => {
                    p.detail
                        .push_str(&format!("; cannot put the slot back: {e}"));
                    p.command = Some(format!("git -C {slot} status"));
                }
            }
        }
        Ok(p)
    }

    /// A teardown that stopped: `--repair` finishes it, keeping unpushed commits on the branch
    /// (the user already chose to end the task); uncommitted changes still block it.
    fn stuck_teardown(&self, ledger: &mut Ledger, task: &Task) -> Result<Problem> {
        let slot = task.slot_key();
        let mut p = Problem {
            kind: ProblemKind::StuckTeardown,
            subject: task.name.clone(),
            detail: format!(
                "teardown stopped at step {:?}; its process is gone",
                task.step.map_or("?", |s| s.as_str())
            ),
            action:
                "finish the teardown (uncommitted changes block it; commits stay on the branch)"
                    .into(),
            repaired: false,
            command: None,
        };
        if self.repair {
            let opts = TeardownOptions {
                task: &task.name,
                force: false,
                keep_unpushed: true,
                setup: None,
            };
            match teardown::teardown(self.ctx, ledger, &opts) {
                Ok(_) => {
                    record(
                        ledger,
                        &slot,
                        &format!("finished the teardown of task {}", task.name),
                    )?;
                    p.repaired = true;
                }
                Err(e) => {
                    p.detail.push_str(&format!("; cannot finish: {e}"));
                    p.command = Some(format!("git hand teardown {} --force", task.name));
                }
            }
        }
        Ok(p)
    }

    /// Undoes a spawn whose process is gone: a slot it was preparing is put back to a clean
    /// detached checkout under its lock (it was clean or new before, and nobody was handed it),
    /// its stamp is removed, its leases are released and the task is marked done. A slot it
    /// had only claimed, not yet proven safe, is left exactly as it is.
    pub(super) fn undo_spawn(&self, ledger: &mut Ledger, task: &Task) -> Result<()> {
        let common = self.repo.loc.common_dir.as_path();
        let slot = task.slot_key();
        let path = slot.as_path();
        if let (Some(step @ (Step::Preparing | Step::Creating)), Some(lease)) =
            (task.step, &task.lease_id)
        {
            let guard = SlotGuard::lock(common, path, lease)?;
            // A lease that no longer holds the slot leaves it to its new holder.
            if guard.ensure_still_held(ledger).is_ok() {
                guard.undo(ledger, SpawnWork::at(Some(step)))?;
            }
        }
        remove_stamp_of(common, &slot, task.lease_id.as_ref());
        spawn::abandon(ledger, task, EndReason::AbandonedSpawn, IssueLease::Release)
    }
}

/// Removes the slot's stamp if it names `lease_id`, once the slot is proven to be itself (an
/// orphan's admin dir is another worktree's).
fn remove_stamp_of(common: &Path, slot: &WorktreeKey, lease_id: Option<&LeaseId>) {
    let Ok(admin) = slot::prove(common, slot.as_path()) else {
        return;
    };
    if let Ok(Some(s)) = stamp::read(&admin)
        && Some(&s.lease_id) == lease_id
    {
        let _ = stamp::remove(&admin);
    }
}

/// Whether a task is mid-spawn or mid-teardown and the process doing it is gone (a live one is
/// still at work, not stuck).
fn process_is_gone(task: &Task) -> bool {
    let runner = task.pid.map(|pid| ProcessId {
        pid,
        start: task.pid_start,
    });
    matches!(task.state, TaskState::Spawning | TaskState::TearingDown)
        && !runner.is_some_and(procs::is_running)
}
