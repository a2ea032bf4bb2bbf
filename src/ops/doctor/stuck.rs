//! Tasks left in `spawning` or `tearing-down` by a process that is gone: a crashed spawn is
//! undone, a crashed teardown finished.
//!
//! A crashed spawn's slot is put back only at step `preparing` or `creating`, never at `intent`
//! (not yet proven clean); at `creating`, a worktree git cannot read is removed instead.

use std::path::Path;

use super::{Checkup, Finding, Problem, ProblemKind, SpawnUndo, record};
use crate::ledger::{EndReason, IssueLease, LeaseId, Ledger, Step, Task, TaskState, WorktreeKey};
use crate::ops::pool::slot::{self, SlotGuard, SpawnWork};
use crate::ops::task::teardown::{self, TeardownOptions};
use crate::ops::{Result, pool::stamp};
use crate::platform::procs::{self, ProcessId, Scan, Seen};

impl Checkup<'_> {
    /// Tasks left in `spawning` or `tearing-down` by a process that is gone.
    pub(super) fn stuck_tasks(&self, ledger: &mut Ledger, out: &mut Vec<Problem>) -> Result<()> {
        let open = ledger.read(|v| v.tasks(&self.repo_id, crate::ledger::Tasks::Open))?;
        for task in open {
            let scan = self.ctx.scan();
            let p = match settle(task.state, task.step, runner_seen(scan, &task)) {
                Settle::Leave => continue,
                Settle::Unseen => unseen(scan, &task),
                Settle::UndoSpawn { puts_back } => self.stuck_spawn(ledger, &task, puts_back)?,
                Settle::FinishTeardown => self.stuck_teardown(ledger, &task)?,
            };
            out.push(p);
        }
        Ok(())
    }

    /// A spawn that stopped: `--repair` undoes it (see [`Checkup::undo_spawn`]).
    fn stuck_spawn(&self, ledger: &mut Ledger, task: &Task, puts_back: bool) -> Result<Problem> {
        let slot = task.slot_key();
        let undo = match self.repair.then(|| self.undo_spawn(ledger, task)) {
            None => None,
            Some(Ok(Undone::Changed(now))) => Some(SpawnUndo::Changed(now)),
            Some(Ok(Undone::Abandoned)) => {
                let what = format!("abandoned the spawn of task {}", task.name);
                record(ledger, &slot, &what)?;
                Some(SpawnUndo::Abandoned)
            }
            Some(Err(e)) => Some(SpawnUndo::Failed {
                slot: slot.to_string(),
                why: e.to_string(),
            }),
        };
        Ok(Problem {
            kind: ProblemKind::StuckSpawn,
            subject: task.name.clone(),
            repaired: matches!(undo, Some(SpawnUndo::Abandoned)),
            finding: Finding::StuckSpawn {
                step: task.step,
                puts_back,
                undo,
            },
        })
    }

    /// A teardown that stopped: `--repair` finishes it, keeping unpushed commits on the branch
    /// (the user already chose to end the task); uncommitted changes still block it.
    fn stuck_teardown(&self, ledger: &mut Ledger, task: &Task) -> Result<Problem> {
        let slot = task.slot_key();
        let mut repaired = false;
        let mut cannot_finish = None;
        if self.repair {
            let opts = TeardownOptions {
                task: &task.name,
                force: false,
                keep_unpushed: true,
                setup: None,
            };
            match teardown::teardown(self.ctx, ledger, &opts) {
                Ok(_) => {
                    let what = format!("finished the teardown of task {}", task.name);
                    record(ledger, &slot, &what)?;
                    repaired = true;
                }
                Err(e) => cannot_finish = Some(e.to_string()),
            }
        }
        Ok(Problem {
            kind: ProblemKind::StuckTeardown,
            subject: task.name.clone(),
            finding: Finding::StuckTeardown {
                task: task.name.clone(),
                step: task.step,
                cannot_finish,
            },
            repaired,
        })
    }

    /// Undoes a spawn whose process is gone: a slot it was preparing is put back to a clean
    /// detached checkout under its lock (it was clean or new before, and nobody was handed it),
    /// its stamp is removed, its leases are released and the task is marked done. A slot it
    /// had only claimed, not yet proven safe, is left exactly as it is.
    ///
    /// The judgment was made before the slot's lock was taken, and a spawn holds that lock
    /// until its task is active: once doctor has the lock, the task is read again and nothing
    /// is done unless it is still as judged (a spawn doctor could not see may have finished
    /// meanwhile: resetting its slot then would end a live task). The task is ended only in
    /// the state it was judged in, in the same transaction that reads it.
    pub(super) fn undo_spawn(&self, ledger: &mut Ledger, task: &Task) -> Result<Undone> {
        let common = self.repo.loc.common_dir.as_path();
        let slot = task.slot_key();
        let path = slot.as_path();
        let mut _guard = None;
        if let (Some(step), Some(lease)) =
            (task.step.filter(|s| puts_back(Some(*s))), &task.lease_id)
        {
            let guard = SlotGuard::lock(self.ctx.scan(), common, path, lease)?;
            if let Some(changed) = changed_since(ledger, task)? {
                return Ok(changed);
            }
            // A lease that no longer holds the slot leaves it to its new holder.
            if guard.ensure_still_held(ledger).is_ok() {
                guard.undo(ledger, SpawnWork::at(Some(step)))?;
            }
            _guard = Some(guard);
        } else if let Some(changed) = changed_since(ledger, task)? {
            return Ok(changed);
        }
        let ended = ledger.write(|tx| {
            if !is_as_judged(tx.view().task(task.id)?.as_ref(), task) {
                return Ok(false);
            }
            tx.end_task(task, EndReason::AbandonedSpawn, IssueLease::Release)?;
            Ok(true)
        })?;
        if !ended {
            return Ok(changed_since(ledger, task)?.unwrap_or(Undone::Changed(None)));
        }
        remove_stamp_of(common, &slot, task.lease_id.as_ref());
        Ok(Undone::Abandoned)
    }
}

/// What doctor does about an open task: the decision alone, over the facts (its state and step,
/// and what the process table says of the process at work on it, `runner`: see
/// [`runner_seen`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Settle {
    /// Not stuck: in neither a spawn nor a teardown, or its process still runs.
    Leave,
    /// Its process ran where this process table cannot see: it may still be at work, so it is
    /// reported and never settled.
    Unseen,
    /// A crashed spawn: undone. `puts_back`: its slot is put back to a clean checkout first
    /// (see [`puts_back`]).
    UndoSpawn { puts_back: bool },
    /// A crashed teardown: finished.
    FinishTeardown,
}

pub(super) fn settle(state: TaskState, step: Option<Step>, runner: Option<Seen>) -> Settle {
    match (runner, state) {
        (None | Some(Seen::Running), _) => Settle::Leave,
        (Some(Seen::Unseen), _) => Settle::Unseen,
        (Some(Seen::Gone), TaskState::Spawning) => Settle::UndoSpawn {
            puts_back: puts_back(step),
        },
        (Some(Seen::Gone), TaskState::TearingDown) => Settle::FinishTeardown,
        (Some(Seen::Gone), _) => Settle::Leave,
    }
}

/// Whether undoing a spawn that stopped at `step` puts its slot back: at `preparing` or
/// `creating` it was clean or new before and nobody was handed it; at `intent` it was only
/// claimed, never proven clean, and is left exactly as it is.
fn puts_back(step: Option<Step>) -> bool {
    matches!(step, Some(Step::Preparing | Step::Creating))
}

/// What [`Checkup::undo_spawn`] did.
pub(super) enum Undone {
    Abandoned,
    /// Nothing: the task was no longer as judged (its state now, `None`: gone).
    Changed(Option<TaskState>),
}

/// `Some` when the task is no longer in the state, step and process it was judged in.
fn changed_since(ledger: &mut Ledger, judged: &Task) -> Result<Option<Undone>> {
    let now = ledger.read(|v| v.task(judged.id))?;
    Ok((!is_as_judged(now.as_ref(), judged)).then(|| Undone::Changed(now.map(|t| t.state))))
}

fn is_as_judged(now: Option<&Task>, judged: &Task) -> bool {
    now.is_some_and(|t| {
        (t.state, t.step, t.pid, t.pid_start, t.pid_ns, &t.lease_id)
            == (
                judged.state,
                judged.step,
                judged.pid,
                judged.pid_start,
                judged.pid_ns,
                &judged.lease_id,
            )
    })
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

/// What this scan can tell of the process doing a task's spawn or teardown (`None`: the task
/// is in neither). A task with no process recorded counts as gone; one whose process ran in a
/// PID namespace this `/proc` cannot see into is unseen, which proves nothing (a spawn in a
/// container sharing the ledger may be running its setup command).
fn runner_seen(scan: Scan, task: &Task) -> Option<Seen> {
    if !matches!(task.state, TaskState::Spawning | TaskState::TearingDown) {
        return None;
    }
    Some(task.pid.map_or(Seen::Gone, |pid| {
        scan.judge(ProcessId {
            pid,
            start: task.pid_start,
            ns: task.pid_ns,
        })
    }))
}

/// Settles one task a spawn left `spawning` when its process died, as `doctor --repair` would:
/// Claude Code kills a `WorktreeCreate` hook at its timeout and retries it, and the retry finds
/// the task its first attempt recorded. `Ok(false)`: not settled, since the spawn still runs
/// (or ran where this scan cannot see), or the task changed meanwhile.
pub fn settle_crashed_spawn(
    ctx: &crate::ops::Context,
    ledger: &mut Ledger,
    task: &Task,
) -> Result<bool> {
    let settled = settle(task.state, task.step, runner_seen(ctx.scan(), task));
    if !matches!(settled, Settle::UndoSpawn { .. }) {
        return Ok(false);
    }
    let repo = ctx.repo()?;
    let Some(repo_id) = ctx.repo_id(ledger)? else {
        return Ok(false);
    };
    let checkup = Checkup {
        ctx,
        repo,
        git: repo.git(),
        repo_id,
        repair: true,
    };
    match checkup.undo_spawn(ledger, task)? {
        Undone::Abandoned => {
            let what = format!("abandoned the crashed spawn of task {}", task.name);
            record(ledger, &task.slot_key(), &what)?;
            Ok(true)
        }
        Undone::Changed(_) => Ok(false),
    }
}

/// A spawn or teardown whose process ran where this scan cannot see: reported, never settled.
fn unseen(scan: Scan, task: &Task) -> Problem {
    let spawn = task.state == TaskState::Spawning;
    Problem {
        kind: match spawn {
            true => ProblemKind::StuckSpawn,
            false => ProblemKind::StuckTeardown,
        },
        subject: task.name.clone(),
        finding: Finding::Unseen {
            spawn,
            step: task.step,
            pid: task.pid.unwrap_or(0),
            ns: task.pid_ns.map_or_else(|| "?".into(), procs::ns_name),
            here: scan.namespace().map_or_else(|| "?".into(), procs::ns_name),
        },
        repaired: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_task_whose_process_is_proven_gone_is_settled_and_a_spawn_at_intent_keeps_its_slot_as_it_is()
     {
        use {Seen::*, TaskState::*};
        let settled = |state, step, runner| settle(state, Some(step), runner);
        assert_eq!(settled(Active, Step::Active, None), Settle::Leave);
        assert_eq!(
            settled(Spawning, Step::Preparing, Some(Running)),
            Settle::Leave
        );
        assert_eq!(
            settled(Spawning, Step::Preparing, Some(Unseen)),
            Settle::Unseen
        );
        assert_eq!(
            settled(TearingDown, Step::Detached, Some(Unseen)),
            Settle::Unseen
        );
        assert_eq!(
            settled(Spawning, Step::Intent, Some(Gone)),
            Settle::UndoSpawn { puts_back: false }
        );
        for step in [Step::Preparing, Step::Creating] {
            assert_eq!(
                settled(Spawning, step, Some(Gone)),
                Settle::UndoSpawn { puts_back: true }
            );
        }
        assert_eq!(
            settled(TearingDown, Step::Detached, Some(Gone)),
            Settle::FinishTeardown
        );
    }
}
