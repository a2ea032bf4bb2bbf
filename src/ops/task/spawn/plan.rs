//! Planning: the groundwork every attempt of one spawn shares (the repository's row, the base,
//! the branch proven free, the issue's resource, the pool directory), then, per attempt, the
//! slot to try ([`pool::choose`]). Nothing is leased here: the plan is only a guess that the
//! intent transaction confirms or throws away.

use super::SpawnError;
use std::path::PathBuf;

use super::{Checked, SpawnOptions};
use crate::git::{Git, Repo};
use crate::ledger::{EndReason, LeaseId, Ledger, RepoId, Resource, TaskState};
use crate::ops::pool::{self, Plan, Skipped};
use crate::ops::{Context, Error, Result, repo::base};
use crate::platform::procs::{ProcessId, Scan};

/// The repository's id in the ledger: a write (and its fsync) only the first time git-hand
/// sees this repository.
pub(super) fn register_repo(ledger: &mut Ledger, repo: &Repo) -> Result<RepoId> {
    let common = &repo.loc.common_dir;
    Ok(match ledger.read(|v| v.repo_by_dir(common))? {
        Some(known) => known.id,
        None => ledger.write(|tx| Ok(tx.ensure_repo(common)?.id))?,
    })
}

/// Where a spawn's branch comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BranchOrigin {
    /// It existed before this spawn (named with `--branch`, and checked out nowhere): the slot
    /// switches to it.
    Existing,
    /// Spawn creates it at the base; undoing the spawn deletes it again if it still points
    /// there.
    Created,
}

/// What every attempt of one spawn shares, settled once before the first: it does not change
/// when an attempt loses its slot and plans again.
pub(super) struct Groundwork<'a> {
    pub repo: &'a Repo,
    pub git: Git,
    pub repo_id: RepoId,
    pub task: String,
    pub branch: String,
    pub branch_origin: BranchOrigin,
    pub base: base::Base,
    /// The issue's resource and id, with `--issue`.
    pub issue: Option<(Resource, String)>,
    pub holder: &'a str,
    pub pool_dir: PathBuf,
    /// `hand.maxSlots`.
    pub max: i64,
    pub me: ProcessId,
    /// The process table this spawn asks who is inside a slot.
    pub scan: Scan,
    /// The remote the branch is pushed to, which branch fencing is keyed on.
    pub remote: Option<String>,
    /// The machine the ledger acts for (empty on a file ledger), to say when a task that stands
    /// in the way is another machine's.
    pub machine: String,
    /// The setup commands `check` read (and found trusted).
    pub setup: crate::ops::repo::setup::Plan,
}

impl<'a> Groundwork<'a> {
    /// Resolves the base (unless `check` did), refuses a branch spawn may not use, and makes the
    /// pool directory.
    pub(crate) fn lay(
        ctx: &'a Context,
        ledger: &mut Ledger,
        opts: &SpawnOptions<'a>,
        checked: Checked,
        repo_id: RepoId,
    ) -> Result<Self> {
        let repo = ctx.repo()?;
        let git = repo.git();
        // Resolved by `check` unless the task it saw open has ended since.
        let base = match checked.base {
            Some(base) => base,
            None => base::resolve(repo, &git, opts.base)?,
        };
        let branch = checked.branch;
        let branch_tip = repo.ref_oid(&format!("refs/heads/{branch}"));
        let branch_exists = branch_tip.is_some();
        let existing = match (branch_exists, opts.branch.is_some()) {
            (false, _) => Existing::No,
            (true, true) => Existing::Named,
            (true, false)
                if left_by_undone_spawn(ledger, &repo_id, &checked.task, &branch, branch_tip)? =>
            {
                Existing::Named
            }
            (true, false) => Existing::Unnamed,
        };
        let branch_origin = if branch_exists {
            BranchOrigin::Existing
        } else {
            BranchOrigin::Created
        };
        super::casefold::refuse_twins(
            ledger,
            repo,
            &repo_id,
            &checked.task,
            &branch,
            opts.branch.is_some(),
        )?;
        check_branch_free(repo, &checked.task, &branch, existing)?;
        let issue = match checked.issue {
            Some(id) => {
                // Neither configured nor origin: the repository's own id, which spawn has.
                let namespace = checked
                    .namespace
                    .unwrap_or_else(|| crate::ops::lease::repo_namespace(&repo_id));
                Some((Resource::issue(&namespace, &id), id))
            }
            None => None,
        };
        Ok(Groundwork {
            pool_dir: pool::ensure_pool_dir(repo, ctx.env(), &repo_id)?,
            max: checked.max_slots,
            setup: checked.setup,
            me: ctx.scan().me(),
            scan: ctx.scan(),
            remote: crate::ops::fence::task_remote(repo),
            machine: ledger.machine().to_string(),
            repo,
            git,
            repo_id,
            task: checked.task,
            branch,
            branch_origin,
            base,
            issue,
            holder: opts.holder,
        })
    }
}

/// Whether the branch is the one the last spawn of this task made and left where it made it
/// (at that spawn's base, so nothing was committed on it): a spawn that `doctor --repair`
/// undid (its process had lost the team ledger's connection, or crashed) keeps its branch, and
/// the same spawn run again continues it rather than being refused for it (issue 22).
fn left_by_undone_spawn(
    ledger: &mut Ledger,
    repo_id: &RepoId,
    task: &str,
    branch: &str,
    tip: Option<String>,
) -> Result<bool> {
    let Some(last) = ledger.read(|v| v.task_named(repo_id, task))? else {
        return Ok(false);
    };
    Ok(last.state == TaskState::Done
        && matches!(
            last.done_reason,
            Some(EndReason::AbandonedSpawn | EndReason::SpawnFailed)
        )
        && last.branch == branch
        && tip.is_some()
        && last.base_oid == tip)
}

/// Whether the task's branch exists already, and whether the user named it (`--branch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Existing {
    No,
    Named,
    Unnamed,
}

/// An existing branch is used only when named with `--branch`, and never one checked out in
/// another worktree (git would refuse, and two tasks would share a branch).
fn check_branch_free(repo: &Repo, task: &str, branch: &str, existing: Existing) -> Result<()> {
    if existing == Existing::No {
        return Ok(());
    }
    if existing == Existing::Unnamed {
        return Err(SpawnError::BranchExists {
            task: task.to_string(),
            branch: branch.to_string(),
        }
        .into());
    }
    if let Some((dir, _)) = repo
        .checked_out_branches()
        .into_iter()
        .find(|(_, b)| b == branch)
    {
        return Err(SpawnError::BranchCheckedOut {
            branch: branch.to_string(),
            dir,
        }
        .into());
    }
    Ok(())
}

/// Slots found unsafe once claimed, and why: later plans leave them out, and a spawn that
/// finds no slot says why each was skipped. A slot merely lost to a concurrent spawn is not
/// here: the next plan reads it as it is now (held: skipped; free again because its claim was
/// taken back: planned again), so no spawn creates a slot next to a free one.
#[derive(Default)]
pub(super) struct UnsafeSlots {
    paths: Vec<PathBuf>,
    skipped: Vec<Skipped>,
}

impl UnsafeSlots {
    pub fn push(&mut self, path: PathBuf, why: Vec<String>) {
        self.skipped.push(Skipped {
            path: path.to_string_lossy().into_owned(),
            why,
        });
        self.paths.push(path);
    }
}

/// One attempt's choice of slot, and what the intent must find unchanged to claim it.
pub(super) struct Planned {
    pub plan: Plan,
    pub path: PathBuf,
    /// For a slot the ledger knows: the lease id of the tenure holding it when planned (`None`
    /// when free).
    pub held: Option<LeaseId>,
    /// For a slot the ledger knows: the last token issued for it when planned.
    pub last_token: i64,
    /// Every slot skipped so far, and why.
    pub skipped: Vec<Skipped>,
}

/// Reads the pool as it is now and picks a slot, leaving out the slots found unsafe; exit 3
/// listing why each slot was skipped when none can be used and the pool is full.
pub(super) fn next(
    ledger: &mut Ledger,
    ground: &Groundwork<'_>,
    unsafe_slots: &UnsafeSlots,
) -> Result<Planned> {
    let repo_id = &ground.repo_id;
    let (infos, numbers, now) =
        ledger.read(|v| Ok((pool::slots(v, repo_id)?, v.slot_numbers(repo_id)?, v.now())))?;
    let (pool_dir, max) = (&ground.pool_dir, ground.max);
    let unsafe_skipped = unsafe_slots.skipped.as_slice();
    let facts = pool::choice::Pool {
        infos: &infos,
        numbers_used: &numbers,
        max,
        now,
        exclude: &unsafe_slots.paths,
        first_free: std::process::id() as usize,
    };
    let (plan, skipped) = pool::choose(&facts, ground.scan, ground.repo, pool_dir)
        .map_err(|skipped| no_slot(max, &[unsafe_skipped, &skipped].concat()))?;
    let (path, seen) = match &plan {
        Plan::Claim(p) | Plan::Reuse(p) | Plan::Recreate(p) => {
            (p.clone(), infos.iter().find(|i| i.slot.path.as_path() == p))
        }
        Plan::Create { path, .. } => (path.clone(), None),
    };
    Ok(Planned {
        held: seen
            .and_then(|i| i.held.as_ref())
            .map(|t| t.lease_id.clone()),
        last_token: seen.map_or(0, |i| i.last_token),
        skipped: [unsafe_skipped, &skipped].concat(),
        plan,
        path,
    })
}

fn no_slot(max: i64, skipped: &[Skipped]) -> Error {
    SpawnError::PoolFull {
        max,
        skipped: skipped.to_vec(),
    }
    .into()
}
