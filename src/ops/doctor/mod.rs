//! `git hand doctor [--repair]`: find what a crash, a killed agent or a hand-edited repository
//! left inconsistent between the ledger, git and the disk, and settle each with the safe action.
//!
//! Repairs never destroy unlanded work: what cannot be settled safely is reported with the
//! command that would settle it.
//!
//! One file per kind of finding, each an `impl` of [`Checkup`]: the ledger file itself
//! (`recover`), tasks whose process is gone (`stuck`), expired leases (`leases`), slots the
//! ledger and the disk disagree about (`slots`), slots that are not themselves (`unproven`),
//! worktrees git lists that are gone (`worktrees`), admin dirs a killed `git worktree add` left
//! (`half_added`), hooks that are not in force (`hooks`) and Claude Code hooks that lapsed
//! (`claude`); on a team ledger, this machine's clock against the server's (`clock_skew`, here).
//!
//! Each finding is facts ([`Finding`]): what makes it a problem and what a repair came to; the
//! words a user reads of it are `cli`'s (`cli/findings.rs`).

mod claude;
mod error;
mod finding;
mod half_added;
mod hooks;
mod leases;
pub mod recover;
mod slots;
mod stuck;
mod unproven;
mod worktrees;

pub use error::DoctorError;
pub use finding::{Finding, Rebuild, Reinstall, SetAside, SpawnUndo};

pub use stuck::settle_crashed_spawn;

use crate::git::Git;
use crate::ledger::{EventKind, Ledger, RepoId, WorktreeKey};

use super::{Context, Result};

/// What kind of problem doctor found: a stable word scripts match on (`doctor --json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProblemKind {
    LedgerMissing,
    LedgerDamaged,
    StuckSpawn,
    StuckTeardown,
    ExpiredLease,
    MissingSlot,
    UnknownSlot,
    UnusableSlot,
    UnprovenSlot,
    PrunableWorktree,
    HalfAddedWorktree,
    HooksNotInForce,
    ClaudeHooksLapsed,
    ClockSkew,
    UnfencedRemote,
}

crate::word::words!(ProblemKind: "doctor problem kind");

/// One problem: its kind, what it is about, its facts (what makes it one and what a repair
/// came to; `cli` says them) and whether it was repaired.
#[derive(Debug, Clone)]
pub struct Problem {
    pub kind: ProblemKind,
    pub subject: String,
    pub finding: Finding,
    pub repaired: bool,
}

/// How far this machine's clock may be from a team ledger server's before doctor calls it a
/// problem. Nothing depends on it (every lease time is the server's), but a clock that far off
/// makes this machine's own timestamps (git's, the logs') disagree with the ledger's.
const SKEW_TOLERANCE_MS: i64 = 2_000;

/// What doctor found: the problems, and on a team ledger this machine's clock against the
/// server's (milliseconds, positive: ahead), which doctor always reports.
#[derive(Debug, Clone, Default)]
pub struct Findings {
    pub problems: Vec<Problem>,
    pub clock_skew_ms: Option<i64>,
}

/// Looks at the ledger itself first (`recover`: a missing, damaged or unusable ledger is
/// reported, never created or migrated), then at this repository against it.
pub fn doctor(ctx: &Context, repair: bool) -> Result<Findings> {
    let (mut problems, sound) = recover::ledger_problems(ctx, repair)?;
    // Claude Code's hooks need no ledger: a repository that leased nothing yet has them too.
    if let Some(repo) = ctx.repo_opt() {
        problems.extend(claude::claude_hooks_lapsed(repo, repair));
    }
    if !sound {
        return Ok(Findings {
            problems,
            clock_skew_ms: None,
        });
    }
    let ledger = &mut ctx.open_ledger()?;
    let clock_skew_ms = ledger.clock_skew_ms()?;
    if let Some(skew) = clock_skew_ms.filter(|s| s.abs() > SKEW_TOLERANCE_MS) {
        problems.push(clock_skew(skew));
    }
    if let Some(repo) = ctx.repo_opt() {
        problems.extend(unfenced_remote(repo));
    }
    // Outside a repository (a team ledger's owner creating the schema) the ledger is all there
    // is to check.
    let problems = match ctx.repo_opt() {
        Some(_) => checkup(ctx, ledger, repair, problems)?,
        None => problems,
    };
    Ok(Findings {
        problems,
        clock_skew_ms,
    })
}

/// The finding of a clock more than [`SKEW_TOLERANCE_MS`] from the team ledger server's.
fn clock_skew(skew_ms: i64) -> Problem {
    Problem {
        kind: ProblemKind::ClockSkew,
        subject: "this machine's clock".into(),
        finding: Finding::ClockSkew { skew_ms },
        repaired: false,
    }
}

/// A server repository (bare, with the `hand.ledger` `install --server` writes) that names no
/// `hand.remoteUrl`: its branch fence covers pushes by path only, none over ssh or https, and
/// nothing else would say so (issue 22: the fence is never silently off).
fn unfenced_remote(repo: &crate::git::Repo) -> Option<Problem> {
    let served = repo.loc.workdir.is_none()
        && crate::git::Repo::open_isolated(&repo.loc.common_dir)
            .ok()
            .and_then(|own| own.config_string("hand.ledger"))
            .is_some();
    let coverage = super::on_hook::pre_receive::Coverage::of(repo);
    (served && coverage.remote_urls.is_empty()).then(|| Problem {
        kind: ProblemKind::UnfencedRemote,
        subject: repo.loc.common_dir.display().to_string(),
        finding: Finding::UnfencedRemote {
            common: repo.loc.common_dir.clone(),
        },
        repaired: false,
    })
}

/// This repository against the ledger: every finding but the ledger's own.
fn checkup(
    ctx: &Context,
    ledger: &mut Ledger,
    repair: bool,
    mut problems: Vec<Problem>,
) -> Result<Vec<Problem>> {
    let repo = ctx.repo()?;
    let Some(repo_id) = ctx.repo_id(ledger)? else {
        hooks::hooks_of_unknown_repository(repo, repair, &mut problems)?;
        return Ok(problems);
    };
    let git = repo.git();
    let checkup = Checkup {
        ctx,
        repo,
        git,
        repo_id,
        repair,
    };
    checkup.stuck_tasks(ledger, &mut problems)?;
    checkup.expired_leases(ledger, &mut problems)?;
    checkup.missing_slots(ledger, &mut problems)?;
    checkup.unproven_slots(ledger, &mut problems)?;
    checkup.unusable_free_slots(ledger, &mut problems)?;
    checkup.unknown_slots(ledger, &mut problems)?;
    checkup.prunable_worktrees(ledger, &mut problems)?;
    checkup.half_added_worktrees(&mut problems)?;
    checkup.hooks_not_in_force(ledger, &mut problems)?;
    if repair {
        // Not a problem of its own: the marker follows the setting (see `stamp::REQUIRE_FILE`).
        let required = super::repo::settings::require_credential(repo)?;
        super::pool::stamp::refresh_required(&repo.loc.common_dir, required).map_err(|e| {
            DoctorError::CannotMarkSlots {
                reason: e.to_string(),
            }
        })?;
    }
    Ok(problems)
}

/// Appends a `repaired` event naming the slot and what was done to it.
fn record(ledger: &mut Ledger, slot: &WorktreeKey, what: &str) -> Result<()> {
    ledger.write(|tx| {
        tx.log(
            EventKind::Repaired,
            &tx.view().worktree(slot),
            None,
            Some(what),
        )
    })?;
    Ok(())
}

/// What every check needs to know about the repository being examined.
pub(super) struct Checkup<'a> {
    ctx: &'a Context,
    repo: &'a crate::git::Repo,
    git: Git,
    repo_id: RepoId,
    repair: bool,
}
