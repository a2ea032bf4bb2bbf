//! Undoing: what a spawn takes back when it fails after its intent, so no lease is left that no
//! active task names and no slot is left half switched. `doctor` ends a crashed spawn's task
//! through [`abandon`] too.

use super::intent::Claimed;
use super::plan::BranchOrigin;
use super::plan::Groundwork;
use super::prepare::PrepareError;
use super::stamping::StampSlotError;
use super::{Left, SpawnError};
use crate::ledger::{
    Durability, EndReason, Idempotent, IssueLease, Ledger, LedgerError, Retry, Task,
};
use crate::ops::pool::slot::{SlotGuard, SpawnWork};
use crate::ops::{Error, Result};

/// What failed once the slot was claimed and git was let at it.
#[derive(Debug, thiserror::Error)]
pub(super) enum AfterClaim {
    #[error(transparent)]
    Prepare(#[from] PrepareError),
    #[error(transparent)]
    Stamp(#[from] StampSlotError),
    /// The slot's setup command failed or timed out.
    #[error(transparent)]
    Setup(#[from] crate::ops::repo::setup::SetupError),
}

/// Undoes a spawn whose git work or stamp failed after it claimed its slot: the slot is put back
/// to a clean detached checkout under its lock (so it stays usable, instead of being left half
/// switched, skipped by every later spawn and kept by prune), a branch this spawn created is
/// deleted if it still points at the base, and the task's leases are released. When the slot
/// cannot be put back, the task stays `spawning` (its process, this one, is about to exit) for
/// `git hand doctor --repair`, which tries again: a slot is never left free and dirty. Returns
/// the error that says which of these happened.
pub(super) fn failed_spawn(
    ledger: &mut Ledger,
    ground: &Groundwork<'_>,
    owned: Option<SlotGuard>,
    claimed: &Claimed,
    why: &AfterClaim,
) -> Error {
    let task = &claimed.task;
    let why = said(why, claimed);
    let guard = owned.as_ref();
    let restored = match guard {
        Some(guard) => guard.undo(ledger, SpawnWork::at(task.step)),
        None => Ok(()),
    };
    // Lost only when the ledger says so: a ledger that cannot be asked (the team ledger's
    // connection gone) leaves the leases held, and the slot is not put back (issue 22).
    let lease_lost = guard.is_some_and(|g| {
        matches!(g.ensure_still_held(ledger), Err(Error::Pool(ref e))
            if matches!(**e, crate::ops::pool::PoolError::NoLongerHeld { .. }))
    });
    if let Err(e) = &restored
        && !lease_lost
    {
        return SpawnError::NotPutBack {
            task: task.name.clone(),
            why: why.to_string(),
            reason: e.to_string(),
        }
        .into();
    }
    let target = ground.target();
    if target.origin == BranchOrigin::Created {
        // Compare-and-delete: only the branch as this spawn made it, at the base.
        let name = format!("refs/heads/{}", target.branch);
        let _ = ground.git.output(&["update-ref", "-d", &name, target.base]);
    }
    let ended = abandon(
        ledger,
        task,
        EndReason::SpawnFailed,
        issue_lease(claimed.issue_was_held),
    );
    // A lease that could not be released (the team ledger's connection lost) still holds the
    // slot: saying "free" then would not be true (issue 22).
    let released = ended.is_ok();
    // A slot this spawn was making and could not put back (its checkout failed on a full disk,
    // say) was removed from disk by the undo: the ledger forgets it too, or every `doctor` after
    // reports it `missing-slot` (issue 22 item 10). Its lease is ended above; the slot's lock
    // is let go first, as the removal takes it.
    let unmade = guard.is_some()
        && SpawnWork::at(task.step) == SpawnWork::Creating
        && std::fs::symlink_metadata(&claimed.path).is_err();
    drop(owned);
    let mut left = Left::Clean;
    if unmade {
        let key = crate::ledger::WorktreeKey::from_canonical(&claimed.path);
        let common = &ground.repo.loc.common_dir;
        left = match crate::ops::prune::remove_slot(
            &ground.git,
            common,
            ledger,
            &key,
            crate::ops::prune::OnDisk::Missing,
        ) {
            Ok(_) => Left::Removed,
            Err(_) => Left::GoneFromDisk,
        };
    }
    SpawnError::Undone {
        task: task.name.clone(),
        why: why.text,
        setup: why.setup,
        released,
        left,
    }
    .into()
}

/// What failed, as the error says it, and whether it was the setup command.
struct Said {
    text: String,
    setup: bool,
}

impl std::fmt::Display for Said {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// `why` in words. A lost connection to the team ledger is said as such, without the lost
/// write's own "nothing was changed": git had changed the slot by then (issue 22).
fn said(why: &AfterClaim, claimed: &Claimed) -> Said {
    let ledger_error = match why {
        AfterClaim::Prepare(PrepareError::Slot { source, .. } | PrepareError::Hooks(source))
        | AfterClaim::Stamp(StampSlotError::NotOurs(source)) => match source {
            Error::Ledger(e) => Some(e),
            _ => None,
        },
        AfterClaim::Prepare(PrepareError::IntentNotDurable(e)) => Some(e),
        _ => None,
    };
    let text = match ledger_error {
        Some(LedgerError::ConnectionLost(lost)) => format!(
            "the connection to the team ledger at {} broke ({}) while slot {} was being \
             prepared for task {}",
            lost.at,
            lost.reason,
            claimed.path.display(),
            claimed.task.name
        ),
        _ => why.to_string(),
    };
    Said {
        text,
        setup: matches!(why, AfterClaim::Setup(_)),
    }
}

/// What happens to the task's issue lease: one the holder held before this spawn is kept.
pub(super) fn issue_lease(was_held: bool) -> IssueLease {
    if was_held {
        IssueLease::Keep
    } else {
        IssueLease::Release
    }
}

/// Ends what a failed spawn started: the leases are released (tokens stay spent) and the task is
/// marked done, so no lease is left that no active task names.
pub fn abandon(
    ledger: &mut Ledger,
    task: &Task,
    reason: EndReason,
    issue: IssueLease,
) -> Result<()> {
    ledger.write(|tx| tx.end_task(task, reason, issue))?;
    Ok(())
}

/// Takes back an intent whose claimed slot proved unsafe (see
/// [`crate::ledger::Tx::withdraw_intent`]). The slot stays free; its token history keeps the
/// claim.
pub(super) fn withdraw(ledger: &mut Ledger, task: &Task, issue: IssueLease) -> Result<()> {
    // Retried on a lost connection: a second run finds the leases ended and the row gone.
    ledger
        .write_with(
            Durability::Durable,
            Retry::Once(Idempotent::Withdraw),
            |tx| tx.withdraw_intent(task, issue),
        )
        .map(|(out, _)| out)?;
    Ok(())
}
