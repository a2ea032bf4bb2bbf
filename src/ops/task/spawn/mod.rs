//! `git hand spawn`: lease a slot to a task and put the task's branch in it.
//!
//! Intent first: one transaction records the task (`spawning`) and its slot tenure (and issue
//! tenure) before anything touches the disk; then git creates or switches the slot; then one
//! transaction marks the task `active`. A crash anywhere leaves a row that `doctor` can read and
//! settle, and no lease is ever held that no row names. No transaction is open across a git call.
//!
//! [`spawn`] reads as its phases, one file each:
//! - `check`: everything a usage error could come from, before the ledger is opened;
//! - `casefold`: names that differ only in case from an open task's or a branch's, refused;
//! - `hooks`: the hooks that enforce the lease, installed before anything is leased;
//! - `plan`: what every attempt shares, then one attempt's choice of slot;
//! - `intent`: the transaction that claims the slot and records the task as `spawning`;
//! - `settle`: the claim kept (a claimed free slot proven safe) or given back;
//! - `prepare`: git creates or switches the slot, under its lock;
//! - `stamping`: the stamp written into the slot's admin dir;
//! - `activate`: the transaction that makes the task `active`;
//! - `undo`: what a failure after the claim takes back; `resume`: a task already open;
//! - `error`: why a spawn created nothing, or what a failed one left.
//!
//! A slot lost to a concurrent spawn means planning again, at most `MAX_ATTEMPTS` (32) times; a
//! claimed slot that proves unsafe is left out of later plans (`plan::UnsafeSlots`), a lost one is
//! not.

mod activate;
mod casefold;
mod check;
mod error;
mod hooks;
mod intent;
mod plan;
mod prepare;
mod resume;
mod settle;
mod stamping;
mod undo;

pub use error::{Left, OtherTask, SpawnError};

use std::path::PathBuf;

pub use check::{Checked, check};
pub use hooks::HooksNotInForce;
pub use undo::abandon;

use crate::clock::Millis;
use crate::failpoint;
use crate::ledger::{Ledger, Task, Tenure};
use crate::ops::pool::Skipped;
use crate::ops::pool::slot::SlotGuard;
use crate::ops::repo::include::Included;
use crate::ops::{Context, Error, Result, repo::base};
use intent::{Claimed, Recorded};
use plan::{Groundwork, UnsafeSlots};
use settle::Settled;

/// What a spawn is busy with, for the CLI to show while it waits on git.
#[derive(Debug, Clone, Copy)]
pub enum Progress<'a> {
    /// `git fetch origin` (`--fetch`).
    FetchingOrigin,
    /// A new worktree at this path.
    CreatingSlot(&'a std::path::Path),
    /// Copying a `hand.include` match into the new slot.
    Including(crate::ops::repo::include::Copying<'a>),
    /// A setup command (`hand.onCreate`, `hand.onReuse`) starts, or prints a line.
    Setup(crate::ops::repo::setup::SetupEvent<'a>),
}

#[derive(Debug, Clone)]
pub struct SpawnOptions<'a> {
    pub task: &'a str,
    pub base: Option<&'a str>,
    pub branch: Option<&'a str>,
    pub issue: Option<&'a str>,
    pub holder: &'a str,
    pub ttl: Option<Millis>,
    pub fetch: bool,
    /// Run no setup command (`--no-setup`).
    pub no_setup: bool,
    /// Whether a refusal may point at `git hand spawn <task> --no-setup`: the caller can run it
    /// (a person at the command line can; a Claude Code session, whose hook takes no flags,
    /// cannot).
    pub offer_no_setup: bool,
}

/// How the slot was obtained; its word is `spawn --json`'s `slot_source`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SlotSource {
    Created,
    Reused,
    /// The task was already active for this holder: same slot, same lease.
    Existing,
}

#[derive(Debug, Clone)]
pub struct Spawned {
    pub task: Task,
    pub path: PathBuf,
    pub slot_n: i64,
    pub tenure: Tenure,
    pub issue_tenure: Option<Tenure>,
    pub base: base::Base,
    pub source: SlotSource,
    pub skipped: Vec<Skipped>,
    /// Why the hooks will not enforce this lease, with the commands that fix it; `None` when
    /// they are in force.
    pub hooks_problem: Option<HooksNotInForce>,
    /// What `hand.include` copied into a new slot, and what it did not.
    pub included: Included,
}

/// How many times spawn re-plans after losing a slot to a concurrent spawn.
const MAX_ATTEMPTS: usize = 32;

/// Spawns a task [`check`] checked. The hooks are installed (or found not in force) before
/// anything is leased, so a spawn that dies halfway never leaves a leased slot whose pushes
/// nothing checks without having said so (issue 11); with `hand.installHooks=false` nothing is
/// installed or chained, and a lapse is still reported. A task already open is resumed.
pub fn spawn(
    ctx: &Context,
    ledger: &mut Ledger,
    opts: &SpawnOptions<'_>,
    checked: Checked,
    progress: &dyn Fn(Progress<'_>),
) -> Result<Spawned> {
    let repo = ctx.repo()?;
    let hooks_problem = hooks::ensure_in_force(ctx, repo, &repo.git(), checked.install_hooks);
    for p in crate::ops::repo::relative_remotes::pin(repo)? {
        let abs = p.absolute.display();
        ctx.note(vec![format!(
            "{} is the relative path {:?}, which git resolves inside each worktree (a slot's \
             would miss): pinned it with url.{abs}.insteadOf, so every worktree reaches {abs} \
             (git config --unset url.{abs}.insteadOf undoes it)",
            p.key, p.url
        )]);
    }
    failpoint::hit("spawn-after-hooks");
    let repo_id = plan::register_repo(ledger, repo)?;
    let spawned = match ledger.read(|v| v.open_task(&repo_id, &checked.task))? {
        Some(open) => resume::resume(ledger, open, opts)?,
        None => {
            let ground = Groundwork::lay(ctx, ledger, opts, checked, repo_id)?;
            attempts(ledger, &ground, opts, progress)?
        }
    };
    Ok(Spawned {
        hooks_problem,
        ..spawned
    })
}

/// What one attempt came to.
// Built once per attempt and matched at once: its size does not matter.
#[allow(clippy::large_enum_variant)]
enum Attempt {
    Spawned(Spawned),
    /// The slot was lost to a concurrent spawn (or prune) before the intent claimed it.
    Retry,
    /// The claimed free slot proved unsafe and was given back.
    RetryWithout {
        path: PathBuf,
        why: Vec<String>,
    },
}

/// Attempts until one spawns. A slot lost to a concurrent spawn means planning again, at most
/// [`MAX_ATTEMPTS`] times; a claimed slot found unsafe means planning again without it.
fn attempts(
    ledger: &mut Ledger,
    ground: &Groundwork<'_>,
    opts: &SpawnOptions<'_>,
    progress: &dyn Fn(Progress<'_>),
) -> Result<Spawned> {
    let mut unsafe_slots = UnsafeSlots::default();
    let mut races = 0;
    while races < MAX_ATTEMPTS {
        match attempt(ledger, ground, opts, &unsafe_slots, progress)? {
            Attempt::Spawned(spawned) => return Ok(spawned),
            Attempt::Retry => races += 1,
            Attempt::RetryWithout { path, why } => unsafe_slots.push(path, why),
        }
    }
    Err(SpawnError::SlotsRaced.into())
}

/// One attempt, phase by phase: plan a slot, record the intent that claims it, settle the
/// claim, prepare and stamp the slot (undone on failure), activate the task.
fn attempt(
    ledger: &mut Ledger,
    ground: &Groundwork<'_>,
    opts: &SpawnOptions<'_>,
    unsafe_slots: &UnsafeSlots,
    progress: &dyn Fn(Progress<'_>),
) -> Result<Attempt> {
    let planned = plan::next(ledger, ground, unsafe_slots)?;
    let claimed = match intent::record(ledger, ground, planned)? {
        Recorded::Claimed(claimed) => claimed,
        Recorded::LostSlot => return Ok(Attempt::Retry),
        Recorded::TaskOpen(task) => {
            return resume::resume(ledger, task, opts).map(Attempt::Spawned);
        }
    };
    failpoint::hit("spawn-after-intent");
    let task = claimed.task.clone();
    let settled = settle::settle(ledger, ground, claimed).map_err(|e| recorded_only(e, &task))?;
    let mut claimed = match settled {
        Settled::Ours(claimed) => claimed,
        Settled::Unsafe { path, why } => return Ok(Attempt::RetryWithout { path, why }),
    };
    let (guard, included) = prepare_and_stamp(ledger, ground, &mut claimed, progress)?;
    failpoint::hit("spawn-after-stamp");
    let spawned = activate::activate(ledger, ground, claimed, opts.ttl)?;
    drop(guard);
    Ok(Attempt::Spawned(Spawned {
        included,
        ..spawned
    }))
}

/// The error of a spawn whose connection to the team ledger broke for good once its intent was
/// recorded and before git touched the slot: the task is `spawning` and holds the slot's lease,
/// which `doctor --repair` settles (the slot is left as it was), and the same spawn then runs
/// again. Never "nothing was changed" (issue 22). Every other error is itself.
fn recorded_only(e: Error, task: &Task) -> Error {
    let Error::Ledger(crate::ledger::LedgerError::ConnectionLost(lost)) = &e else {
        return e;
    };
    SpawnError::CutAfterIntent {
        task: task.name.clone(),
        slot: task.slot_key().to_string(),
        at: lost.at.clone(),
        reason: lost.reason.clone(),
        fate: lost.fate,
    }
    .into()
}

/// Runs the slot's setup command (`hand.onCreate` for a slot just made, `hand.onReuse` for one
/// that held a task before), once the slot is stamped (so the credential it is handed is the
/// slot's) and before the task is active (so its TTL starts when the slot is ready).
fn run_setup(
    ground: &Groundwork<'_>,
    claimed: &Claimed,
    progress: &dyn Fn(Progress<'_>),
) -> std::result::Result<(), crate::ops::repo::setup::SetupError> {
    let Some(cmd) = ground.setup.for_slot(claimed.plan.makes_worktree()) else {
        return Ok(());
    };
    let env = crate::ops::fence::credential::env_vars(&claimed.task, &claimed.tenure);
    crate::ops::repo::setup::run(cmd, &claimed.path, &env, ground.setup.timeout, &|event| {
        progress(Progress::Setup(event))
    })
}

/// Prepares the slot and stamps it, under the slot's lock, which is returned to be held until
/// the task is active, with what `hand.include` copied. A failure is undone
/// (`undo::failed_spawn`) before it is returned.
fn prepare_and_stamp(
    ledger: &mut Ledger,
    ground: &Groundwork<'_>,
    claimed: &mut Claimed,
    progress: &dyn Fn(Progress<'_>),
) -> Result<(SlotGuard, Included)> {
    if claimed.plan.makes_worktree() {
        progress(Progress::CreatingSlot(&claimed.path));
    }
    let guard = match prepare::lock(ground, claimed) {
        Ok(guard) => guard,
        Err(why) => {
            return Err(undo::failed_spawn(
                ledger,
                ground,
                None,
                claimed,
                &why.into(),
            ));
        }
    };
    let ready = prepare::prepare_slot(ledger, ground, claimed, &guard, progress)
        .map_err(undo::AfterClaim::from)
        .and_then(|included| {
            failpoint::hit("spawn-after-checkout");
            stamping::stamp_slot(ledger, ground, &guard, claimed)?;
            run_setup(ground, claimed, progress)?;
            Ok(included)
        });
    match ready {
        Ok(included) => Ok((guard, included)),
        Err(why) => Err(undo::failed_spawn(
            ledger,
            ground,
            Some(guard),
            claimed,
            &why,
        )),
    }
}
