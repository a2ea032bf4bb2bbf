//! `git hand spawn`: lease a slot to a task and put the task's branch in it.
//!
//! Intent first: one transaction records the task (`spawning`) and its slot tenure (and issue
//! tenure) before anything touches the disk; then git creates or switches the slot; then one
//! transaction marks the task `active`. A crash anywhere leaves a row that `doctor` can read and
//! settle, and no lease is ever held that no row names. No transaction is open across a git call.

use std::path::{Path, PathBuf};

use super::pool::{self, Plan, Skipped};
use super::slot::{self, SlotGuard};
use super::{Context, Error, Result, base, names, procs, safety, stamp};
use crate::clock::Millis;
use crate::failpoint;
use crate::git::{Git, Repo};
use crate::ledger::{
    self, By, EndReason, EventKind, IssueLease, Ledger, LedgerError, NewTask, Renew, Resource,
    Step, Task, TaskState, Tenure,
};

#[derive(Debug, Clone)]
pub struct SpawnOptions<'a> {
    pub task: &'a str,
    pub base: Option<&'a str>,
    pub branch: Option<&'a str>,
    pub issue: Option<&'a str>,
    pub holder: &'a str,
    pub ttl: Option<Millis>,
    pub fetch: bool,
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
    pub hooks_problem: Option<(String, Vec<String>)>,
}

/// How many times spawn re-plans after losing a slot to a concurrent spawn.
const MAX_ATTEMPTS: usize = 32;

/// What spawn checked before anything was written: a usage error (a bad name, a `--base` that
/// names nothing, a bad `hand.*` value, a path git-hand cannot record) must leave no ledger, no
/// repository row and no pool directory behind (issue 10). [`check`] makes one; the CLI opens
/// the ledger only after it succeeded.
#[derive(Debug, Clone)]
pub struct Checked {
    task: String,
    branch: String,
    issue: Option<String>,
    max_slots: i64,
    /// `None` only when the base could not be resolved but an open task of this name exists:
    /// resuming it needs no base.
    base: Option<base::Base>,
    /// `hand.installHooks` (default true): whether spawn may install or chain the hooks.
    install_hooks: bool,
}

/// Validates a spawn without writing anything: names, the repository's paths, the `hand.*`
/// values spawn reads, the ledger and pool locations, and the base (after `git fetch origin`
/// with `--fetch`).
pub fn check(ctx: &Context, opts: &SpawnOptions<'_>, progress: &dyn Fn(&str)) -> Result<Checked> {
    let task = names::task_name(opts.task)?;
    let branch = match opts.branch {
        Some(b) => names::branch(b)?.to_string(),
        None => format!("hand/{task}"),
    };
    let issue = opts.issue.map(names::issue_id).transpose()?;
    names::holder(opts.holder)?;
    let repo = ctx.repo_to_record()?;
    let max_slots = pool::max_slots(repo)?;
    let install_hooks = repo.config_bool("hand.installHooks", true)?;
    pool::root(repo)?;
    ctx.ledger_location()?;
    if issue.is_some() {
        super::lease::configured_namespace(ctx)?;
    }
    let git = repo.git();
    if opts.fetch {
        progress("fetching origin");
        git.run(&["fetch", "--quiet", "origin"])?;
    }
    let base = match base::resolve(repo, &git, opts.base) {
        Ok(base) => Some(base),
        Err(_) if open_task_exists(ctx, repo, task)? => None,
        Err(e) => return Err(e),
    };
    Ok(Checked {
        task: task.to_string(),
        branch,
        issue: issue.map(str::to_string),
        max_slots,
        base,
        install_hooks,
    })
}

/// Whether an open task of this name exists, read without creating or writing the ledger.
fn open_task_exists(ctx: &Context, repo: &Repo, task: &str) -> Result<bool> {
    let Some(mut ledger) = Ledger::open_existing(&ctx.ledger_location()?.path)? else {
        return Ok(false);
    };
    let common = repo.loc.common_dir.to_string_lossy().into_owned();
    Ok(ledger.read(|v| {
        Ok(match v.repo_by_dir(&common)? {
            Some(r) => v.open_task(&r.id, task)?.is_some(),
            None => false,
        })
    })?)
}

/// Spawns a task. The hooks are installed (or found not in force) before anything is leased, so
/// a spawn that dies halfway never leaves a leased slot whose pushes nothing checks without
/// having said so (issue 11); with `hand.installHooks=false` nothing is installed or chained,
/// and a lapse is still reported.
pub fn spawn(
    ctx: &Context,
    ledger: &mut Ledger,
    opts: &SpawnOptions<'_>,
    checked: Checked,
    progress: &dyn Fn(&str),
) -> Result<Spawned> {
    let repo = ctx.repo()?;
    let git = repo.git();
    let hooks = hooks_problem(repo, &git, checked.install_hooks);
    failpoint::hit("spawn-after-hooks");
    let spawned = lease_and_prepare(ctx, ledger, opts, checked, progress)?;
    Ok(Spawned {
        hooks_problem: hooks,
        ..spawned
    })
}

fn lease_and_prepare(
    ctx: &Context,
    ledger: &mut Ledger,
    opts: &SpawnOptions<'_>,
    checked: Checked,
    progress: &dyn Fn(&str),
) -> Result<Spawned> {
    let task_name = checked.task.as_str();
    let branch = checked.branch;
    let issue = checked.issue.as_deref();
    let repo = ctx.repo()?;
    let git = repo.git();
    let common = repo.loc.common_dir.to_string_lossy().into_owned();
    // A write (and its fsync) only the first time git-hand sees this repository.
    let repo_id = match ledger.read(|v| v.repo_by_dir(&common))? {
        Some(known) => known.id,
        None => ledger.write(|tx| Ok(tx.ensure_repo(&common)?.id))?,
    };

    if let Some(existing) = ledger.read(|v| v.open_task(&repo_id, task_name))? {
        return resume_existing(ledger, existing, opts);
    }
    // Resolved by `check` unless the task it saw open has ended since.
    let base = match checked.base {
        Some(base) => base,
        None => base::resolve(repo, &git, opts.base)?,
    };
    let branch_exists = repo.ref_oid(&format!("refs/heads/{branch}")).is_some();
    let existing = match (branch_exists, opts.branch.is_some()) {
        (false, _) => Existing::No,
        (true, true) => Existing::Named,
        (true, false) => Existing::Unnamed,
    };
    check_branch_free(repo, task_name, &branch, existing)?;
    let issue_resource = match issue {
        Some(id) => Some(Resource::issue(
            &super::lease::issue_namespace(ctx, ledger)?,
            id,
        )),
        None => None,
    };
    let pool_dir = pool::ensure_pool_dir(repo, &repo_id)?;
    let max = checked.max_slots;
    let me = procs::me();
    let remote = super::fence::task_remote(repo);

    // Slots found unsafe once claimed, and why. A slot merely lost to a concurrent spawn is not
    // excluded: the next plan reads it as it is now (held: skipped; free again because its
    // claim was taken back: planned again), so no spawn creates a slot next to a free one.
    let mut lost: Vec<PathBuf> = vec![];
    let mut unsafe_slots: Vec<Skipped> = vec![];
    let mut races = 0;
    while races < MAX_ATTEMPTS {
        let (infos, numbers, now) = ledger.read(|v| {
            Ok((
                pool::slots(v, &repo_id)?,
                v.slot_numbers(&repo_id)?,
                v.now(),
            ))
        })?;
        let (plan, skipped) = pool::choose(&infos, &numbers, &pool_dir, repo, max, now, &lost)
            .map_err(|skipped| no_slot(max, &[unsafe_slots.as_slice(), &skipped].concat()))?;
        let skipped = [unsafe_slots.as_slice(), &skipped].concat();
        let (path, seen) = match &plan {
            Plan::Claim(p) | Plan::Reuse(p) | Plan::Recreate(p) => (
                p.clone(),
                infos.iter().find(|i| Path::new(&i.slot.path) == p),
            ),
            Plan::Create { path, .. } => (path.clone(), None),
        };
        let path_key = path.to_string_lossy().into_owned();
        let claim = match plan {
            Plan::Create { .. } => Claim::New {
                pool_dir: &pool_dir,
                repo,
                max,
            },
            _ => Claim::Existing {
                path: &path_key,
                held: seen
                    .and_then(|i| i.held.as_ref())
                    .map(|t| t.lease_id.as_str()),
                last_token: seen.map_or(0, |i| i.last_token),
            },
        };
        let intent = Intent {
            repo_id: &repo_id,
            task: task_name,
            claim,
            branch: &branch,
            base_oid: &base.oid,
            holder: opts.holder,
            issue: issue_resource.as_ref().zip(issue),
            me,
            step: match plan {
                Plan::Claim(_) => Step::Intent,
                Plan::Reuse(_) => Step::Preparing,
                Plan::Create { .. } | Plan::Recreate(_) => Step::Creating,
            },
            remote: remote.as_deref(),
        };
        // A free slot's probe (`git status`, the /proc scan) runs while the intent that claims
        // it commits: its verdict is used only once the claim holds, and a lost claim throws it
        // away. The intent is durable while git works below, and waited for before the slot is
        // handed out.
        let (recorded, probe) = std::thread::scope(|scope| {
            let probe = match &plan {
                Plan::Claim(p) => Some(scope.spawn(|| safety::Probe::run(p))),
                _ => None,
            };
            let recorded = ledger.write_syncing_meanwhile(|tx| record_intent(tx, &intent));
            let probe = probe.map(|thread| thread.join().unwrap_or_else(|_| safety::Probe::lost()));
            (recorded, probe)
        });
        let (intent, synced) = recorded?;
        let (task, tenure, issue_tenure, path, n, issue_was_held) = match intent {
            IntentOutcome::Recorded {
                task,
                tenure,
                issue_tenure,
                issue_was_held,
                slot,
            } => {
                let path = PathBuf::from(&slot.path);
                (task, tenure, issue_tenure, path, slot.n, issue_was_held)
            }
            IntentOutcome::LostSlot => {
                synced.wait()?;
                races += 1;
                continue;
            }
            IntentOutcome::TaskExists(existing) => {
                synced.wait()?;
                return resume_existing(ledger, *existing, opts);
            }
            IntentOutcome::BranchTaken(other) => {
                synced.wait()?;
                return Err(Error::precondition(
                    format!(
                        "branch {branch} belongs to open task {}; nothing was created",
                        other.name
                    ),
                    vec![format!(
                        "git hand teardown {}   # end that task first",
                        other.name
                    )],
                ));
            }
            IntentOutcome::IssueHeld(t) => {
                synced.wait()?;
                return Err(issue_held(issue.unwrap_or_default(), &t));
            }
        };
        failpoint::hit("spawn-after-intent");
        let plan = match plan {
            // A new slot's number is settled by the intent: a concurrent spawn may have taken
            // the one chosen before it.
            Plan::Create { .. } => Plan::Create {
                n,
                path: path.clone(),
            },
            // Claimed, so nobody else probes or switches it: the probe holds.
            Plan::Claim(p) => {
                let why = probe.unwrap_or_else(safety::Probe::lost).blockers(repo, &p);
                if !why.is_empty() {
                    synced.wait()?;
                    withdraw(ledger, &task, issue_lease(issue_was_held))?;
                    unsafe_slots.push(Skipped {
                        path: p.to_string_lossy().into_owned(),
                        why,
                    });
                    lost.push(p);
                    continue;
                }
                if preparing_in(ledger, &task)? == Preparing::Settled {
                    synced.wait()?;
                    return Err(settled_meanwhile(task_name));
                }
                Plan::Reuse(p)
            }
            other => other,
        };
        if !matches!(plan, Plan::Reuse(_)) {
            progress(&format!("creating slot {}", path.display()));
        }
        let stamped = stamp::Stamp {
            lease_id: tenure.lease_id.clone(),
            token: tenure.token,
            task: task_name.to_string(),
            ledger: ledger.path().to_path_buf(),
        };
        let target = Target {
            branch: &branch,
            exists: branch_exists,
            base: &base.oid,
        };
        let (guard, prepared) =
            prepare_slot(ledger, repo, &git, &plan, &path, &target, &tenure.lease_id);
        let prepared =
            prepared.map_err(|e| format!("could not prepare slot {n} ({}): {e}", path.display()));
        let prepared = prepared.and_then(|()| {
            super::slot_hooks::inherit(repo, &path)
                .map(drop)
                .map_err(|e| e.to_string())
        });
        let prepared = prepared
            .and_then(|()| synced.wait().map_err(|e| e.to_string()))
            .and_then(|()| {
                failpoint::hit("spawn-after-checkout");
                let guard = guard
                    .as_ref()
                    .ok_or_else(|| "the slot was never locked".to_string())?;
                let required = repo
                    .config_bool("hand.requireCredential", false)
                    .map_err(|e| e.to_string())?;
                stamp::refresh_required(&repo.loc.common_dir, required).map_err(|e| {
                    format!("cannot mark the slots for hand.requireCredential: {e}")
                })?;
                stamp_slot(ledger, guard, &stamped, required).map_err(|e| e.to_string())
            });
        if let Err(why) = prepared {
            return Err(undo_failed_spawn(
                ledger,
                &git,
                guard.as_ref(),
                &task,
                &target,
                issue_was_held,
                &why,
            ));
        }
        failpoint::hit("spawn-after-stamp");
        let Some((task, tenure, issue_tenure)) = ledger
            .write_relaxed(|tx| activate(tx, &task, &tenure, issue_tenure.as_ref(), opts.ttl))?
        else {
            return Err(settled_meanwhile(task_name));
        };
        drop(guard);
        let source = if matches!(plan, Plan::Reuse(_)) {
            SlotSource::Reused
        } else {
            SlotSource::Created
        };
        return Ok(Spawned {
            task,
            path,
            slot_n: n,
            tenure,
            issue_tenure,
            base,
            source,
            skipped,
            hooks_problem: None,
        });
    }
    Err(Error::precondition(
        "every free slot was taken by concurrent spawns; nothing was created",
        vec!["run the same git hand spawn again".into()],
    ))
}

/// The activation transaction: the task becomes active only if it is still spawning and its
/// leases are still the ones its intent took (a `doctor --repair` may have settled it meanwhile),
/// and the leases get the TTL asked for. `None` when the task was settled under us.
fn activate(
    tx: &ledger::Tx<'_>,
    task: &Task,
    tenure: &Tenure,
    issue: Option<&Tenure>,
    ttl: Option<Millis>,
) -> ledger::Result<Option<(Task, Tenure, Option<Tenure>)>> {
    let view = tx.view();
    let still_spawning = view
        .task(task.id)?
        .is_some_and(|t| t.state == TaskState::Spawning);
    let still_held = view
        .current(&tenure.resource)?
        .is_some_and(|t| t.lease_id == tenure.lease_id);
    if !still_spawning || !still_held {
        return Ok(None);
    }
    let Renew::Renewed(tenure) = tx.renew(&tenure.resource, By::Lease(&tenure.lease_id), ttl)?
    else {
        return Ok(None);
    };
    let issue = match issue {
        Some(t) => match tx.renew(&t.resource, By::Lease(&t.lease_id), ttl)? {
            Renew::Renewed(t) => Some(t),
            Renew::NotHolder(_) => {
                return Err(LedgerError::Raced(format!(
                    "issue lease of task {} ended",
                    task.name
                )));
            }
        },
        None => None,
    };
    tx.set_task_state(task.id, TaskState::Active, Step::Active, None)?;
    let detail = format!("task {} on {}", task.name, task.branch);
    tx.log(
        EventKind::TaskSpawned,
        &tenure.resource,
        Some(&tenure),
        Some(&detail),
    )?;
    let task = view.task(task.id)?.unwrap_or_else(|| task.clone());
    Ok(Some((task, tenure, issue)))
}

/// Makes sure the hooks that enforce the lease are installed (never writing into a directory
/// another hook manager owns, nor anywhere when `install` is false), and says why not when they
/// are not in force.
fn hooks_problem(repo: &Repo, git: &Git, install: bool) -> Option<(String, Vec<String>)> {
    // The common case, proven without a git process: no core.hooksPath (gix reads includes
    // too) and our current shims in the repository's own hooks directory.
    if repo.config_string("core.hooksPath").is_none()
        && crate::hooks::current_in(&repo.loc.common_dir.join("hooks"))
    {
        return None;
    }
    if !install {
        return match crate::hooks::in_force(git, repo.loc.workdir.as_deref()) {
            Ok(state) => state.unchecked().map(|lapse| {
                let mut hints = vec![
                    "git hand install   # installs git-hand's hooks and opts back in".to_string(),
                ];
                hints.extend(lapse.hints.iter().cloned());
                (
                    format!(
                        "hand.installHooks is false, so git-hand installed no hooks, and {}",
                        lapse.message
                    ),
                    hints,
                )
            }),
            Err(e) => Some((e.to_string(), e.hints())),
        };
    }
    match crate::hooks::ensure_installed(git) {
        Ok(report) => report.problem.and_then(|p| {
            // Not git-hand's own shims, but a manager whose hooks call git-hand (husky's or
            // lefthook's recipe committed): in force all the same.
            let by_manager = crate::hooks::in_force(git, repo.loc.workdir.as_deref())
                .is_ok_and(|state| state.unchecked().is_none());
            (!by_manager).then(|| (p.to_string(), p.hints()))
        }),
        Err(e) => Some((e.to_string(), e.hints())),
    }
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
        return Err(Error::precondition(
            format!("branch {branch} already exists (an earlier task of this name kept it)"),
            vec![
                format!("git hand spawn {task} --branch {branch}   # continue that branch"),
                format!("git hand spawn {task} --branch hand/{task}-2   # or start a new one"),
            ],
        ));
    }
    if let Some((dir, _)) = repo
        .checked_out_branches()
        .into_iter()
        .find(|(_, b)| b == branch)
    {
        return Err(Error::precondition(
            format!(
                "branch {branch} is checked out in another worktree ({})",
                dir.display()
            ),
            vec![
                "git hand list   # which task has it".into(),
                format!(
                    "git -C {} switch --detach   # free the branch there",
                    dir.display()
                ),
            ],
        ));
    }
    Ok(())
}

struct Intent<'a> {
    repo_id: &'a str,
    task: &'a str,
    claim: Claim<'a>,
    branch: &'a str,
    base_oid: &'a str,
    holder: &'a str,
    issue: Option<(&'a Resource, &'a str)>,
    me: procs::ProcessId,
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
        path: &'a str,
        held: Option<&'a str>,
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

// Built once per spawn attempt and matched at once: its size does not matter.
#[allow(clippy::large_enum_variant)]
enum IntentOutcome {
    Recorded {
        task: Task,
        tenure: Tenure,
        issue_tenure: Option<Tenure>,
        /// The holder held the issue lease before this spawn (outside any task): undoing the
        /// spawn must leave it held.
        issue_was_held: bool,
        slot: ledger::Slot,
    },
    /// The slot changed between our read and our write (a concurrent spawn leased it, prune
    /// removed it), or the pool filled up: plan again.
    LostSlot,
    TaskExists(Box<Task>),
    /// Another open task works on the branch.
    BranchTaken(Box<Task>),
    IssueHeld(Box<Tenure>),
}

/// The intent transaction: the task row and every lease it needs, or nothing.
fn record_intent(tx: &ledger::Tx<'_>, i: &Intent<'_>) -> ledger::Result<IntentOutcome> {
    let view = tx.view();
    if let Some(existing) = view.open_task(i.repo_id, i.task)? {
        return Ok(IntentOutcome::TaskExists(Box::new(existing)));
    }
    // The issue must be free, or held by this holder outside any open task: two tasks sharing
    // one issue lease would release it under each other.
    if let Some((res, _)) = i.issue
        && let Some(live) = view.current(res)?
        && (live.holder != i.holder || view.open_task_by_issue_lease(&live.lease_id)?.is_some())
    {
        let why = format!("spawn {} by {}: issue held", i.task, i.holder);
        tx.log(EventKind::Refused, res, Some(&live), Some(&why))?;
        return Ok(IntentOutcome::IssueHeld(Box::new(live)));
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
    if let Some(other) = on_remote.or(view.open_task_on_branch(i.repo_id, i.branch)?) {
        return Ok(IntentOutcome::BranchTaken(Box::new(other)));
    }
    let slot = match i.claim {
        Claim::Existing {
            path,
            held,
            last_token,
        } => {
            // Pruned since we looked: prune claims a slot in the ledger before removing it.
            let Some(slot) = view.slot_by_path(path)? else {
                return Ok(IntentOutcome::LostSlot);
            };
            let now_held = view.held(&slot.resource())?;
            let unchanged = view.last_token(&slot.resource())? == last_token
                && match (&now_held, held) {
                    (None, None) => true,
                    (Some(t), Some(id)) => t.lease_id == id && !t.is_live(tx.now()),
                    _ => false,
                };
            if !unchanged {
                return Ok(IntentOutcome::LostSlot);
            }
            slot
        }
        Claim::New {
            pool_dir,
            repo,
            max,
        } => {
            let present: Vec<i64> = view.slots(i.repo_id)?.iter().map(|s| s.n).collect();
            if present.len() as i64 >= max {
                return Ok(IntentOutcome::LostSlot); // filled meanwhile: plan again
            }
            let numbers = view.slot_numbers(i.repo_id)?;
            let (n, path) = pool::new_slot(&present, &numbers, pool_dir, repo);
            tx.ensure_slot(i.repo_id, n, &path.to_string_lossy())?
        }
    };
    let slot_res = Resource::worktree(slot.path.clone());
    // Only a free or expired slot may be taken; a live one (even our own holder's, for another
    // task) means a concurrent spawn won it. (Checked above for a known slot; a new one has no
    // tenure unless the ledger is inconsistent.)
    if view.current(&slot_res)?.is_some() {
        return Ok(IntentOutcome::LostSlot);
    }
    // Both leases are open-ended while the spawn works and get their TTL when the task becomes
    // active: a TTL shorter than the checkout must not let another spawn take the slot over
    // while this one is still switching it (two tasks in one worktree).
    let tenure = match tx.acquire(&slot_res, i.holder, None)? {
        ledger::Acquire::Acquired { tenure, .. } => tenure,
        ledger::Acquire::Held(_) => return Ok(IntentOutcome::LostSlot),
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
        issue_lease_id: issue_tenure.as_ref().map(|t| t.lease_id.as_str()),
        branch: i.branch,
        base_oid: i.base_oid,
        holder: i.holder,
        pid: i.me.pid,
        pid_start: i.me.start,
        step: i.step,
        remote: i.remote,
    })?;
    Ok(IntentOutcome::Recorded {
        task,
        tenure,
        issue_tenure,
        issue_was_held,
        slot,
    })
}

/// The branch a spawn puts in its slot.
struct Target<'a> {
    branch: &'a str,
    /// The branch existed before this spawn (named with `--branch`); otherwise spawn creates it
    /// at `base`, and undoing the spawn deletes it again if it still points there.
    exists: bool,
    base: &'a str,
}

/// Creates or switches the slot, under its lock, each git command checked against the ledger
/// first (see [`SlotGuard`]). Runs with no transaction open. Returns the guard (when the slot
/// could be locked) with the outcome, so a failure can be undone under the same lock.
fn prepare_slot(
    ledger: &mut Ledger,
    repo: &Repo,
    git: &Git,
    plan: &Plan,
    path: &Path,
    target: &Target<'_>,
    lease_id: &str,
) -> (Option<SlotGuard>, Result<()>) {
    let guard = match SlotGuard::lock(&repo.loc.common_dir, path, lease_id) {
        Ok(guard) => guard,
        Err(e) => return (None, Err(e)),
    };
    let prepared = match plan {
        Plan::Create { .. } | Plan::Recreate(_) => create_slot(ledger, repo, git, &guard, target),
        Plan::Claim(_) | Plan::Reuse(_) => switch_to(ledger, repo, &guard, target, &[]),
    };
    (Some(guard), prepared)
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
        std::fs::create_dir_all(parent).map_err(|e| {
            Error::failed(format!("cannot create {}: {e}", parent.display()), vec![])
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
        if target.exists {
            target.branch
        } else {
            target.base
        },
    ]);
    {
        let _lock = pool::lock_worktree_list(&repo.loc.common_dir)?;
        guard.check(ledger)?;
        git.run(&args)?;
    }
    // The index is empty: --discard-changes fills it and the files from the target.
    switch_to(ledger, repo, guard, target, &["--discard-changes"])
}

/// `git switch` in the slot to the task's branch, creating it at the base unless it exists.
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
    let switch: &[&str] = if target.exists {
        &[target.branch]
    } else {
        &["--no-track", "-c", target.branch, target.base]
    };
    guard.git(
        ledger,
        &[hooks, &["switch", "--quiet"], extra, switch].concat(),
    )?;
    Ok(())
}

/// Writes the stamp into the slot's proven admin dir, the lease checked just before like any
/// other change to the slot. The `hand.requireCredential` marker goes first, so the stamp never
/// stands without it.
fn stamp_slot(
    ledger: &mut Ledger,
    guard: &SlotGuard,
    stamped: &stamp::Stamp,
    required: bool,
) -> Result<()> {
    guard.check(ledger)?;
    let admin = guard.prove()?;
    stamp::mark_required(&admin, required).map_err(|e| {
        Error::failed(
            format!("cannot mark the slot for hand.requireCredential: {e}"),
            vec![],
        )
    })?;
    stamp::write(&admin, stamped).map_err(|e| Error::failed(e.to_string(), vec![]))
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
fn preparing_in(ledger: &mut Ledger, task: &Task) -> Result<Preparing> {
    let lease = task.lease_id.clone().unwrap_or_default();
    Ok(ledger.write_relaxed(|tx| {
        let view = tx.view();
        let spawning = view
            .task(task.id)?
            .is_some_and(|t| t.state == TaskState::Spawning);
        let held = view.tenure(&lease)?.is_some_and(|t| t.ended_at.is_none());
        if !spawning || !held {
            return Ok(Preparing::Settled);
        }
        tx.set_task_step(task.id, Step::Preparing)?;
        Ok(Preparing::Recorded)
    })?)
}

fn settled_meanwhile(task: &str) -> Error {
    Error::failed(
        format!(
            "task {task} was settled by someone else (git hand doctor --repair?) while it was \
             being spawned; it is not active and holds no lease"
        ),
        vec![format!("git hand spawn {task}   # start it again")],
    )
}

/// Undoes a spawn whose git work or stamp failed after it claimed its slot: the slot is put back
/// to a clean detached checkout under its lock (so it stays usable, instead of being left half
/// switched, skipped by every later spawn and kept by prune), a branch this spawn created is
/// deleted if it still points at the base, and the task's leases are released. When the slot
/// cannot be put back, the task stays `spawning` (its process, this one, is about to exit) for
/// `git hand doctor --repair`, which tries again: a slot is never left free and dirty.
fn undo_failed_spawn(
    ledger: &mut Ledger,
    git: &Git,
    guard: Option<&SlotGuard>,
    task: &Task,
    target: &Target<'_>,
    issue_was_held: bool,
    why: &str,
) -> Error {
    let creating = matches!(task.step, Some(Step::Creating));
    let restored = match guard {
        Some(guard) => guard.undo(ledger, creating),
        None => Ok(()),
    };
    let lease_lost = guard.is_some_and(|g| g.check(ledger).is_err());
    if let Err(e) = &restored
        && !lease_lost
    {
        return Error::failed(
            format!(
                "{why}; the slot could not be put back ({e}), so task {} keeps its leases \
                 until doctor settles it",
                task.name
            ),
            vec!["git hand doctor --repair   # puts the slot back and ends the task".into()],
        );
    }
    if !target.exists {
        // Compare-and-delete: only the branch as this spawn made it, at the base.
        let name = format!("refs/heads/{}", target.branch);
        let _ = git.output(&["update-ref", "-d", &name, target.base]);
    }
    let ended = abandon(
        ledger,
        task,
        EndReason::SpawnFailed,
        issue_lease(issue_was_held),
    );
    let ended = match ended {
        Ok(()) => {
            "the task's leases were released (an issue lease held before this spawn is \
                   kept) and it is marked done"
        }
        Err(_) => "its leases could not be released: git hand doctor --repair settles them",
    };
    Error::failed(
        format!("{why}; {ended}; the slot is left clean and free"),
        vec![format!(
            "git hand spawn {}   # try again; git hand doctor if it keeps failing",
            task.name
        )],
    )
}

fn issue_lease(was_held: bool) -> IssueLease {
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

/// Takes back an intent whose claimed slot proved unsafe (see [`ledger::Tx::withdraw_intent`]).
/// The slot stays free; its token history keeps the claim.
fn withdraw(ledger: &mut Ledger, task: &Task, issue: IssueLease) -> Result<()> {
    ledger.write(|tx| tx.withdraw_intent(task, issue))?;
    Ok(())
}

/// Spawning a task that is already open: the same holder gets the same slot and lease back
/// (its expiry refreshed from this call's TTL); anyone else is told who has it.
fn resume_existing(ledger: &mut Ledger, task: Task, opts: &SpawnOptions<'_>) -> Result<Spawned> {
    let name = task.name.clone();
    if task.state != TaskState::Active {
        return Err(Error::precondition(
            format!(
                "task {name} is {} (another git-hand is working on it, or one crashed)",
                task.state.as_str()
            ),
            vec!["git hand doctor --repair   # settles a crashed spawn or teardown".into()],
        ));
    }
    if task.holder != opts.holder {
        return Err(Error::precondition(
            format!(
                "task {name} is active and held by {} (in {}); nothing was created",
                task.holder,
                task.slot_path.as_deref().unwrap_or("?")
            ),
            vec![
                format!("ask {} to run: git hand teardown {name}", task.holder),
                format!("git hand spawn {name}-2   # or work under another name"),
            ],
        ));
    }
    let slot_path = task.slot_path.clone().unwrap_or_default();
    let res = Resource::worktree(slot_path.clone());
    let lease_id = task.lease_id.clone().unwrap_or_default();
    let tenure = ledger.write(|tx| {
        let current = tx.view().current(&res)?;
        match current {
            Some(t) if t.lease_id == lease_id => match tx.acquire(&res, opts.holder, opts.ttl)? {
                ledger::Acquire::Acquired { tenure, .. } => Ok(Some(tenure)),
                ledger::Acquire::Held(_) => Ok(None),
            },
            _ => Ok(None),
        }
    })?;
    let Some(tenure) = tenure else {
        return Err(Error::precondition(
            format!(
                "task {name}'s lease is no longer live (it expired or its slot was taken over)"
            ),
            vec![format!(
                "git hand teardown {name}   # commits stay on {}",
                task.branch
            )],
        ));
    };
    let (issue_tenure, slot_n) = ledger.read(|v| {
        let issue = match &task.issue_lease_id {
            Some(id) => v.tenure(id)?,
            None => None,
        };
        let n = v.slot_by_path(&slot_path)?.map_or(0, |s| s.n);
        Ok((issue, n))
    })?;
    let base = base::Base {
        oid: task.base_oid.clone().unwrap_or_default(),
        label: task.base_oid.clone().unwrap_or_default(),
    };
    Ok(Spawned {
        path: PathBuf::from(&slot_path),
        slot_n,
        tenure,
        issue_tenure,
        base,
        source: SlotSource::Existing,
        skipped: vec![],
        hooks_problem: None,
        task,
    })
}

fn issue_held(issue: &str, t: &Tenure) -> Error {
    Error::precondition(
        format!(
            "issue {issue} is held by {} (token {}); nothing was created",
            t.holder, t.token
        ),
        vec![format!("git hand lease current {issue}")],
    )
}

fn no_slot(max: i64, skipped: &[Skipped]) -> Error {
    let mut message = format!(
        "no slot can be used and the pool is full ({max} slots, hand.maxSlots); nothing was created"
    );
    for s in skipped {
        message.push_str(&format!("\n  {}: {}", s.path, s.why.join("; ")));
    }
    Error::precondition(
        message,
        vec![
            "git hand list        # which tasks hold slots".into(),
            "git hand teardown <task>   # free one".into(),
            "git config hand.maxSlots 32".into(),
        ],
    )
}
