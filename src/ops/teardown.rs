//! `git hand teardown` (alias `done`): end a task, free its slot for reuse (files kept for the
//! build cache), release its leases (tokens stay spent), keep its branch.
//!
//! Each step is recorded, so a retry after a crash resumes. A retry compares lease ids, never
//! paths: once this task's slot tenure has ended, the slot may belong to someone else and
//! teardown touches nothing on disk.

use std::path::Path;

use super::{Context, Error, Result, names, safety};
use crate::failpoint;
use crate::git::Git;
use crate::ledger::{
    Acquire, By, EventKind, Ledger, PendingSync, Resource, Task, TaskState, Tenure,
};

#[derive(Debug, Clone)]
pub struct TeardownOptions<'a> {
    pub task: &'a str,
    /// Discard uncommitted changes (commits always stay on the branch).
    pub force: bool,
    /// Accept commits that are on the task's branch but not pushed (they stay on the branch).
    /// `doctor --repair` resumes an interrupted teardown this way: the user already chose to
    /// end the task, and nothing on a branch is lost.
    pub keep_unpushed: bool,
}

#[derive(Debug, Clone)]
pub enum TornDown {
    /// The slot was freed and the task is done.
    Freed {
        task: Task,
        slot: String,
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

pub fn teardown(
    ctx: &Context,
    ledger: &mut Ledger,
    opts: &TeardownOptions<'_>,
) -> Result<TornDown> {
    let name = names::task_name(opts.task)?;
    let repo = ctx.repo()?;
    let common = repo.loc.common_dir.to_string_lossy().into_owned();
    let found = ledger.read(|v| {
        let Some(repo) = v.repo_by_dir(&common)? else {
            return Ok(None);
        };
        let open = v.open_task(&repo.id, name)?;
        let last = v
            .tasks(&repo.id, true)?
            .into_iter()
            .rev()
            .find(|t| t.name == name);
        Ok(open.or(last))
    })?;
    let task = found.ok_or_else(|| {
        Error::failed(
            format!("there is no task named {name} in this repository"),
            vec!["git hand list --all".into()],
        )
    })?;
    if task.state == TaskState::Done {
        return Ok(TornDown::AlreadyDone(task));
    }
    if task.state == TaskState::Spawning {
        return Err(Error::precondition(
            format!("task {name} is still spawning (or its spawn crashed)"),
            vec!["git hand doctor --repair   # settles a crashed spawn".into()],
        ));
    }
    let slot = task.slot_path.clone().unwrap_or_default();
    let (ours, successor) = ledger.read(|v| {
        let held = v.held(&Resource::worktree(slot.clone()))?;
        let ours = match (&task.lease_id, &held) {
            (Some(id), Some(h)) => h.lease_id == *id,
            // A row from an older ledger has no lease id: fall back to the path and the holder.
            (None, Some(h)) => h.holder == task.holder,
            (_, None) => false,
        };
        Ok((ours, held.filter(|_| !ours)))
    })?;
    if !ours {
        let task = finish(ledger, &task, "lease-ended")?;
        return Ok(TornDown::LeaseEnded { task, successor });
    }
    let path = Path::new(&slot);
    let on_disk = path.join(".git").is_file();
    let branch_exists = repo
        .ref_oid(&format!("refs/heads/{}", task.branch))
        .is_some();
    let dirty = if on_disk {
        check(repo, &task, path, branch_exists, opts)?
    } else {
        vec![]
    };
    // The checks above only read; from the claim on, the slot is provably this task's.
    let (claimed, synced) = claim(ledger, &task)?;
    let Some(task) = claimed else {
        synced.wait()?;
        let successor = ledger.read(|v| v.current(&Resource::worktree(slot.clone())))?;
        let task = finish(ledger, &task, "lease-ended")?;
        return Ok(TornDown::LeaseEnded { task, successor });
    };
    failpoint::hit("teardown-after-intent");
    let discarded = if opts.force && !dirty.is_empty() {
        discard(path)?;
        dirty
    } else {
        vec![]
    };
    failpoint::hit("teardown-after-clean");
    // The stamp stays: it names the tenure that is about to end, so a zombie left in the
    // worktree without a credential in its environment is still refused ("released"). The next
    // spawn into the slot overwrites it.
    if on_disk {
        let hooks = super::pool::switch_hook_args(repo);
        Git::new(path).run(&[hooks, &["switch", "--detach", "--quiet"]].concat())?;
    }
    // The claim reached the disk while git worked; what follows is bookkeeping a retry or doctor
    // redoes if a power cut loses it, so it does not wait for the disk.
    synced.wait()?;
    ledger.write_relaxed(|tx| tx.set_task_step(task.id, "detached"))?;
    failpoint::hit("teardown-after-detach");
    release_slot(ledger, &task)?;
    failpoint::hit("teardown-after-release");
    let task = finish(ledger, &task, "torn-down")?;
    Ok(TornDown::Freed {
        task,
        slot,
        discarded,
    })
}

fn me() -> (i64, Option<i64>) {
    let p = super::procs::me();
    (p.pid, p.start)
}

/// Refuses unlanded work (uncommitted files without `force`; commits on no remote-tracking ref
/// and not in the base without `force`; commits on no branch at all, ever) and returns the
/// uncommitted files. Only reads. Fails closed: a git error refuses.
fn check(
    repo: &crate::git::Repo,
    task: &Task,
    path: &Path,
    branch_exists: bool,
    opts: &TeardownOptions<'_>,
) -> Result<Vec<String>> {
    let git = Git::new(path);
    let refuse = |what: &str, e: &dyn std::fmt::Display| {
        Error::precondition(
            format!(
                "cannot prove task {} holds no {what}: {e}; nothing was changed",
                task.name
            ),
            vec![format!("git -C {} status", path.display())],
        )
    };
    let dirty = safety::dirty_files(&git).map_err(|e| refuse("uncommitted work", &e))?;
    let base: Vec<&str> = task.base_oid.iter().map(String::as_str).collect();
    let tips: &[&str] = if branch_exists {
        &["HEAD", &task.branch]
    } else {
        &["HEAD"]
    };
    // Most teardowns are proven without walking history: nothing was committed (the tips are
    // the base) or everything was pushed (the tips are remote-tracking tips).
    let landed = |oid: Option<String>| {
        oid.is_some_and(|o| {
            Some(&o) == task.base_oid.as_ref() || repo.is_tip_under(&o, &["refs/remotes/"])
        })
    };
    let branch_tip = branch_exists.then(|| repo.ref_oid(&format!("refs/heads/{}", task.branch)));
    let unlanded = if landed(safety::head_oid(repo, path)) && branch_tip.is_none_or(landed) {
        vec![]
    } else {
        safety::commits_only_in(&git, tips, &["--remotes"], &base)
            .map_err(|e| refuse("unlanded commits", &e))?
    };
    let branchless = if safety::head_is_on_a_ref(repo, path) {
        vec![]
    } else {
        safety::commits_only_in(&git, &["HEAD"], &["--branches", "--remotes", "--tags"], &[])
            .map_err(|e| refuse("commits on no branch", &e))?
    };
    if !branchless.is_empty() {
        return Err(Error::precondition(
            format!(
                "task {} has commits on no branch, which teardown would lose:\n{}",
                task.name,
                indent(&branchless)
            ),
            vec![format!(
                "git -C {} branch rescue/{} HEAD   # keep them, then teardown again",
                path.display(),
                task.name
            )],
        ));
    }
    let force = opts.force;
    let unlanded = if force || opts.keep_unpushed {
        vec![]
    } else {
        unlanded
    };
    if !force && (!dirty.is_empty() || !unlanded.is_empty()) {
        let mut message = format!(
            "task {} has work that is not landed; nothing was changed",
            task.name
        );
        if !dirty.is_empty() {
            message.push_str(&format!("\nuncommitted or untracked:\n{}", indent(&dirty)));
        }
        if !unlanded.is_empty() {
            message.push_str(&format!(
                "\ncommits on no remote-tracking branch and not in the base:\n{}",
                indent(&unlanded)
            ));
        }
        return Err(Error::precondition(
            message,
            vec![
                format!(
                    "git -C {} push -u origin {}   # land the commits",
                    path.display(),
                    task.branch
                ),
                format!(
                    "git hand teardown {} --force   # discard uncommitted changes; commits stay on {}",
                    task.name, task.branch
                ),
            ],
        ));
    }
    Ok(dirty)
}

/// With `--force`, discards uncommitted changes. Ignored files (the build cache) survive:
/// `clean` runs without -x.
fn discard(path: &Path) -> Result<()> {
    let git = Git::new(path);
    git.run(&["reset", "--hard", "--quiet"])?;
    git.run(&["clean", "-d", "--force", "--quiet"])?;
    Ok(())
}

/// The intent transaction: the slot tenure must still be the task's (else `None`: the slot is
/// someone else's now and nothing on disk may be touched). An expired tenure is taken back
/// first (a new tenure for the same holder, so no spawn can take the slot over while teardown
/// works in it, and the old credential is stale from here on). Records `tearing-down`. Its fsync
/// runs while git switches the slot.
fn claim(ledger: &mut Ledger, task: &Task) -> Result<(Option<Task>, PendingSync)> {
    let slot = Resource::worktree(task.slot_path.clone().unwrap_or_default());
    Ok(ledger.write_syncing_meanwhile(|tx| {
        let view = tx.view();
        let Some(held) = view.held(&slot)? else {
            return Ok(None);
        };
        let ours = match &task.lease_id {
            Some(id) => held.lease_id == *id,
            // A row from an older ledger has no lease id: fall back to the holder.
            None => held.holder == task.holder,
        };
        if !ours {
            return Ok(None);
        }
        if !held.is_live(tx.now()) {
            let Acquire::Acquired { tenure, .. } = tx.acquire(&slot, &task.holder, None)? else {
                return Ok(None);
            };
            tx.set_task_lease(task.id, &slot.key, &tenure.lease_id)?;
        }
        tx.set_task_state(task.id, TaskState::TearingDown, "intent", Some(me()))?;
        view.task(task.id)
    })?)
}

fn indent(lines: &[String]) -> String {
    let shown: Vec<String> = lines.iter().take(20).map(|l| format!("  {l}")).collect();
    let more = lines.len().saturating_sub(20);
    if more > 0 {
        format!("{}\n  ... and {more} more", shown.join("\n"))
    } else {
        shown.join("\n")
    }
}

/// Releases the slot tenure by its lease id (never another tenure of the slot).
fn release_slot(ledger: &mut Ledger, task: &Task) -> Result<()> {
    let slot = Resource::worktree(task.slot_path.clone().unwrap_or_default());
    ledger.write_relaxed(|tx| {
        match &task.lease_id {
            Some(id) => tx.release(&slot, By::Lease(id))?,
            None => tx.release(&slot, By::Holder(&task.holder))?,
        };
        tx.set_task_step(task.id, "slot-released")
    })?;
    Ok(())
}

/// Releases the issue lease (by lease id) and marks the task done, in one transaction.
pub fn finish(ledger: &mut Ledger, task: &Task, reason: &str) -> Result<Task> {
    Ok(ledger.write_relaxed(|tx| {
        if let Some(id) = &task.issue_lease_id
            && let Some(issue) = tx.view().tenure(id)?
        {
            tx.release(&issue.resource, By::Lease(id))?;
        }
        tx.mark_task_done(task.id, reason)?;
        let res = Resource::worktree(task.slot_path.clone().unwrap_or_default());
        tx.log(
            EventKind::TaskDone,
            &res,
            None,
            Some(&format!("task {} ({reason})", task.name)),
        )?;
        Ok(tx.view().task(task.id)?.unwrap_or_else(|| task.clone()))
    })?)
}
