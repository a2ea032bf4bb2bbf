//! Activation: one transaction makes the task `active` and gives its leases the TTL asked for,
//! only if nothing settled the task while git worked. After it, the slot is the task's.

use super::SpawnError;
use super::intent::Claimed;
use super::plan::Groundwork;
use super::settle::settled_meanwhile;
use super::{SlotSource, Spawned};
use crate::clock::Millis;
use crate::ledger::{
    self, Durability, EventKind, Idempotent, Ledger, LedgerError, Retry, Step, Task, TaskState,
    Tenure,
};
use crate::ops::{Error, Result};

/// Activates the prepared and stamped slot's task; fails if it was settled meanwhile.
pub(super) fn activate(
    ledger: &mut Ledger,
    ground: &Groundwork<'_>,
    claimed: Claimed,
    ttl: Option<Millis>,
) -> Result<Spawned> {
    // Retried on a new connection when the team ledger's breaks (a server restart, a backend
    // terminated while the setup command ran): the slot is ready, and failing here would leave
    // the task `spawning` in a slot git already switched (issue 22).
    let activated = ledger
        .write_with(
            Durability::Relaxed,
            Retry::Once(Idempotent::Activate),
            |tx| {
                make_active(
                    tx,
                    &claimed.task,
                    &claimed.tenure,
                    claimed.issue_tenure.as_ref(),
                    ttl,
                )
            },
        )
        .map(|(out, _)| out)
        .map_err(|e| not_activated(e, &claimed, ground))?;
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

/// The error of an activation whose connection to the team ledger broke for good (the retry
/// could not connect either), saying what is true: the slot is ready on disk, and the task is
/// still `spawning` (or, when the commit went unanswered, may be active). Neither `nothing was
/// changed` nor `run the same command again` would be: the re-run is refused while the task is
/// spawning, and `doctor --repair` settles it so that the re-run spawns it again.
fn not_activated(e: LedgerError, claimed: &Claimed, ground: &Groundwork<'_>) -> Error {
    let LedgerError::ConnectionLost(lost) = &e else {
        return e.into();
    };
    SpawnError::CutAfterReady {
        task: ground.task.clone(),
        slot: claimed.path.clone(),
        branch: ground.branch.clone(),
        at: lost.at.clone(),
        reason: lost.reason.clone(),
        fate: lost.fate,
    }
    .into()
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
    if tx.retries_an_unanswered_commit()
        && let Some(done) = activated_already(tx, task, tenure, issue)?
    {
        return Ok(Some(done));
    }
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

/// The task, its slot tenure and its issue tenure as the first run of an activation whose
/// `COMMIT` went unanswered left them, when it committed: the task active on the lease its
/// intent took. `None` when it did not (the second run then does the work).
fn activated_already(
    tx: &ledger::Tx<'_>,
    task: &Task,
    tenure: &Tenure,
    issue: Option<&Tenure>,
) -> ledger::Result<Option<(Task, Tenure, Option<Tenure>)>> {
    let view = tx.view();
    let Some(now) = view.task(task.id)? else {
        return Ok(None);
    };
    let current = view.current(&tenure.resource)?;
    let Some(current) = current.filter(|t| t.lease_id == tenure.lease_id) else {
        return Ok(None);
    };
    if now.state != TaskState::Active || now.lease_id.as_ref() != Some(&tenure.lease_id) {
        return Ok(None);
    }
    let issue = match issue {
        Some(t) => view.tenure(&t.lease_id)?,
        None => None,
    };
    Ok(Some((now, current, issue)))
}
