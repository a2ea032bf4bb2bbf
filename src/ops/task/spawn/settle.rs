//! Settling the claim: once the intent holds the slot, a claimed free slot is proven safe (its
//! probe ran while the intent committed, and counts only now that nobody else can probe or
//! switch the slot) and `preparing` is recorded before git touches it; a slot that is not safe
//! is given back and the attempt plans again without it.

use super::SpawnError;
use std::path::PathBuf;

use super::intent::Claimed;
use super::plan::Groundwork;
use super::undo::{issue_lease, withdraw};
use crate::ledger::{Durability, Idempotent, Ledger, Retry, Step, Task, TaskState};
use crate::ops::pool::Plan;
use crate::ops::{Error, Result, pool::safety};

/// What the claim came to.
// Built once per spawn attempt and matched at once: its size does not matter.
#[allow(clippy::large_enum_variant)]
pub(super) enum Settled {
    /// The slot is this spawn's to prepare, as its plan says (a claimed free slot is now
    /// [`Plan::Reuse`]).
    Ours(Claimed),
    /// The claimed free slot is not safe to use: the intent was taken back.
    Unsafe { path: PathBuf, why: Vec<String> },
}

/// Settles the claim of an attempt whose intent was recorded.
pub(super) fn settle(
    ledger: &mut Ledger,
    ground: &Groundwork<'_>,
    mut claimed: Claimed,
) -> Result<Settled> {
    match &claimed.plan {
        // A new slot's number is settled by the intent: a concurrent spawn may have taken the
        // one chosen before it.
        Plan::Create { .. } => {
            claimed.plan = Plan::Create {
                n: claimed.n,
                path: claimed.path.clone(),
            };
            Ok(Settled::Ours(claimed))
        }
        Plan::Claim(p) => {
            let p = p.clone();
            prove_claimed(ledger, ground, claimed, p)
        }
        Plan::Reuse(_) | Plan::Recreate(_) => Ok(Settled::Ours(claimed)),
    }
}

/// Claimed, so nobody else probes or switches the slot: the probe holds.
fn prove_claimed(
    ledger: &mut Ledger,
    ground: &Groundwork<'_>,
    mut claimed: Claimed,
    p: PathBuf,
) -> Result<Settled> {
    let probe = claimed.probe.take().unwrap_or_else(safety::Probe::lost);
    let why = probe.blockers(ground.repo, &p);
    if !why.is_empty() {
        claimed.durable()?;
        withdraw(ledger, &claimed.task, issue_lease(claimed.issue_was_held))?;
        return Ok(Settled::Unsafe { path: p, why });
    }
    if preparing_in(ledger, &claimed.task)? == Preparing::Settled {
        claimed.durable()?;
        return Err(settled_meanwhile(&ground.task));
    }
    claimed.plan = Plan::Reuse(p);
    Ok(Settled::Ours(claimed))
}

/// Whether the task of a claimed slot may go on to prepare it.
#[derive(Debug, PartialEq, Eq)]
enum Preparing {
    Recorded,
    /// Someone (`doctor --repair`) settled the task or its lease meanwhile.
    Settled,
}

/// Records that a claimed free slot was proven safe and git is about to change it: from here an
/// undo (by this spawn or by `doctor`) may reset the slot, because it was clean before and is
/// nobody else's. Until then, an undo must leave the slot as it found it: the probe may have
/// found someone's work in it. A relaxed commit: a power cut that loses it makes `doctor` only
/// release the leases and leave the slot to be proven again.
///
/// Retried on a lost connection: a second run finds the task spawning on its lease (the step
/// recorded or not) and records the same step.
fn preparing_in(ledger: &mut Ledger, task: &Task) -> Result<Preparing> {
    Ok(ledger
        .write_with(
            Durability::Relaxed,
            Retry::Once(Idempotent::SetStep),
            |tx| {
                let view = tx.view();
                let spawning = view
                    .task(task.id)?
                    .is_some_and(|t| t.state == TaskState::Spawning);
                let held = match &task.lease_id {
                    Some(lease) => view.tenure(lease)?.is_some_and(|t| t.ended_at.is_none()),
                    None => false,
                };
                if !spawning || !held {
                    return Ok(Preparing::Settled);
                }
                tx.set_task_step(task.id, Step::Preparing)?;
                Ok(Preparing::Recorded)
            },
        )
        .map(|(out, _)| out)?)
}

/// The task was settled by someone else (`doctor --repair`) while this spawn worked on it.
pub(super) fn settled_meanwhile(task: &str) -> Error {
    SpawnError::SettledMeanwhile {
        task: task.to_string(),
    }
    .into()
}
