//! Spawning a task that is already open: the same holder gets the same slot and lease back (its
//! expiry, and its issue lease's, refreshed from this call's TTL); anyone else is told who has it. Nothing on disk
//! changes.

use super::SpawnError;
use std::path::PathBuf;

use super::{SlotSource, SpawnOptions, Spawned};
use crate::ledger::{self, Ledger, Task, TaskState, Tenure};
use crate::ops::{Result, repo::base};

/// Gives the open task back to its holder, or refuses.
pub(super) fn resume(ledger: &mut Ledger, task: Task, opts: &SpawnOptions<'_>) -> Result<Spawned> {
    refuse_unless_active_for(&task, opts.holder)?;
    let slot_path = task.slot_key();
    let (tenure, issue_tenure) = renew_leases(ledger, &task, opts)?;
    let slot_n = ledger.read(|v| Ok(v.slot_by_path(&slot_path)?.map_or(0, |s| s.n)))?;
    let base = base::Base {
        oid: task.base_oid.clone().unwrap_or_default(),
        label: task.base_oid.clone().unwrap_or_default(),
        full_ref: task.base_ref.clone(),
    };
    Ok(Spawned {
        path: PathBuf::from(&slot_path),
        slot_n,
        tenure,
        issue_tenure,
        base,
        source: SlotSource::Existing,
        skipped: vec![],
        hooks_problem: None,
        included: Default::default(),
        task,
    })
}

/// Only an active task, and only to its holder: one still spawning or being torn down belongs
/// to another git-hand (or a crashed one).
fn refuse_unless_active_for(task: &Task, holder: &str) -> Result<()> {
    let name = &task.name;
    if task.state != TaskState::Active {
        return Err(SpawnError::NotActive {
            task: name.clone(),
            state: task.state,
        }
        .into());
    }
    if task.holder != holder {
        return Err(SpawnError::HeldByAnother {
            task: name.clone(),
            holder: task.holder.clone(),
            slot: task
                .slot_path
                .as_ref()
                .map_or("?", |s| s.as_str())
                .to_string(),
        }
        .into());
    }
    Ok(())
}

/// Renews the slot lease the task names, if it is still the live one, and in the same
/// transaction gives its issue lease (when live) the same expiry: this call's TTL, or none. A
/// push is judged on both, so refreshing only the slot's would leave the task `issue-lost` when
/// the issue's older TTL ran out. An issue lease no longer live is handed back as it is.
fn renew_leases(
    ledger: &mut Ledger,
    task: &Task,
    opts: &SpawnOptions<'_>,
) -> Result<(Tenure, Option<Tenure>)> {
    let res = task.slot_resource();
    let renewed = ledger.write(|tx| {
        let current = tx.view().current(&res)?;
        let slot = match current {
            Some(t) if task.lease_id.as_ref() == Some(&t.lease_id) => {
                match tx.acquire(&res, opts.holder, opts.ttl)? {
                    ledger::Acquire::Acquired { tenure, .. } => tenure,
                    ledger::Acquire::Held(_) => return Ok(None),
                }
            }
            _ => return Ok(None),
        };
        let issue = match &task.issue_lease_id {
            Some(id) => match tx.view().tenure(id)? {
                Some(t) if t.is_live(tx.now()) => Some(match opts.ttl {
                    Some(_) => match tx.renew(&t.resource, ledger::By::Lease(id), opts.ttl)? {
                        ledger::Renew::Renewed(t) => t,
                        ledger::Renew::NotHolder(_) => t,
                    },
                    None => tx.hold_open(&t)?,
                }),
                other => other,
            },
            None => None,
        };
        Ok(Some((slot, issue)))
    })?;
    renewed.ok_or_else(|| {
        SpawnError::LeaseLost {
            task: task.name.clone(),
            branch: task.branch.clone(),
        }
        .into()
    })
}
