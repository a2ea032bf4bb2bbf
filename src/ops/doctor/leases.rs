//! Slot leases that expired and were never taken over: each blocks its slot until ended.

use super::{Checkup, Problem, ProblemKind, record};
use crate::hint::Hint;
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
            // A spawn or teardown still at work (or crashed: `stuck_tasks` settles those) is not an
            // expired lease blocking a slot.
            if task.as_ref().is_some_and(|t| t.state != TaskState::Active) {
                continue;
            }
            let name = task
                .as_ref()
                .map_or_else(|| "(no task)".to_string(), |t| t.name.clone());
            let blockers = safety::reuse_blockers(ctx.scan(), repo, info.slot.path.as_path());
            let mut p = Problem {
                kind: ProblemKind::ExpiredLease,
                subject: name.clone(),
                detail: format!(
                    "the lease of slot {} (held by {}, token {}) expired",
                    info.slot.n, held.holder, held.token
                ),
                action: "end the lease and mark the task done; the slot becomes free".into(),
                repaired: false,
                command: None,
            };
            if !blockers.is_empty() && info.slot.path.as_path().exists() {
                p.detail
                    .push_str(&format!("; the slot holds work: {}", blockers.join("; ")));
                p.action = "none: the slot holds work".into();
                p.command = Some(
                    Hint::hand(format!("teardown {name}"))
                        .why("or --force to discard uncommitted changes"),
                );
            } else if repair {
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
