//! Stamping the slot: the stamp (`ops/pool/stamp.rs`) written into the prepared slot's admin dir,
//! naming the lease a push from the slot presents when its environment carries no credential.
//! A failure here is undone by `undo::failed_spawn`, like one while preparing.

use super::intent::Claimed;
use super::plan::Groundwork;
use crate::git::ConfigError;
use crate::ledger::Ledger;
use crate::ops::Error;
use crate::ops::pool::slot::SlotGuard;
use crate::ops::pool::stamp::{self, Stamp, StampError};

/// What failed while stamping the slot.
#[derive(Debug, thiserror::Error)]
pub(super) enum StampSlotError {
    /// `hand.requireCredential` does not parse.
    #[error(transparent)]
    Setting(#[from] ConfigError),
    /// The repository's other slots could not be put in step with `hand.requireCredential`.
    #[error("cannot mark the slots for hand.requireCredential: {0}")]
    MarkSlots(#[source] std::io::Error),
    /// The lease no longer holds the slot, or the slot is no longer proven to be itself.
    #[error(transparent)]
    NotOurs(Error),
    /// The marker or the stamp could not be written.
    #[error(transparent)]
    Write(#[from] StampError),
}

/// Writes the stamp into the slot's proven admin dir, the lease checked just before like any
/// other change to the slot. Every slot of the repository gets its `hand.requireCredential`
/// marker first, this one's included, so the stamp never stands without it.
pub(super) fn stamp_slot(
    ledger: &mut Ledger,
    ground: &Groundwork<'_>,
    guard: &SlotGuard,
    claimed: &Claimed,
) -> Result<(), StampSlotError> {
    let repo = ground.repo;
    let required = crate::ops::repo::settings::require_credential(repo)?;
    stamp::refresh_required(&repo.loc.common_dir, required).map_err(StampSlotError::MarkSlots)?;
    guard
        .ensure_still_held(ledger)
        .map_err(StampSlotError::NotOurs)?;
    let admin = guard.prove().map_err(StampSlotError::NotOurs)?;
    let stamped = Stamp {
        lease_id: claimed.tenure.lease_id.clone(),
        token: claimed.tenure.token,
        task: ground.task.clone(),
        ledger: ledger.place(),
    };
    Ok(stamp::write_marked(&admin, &stamped, required)?)
}
