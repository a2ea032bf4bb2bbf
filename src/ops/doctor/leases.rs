//! Slot leases that expired and were never taken over: each blocks its slot until ended.

use super::{Checkup, Finding, Problem, ProblemKind, record};
use crate::ledger::{Ledger, TaskState, TenureState};
use crate::ops::task::teardown::{self, TeardownOptions};
use crate::ops::{Result, pool, pool::safety};

impl Checkup<'_> {
    /// Active tasks whose slot lease expired and was never taken over: the slot is blocked until
    /// someone ends the lease. Ended when the slot holds no work; otherwise reported.
    pub(super) fn expired_leases(&self, ledger: &mut Ledger, out: &mut Vec<Problem>) -> Result<()> {
        let (ctx, repo_id, repair) = (self.ctx, &self.repo_id, self.repair);

        let repo = ctx.repo()?;
        let (slots, now) = ledger.read(|v| Ok((pool::slots(v, repo_id)?, v.now())))?;
        for info in slots {
            let Some(held) = info.held.filter(|t| t.state(now) == TenureState::Expired) else {
                continue;
            };
            let task = ledger.read(|v| v.task_by_lease(&held.lease_id))?;
            if !blocks_its_slot(task.as_ref().map(|t| t.state)) {
                continue;
            }
            let name = task
                .as_ref()
                .map_or_else(|| "(no task)".to_string(), |t| t.name.clone());
            let path = info.slot.path.as_path();
            let blockers = safety::reuse_blockers(ctx.scan(), repo, path);
            let holds_work = holds_work(&blockers, path.exists());
            let mut p = Problem {
                kind: ProblemKind::ExpiredLease,
                subject: name.clone(),
                finding: Finding::ExpiredLease {
                    task: name.clone(),
                    n: info.slot.n,
                    holder: held.holder.clone(),
                    token: held.token,
                    work: if holds_work { blockers } else { vec![] },
                },
                repaired: false,
            };
            if repair && !holds_work {
                let opts = TeardownOptions {
                    task: &name,
                    force: false,
                    keep_unpushed: true,
                    setup: None,
                };
                match &task {
                    Some(_) => {
                        teardown::teardown(ctx, ledger, &opts)?;
                    }
                    None => {
                        ledger.write(|tx| {
                            tx.release(&held.resource, crate::ledger::By::Lease(&held.lease_id))?;
                            Ok(())
                        })?;
                    }
                }
                record(ledger, &info.slot.path, "ended an expired lease")?;
                p.repaired = true;
            }
            out.push(p);
        }
        Ok(())
    }
}

/// Whether an expired lease whose task is in `state` (`None`: no task has it) is one blocking
/// its slot: a spawn or teardown still at work, or crashed (`stuck_tasks` settles those), is not.
fn blocks_its_slot(state: Option<TaskState>) -> bool {
    state.is_none_or(|s| s == TaskState::Active)
}

/// Whether the slot of an expired lease holds work (`blockers`, what a reuse would lose), so
/// the lease is left to its task: a slot that is not on disk holds none, whatever was said of it.
fn holds_work(blockers: &[String], on_disk: bool) -> bool {
    !blockers.is_empty() && on_disk
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expired_lease_is_ended_unless_its_slot_holds_work_and_a_task_at_work_is_left_to_stuck_tasks()
     {
        assert!(blocks_its_slot(Some(TaskState::Active)));
        assert!(blocks_its_slot(None), "a lease no task has");
        for at_work in [TaskState::Spawning, TaskState::TearingDown] {
            assert!(!blocks_its_slot(Some(at_work)), "{at_work:?}");
        }
        let work = ["2 commits on no branch".to_string()];
        assert!(holds_work(&work, true));
        assert!(
            !holds_work(&work, false),
            "a slot the disk lost holds nothing"
        );
        assert!(!holds_work(&[], true));
    }
}
