//! `git hand teardown` (alias `done`): end a task, free its slot for reuse (files kept for the
//! build cache), release its leases (tokens stay spent), keep its branch.
//!
//! Each step is recorded, so a retry after a crash resumes. A retry compares lease ids, never
//! paths: once this task's slot tenure has ended, the slot may belong to someone else and
//! teardown touches nothing on disk.
//!
//! The pin takes back an expired slot tenure (a new tenure, a new token, the same holder) and makes a
//! live one open-ended; its check that no other teardown of the task is running is inside the same
//! transaction, so two teardowns never both pass. The stamp stays after `switch --detach`, so a
//! zombie without a credential is refused as `released`. Most teardowns are proven safe from refs
//! alone.

use std::path::Path;

use crate::failpoint;
use crate::git::Git;
use crate::git::status::dirty_files;
use crate::ledger::{
    Acquire, By, Durability, EndReason, Idempotent, IssueLease, LeaseId, Ledger, PendingSync,
    Retry, Step, Task, TaskState, Tenure, WorktreeKey,
};
use crate::ops::pool::slot::{self, SlotGuard};
use crate::ops::task::{Reached, TeardownError};
use crate::ops::{Context, Error, Result, pool::safety, repo::names};
use crate::platform::procs::{ProcessId, Scan, Seen};

#[derive(Debug, Clone)]
pub struct TeardownOptions<'a> {
    pub task: &'a str,
    /// Discard uncommitted changes (commits always stay on the branch).
    pub force: bool,
    /// Accept commits that are on the task's branch but not pushed (they stay on the branch).
    /// `doctor --repair` resumes an interrupted teardown this way: the user already chose to
    /// end the task, and nothing on a branch is lost.
    pub keep_unpushed: bool,
    /// Run `hand.onTeardown`, showing its events here; `None` runs nothing (`--no-setup`,
    /// `doctor --repair`).
    pub setup: Option<crate::ops::repo::setup::Shown<'a>>,
}

#[derive(Debug, Clone)]
pub enum TornDown {
    /// The slot was freed and the task is done.
    Freed {
        task: Task,
        slot: WorktreeKey,
        discarded: Vec<String>,
    },
    /// The task's lease had ended and the slot may be someone else's: only the row was settled.
    LeaseEnded {
        task: Task,
        successor: Option<Tenure>,
    },
    /// Nothing to do: the task was done already.
    AlreadyDone(Task),
}

/// Ends the task in four steps, each named for what it guarantees: find it (and refuse what
/// teardown may not touch), prove its slot holds nothing to lose (reads only), pin the slot's
/// lease to this teardown (one transaction), put the slot back and release it.
pub fn teardown(
    ctx: &Context,
    ledger: &mut Ledger,
    opts: &TeardownOptions<'_>,
) -> Result<TornDown> {
    let name = names::task_name(opts.task)?;
    let repo = ctx.repo()?;
    let task = find_task(repo, ledger, name)?;
    if task.state == TaskState::Done {
        return Ok(TornDown::AlreadyDone(task));
    }
    refuse_unless_tearable(ctx.scan(), &task)?;
    let tenure = match slot_tenure(ledger, &task)? {
        SlotTenure::Ours(tenure) => tenure,
        SlotTenure::Ended { successor } => return end_row_only(ledger, &task, successor),
    };
    if let Some(shown) = opts.setup {
        on_teardown(repo, &task, &tenure, shown)?;
    }
    let proof = prove_safe_to_free(repo, &task, opts)?;
    // The checks above only read; from the pin on, the slot is provably this task's, and only
    // this process works in it: every git command below runs under the slot's lock, checked
    // against the ledger first.
    let (pinned, synced) = pin_slot_lease(ctx.scan(), ledger, &task)?;
    let (task, lease_id) = match pinned {
        Pinned::Ours { task, lease_id } => (*task, lease_id),
        Pinned::InProgress(pid) => {
            synced.wait()?;
            return Err(in_progress(&task, pid));
        }
        Pinned::NotOurs => {
            synced.wait()?;
            let slot = task.slot_resource();
            let successor = ledger.read(|v| v.current(&slot))?;
            return end_row_only(ledger, &task, successor);
        }
    };
    let mut reached = Reached::Pinned;
    let freed = put_slot_back(
        ctx.scan(),
        ledger,
        repo,
        &task,
        &lease_id,
        proof,
        opts,
        synced,
        &mut reached,
    )
    .and_then(|discarded| {
        reached = Reached::Released;
        // Retried on a lost connection: ending a task twice ends it once.
        let task = ledger
            .write_with(
                Durability::Relaxed,
                Retry::Once(Idempotent::EndTask),
                |tx| {
                    tx.end_task(&task, EndReason::TornDown, IssueLease::Release)?;
                    Ok(tx.view().task(task.id)?.unwrap_or_else(|| task.clone()))
                },
            )
            .map(|(out, _)| out)?;
        Ok((discarded, task))
    });
    let slot = task.slot_key();
    let (discarded, task) = freed.map_err(|e| cut_off(e, &task, reached))?;
    Ok(TornDown::Freed {
        task,
        slot,
        discarded,
    })
}

/// The open task of that name in this repository, else the last one of that name.
fn find_task(repo: &crate::git::Repo, ledger: &mut Ledger, name: &str) -> Result<Task> {
    let common = &repo.loc.common_dir;
    let found = ledger.read(|v| {
        let Some(repo) = v.repo_by_dir(common)? else {
            return Ok(None);
        };
        v.task_named(&repo.id, name)
    })?;
    found.ok_or_else(|| {
        TeardownError::NoSuchTask {
            name: name.to_string(),
        }
        .into()
    })
}

/// Refuses a task teardown may not touch yet: one still spawning (doctor settles a crashed
/// spawn), or one another live process is tearing down.
fn refuse_unless_tearable(scan: Scan, task: &Task) -> Result<()> {
    if task.state == TaskState::Spawning {
        return Err(TeardownError::StillSpawning {
            task: task.name.clone(),
        }
        .into());
    }
    match teardown_running(scan, task) {
        Some(pid) => Err(in_progress(task, pid)),
        None => Ok(()),
    }
}

/// Whose the slot's held tenure is, as teardown sees it.
enum SlotTenure {
    /// The task's own (this tenure): teardown may work in the slot (once it has pinned the
    /// lease).
    Ours(Tenure),
    /// The task's lease ended; the slot may be someone else's (`successor`) and nothing on
    /// disk may be touched.
    Ended { successor: Option<Tenure> },
}

/// Compares lease ids, never paths (see the module docs). Only reads.
fn slot_tenure(ledger: &mut Ledger, task: &Task) -> Result<SlotTenure> {
    let slot = task.slot_resource();
    Ok(ledger.read(|v| {
        let held = v.held(&slot)?;
        Ok(match held {
            Some(h) if is_ours(task, &h) => SlotTenure::Ours(h),
            // Only a live tenure holds the slot: an expired one is named by no one's words
            // as its holder (issue 22).
            successor => SlotTenure::Ended {
                successor: successor.filter(|t| t.is_live(v.now())),
            },
        })
    })?)
}

/// Runs `hand.onTeardown` in the task's slot with its credential, before anything is proven or
/// discarded: what the command leaves behind is judged like the task's own files (an untracked
/// file it writes refuses the teardown, unless `--force`). A command from a `.handconfig` the
/// user has not trusted is refused before it runs. Only an active task's slot that is proven to
/// be itself runs it: a teardown resumed after a crash (`tearing-down`) ran it already, and
/// nothing runs in a slot the disk lost or that is not the slot git-hand made. A failure stops
/// the teardown with nothing changed: the task stays active.
fn on_teardown(
    repo: &crate::git::Repo,
    task: &Task,
    tenure: &Tenure,
    shown: crate::ops::repo::setup::Shown<'_>,
) -> Result<()> {
    let settings = crate::ops::repo::settings::Settings::load(repo)?;
    let hook = crate::ops::repo::setup::Hook::OnTeardown;
    let Some(cmd) = settings.setup_command(hook) else {
        return Ok(());
    };
    let slot = task.slot_key();
    let path = Path::new(&slot);
    if task.state != TaskState::Active || slot::prove(&repo.loc.common_dir, path).is_err() {
        return Ok(());
    }
    let skip = crate::ops::repo::Skip::Teardown {
        task: task.name.clone(),
    };
    crate::ops::repo::trust::require(&settings, &[hook], Some(skip))?;
    let env = crate::ops::fence::credential::env_vars(task, tenure);
    let timeout = settings.setup_timeout()?;
    crate::ops::repo::setup::run(&cmd, path, &env, timeout, shown.0).map_err(|e| {
        TeardownError::OnTeardownFailed {
            task: task.name.clone(),
            reason: e.to_string(),
        }
        .into()
    })
}

/// Settles only the task's row (`lease-ended`): the slot is not the task's any more.
fn end_row_only(ledger: &mut Ledger, task: &Task, successor: Option<Tenure>) -> Result<TornDown> {
    let task = finish(ledger, task, EndReason::LeaseEnded)?;
    Ok(TornDown::LeaseEnded { task, successor })
}

/// What teardown proved about the slot before pinning it, and what it may discard.
struct Proof {
    /// The slot is there and is itself (a slot the disk lost has nothing to switch).
    on_disk: bool,
    /// Uncommitted and untracked files, allowed only with `force`.
    dirty: Vec<String>,
}

/// Proves the slot is itself (else nothing of an orphan or a symlink is read), then that
/// freeing it loses nothing (see [`prove_nothing_lost`]). Only reads.
fn prove_safe_to_free(
    repo: &crate::git::Repo,
    task: &Task,
    opts: &TeardownOptions<'_>,
) -> Result<Proof> {
    let slot = task.slot_key();
    let path = Path::new(&slot);
    // Proven before it is even read: an orphaned slot's git reports another worktree's files.
    let on_disk = match slot::prove(&repo.loc.common_dir, path) {
        Ok(_) => true,
        Err(e) if e.is_gone() => false,
        Err(e) => return Err(slot::not_the_slot(&e)),
    };
    let dirty = if on_disk {
        prove_nothing_lost(repo, task, path, opts)?
    } else {
        vec![]
    };
    Ok(Proof { on_disk, dirty })
}

/// A teardown's error once it pinned the slot: a lost connection to the team ledger says what
/// was done and that running the same teardown again resumes it (it does: the task is
/// `tearing-down` and its process is gone), never "nothing was changed" (issue 22). Every other
/// error is itself.
fn cut_off(e: Error, task: &Task, reached: Reached) -> Error {
    let Error::Ledger(crate::ledger::LedgerError::ConnectionLost(lost)) = &e else {
        return e;
    };
    TeardownError::CutOff {
        task: task.name.clone(),
        branch: task.branch.clone(),
        at: lost.at.clone(),
        reason: lost.reason.clone(),
        reached,
        fate: lost.fate,
    }
    .into()
}

/// Puts the pinned slot back for the next spawn: under its lock, discards what `force` allows,
/// detaches it (so the branch is free for others), then releases the slot tenure by its lease
/// id. Returns the files discarded; `reached` says how far it got.
#[allow(clippy::too_many_arguments)]
fn put_slot_back(
    scan: Scan,
    ledger: &mut Ledger,
    repo: &crate::git::Repo,
    task: &Task,
    lease_id: &LeaseId,
    proof: Proof,
    opts: &TeardownOptions<'_>,
    synced: PendingSync,
    reached: &mut Reached,
) -> Result<Vec<String>> {
    let slot = task.slot_key();
    let guard = SlotGuard::lock(scan, &repo.loc.common_dir, Path::new(&slot), lease_id)?;
    failpoint::hit("teardown-after-intent");
    let discarded = if opts.force && !proof.dirty.is_empty() {
        // Ignored files (the build cache) survive: `clean` runs without -x.
        guard.git(ledger, &["reset", "--hard", "--quiet"])?;
        *reached = Reached::Discarded;
        guard.git(ledger, &["clean", "-d", "--force", "--quiet"])?;
        proof.dirty
    } else {
        vec![]
    };
    failpoint::hit("teardown-after-clean");
    // The stamp stays: it names the tenure that is about to end, so a zombie left in the
    // worktree without a credential in its environment is still refused ("released"). The next
    // spawn into the slot overwrites it.
    if proof.on_disk {
        let hooks = crate::ops::pool::switch_hook_args(repo);
        guard.git(
            ledger,
            &[hooks, &["switch", "--detach", "--quiet"]].concat(),
        )?;
        *reached = Reached::Detached;
    }
    // The pin reached the disk while git worked; what follows is bookkeeping a retry or doctor
    // redoes if a power cut loses it, so it does not wait for the disk.
    synced.wait()?;
    // Retried on a lost connection (a server restart or a terminated backend while git worked):
    // the slot is detached already, and recording the step twice records it once.
    ledger
        .write_with(
            Durability::Relaxed,
            Retry::Once(Idempotent::SetStep),
            |tx| tx.set_task_step(task.id, Step::Detached),
        )
        .map(|(out, _)| out)?;
    failpoint::hit("teardown-after-detach");
    release_slot(ledger, task, lease_id)?;
    drop(guard);
    failpoint::hit("teardown-after-release");
    Ok(discarded)
}

/// Whether `held` is the task's own slot tenure. A row from an older ledger has no lease id:
/// it falls back to the holder.
fn is_ours(task: &Task, held: &Tenure) -> bool {
    match &task.lease_id {
        Some(id) => held.lease_id == *id,
        None => held.holder == task.holder,
    }
}

/// The process of another teardown of this task that is still running, if any (a crashed one
/// is resumed instead).
fn teardown_running(scan: Scan, task: &Task) -> Option<i64> {
    let pid = task.pid?;
    let runner = ProcessId {
        pid,
        start: task.pid_start,
        ns: task.pid_ns,
    };
    // One in a PID namespace this /proc cannot see into may still be at work.
    let running = || scan.judge(runner) != Seen::Gone;
    (task.state == TaskState::TearingDown && runner != scan.me() && running()).then_some(pid)
}

fn in_progress(task: &Task, pid: i64) -> Error {
    TeardownError::InProgress {
        task: task.name.clone(),
        pid,
    }
    .into()
}

fn me(scan: Scan) -> (i64, Option<i64>, Option<i64>) {
    let p = scan.me();
    (p.pid, p.start, p.ns)
}

/// Refuses unlanded work (uncommitted files without `force`; commits on no remote-tracking ref
/// and not in the base without `force`; commits on no branch at all, ever) and returns the
/// uncommitted files. Only reads. Fails closed: a git error refuses.
fn prove_nothing_lost(
    repo: &crate::git::Repo,
    task: &Task,
    path: &Path,
    opts: &TeardownOptions<'_>,
) -> Result<Vec<String>> {
    let git = Git::new(path);
    let dirty = dirty_files(&git).map_err(|e| cannot_prove(task, path, "uncommitted work", &e))?;
    let unlanded = unlanded_commits(repo, &git, task, path)?;
    let branchless = branchless_commits(repo, &git, task, path)?;
    if !branchless.is_empty() {
        return Err(TeardownError::Branchless {
            task: task.name.clone(),
            slot: path.to_path_buf(),
            commits: branchless,
        }
        .into());
    }
    let force = opts.force;
    let unlanded = if force || opts.keep_unpushed {
        vec![]
    } else {
        unlanded
    };
    if !force && (!dirty.is_empty() || !unlanded.is_empty()) {
        return Err(TeardownError::NotLanded {
            task: task.name.clone(),
            branch: task.branch.clone(),
            slot: path.to_path_buf(),
            dirty,
            unlanded,
        }
        .into());
    }
    Ok(dirty)
}

/// The refusal when a proof could not be made: nothing was changed.
fn cannot_prove(task: &Task, path: &Path, what: &'static str, e: &dyn std::fmt::Display) -> Error {
    TeardownError::CannotProve {
        task: task.name.clone(),
        slot: path.to_path_buf(),
        what,
        reason: e.to_string(),
    }
    .into()
}

/// Commits on the slot's HEAD or the task's branch that are on no remote-tracking branch and
/// not in the base. Most teardowns are proven without walking history: nothing was committed
/// (the tips are the base) or everything was pushed (the tips are remote-tracking tips).
fn unlanded_commits(
    repo: &crate::git::Repo,
    git: &Git,
    task: &Task,
    path: &Path,
) -> Result<Vec<String>> {
    let branch_tip = repo.ref_oid(&format!("refs/heads/{}", task.branch));
    let branch_exists = branch_tip.is_some();
    let base: Vec<&str> = task.base_oid.iter().map(String::as_str).collect();
    let tips: &[&str] = if branch_exists {
        &["HEAD", &task.branch]
    } else {
        &["HEAD"]
    };
    let landed = |oid: Option<String>| {
        oid.is_some_and(|o| {
            Some(&o) == task.base_oid.as_ref() || repo.is_tip_under(&o, &["refs/remotes/"])
        })
    };
    let branch_landed = branch_tip.is_none_or(|tip| landed(Some(tip)));
    if landed(repo.worktree_head_oid(path)) && branch_landed {
        return Ok(vec![]);
    }
    safety::commits_only_in(git, tips, &["--remotes"], &base)
        .map_err(|e| cannot_prove(task, path, "unlanded commits", &e))
}

/// Commits reachable from the slot's detached HEAD and from no branch, remote-tracking ref or
/// tag: teardown would lose them, with or without `force`.
fn branchless_commits(
    repo: &crate::git::Repo,
    git: &Git,
    task: &Task,
    path: &Path,
) -> Result<Vec<String>> {
    if repo.worktree_head_is_on_a_ref(path) {
        return Ok(vec![]);
    }
    safety::commits_only_in(git, &["HEAD"], &["--branches", "--remotes", "--tags"], &[])
        .map_err(|e| cannot_prove(task, path, "commits on no branch", &e))
}

/// What pinning the slot's lease found.
enum Pinned {
    /// The slot tenure is the task's (`lease_id`, taken back first if it had expired).
    Ours { task: Box<Task>, lease_id: LeaseId },
    /// Another live process is tearing the task down.
    InProgress(i64),
    /// The slot is someone else's now: nothing on disk may be touched.
    NotOurs,
}

/// The intent transaction, which pins the slot's lease to this teardown: the slot tenure must
/// still be the task's. An expired tenure is taken back first (a new tenure for the same
/// holder, so no spawn can take the slot over while teardown works in it, and the old
/// credential is stale from here on); a live one is made open-ended until it is released, so a
/// TTL running out mid-teardown cannot either. A second teardown of the same task while the
/// first one's process lives is refused here, in the transaction that would otherwise let both
/// work in the slot at once. Records `tearing-down`. Its fsync runs while git switches the slot.
fn pin_slot_lease(scan: Scan, ledger: &mut Ledger, task: &Task) -> Result<(Pinned, PendingSync)> {
    let slot = task.slot_resource();
    Ok(
        ledger.write_with(Durability::SyncedMeanwhile, Retry::Never, |tx| {
            let view = tx.view();
            let Some(now) = view.task(task.id)? else {
                return Ok(Pinned::NotOurs);
            };
            if let Some(pid) = teardown_running(scan, &now) {
                return Ok(Pinned::InProgress(pid));
            }
            let Some(held) = view.held(&slot)? else {
                return Ok(Pinned::NotOurs);
            };
            if !is_ours(task, &held) {
                return Ok(Pinned::NotOurs);
            }
            let held = if !held.is_live(tx.now()) {
                let Acquire::Acquired { tenure, .. } = tx.acquire(&slot, &task.holder, None)?
                else {
                    return Ok(Pinned::NotOurs);
                };
                tx.set_task_lease(task.id, &task.slot_key(), &tenure.lease_id)?;
                tenure
            } else if held.expires_at.is_some() {
                tx.hold_open(&held)?
            } else {
                held
            };
            tx.set_task_state(
                task.id,
                TaskState::TearingDown,
                Step::Intent,
                Some(me(scan)),
            )?;
            Ok(match view.task(task.id)? {
                Some(task) => Pinned::Ours {
                    task: Box::new(task),
                    lease_id: held.lease_id,
                },
                None => Pinned::NotOurs,
            })
        })?,
    )
}

/// Releases the slot tenure by its lease id (never another tenure of the slot).
fn release_slot(ledger: &mut Ledger, task: &Task, lease_id: &LeaseId) -> Result<()> {
    let slot = task.slot_resource();
    // By its lease id: run again after a commit whose answer was lost, it finds that tenure
    // ended and releases nothing, and setting the step again sets the same step.
    ledger
        .write_with(
            Durability::Relaxed,
            Retry::Once(Idempotent::Release),
            |tx| {
                tx.release(&slot, By::Lease(lease_id))?;
                tx.set_task_step(task.id, Step::SlotReleased)
            },
        )
        .map(|(out, _)| out)?;
    Ok(())
}

/// Ends the task (see [`crate::ledger::Tx::end_task`]): its issue lease is released by its lease
/// id, the task is marked done.
pub fn finish(ledger: &mut Ledger, task: &Task, reason: EndReason) -> Result<Task> {
    Ok(ledger
        .write_with(Durability::Relaxed, Retry::Never, |tx| {
            tx.end_task(task, reason, IssueLease::Release)?;
            Ok(tx.view().task(task.id)?.unwrap_or_else(|| task.clone()))
        })
        .map(|(out, _)| out)?)
}
