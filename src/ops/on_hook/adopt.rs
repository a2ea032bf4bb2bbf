//! Worktrees made by a plain `git worktree add`: the post-checkout hook registers them in the
//! ledger and, when `hand.adoptWorktrees` is true, leases each as a task named after its
//! directory, so its pushes are fenced like a slot's. An adopted worktree is the user's, not the
//! pool's: it is never reused or pruned.

use std::path::{Path, PathBuf};

use super::OnHookError;
use crate::git::Repo;
use crate::ledger::{
    Acquire, EventKind, Ledger, NewTask, Resource, Step, TaskState, Tenure, WorktreeKey,
};
use crate::ops::{Context, Result, pool::stamp};

/// A worktree made by a plain `git worktree add`, registered in the ledger (and, with
/// `hand.adoptWorktrees`, leased as task `adopted_as`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registered {
    pub path: PathBuf,
    pub adopted_as: Option<String>,
}

/// Registers (and maybe leases) the worktree; `None` when its path is leased already.
pub fn register(ctx: &Context, repo: &Repo, workdir: &Path) -> Result<Option<Registered>> {
    let adopt = crate::ops::repo::settings::Settings::load(repo)?.adopt_worktrees()?;
    ctx.repo_to_record()?;
    let mut ledger = ctx.open_ledger()?;
    if !adopt {
        record_only(&mut ledger, repo, workdir)?;
        return Ok(Some(Registered {
            path: workdir.to_path_buf(),
            adopted_as: None,
        }));
    }
    let Some((name, tenure)) = lease_as_task(ctx, &mut ledger, repo, workdir)? else {
        return Ok(None);
    };
    stamp_adopted(&ledger, repo, &name, tenure)?;
    Ok(Some(Registered {
        path: workdir.to_path_buf(),
        adopted_as: Some(name),
    }))
}

/// With `hand.adoptWorktrees` off: the repository is known and the new worktree is in the
/// event log, nothing is leased.
fn record_only(ledger: &mut Ledger, repo: &Repo, workdir: &Path) -> Result<()> {
    let common = &repo.loc.common_dir;
    let res = Resource::worktree_on(ledger.machine(), &WorktreeKey::from_canonical(workdir));
    ledger.write(|tx| {
        tx.ensure_repo(common)?;
        tx.log(
            EventKind::WorktreeAdded,
            &res,
            None,
            Some("registered (hand.adoptWorktrees is off)"),
        )
    })?;
    Ok(())
}

/// One transaction: leases the worktree and records it as an active task named after its
/// directory (made unique among open tasks). Returns the task's name and its tenure, or `None`
/// when someone else leases the path.
fn lease_as_task(
    ctx: &Context,
    ledger: &mut Ledger,
    repo: &Repo,
    workdir: &Path,
) -> Result<Option<(String, Tenure)>> {
    let key = WorktreeKey::from_canonical(workdir);
    let common = &repo.loc.common_dir;
    let res = Resource::worktree_on(ledger.machine(), &key);
    let holder = ctx.holder(None)?;
    let base = task_name_for(workdir);
    let branch = repo.head_branch().unwrap_or_else(|| "HEAD".into());
    let head = repo.head_oid().unwrap_or_default();
    let me = ctx.scan().me();
    let remote = crate::ops::fence::task_remote(repo);
    let taken = ledger.write(|tx| {
        let repo_row = tx.ensure_repo(common)?;
        let view = tx.view();
        // `git worktree add -f <dir> hand/B` checks out a live task's branch a second time:
        // adopting it would make a second open task on B's branch, whose pushes and commits the
        // fence would then take for B's own (issue 22 item 10). Not adopted, and said so.
        // (A worktree removed and added again at the same path is that task's own.)
        if let Some(owner) = view.open_task_on_branch(&repo_row.id, &branch)?
            && branch != "HEAD"
            && owner.slot_path.as_ref() != Some(&key)
        {
            return Ok(Err(owner));
        }
        let (tenure, fresh) = match tx.acquire(&res, &holder, None)? {
            Acquire::Acquired { tenure, fresh, .. } => (tenure, fresh),
            Acquire::Held(_) => return Ok(Ok(None)),
        };
        // The same holder already leases this path (the worktree was removed and added again):
        // that open task keeps it, and only the stamp is written again. Never two tasks on one
        // lease.
        if !fresh {
            let task = view.task_by_lease(&tenure.lease_id)?;
            return Ok(Ok(task
                .filter(|t| t.state != TaskState::Done)
                .map(|t| (t.name, tenure))));
        }
        let mut name = base.clone();
        let mut n = 2;
        // A name open already, or open but for case (which spawn refuses: one ref file on
        // macOS), gets the next variant.
        while view.open_task_ignoring_case(&repo_row.id, &name)?.is_some() {
            name = format!("{}-{n}", &base[..base.len().min(60)]);
            n += 1;
        }
        let task = tx.insert_task(&NewTask {
            repo_id: &repo_row.id,
            name: &name,
            slot_path: &key,
            lease_id: &tenure.lease_id,
            issue: None,
            issue_lease_id: None,
            branch: &branch,
            base_oid: &head,
            holder: &holder,
            pid: me.pid,
            pid_start: me.start,
            pid_ns: me.ns,
            step: Step::Active,
            remote: remote.as_deref(),
            base_ref: None,
        })?;
        tx.set_task_state(task.id, TaskState::Active, Step::Active, None)?;
        tx.log(
            EventKind::TaskSpawned,
            &res,
            Some(&tenure),
            Some(&format!("adopted worktree as task {name}")),
        )?;
        Ok(Ok(Some((name, tenure))))
    })?;
    taken.map_err(|owner| {
        OnHookError::BranchOfLiveTask {
            branch: owner.branch,
            owner: owner.name,
            slot_path: owner.slot_path.map(|p| p.to_string()),
        }
        .into()
    })
}

/// Writes the adopted worktree's stamp (and the `hand.requireCredential` marker), so a push
/// from it without the credential is judged by the tenure just taken. A failure leaves the
/// lease in place and says how to go on.
fn stamp_adopted(ledger: &Ledger, repo: &Repo, name: &str, tenure: Tenure) -> Result<()> {
    let stamped = stamp::Stamp {
        lease_id: tenure.lease_id,
        token: tenure.token,
        task: name.to_string(),
        ledger: ledger.place(),
    };
    let required = crate::ops::repo::settings::require_credential(repo)?;
    stamp::write_marked(&repo.loc.admin_dir, &stamped, required).map_err(|e| {
        OnHookError::AdoptedUnstamped {
            name: name.to_string(),
            reason: e.to_string(),
        }
        .into()
    })
}

/// A valid task name from a directory name: other characters become `-`, at most 64.
fn task_name_for(dir: &Path) -> String {
    let raw = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut name: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .take(64)
        .collect();
    while name.starts_with(['-', '.']) {
        name.remove(0);
    }
    if name.is_empty() {
        "worktree".into()
    } else {
        name
    }
}
