//! Preparing the slot: git creates or switches it to the task's branch, under the slot's lock,
//! each git command checked against the ledger first (see [`SlotGuard`]), with no transaction
//! open. A failure here is undone by `undo::failed_spawn`, under the same lock.
//!
//! A new slot is `git worktree add --no-checkout --lock --detach` under the worktree-list lock, then
//! `git switch --discard-changes -c`; both skip git-hand's own post-checkout shim when it is the only
//! hook (`pool::switch_hook_args`).

use super::SpawnError;
use std::path::{Path, PathBuf};

use super::Progress;
use super::intent::Claimed;
use super::plan::{BranchOrigin, Groundwork};
use crate::git::{Git, Repo};
use crate::ledger::{Ledger, LedgerError};
use crate::ops::pool;
use crate::ops::pool::slot::{self, SlotGuard};
use crate::ops::repo::include::{self, Included};
use crate::ops::{Error, Result};

/// What failed while preparing the slot.
#[derive(Debug, thiserror::Error)]
pub(super) enum PrepareError {
    /// The slot could not be locked, created or switched to the task's branch.
    #[error("could not prepare slot {n} ({}): {source}", path.display())]
    Slot {
        n: i64,
        path: PathBuf,
        source: Error,
    },
    /// The repository's generated hooks directory could not be given to the slot.
    #[error(transparent)]
    Hooks(Error),
    /// The intent did not reach the disk: the slot must not be handed out on a claim a power
    /// cut could forget.
    #[error(transparent)]
    IntentNotDurable(LedgerError),
}

/// The branch a spawn puts in its slot.
pub(super) struct Target<'a> {
    pub branch: &'a str,
    pub origin: BranchOrigin,
    pub base: &'a str,
}

impl Groundwork<'_> {
    pub(super) fn target(&self) -> Target<'_> {
        Target {
            branch: &self.branch,
            origin: self.branch_origin,
            base: &self.base.oid,
        }
    }
}

/// Takes the slot's lock, under which it is prepared, stamped, and undone on a failure.
pub(super) fn lock(ground: &Groundwork<'_>, claimed: &Claimed) -> Result<SlotGuard, PrepareError> {
    SlotGuard::lock(
        ground.scan,
        &ground.repo.loc.common_dir,
        &claimed.path,
        &claimed.tenure.lease_id,
    )
    .map_err(|source| slot_failed(claimed, source))
}

/// Creates or switches the slot as the settled plan says, gives it the repository's generated
/// hooks directory (`ops/pool/slot_hooks.rs`), and waits until the intent is on disk.
pub(super) fn prepare_slot(
    ledger: &mut Ledger,
    ground: &Groundwork<'_>,
    claimed: &mut Claimed,
    guard: &SlotGuard,
    progress: &dyn Fn(Progress<'_>),
) -> Result<Included, PrepareError> {
    let target = ground.target();
    let created = claimed.plan.makes_worktree();
    let switched = if created {
        create_slot(ledger, ground.repo, &ground.git, guard, &target)
    } else {
        switch_to(ledger, ground.repo, guard, &target, &[])
    };
    switched.map_err(|source| slot_failed(claimed, source))?;
    crate::ops::pool::slot_hooks::inherit(ground.repo, &claimed.path)
        .map_err(PrepareError::Hooks)?;
    // `hand.include`: a new slot only (a reused one keeps what its last task left; see
    // ops/repo/include.rs). A copy that fails is reported, not a failed spawn.
    let mut included = Included::default();
    if created {
        guard
            .ensure_still_held(ledger)
            .map_err(|source| slot_failed(claimed, source))?;
        let progress = |at: include::Copying<'_>| progress(Progress::Including(at));
        included = include::include(ground.repo, guard.path(), &progress);
    }
    claimed.durable().map_err(PrepareError::IntentNotDurable)?;
    Ok(included)
}

fn slot_failed(claimed: &Claimed, source: Error) -> PrepareError {
    PrepareError::Slot {
        n: claimed.n,
        path: claimed.path.clone(),
        source,
    }
}

/// Registers the worktree (locked, detached, files not yet checked out) under the worktree-list
/// lock, then lets one `git switch` create the branch and check the files out, in parallel with
/// other spawns. Two processes: `worktree add -b` and a `reset --hard` took three (`-b` runs `git
/// branch`).
fn create_slot(
    ledger: &mut Ledger,
    repo: &Repo,
    git: &Git,
    guard: &SlotGuard,
    target: &Target<'_>,
) -> Result<()> {
    let path = guard.path();
    slot::prove_absent(path).map_err(|e| slot::not_the_slot(&e))?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| SpawnError::CannotCreateDir {
            dir: parent.to_path_buf(),
            reason: e.to_string(),
        })?;
    }
    let p = path.to_string_lossy();
    let mut args = vec![
        "worktree",
        "add",
        "--quiet",
        "--no-checkout",
        "--lock",
        "--reason",
        "git-hand slot",
        "--detach",
    ];
    // Nothing is at the path (proven above), but git may still list a worktree there that the
    // disk lost (a slot recreated, or set aside by doctor), locked as every slot is: the double
    // force lets git take the path back, and cannot overwrite a file.
    args.extend(["-f", "-f"]);
    args.extend([
        &*p,
        if target.origin == BranchOrigin::Existing {
            target.branch
        } else {
            target.base
        },
    ]);
    {
        let common = &repo.loc.common_dir;
        let lock = slot::lock_worktree_list(common)?;
        guard.ensure_still_held(ledger)?;
        let pool_dir = path.parent().and_then(Path::parent).unwrap_or(path);
        pool::add_worktree(git, &args, common, pool_dir, &lock)?;
    }
    // The index is empty: --discard-changes fills it and the files from the target.
    switch_to(ledger, repo, guard, target, &["--discard-changes"])
}

/// `git switch` in the slot to the task's branch, creating it at the base unless it exists,
/// while the ledger's WAL is truncated if long (see [`crate::ledger::Ledger::keep_wal_short`]).
/// Skips git-hand's own post-checkout shim when it is the only hook (see
/// [`pool::switch_hook_args`]).
fn switch_to(
    ledger: &mut Ledger,
    repo: &Repo,
    guard: &SlotGuard,
    target: &Target<'_>,
    extra: &[&str],
) -> Result<()> {
    let hooks = pool::switch_hook_args(repo);
    let switch: &[&str] = if target.origin == BranchOrigin::Existing {
        &[target.branch]
    } else {
        &["--no-track", "-c", target.branch, target.base]
    };
    // The intent's commit left a long WAL for this connection to truncate: done while git
    // switches, instead of by a second connection parsing the schema again.
    guard.git_meanwhile(
        ledger,
        &[hooks, &["switch", "--quiet"], extra, switch].concat(),
        Ledger::keep_wal_short,
    )?;
    Ok(())
}
