//! The intent: one transaction that records the task as `spawning` with every lease it needs
//! (the slot, and the issue with `--issue`), or nothing. From its commit on, the claimed slot is
//! this spawn's and a crash leaves a row `doctor` can settle; before it, nothing was written.
//!
//! A new slot's number is picked inside this transaction, so parallel spawns get distinct numbers.
//! Both leases stay open-ended until activation, so a TTL shorter than the checkout cannot hand the
//! slot to another spawn. The intent's fsync runs on another thread while git works
//! ([`crate::ledger::Durability::SyncedMeanwhileTrimmedByCaller`]; the WAL is trimmed during `git
//! switch`, `SlotGuard::git_meanwhile`), and `Claimed::durable` is waited for before the stamp names
//! the lease.

use super::SpawnError;
use std::path::{Path, PathBuf};

use super::plan::{Groundwork, Planned};
use crate::git::Repo;
use crate::ledger::{
    self, Durability, EventKind, LeaseId, Ledger, LedgerError, NewTask, PendingSync, RepoId,
    Resource, Retry, Step, Task, Tenure, WorktreeKey,
};
use crate::ops::pool::{self, Plan, Skipped};
use crate::ops::{Error, Result, pool::safety};
use crate::platform::procs::ProcessId;

/// A slot claimed by a recorded intent: the task (`spawning`) and its leases, open-ended until
/// activation.
pub(super) struct Claimed {
    pub task: Task,
    pub tenure: Tenure,
    pub issue_tenure: Option<Tenure>,
    /// The holder held the issue lease before this spawn (outside any task): undoing the spawn
    /// must leave it held.
    pub issue_was_held: bool,
    pub n: i64,
    pub path: PathBuf,
    pub plan: Plan,
    /// Every slot skipped on the way here, and why.
    pub skipped: Vec<Skipped>,
    /// A claimed free slot's probe, run while the intent committed: it counts only now that the
    /// claim holds (see `settle`).
    pub probe: Option<safety::Probe>,
    /// The intent's fsync, running while git works.
    synced: Option<PendingSync>,
}

impl Claimed {
    /// Waits until the intent is on disk (only the first call waits).
    pub fn durable(&mut self) -> ledger::Result<()> {
        self.synced.take().map_or(Ok(()), PendingSync::wait)
    }
}

/// What recording the intent came to, short of a refusal.
// Built once per spawn attempt and matched at once: its size does not matter.
#[allow(clippy::large_enum_variant)]
pub(super) enum Recorded {
    Claimed(Claimed),
    /// The slot changed between the plan and the intent (a concurrent spawn leased it, prune
    /// removed it), or the pool filled up: plan again.
    LostSlot,
    /// A task of this name was opened meanwhile: spawning it resumes it.
    TaskOpen(Task),
}

/// Records the intent for the planned slot. A free slot's probe (`git status`, the /proc scan)
/// runs while the intent that claims it commits: its verdict is used only once the claim holds,
/// and a lost claim throws it away. The intent is durable while git works after, and waited for
/// before the slot is handed out (at once when the attempt ends here); a long WAL it leaves is
/// truncated on this connection while `git switch` runs (`prepare`).
pub(super) fn record(
    ledger: &mut Ledger,
    ground: &Groundwork<'_>,
    planned: Planned,
) -> Result<Recorded> {
    let path_key = WorktreeKey::from_canonical(&planned.path);
    let intent = intent_for(ground, &planned, &path_key);
    let plan = &planned.plan;
    let scan = ground.scan;
    let (recorded, probe) = std::thread::scope(|scope| {
        let probe = match plan {
            Plan::Claim(p) => Some(scope.spawn(|| safety::Probe::run(scan, p))),
            _ => None,
        };
        let recorded = ledger.write_with(
            Durability::SyncedMeanwhileTrimmedByCaller,
            Retry::Never,
            |tx| record_intent(tx, &intent),
        );
        let probe = probe.map(|thread| thread.join().unwrap_or_else(|_| safety::Probe::lost()));
        (recorded, probe)
    });
    let (taken, synced) = recorded?;
    let Taken {
        task,
        tenure,
        issue_tenure,
        issue_was_held,
        slot,
    } = match taken {
        Ok(taken) => taken,
        Err(not_taken) => {
            synced.wait()?;
            return not_taken.into_recorded(ground);
        }
    };
    Ok(Recorded::Claimed(Claimed {
        task,
        tenure,
        issue_tenure,
        issue_was_held,
        n: slot.n,
        path: PathBuf::from(&slot.path),
        plan: planned.plan,
        skipped: planned.skipped,
        probe,
        synced: Some(synced),
    }))
}

/// The intent for the planned slot.
fn intent_for<'a>(
    ground: &'a Groundwork<'_>,
    planned: &'a Planned,
    path_key: &'a WorktreeKey,
) -> Intent<'a> {
    let claim = match planned.plan {
        Plan::Create { .. } => Claim::New {
            pool_dir: &ground.pool_dir,
            repo: ground.repo,
            max: ground.max,
        },
        _ => Claim::Existing {
            path: path_key,
            held: planned.held.as_ref(),
            last_token: planned.last_token,
        },
    };
    Intent {
        repo_id: &ground.repo_id,
        task: &ground.task,
        claim,
        branch: &ground.branch,
        base_oid: &ground.base.oid,
        base_ref: ground.base.full_ref.as_deref(),
        holder: ground.holder,
        issue: ground.issue.as_ref().map(|(res, id)| (res, id.as_str())),
        me: ground.me,
        step: match planned.plan {
            Plan::Claim(_) => Step::Intent,
            Plan::Reuse(_) => Step::Preparing,
            Plan::Create { .. } | Plan::Recreate(_) => Step::Creating,
        },
        remote: ground.remote.as_deref(),
    }
}

struct Intent<'a> {
    repo_id: &'a RepoId,
    task: &'a str,
    claim: Claim<'a>,
    branch: &'a str,
    base_oid: &'a str,
    /// The branch the base was, when it was one (see [`crate::ops::repo::base::Base::full_ref`]).
    base_ref: Option<&'a str>,
    holder: &'a str,
    issue: Option<(&'a Resource, &'a str)>,
    me: ProcessId,
    /// [`Step::Intent`] for a free slot still to be proven safe once claimed,
    /// [`Step::Preparing`] for one proven safe before the claim, [`Step::Creating`] for a slot
    /// this spawn makes.
    step: Step,
    /// The remote the branch is pushed to, which branch fencing is keyed on.
    remote: Option<&'a str>,
}

/// The slot an intent claims.
#[derive(Clone, Copy)]
enum Claim<'a> {
    /// A slot the ledger knows (free, expired, or lost by the disk), taken only if nothing
    /// happened to it since the plan: the tenure holding it is still the one seen (`held`: its
    /// lease id, `None` when free) and not live, and no token was issued since (`last_token`):
    /// a slot claimed and released again meanwhile (a spawn that failed halfway) is not the
    /// slot that was probed.
    Existing {
        path: &'a WorktreeKey,
        held: Option<&'a LeaseId>,
        last_token: i64,
    },
    /// A new slot, numbered inside the intent transaction, so parallel spawns creating slots
    /// get distinct numbers instead of all racing for the lowest one and retrying.
    New {
        pool_dir: &'a Path,
        repo: &'a Repo,
        max: i64,
    },
}

/// What the intent took: the task row and its leases.
struct Taken {
    task: Task,
    tenure: Tenure,
    issue_tenure: Option<Tenure>,
    issue_was_held: bool,
    slot: ledger::Slot,
}

/// Why the intent took nothing.
enum NotTaken {
    /// See [`Recorded::LostSlot`].
    LostSlot,
    TaskExists(Box<Task>),
    /// An open task has this task's name but for case (see [`super::casefold`]).
    CaseTwin(Box<Task>),
    /// A task of this name (or this name but for case), pushed to the same remote, is open on
    /// another machine.
    LiveElsewhere(Box<Task>),
    /// Another open task works on the branch.
    BranchTaken(Box<Task>),
    /// The issue is held, by a task on another machine (named) or by someone on this one.
    IssueHeld(Box<Tenure>, Option<String>),
}

impl NotTaken {
    /// Plan again, resume the open task, or refuse.
    fn into_recorded(self, ground: &Groundwork<'_>) -> Result<Recorded> {
        match self {
            NotTaken::LostSlot => Ok(Recorded::LostSlot),
            NotTaken::TaskExists(existing) => Ok(Recorded::TaskOpen(*existing)),
            NotTaken::CaseTwin(other) => Err(super::casefold::task_twin(
                &ground.task,
                &other,
                &ground.machine,
            )),
            NotTaken::LiveElsewhere(other) if other.name != ground.task => Err(
                super::casefold::task_twin(&ground.task, &other, &ground.machine),
            ),
            NotTaken::LiveElsewhere(other) => Err(SpawnError::LiveElsewhere {
                task: other.name,
                state: other.state,
                machine: other.machine,
                holder: other.holder,
            }
            .into()),
            NotTaken::BranchTaken(other) => Err(SpawnError::BranchTaken {
                branch: ground.branch.clone(),
                other: super::casefold::other_task(&other, &ground.machine),
            }
            .into()),
            NotTaken::IssueHeld(t, machine) => {
                let issue = ground.issue.as_ref().map_or("", |(_, id)| id.as_str());
                Err(issue_held(issue, &t, machine.as_deref()))
            }
        }
    }
}

fn issue_held(issue: &str, t: &Tenure, machine: Option<&str>) -> Error {
    SpawnError::IssueHeld {
        issue: issue.to_string(),
        holder: t.holder.clone(),
        token: t.token,
        machine: machine.map(str::to_string),
    }
    .into()
}

/// The intent transaction: the task row and every lease it needs, or nothing.
fn record_intent(
    tx: &ledger::Tx<'_>,
    i: &Intent<'_>,
) -> ledger::Result<std::result::Result<Taken, NotTaken>> {
    if let Some(refused) = refusal(tx, i)? {
        return Ok(Err(refused));
    }
    let Some(slot) = claim_slot(tx, i)? else {
        return Ok(Err(NotTaken::LostSlot));
    };
    take_leases(tx, i, slot)
}

/// Why the task cannot be recorded whatever the slot: a task of this name (or this name but for
/// case) is open, the issue is someone else's, or another open task works on the branch.
fn refusal(tx: &ledger::Tx<'_>, i: &Intent<'_>) -> ledger::Result<Option<NotTaken>> {
    let view = tx.view();
    if let Some(existing) = view.open_task(i.repo_id, i.task)? {
        return Ok(Some(NotTaken::TaskExists(Box::new(existing))));
    }
    // Not this name, so this name but for case: one ref file on macOS (see `casefold`).
    if let Some(twin) = view.open_task_ignoring_case(i.repo_id, i.task)? {
        return Ok(Some(NotTaken::CaseTwin(Box::new(twin))));
    }
    // A task name is the team's on a remote: one live on another machine, or one that is this
    // name but for case, is refused.
    if let Some(remote) = i.remote
        && let Some(other) = view.open_task_elsewhere(remote, i.task)?
    {
        return Ok(Some(NotTaken::LiveElsewhere(Box::new(other))));
    }
    // The issue must be free, or held by this holder outside any open task: two tasks sharing
    // one issue lease would release it under each other.
    if let Some((res, _)) = i.issue
        && let Some(live) = view.current(res)?
    {
        let task = view.open_task_by_issue_lease(&live.lease_id)?;
        if live.holder != i.holder || task.is_some() {
            let why = format!("spawn {} by {}: issue held", i.task, i.holder);
            tx.log(EventKind::Refused, res, Some(&live), Some(&why))?;
            let machine = task.map(|t| t.machine).filter(|m| m != view.machine());
            return Ok(Some(NotTaken::IssueHeld(Box::new(live), machine)));
        }
    }
    // Two open tasks on one branch would fence each other's pushes: in this repository, or in
    // any clone pushing the branch to the same remote (the fence is keyed on the remote).
    let on_remote = match i.remote {
        Some(remote) => view
            .open_tasks_on_pushed_branch(remote, Some(i.repo_id), i.branch)?
            .into_iter()
            .next(),
        None => None,
    };
    Ok(on_remote
        .or(view.open_task_on_branch(i.repo_id, i.branch)?)
        .map(|other| NotTaken::BranchTaken(Box::new(other))))
}

/// The claimed slot's row, if the slot is still as the plan saw it (or, for a new slot, the
/// pool still has room); `None` when it was lost meanwhile.
fn claim_slot(tx: &ledger::Tx<'_>, i: &Intent<'_>) -> ledger::Result<Option<ledger::Slot>> {
    let view = tx.view();
    match i.claim {
        Claim::Existing {
            path,
            held,
            last_token,
        } => {
            // Pruned since we looked: prune retires a slot in the ledger before removing it.
            let Some(slot) = view.slot_by_path(path)? else {
                return Ok(None);
            };
            let now_held = view.held(&slot.resource())?;
            let unchanged = view.last_token(&slot.resource())? == last_token
                && match (&now_held, held) {
                    (None, None) => true,
                    (Some(t), Some(id)) => &t.lease_id == id && !t.is_live(tx.now()),
                    _ => false,
                };
            Ok(unchanged.then_some(slot))
        }
        Claim::New {
            pool_dir,
            repo,
            max,
        } => {
            let present: Vec<i64> = view.slots(i.repo_id)?.iter().map(|s| s.n).collect();
            if present.len() as i64 >= max {
                return Ok(None); // filled meanwhile: plan again
            }
            let numbers = view.slot_numbers(i.repo_id)?;
            let (n, path) = pool::new_slot(&present, &numbers, pool_dir, repo);
            let key = WorktreeKey::from_canonical(&path);
            Ok(Some(tx.ensure_slot(i.repo_id, n, &key)?))
        }
    }
}

/// Acquires the slot (the next token) and the issue, and inserts the task as `spawning`.
fn take_leases(
    tx: &ledger::Tx<'_>,
    i: &Intent<'_>,
    slot: ledger::Slot,
) -> ledger::Result<std::result::Result<Taken, NotTaken>> {
    let slot_res = slot.resource();
    // Only a free or expired slot may be taken; a live one (even our own holder's, for another
    // task) means a concurrent spawn won it. (Checked above for a known slot; a new one has no
    // tenure unless the ledger is inconsistent.)
    if tx.view().current(&slot_res)?.is_some() {
        return Ok(Err(NotTaken::LostSlot));
    }
    // Both leases are open-ended while the spawn works and get their TTL when the task becomes
    // active: a TTL shorter than the checkout must not let another spawn take the slot over
    // while this one is still switching it (two tasks in one worktree).
    let tenure = match tx.acquire(&slot_res, i.holder, None)? {
        ledger::Acquire::Acquired { tenure, .. } => tenure,
        ledger::Acquire::Held(_) => return Ok(Err(NotTaken::LostSlot)),
    };
    let (issue_tenure, issue_was_held) = match i.issue {
        Some((res, _)) => match tx.acquire(res, i.holder, None)? {
            ledger::Acquire::Acquired { tenure, fresh, .. } => (Some(tenure), !fresh),
            // Checked above in this transaction; should it ever happen, roll everything back.
            ledger::Acquire::Held(t) => {
                return Err(LedgerError::Raced(format!("issue held by {}", t.holder)));
            }
        },
        None => (None, false),
    };
    let task = tx.insert_task(&NewTask {
        repo_id: i.repo_id,
        name: i.task,
        slot_path: &slot.path,
        lease_id: &tenure.lease_id,
        issue: i.issue.map(|(_, id)| id),
        issue_lease_id: issue_tenure.as_ref().map(|t| &t.lease_id),
        branch: i.branch,
        base_oid: i.base_oid,
        holder: i.holder,
        pid: i.me.pid,
        pid_start: i.me.start,
        pid_ns: i.me.ns,
        step: i.step,
        remote: i.remote,
        base_ref: i.base_ref,
    })?;
    Ok(Ok(Taken {
        task,
        tenure,
        issue_tenure,
        issue_was_held,
        slot,
    }))
}
