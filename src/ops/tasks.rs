//! Reading and renewing tasks: `git hand list`, `renew`, `env`, and finding the task of
//! the current worktree (the default TASK of every verb that takes one).

use super::pool::{self, SlotInfo};
use super::{Context, Error, Result};
use crate::clock::Millis;
use crate::ledger::{
    By, LeaseId, Ledger, Renew, RepoId, Resource, Task, TaskState, Tasks, Tenure, WorktreeKey,
};

/// The repository's id in the ledger, or `None` if git-hand never saw it.
pub fn repo_id(ctx: &Context, ledger: &mut Ledger) -> Result<Option<RepoId>> {
    let common = &ctx.repo()?.loc.common_dir;
    Ok(ledger.read(|v| Ok(v.repo_by_dir(common)?.map(|r| r.id)))?)
}

/// A task with its leases, as `list` shows it.
#[derive(Debug, Clone)]
pub struct TaskView {
    pub task: Task,
    pub tenure: Option<Tenure>,
    pub issue_tenure: Option<Tenure>,
    pub slot_n: Option<i64>,
}

pub struct Listing {
    pub tasks: Vec<TaskView>,
    /// Slots no live tenure holds.
    pub free_slots: Vec<FreeSlot>,
    pub now: Millis,
}

/// A slot no live tenure holds, and why no spawn will take it, if none will.
pub struct FreeSlot {
    pub info: SlotInfo,
    /// The slot is not the worktree git-hand made there (see [`super::slot::prove`]).
    pub problem: Option<String>,
}

pub fn list(ctx: &Context, ledger: &mut Ledger, which: Tasks) -> Result<Listing> {
    let Some(repo_id) = repo_id(ctx, ledger)? else {
        return Ok(Listing {
            tasks: vec![],
            free_slots: vec![],
            now: 0,
        });
    };
    let common = ctx.repo()?.loc.common_dir.clone();
    Ok(ledger.read(|v| {
        let now = v.now();
        let slots = pool::slots(v, &repo_id)?;
        let mut tasks = vec![];
        for task in v.tasks(&repo_id, which)? {
            let tenure = match &task.lease_id {
                Some(id) => v.tenure(id)?,
                None => None,
            };
            let issue_tenure = match &task.issue_lease_id {
                Some(id) => v.tenure(id)?,
                None => None,
            };
            let slot_n = slots
                .iter()
                .find(|s| Some(&s.slot.path) == task.slot_path.as_ref())
                .map(|s| s.slot.n);
            tasks.push(TaskView {
                task,
                tenure,
                issue_tenure,
                slot_n,
            });
        }
        let free_slots = slots
            .into_iter()
            .filter(|s| !s.held.as_ref().is_some_and(|t| t.is_live(now)))
            .map(|info| {
                let problem = super::slot::prove(&common, info.slot.path.as_path())
                    .err()
                    .filter(|e| !e.is_gone())
                    .map(|e| e.to_string());
                FreeSlot { info, problem }
            })
            .collect();
        Ok(Listing {
            tasks,
            free_slots,
            now,
        })
    })?)
}

/// The task named, or the one whose slot is the current worktree.
pub fn resolve_task(ctx: &Context, ledger: &mut Ledger, name: Option<&str>) -> Result<Task> {
    let repo_id = repo_id(ctx, ledger)?.ok_or_else(|| {
        Error::failed(
            "git-hand has no tasks in this repository",
            vec!["git hand spawn <task>".into()],
        )
    })?;
    if let Some(name) = name {
        let name = super::names::task_name(name)?;
        return ledger
            .read(|v| v.open_task(&repo_id, name))?
            .ok_or_else(|| {
                Error::failed(
                    format!("there is no open task named {name}"),
                    vec!["git hand list".into()],
                )
            });
    }
    let workdir = ctx.repo()?.loc.workdir.clone().unwrap_or_default();
    let task = ledger.read(|v| {
        let held = v.held(&Resource::worktree(&WorktreeKey::from_canonical(&workdir)))?;
        match held {
            Some(t) => v.task_by_lease(&t.lease_id),
            None => Ok(None),
        }
    })?;
    task.filter(|t| t.state != TaskState::Done).ok_or_else(|| {
        Error::usage("this worktree is not a leased slot; name the task").with_hint("git hand list")
    })
}

/// `renew`: extends the task's slot lease and its issue lease, by lease id.
pub struct Renewed {
    pub task: Task,
    pub tenure: Tenure,
    pub issue_tenure: Option<Tenure>,
    pub now: Millis,
}

pub fn renew(ledger: &mut Ledger, task: &Task, ttl: Option<Millis>) -> Result<Renewed> {
    let lease = task.lease_id.clone().ok_or_else(|| {
        Error::failed(
            format!(
                "task {} has no lease id (a row from an older ledger)",
                task.name
            ),
            vec![format!("git hand teardown {}", task.name)],
        )
    })?;
    match renew_both(ledger, task, &lease, ttl)? {
        Ok(r) => Ok(r),
        Err(lost) => Err(lost_lease(ledger, task, lost)?),
    }
}

/// Which of a task's leases could not be renewed.
pub(crate) enum Lost {
    Slot,
    Issue,
}

/// One transaction: both renewals or neither. The issue lease is checked before anything is
/// written, and each lease is renewed by its lease id, never by holder.
pub(crate) fn renew_both(
    ledger: &mut Ledger,
    task: &Task,
    lease: &LeaseId,
    ttl: Option<Millis>,
) -> Result<std::result::Result<Renewed, Lost>> {
    let slot = task.slot_resource();
    Ok(ledger.write(|tx| {
        let view = tx.view();
        let issue = match &task.issue_lease_id {
            Some(id) => match view.tenure(id)?.filter(|t| t.is_live(tx.now())) {
                Some(t) => Some(t),
                None => return Ok(Err(Lost::Issue)),
            },
            None => None,
        };
        let Renew::Renewed(tenure) = tx.renew(&slot, By::Lease(lease), ttl)? else {
            return Ok(Err(Lost::Slot));
        };
        let issue_tenure = match issue {
            Some(t) => match tx.renew(&t.resource, By::Lease(&t.lease_id), ttl)? {
                Renew::Renewed(t) => Some(t),
                Renew::NotHolder(_) => return Ok(Err(Lost::Issue)),
            },
            None => None,
        };
        Ok(Ok(Renewed {
            task: task.clone(),
            tenure,
            issue_tenure,
            now: tx.now(),
        }))
    })?)
}

/// The refusal for a lease that is no longer live, naming the slot's new holder if it has one.
fn lost_lease(ledger: &mut Ledger, task: &Task, lost: Lost) -> Result<Error> {
    Ok(match lost {
        Lost::Slot => {
            let slot = task.slot_resource();
            let live = ledger.read(|v| v.current(&slot))?;
            let who = live
                .map(|t| format!("; the slot is now held by {} (token {})", t.holder, t.token))
                .unwrap_or_default();
            Error::precondition(
                format!(
                    "task {}'s lease is no longer live (it expired or was released){who}",
                    task.name
                ),
                vec![format!(
                    "git hand teardown {}   # commits stay on {}",
                    task.name, task.branch
                )],
            )
        }
        Lost::Issue => Error::precondition(
            format!(
                "task {}'s issue lease ({}) is no longer live; nothing was renewed",
                task.name,
                task.issue.as_deref().unwrap_or("?")
            ),
            vec![format!("git hand teardown {}", task.name)],
        ),
    })
}

/// The tenure of a task's slot lease and the instant the ledger judges it at, for `env`.
pub fn tenure_of(ledger: &mut Ledger, task: &Task) -> Result<(Tenure, Millis)> {
    let (tenure, now) = ledger.read(|v| {
        let tenure = match &task.lease_id {
            Some(id) => v.tenure(id)?,
            None => None,
        };
        Ok((tenure, v.now()))
    })?;
    tenure.map(|t| (t, now)).ok_or_else(|| {
        Error::failed(
            format!("task {} names a lease the ledger does not know", task.name),
            vec![format!(
                "git hand teardown {}   # then spawn it again",
                task.name
            )],
        )
    })
}
