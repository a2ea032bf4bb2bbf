//! Activation: one transaction makes the task `active` and gives its leases the TTL asked for,
//! only if nothing settled the task while git worked. After it, the slot is the task's.

use super::intent::Claimed;
use super::plan::Groundwork;
use super::settle::settled_meanwhile;
use super::{SlotSource, Spawned};
use crate::clock::Millis;
use crate::ledger::{self, EventKind, Ledger, LedgerError, Step, Task, TaskState, Tenure};
use crate::ops::Result;

/// Activates the prepared and stamped slot's task; fails if it was settled meanwhile.
pub(super) fn activate(
    ledger: &mut Ledger,
    ground: &Groundwork<'_>,
    claimed: Claimed,
    ttl: Option<Millis>,
) -> Result<Spawned> {
    let activated = ledger.write_relaxed(|tx| {
        make_active(
            tx,
            &claimed.task,
            &claimed.tenure,
            claimed.issue_tenure.as_ref(),
            ttl,
        )
    })?;
    let Some((task, tenure, issue_tenure)) = activated else {
        return Err(settled_meanwhile(&ground.task));
    };
    let source = if claimed.plan.makes_worktree() {
        SlotSource::Created
    } else {
        SlotSource::Reused
    };
    Ok(Spawned {
        task,
        path: claimed.path,
        slot_n: claimed.n,
        tenure,
        issue_tenure,
        base: ground.base.clone(),
        source,
        skipped: claimed.skipped,
        hooks_problem: None,
        included: Default::default(),
    })
}

/// The activation transaction: the task becomes active only if it is still spawning and its
/// leases are still the ones its intent took (a `doctor --repair` may have settled it meanwhile),
/// and the leases get the TTL asked for. `None` when the task was settled under us.
fn make_active(
    tx: &ledger::Tx<'_>,
    task: &Task,
    tenure: &Tenure,
    issue: Option<&Tenure>,
    ttl: Option<Millis>,
) -> ledger::Result<Option<(Task, Tenure, Option<Tenure>)>> {
    let view = tx.view();
    let still_spawning = view
        .task(task.id)?
        .is_some_and(|t| t.state == TaskState::Spawning);
    let still_held = view
        .current(&tenure.resource)?
        .is_some_and(|t| t.lease_id == tenure.lease_id);
    if !still_spawning || !still_held {
        return Ok(None);
    }
    // Not a renewal the log records: `task-spawned` below names the lease (issue 13).
    let Some(tenure) = tx.start_term(tenure, ttl)? else {
        return Ok(None);
    };
    let issue = match issue {
        Some(t) => match tx.start_term(t, ttl)? {
            Some(t) => Some(t),
            None => {
                return Err(LedgerError::Raced(format!(
                    "issue lease of task {} ended",
                    task.name
                )));
            }
        },
        None => None,
    };
    tx.set_task_state(task.id, TaskState::Active, Step::Active, None)?;
    let detail = format!("task {} on {}", task.name, task.branch);
    tx.log(
        EventKind::TaskSpawned,
        &tenure.resource,
        Some(&tenure),
        Some(&detail),
    )?;
    let task = view.task(task.id)?.unwrap_or_else(|| task.clone());
    Ok(Some((task, tenure, issue)))
}
