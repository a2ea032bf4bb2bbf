//! Reading and renewing tasks: `git hand list`, `renew`, `env`, `path`, and finding the task of
//! the current worktree (the default TASK of every verb that takes one).

use std::path::PathBuf;

use crate::clock::Millis;
use crate::ledger::{
    By, Durability, Idempotent, LeaseId, Ledger, Renew, Retry, Task, TaskState, Tasks, Tenure,
    WorktreeKey,
};
use crate::ops::claude::SessionHolder;
use crate::ops::fence::verdict::{self, Finding, Verdict};
use crate::ops::pool::{self, SlotInfo};
use crate::ops::task::TaskError;
use crate::ops::task::facts::{self, Facts};
use crate::ops::task::sessions::{self, Presence, SessionSlot};
use crate::ops::{Context, Error, Result};
use crate::platform::procs::{ProcessId, Seen};

/// A task with its leases, as `list` shows it.
#[derive(Debug, Clone)]
pub struct TaskView {
    pub task: Task,
    pub tenure: Option<Tenure>,
    pub issue_tenure: Option<Tenure>,
    pub slot_n: Option<i64>,
    /// What git says of an active task's worktree; `None` for a task that is not active, whose
    /// slot is not on disk or not provably itself, or that git could not read.
    pub facts: Option<Facts>,
    /// Whether the process that spawned an active task still runs: with `--exec`, it waits for
    /// the command, so this says whether the task's agent is still at work.
    pub exec_running: bool,
    /// What `facts.base` counts against: `None` when nothing was compared.
    pub compared_with: Option<ComparedWith>,
    /// The Claude Code session whose task this is, by its holder; `None` for any other task.
    pub session: Option<SessionHolder>,
    /// Whether a process sits in a session's slot: for an active session's task on this
    /// machine whose slot is provably itself; `None` otherwise (nothing was looked at).
    pub presence: Option<Presence>,
}

/// The ref a task's worktree is measured against: its own base branch while that still
/// resolves, else the default branch (as `spawn` takes it without `--base`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComparedWith {
    /// As git shows it: `release`, `origin/main`.
    pub name: String,
    pub oid: String,
    pub source: BaseSource,
}

/// Where [`ComparedWith`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BaseSource {
    /// The branch the task was spawned from (recorded since schema version 5).
    TaskBase,
    /// The repository's default branch: the task recorded no base branch (spawned from a
    /// commit, or before schema version 5), or that branch is gone.
    DefaultBranch,
}

pub struct Listing {
    pub tasks: Vec<TaskView>,
    /// Slots no live tenure holds.
    pub free_slots: Vec<FreeSlot>,
    pub now: Millis,
    /// This machine's id on a team ledger, whose listing names each task's machine; `None`
    /// on a file ledger (one machine).
    pub machine: Option<String>,
}

/// Whose tasks [`list`] shows on a team ledger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// This repository's tasks on this machine, and every machine's pushed to the same remote.
    Team,
    /// This machine's only (`list --here`).
    Here,
}

/// A slot no live tenure holds, and why no spawn will take it, if none will.
pub struct FreeSlot {
    pub info: SlotInfo,
    /// The slot is not the worktree git-hand made there (see [`crate::ops::pool::slot::prove`]), or it was
    /// last claimed from a PID namespace this scan cannot see into ([`pool::unseen_namespace`]).
    pub problem: Option<String>,
    /// `doctor --repair` sets the slot aside (not for an unseen namespace: it leaves the slot).
    pub repairable: bool,
}

pub fn list(ctx: &Context, ledger: &mut Ledger, which: Tasks, reach: Reach) -> Result<Listing> {
    let machine = Some(ledger.machine().to_string()).filter(|m| !m.is_empty());
    // Other machines' tasks of this remote, on a team ledger.
    let remote = match (&machine, reach) {
        (Some(_), Reach::Team) => crate::ops::fence::task_remote(ctx.repo()?),
        _ => None,
    };
    let repo_id = ctx.repo_id(ledger)?;
    if repo_id.is_none() && remote.is_none() {
        return Ok(Listing {
            tasks: vec![],
            free_slots: vec![],
            now: 0,
            machine,
        });
    }
    let common = ctx.repo()?.loc.common_dir.clone();
    let mut listing = ledger.read(|v| {
        let now = v.now();
        let (slots, mut all) = match &repo_id {
            Some(id) => (pool::slots(v, id)?, v.tasks(id, which)?),
            None => (vec![], vec![]),
        };
        if let Some(remote) = &remote {
            let elsewhere = v.tasks_on_remote(remote, which)?;
            all.extend(elsewhere.into_iter().filter(|t| t.machine != v.machine()));
            all.sort_by_key(|t| t.id);
        }
        let mut tasks = vec![];
        for task in all {
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
                .find(|s| {
                    Some(&s.slot.path) == task.slot_path.as_ref() && s.slot.machine == task.machine
                })
                .map(|s| s.slot.n);
            tasks.push(TaskView {
                session: SessionHolder::parse(&task.holder),
                presence: None,
                task,
                tenure,
                issue_tenure,
                slot_n,
                facts: None,
                exec_running: false,
                compared_with: None,
            });
        }
        let free_slots = slots
            .into_iter()
            .filter(|s| !s.held.as_ref().is_some_and(|t| t.is_live(now)))
            .map(|info| {
                let unproven = crate::ops::pool::slot::prove(&common, info.slot.path.as_path())
                    .err()
                    .filter(|e| !e.is_gone())
                    .map(|e| e.to_string());
                let repairable = unproven.is_some();
                let problem = unproven.or_else(|| pool::unseen_namespace(ctx.scan(), &info));
                FreeSlot {
                    info,
                    problem,
                    repairable,
                }
            })
            .collect();
        Ok(Listing {
            tasks,
            free_slots,
            now,
            machine: None,
        })
    })?;
    listing.machine = machine;
    // Git runs after the snapshot: no transaction stays open across it.
    look_into_worktrees(ctx, &mut listing)?;
    Ok(listing)
}

/// Fills in what git says of each active task's worktree, whether its spawn still runs, and,
/// for a Claude Code session's, whether a process sits in its slot.
fn look_into_worktrees(ctx: &Context, listing: &mut Listing) -> Result<()> {
    let repo = ctx.repo()?;
    // Another machine's worktrees and processes are not this one's to look into.
    let here = |v: &TaskView| {
        listing
            .machine
            .as_ref()
            .is_none_or(|m| *m == v.task.machine)
    };
    let active: Vec<(usize, PathBuf)> = listing
        .tasks
        .iter()
        .enumerate()
        .filter(|(_, v)| v.task.state == TaskState::Active && here(v))
        .filter_map(|(i, v)| Some((i, v.task.slot_path.as_ref()?.as_path().to_path_buf())))
        // Nothing of a slot that is not provably itself is read (a symlink, an orphan).
        .filter(|(_, dir)| crate::ops::pool::slot::prove(&repo.loc.common_dir, dir).is_ok())
        .collect();
    let mine: Vec<bool> = listing.tasks.iter().map(here).collect();
    for (v, mine) in listing.tasks.iter_mut().zip(mine) {
        v.exec_running = mine
            && v.task.state == TaskState::Active
            && v.task.pid.is_some_and(|pid| {
                ctx.scan().judge(ProcessId {
                    pid,
                    start: v.task.pid_start,
                    ns: v.task.pid_ns,
                }) == Seen::Running
            });
    }
    // The process scan only when there are sessions to look for: one walk for all of them.
    let of_sessions: Vec<&(usize, PathBuf)> = active
        .iter()
        .filter(|(i, _)| listing.tasks[*i].session.is_some())
        .collect();
    let slots: Vec<SessionSlot<'_>> = of_sessions
        .iter()
        .map(|(i, dir)| SessionSlot {
            dir,
            pid_ns: listing.tasks[*i].task.pid_ns,
        })
        .collect();
    let seen = sessions::presence(ctx.scan(), &slots);
    for ((i, _), presence) in of_sessions.iter().zip(seen) {
        listing.tasks[*i].presence = Some(presence);
    }
    if active.is_empty() {
        return Ok(());
    }
    let default = std::cell::OnceCell::new();
    let mut slots = vec![];
    for (i, dir) in &active {
        let against = compared_with(repo, &listing.tasks[*i].task, &default);
        slots.push(facts::Slot {
            dir: dir.clone(),
            base: against.as_ref().map(|a| a.oid.clone()),
        });
        listing.tasks[*i].compared_with = against;
    }
    for ((i, _), f) in active.iter().zip(facts::gather(repo, &slots)) {
        listing.tasks[*i].facts = f;
    }
    Ok(())
}

/// What a task's worktree is measured against: its base branch while that still resolves, else
/// the default branch (resolved once, on first need, into `default`).
fn compared_with(
    repo: &crate::git::Repo,
    task: &Task,
    default: &std::cell::OnceCell<Option<crate::ops::repo::base::Base>>,
) -> Option<ComparedWith> {
    let own = task.base_ref.as_deref().and_then(|full| {
        Some(ComparedWith {
            name: crate::ops::repo::base::short_ref(full).to_string(),
            oid: repo.ref_oid(full)?,
            source: BaseSource::TaskBase,
        })
    });
    own.or_else(|| {
        let base = default
            .get_or_init(|| crate::ops::repo::base::resolve(repo, &repo.git(), None).ok())
            .as_ref()?;
        Some(ComparedWith {
            name: base.label.clone(),
            oid: base.oid.clone(),
            source: BaseSource::DefaultBranch,
        })
    })
}

/// A task's directory and its slot's number, for `git hand path`: the task's ([`named_task`],
/// or unnamed [`this_task`]), whose slot is on disk.
pub(crate) fn task_dir(ledger: &mut Ledger, task: Task) -> Result<(Task, PathBuf, Option<i64>)> {
    let slot = match &task.slot_path {
        Some(key) => ledger.read(|v| v.slot_by_path(key))?.map(|s| s.n),
        None => None,
    };
    let dir = task.slot_path.as_ref().map(|p| p.as_path().to_path_buf());
    match dir.filter(|d| d.is_dir()) {
        Some(dir) => Ok((task, dir, slot)),
        None => Err(TaskError::SlotNotOnDisk { task: task.name }.into()),
    }
}

/// The open task of that name; a name only done tasks had is a precondition (exit 3), a name
/// never used a failure (exit 1).
pub(crate) fn named_task(ctx: &Context, ledger: &mut Ledger, name: &str) -> Result<Task> {
    let name = crate::ops::repo::names::task_name(name)?;
    let unknown = || TaskError::NoSuchTask {
        name: name.to_string(),
    };
    let repo_id = ctx.repo_id(ledger)?.ok_or_else(unknown)?;
    match ledger.read(|v| v.task_named(&repo_id, name))? {
        Some(task) if task.state != TaskState::Done => Ok(task),
        Some(done) => Err(TaskError::Done {
            name: name.to_string(),
            reason: done.done_reason,
        }
        .into()),
        None => Err(unknown().into()),
    }
}

/// The task `git hand done` with no name ends: the one whose credential is in the environment
/// (what `spawn --exec` and `git hand env` hand out), else the one holding the current
/// worktree's slot.
///
/// The credential comes first because the slot's holder may have changed: a process whose
/// lease expired and was taken over still sits in the slot, and its `done` must end its own
/// task, never the one that holds the slot now. A credential that names a task in another
/// worktree is refused: the user is not where they think they are.
///
/// A Claude Code session with no credential in its environment that held an earlier tenure of
/// this slot is refused as stale ([`verdict::judge_in_session`]): its `done` would end the task
/// that holds the slot now.
pub(crate) fn own_task(
    ctx: &Context,
    ledger: &mut Ledger,
) -> Result<std::result::Result<Task, Box<Finding>>> {
    let Some(presented) = crate::ops::fence::credential::env_credential(ctx.env()) else {
        return slots_task(
            ctx,
            ledger,
            crate::ops::claude::session_in_env(ctx.env()).as_ref(),
        );
    };
    let lease = presented
        .map_err(|why| TaskError::CredentialUnreadable {
            why: why.to_string(),
        })?
        .lease_id;
    let task = ledger
        .read(|v| v.task_by_lease(&lease))?
        .ok_or_else(|| no_task_holds(&lease))?;
    let here = ctx.repo()?.loc.workdir.clone();
    let slot = task.slot_path.as_ref().map(|p| p.as_path().to_path_buf());
    if here.is_none() || slot != here {
        return Err(TaskError::CredentialOfAnotherSlot {
            task: task.name,
            ending: true,
        }
        .into());
    }
    Ok(Ok(task))
}

/// The task an unnamed `env`, `renew` or `path` acts on: the one whose credential is in the
/// environment, else (no credential there) the one holding the current worktree's slot.
/// `Ok(Err(finding))`: the credential is this worktree's but not its current lease (stale,
/// expired, released, never granted, a wrong token): the caller refuses in the verdict's words
/// and changes nothing.
///
/// The credential comes first (issue 22): a zombie whose lease was superseded still sits in
/// the slot, and asking who holds the slot handed it the new holder's credential (`env`) and
/// re-timed the new holder's lease (`renew`). A credential of a task in another worktree is
/// refused, as [`own_task`] refuses it.
pub(crate) fn this_task(
    ctx: &Context,
    ledger: &mut Ledger,
) -> Result<std::result::Result<Task, Box<Finding>>> {
    let session = crate::ops::claude::session_in_env(ctx.env());
    let Some(presented) = crate::ops::fence::credential::env_credential(ctx.env()) else {
        return slots_task(ctx, ledger, session.as_ref());
    };
    let credential = presented.map_err(|why| TaskError::CredentialUnreadable {
        why: why.to_string(),
    })?;
    let repo = ctx.repo()?;
    let key = verdict::Subject::key_of(ctx)?;
    // The stamp only tells a slot from an unmanaged worktree here: the credential is judged.
    let stamp = crate::ops::pool::stamp::read(&repo.loc.admin_dir)
        .ok()
        .flatten();
    let lease = credential.lease_id.clone();
    let finding = ledger.read(|v| {
        verdict::judge_in_session(
            v,
            &key,
            stamp.as_ref(),
            Some(Ok(credential.clone())),
            verdict::CredentialRule::StampSuffices,
            session.as_ref(),
        )
    })?;
    let elsewhere = finding.verdict == Verdict::Unmanaged || finding.granted_elsewhere;
    match finding.verdict {
        _ if elsewhere => Err(elsewhere_error(ledger, &lease)?),
        // An issue lease lost is the task's own trouble: `renew` and `env` say it themselves.
        Verdict::Current | Verdict::IssueLost => match finding.task {
            Some(task) if task.state != TaskState::Done => Ok(Ok(task)),
            _ => Err(no_task_holds(&lease)),
        },
        _ => Ok(Err(Box::new(finding))),
    }
}

/// For a caller presenting no credential: the task holding the current worktree's slot, unless
/// the caller runs in a Claude Code session (`session`) that held an earlier tenure of that
/// slot, which is refused ([`refused_by_session`]).
fn slots_task(
    ctx: &Context,
    ledger: &mut Ledger,
    session: Option<&crate::ops::claude::SessionId>,
) -> Result<std::result::Result<Task, Box<Finding>>> {
    if let Some(session) = session
        && let Some(refused) = refused_by_session(ctx, ledger, session)?
    {
        return Ok(Err(Box::new(refused)));
    }
    resolve_task(ctx, ledger, None).map(Ok)
}

/// The refusal of a Claude Code session that presents no credential in a slot it held an
/// earlier tenure of ([`verdict::judge_in_session`]): asking who holds the slot would hand it
/// the new holder's task.
fn refused_by_session(
    ctx: &Context,
    ledger: &mut Ledger,
    session: &crate::ops::claude::SessionId,
) -> Result<Option<Finding>> {
    let repo = ctx.repo()?;
    let Some(stamp) = crate::ops::pool::stamp::read(&repo.loc.admin_dir)
        .ok()
        .flatten()
    else {
        return Ok(None);
    };
    let key = verdict::Subject::key_of(ctx)?;
    let finding = ledger.read(|v| {
        verdict::judge_in_session(
            v,
            &key,
            Some(&stamp),
            None,
            verdict::CredentialRule::StampSuffices,
            Some(session),
        )
    })?;
    let by_session = finding
        .credential
        .as_ref()
        .is_some_and(|c| c.source == verdict::CredentialSource::Session);
    Ok((by_session && !finding.verdict.allows()).then_some(finding))
}

/// The refusal of a credential that is not this worktree's: the task it names, or none.
fn elsewhere_error(ledger: &mut Ledger, lease: &LeaseId) -> Result<Error> {
    let Some(task) = ledger.read(|v| v.task_by_lease(lease))? else {
        return Ok(no_task_holds(lease));
    };
    Ok(TaskError::CredentialOfAnotherSlot {
        task: task.name,
        ending: false,
    }
    .into())
}

/// A credential whose lease no open task holds.
fn no_task_holds(lease: &LeaseId) -> Error {
    TaskError::NoTaskHolds {
        lease: lease.clone(),
    }
    .into()
}

/// The task named, or the one whose slot is the current worktree.
pub(crate) fn resolve_task(ctx: &Context, ledger: &mut Ledger, name: Option<&str>) -> Result<Task> {
    let repo_id = ctx.repo_id(ledger)?.ok_or(TaskError::NoTasksHere)?;
    if let Some(name) = name {
        let name = crate::ops::repo::names::task_name(name)?;
        return ledger
            .read(|v| v.open_task(&repo_id, name))?
            .ok_or_else(|| {
                TaskError::NoOpenTask {
                    name: name.to_string(),
                }
                .into()
            });
    }
    let workdir = ctx.repo()?.loc.workdir.clone().unwrap_or_default();
    let task = ledger.read(|v| {
        let held = v.held(&v.worktree(&WorktreeKey::from_canonical(&workdir)))?;
        match held {
            Some(t) => v.task_by_lease(&t.lease_id),
            None => Ok(None),
        }
    })?;
    task.filter(|t| t.state != TaskState::Done)
        .ok_or_else(|| TaskError::NotASlot.into())
}

/// `renew`: extends the task's slot lease and its issue lease, by lease id.
pub struct Renewed {
    pub task: Task,
    pub tenure: Tenure,
    pub issue_tenure: Option<Tenure>,
    pub now: Millis,
}

pub fn renew(ledger: &mut Ledger, task: &Task, ttl: Option<Millis>) -> Result<Renewed> {
    let lease = task.lease_id.clone().ok_or_else(|| TaskError::NoLeaseId {
        task: task.name.clone(),
    })?;
    match renew_both(ledger, task, &lease, ttl)? {
        Ok(r) => Ok(r),
        Err(lost) => Err(lost_lease(ledger, task, lost)?),
    }
}

/// Which of a task's leases could not be renewed.
pub enum Lost {
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
    // Both by lease id: run again after a lost answer, it renews the same tenures again.
    Ok(ledger
        .write_with(Durability::Durable, Retry::Once(Idempotent::Renew), |tx| {
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
        })
        .map(|(out, _)| out)?)
}

/// The refusal for a lease that is no longer live, naming the slot's new holder if it has one.
fn lost_lease(ledger: &mut Ledger, task: &Task, lost: Lost) -> Result<Error> {
    Ok(match lost {
        Lost::Slot => {
            let slot = task.slot_resource();
            let live = ledger.read(|v| v.current(&slot))?;
            TaskError::LeaseLost {
                task: task.name.clone(),
                branch: task.branch.clone(),
                now_held_by: live.map(|t| (t.holder, t.token)),
            }
        }
        Lost::Issue => TaskError::IssueLeaseLost {
            task: task.name.clone(),
            issue: task.issue.clone().unwrap_or_else(|| "?".into()),
        },
    }
    .into())
}

/// The tenure of a task's slot lease and the instant the ledger judges it at, for `env`.
pub(crate) fn tenure_of(ledger: &mut Ledger, task: &Task) -> Result<(Tenure, Millis)> {
    let (tenure, now) = ledger.read(|v| {
        let tenure = match &task.lease_id {
            Some(id) => v.tenure(id)?,
            None => None,
        };
        Ok((tenure, v.now()))
    })?;
    tenure.map(|t| (t, now)).ok_or_else(|| {
        TaskError::LeaseUnknown {
            task: task.name.clone(),
        }
        .into()
    })
}
