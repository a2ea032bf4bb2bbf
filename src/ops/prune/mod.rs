//! `git hand prune`: remove free slots that hold nothing worth keeping. A dry run unless told
//! otherwise; every slot kept is listed with the reason, including a slot git itself refused to
//! remove (files appeared after prune looked): that is a kept slot, not a failure of prune.
//! `prune --branches` is [`branches`].

pub mod branches;

use std::path::Path;

use super::pool::{self, SlotInfo};
use super::{Context, Error, Result, pool::safety};
use crate::git::{Git, GitError};
use crate::hint::{Hint, say};
use crate::ledger::{EventKind, Ledger, WorktreeKey};

#[derive(Debug, Clone)]
pub struct PruneReport {
    /// Slots removed (or, in a dry run, that would be).
    pub removed: Vec<String>,
    /// Slots kept, and why.
    pub kept: Vec<Kept>,
    pub dry_run: bool,
}

/// A slot prune left in place.
#[derive(Debug, Clone)]
pub struct Kept {
    pub path: String,
    pub why: Vec<String>,
    /// The command that shows (or settles) what kept it, when there is one to run.
    pub hint: Option<Hint>,
}

impl Kept {
    fn new(path: String, why: Vec<String>) -> Self {
        Self {
            path,
            why,
            hint: None,
        }
    }
}

/// A slot about to be removed, for the CLI to show while git deletes it (a large one takes
/// seconds, ~15 s for a big checkout, and prune was silent all along).
#[derive(Debug, Clone, Copy)]
pub struct Removing<'a> {
    pub n: i64,
    pub path: &'a Path,
    /// Its files, counted only when someone listens (a walk of the slot).
    pub files: u64,
}

/// Whether `prune` removes what it would, or only says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Run {
    DryRun,
    Remove,
}

/// Removes (or, in a dry run, lists) the free slots that hold nothing worth keeping.
/// `progress`, when given, hears of each slot before git removes it.
pub fn prune(
    ctx: &Context,
    ledger: &mut Ledger,
    run: Run,
    progress: Option<&dyn Fn(Removing<'_>)>,
) -> Result<PruneReport> {
    let yes = run == Run::Remove;
    let repo = ctx.repo()?;
    let mut report = PruneReport {
        removed: vec![],
        kept: vec![],
        dry_run: !yes,
    };
    let Some(repo_id) = ctx.repo_id(ledger)? else {
        return Ok(report);
    };
    let (infos, now) = ledger.read(|v| Ok((pool::slots(v, &repo_id)?, v.now())))?;
    let git = repo.git();
    for info in infos {
        let why = keep_reasons(ctx.scan(), repo, &info, now);
        if !why.is_empty() {
            report.kept.push(Kept::new(info.slot.path.to_string(), why));
            continue;
        }
        if yes {
            let path = &info.slot.path;
            if let Some(progress) = progress {
                let files = count_files(path.as_path());
                let n = info.slot.n;
                progress(Removing {
                    n,
                    path: path.as_path(),
                    files,
                });
            }
            match remove_slot(&git, &repo.loc.common_dir, ledger, path, OnDisk::Present) {
                Ok(true) => {}
                Ok(false) => {
                    let why = vec!["it was leased while prune ran".into()];
                    report.kept.push(Kept::new(info.slot.path.to_string(), why));
                    continue;
                }
                Err(Error::Git(GitError::Failed { stderr, .. })) => {
                    report
                        .kept
                        .push(refused_by_git(info.slot.path.to_string(), &stderr));
                    continue;
                }
                Err(e) => return Err(e),
            }
        }
        report.removed.push(info.slot.path.to_string());
    }
    Ok(report)
}

/// The files under `dir`, symlinks not followed; what cannot be read is not counted (this is a
/// progress line, not a proof).
fn count_files(dir: &Path) -> u64 {
    let mut files = 0;
    let mut todo = vec![dir.to_path_buf()];
    while let Some(dir) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.file_type() {
                Ok(t) if t.is_dir() => todo.push(entry.path()),
                Ok(_) => files += 1,
                Err(_) => {}
            }
        }
    }
    files
}

/// A slot `git worktree remove` refused (a file appeared after prune proved it clean, say): it
/// stays a free slot of the pool, and prune goes on with the others. Git's reason is kept on
/// one line.
fn refused_by_git(path: String, stderr: &str) -> Kept {
    let reason = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let hint = Hint::run(format!("git -C {path} status"))
        .why(say("see what git found, then: ").hand("prune --yes"));
    Kept {
        why: vec![format!("git refused to remove it: {reason}")],
        hint: Some(hint),
        path,
    }
}

/// Why a slot must stay: leased, named by an open task, or holding work.
fn keep_reasons(
    scan: crate::platform::procs::Scan,
    repo: &crate::git::Repo,
    info: &SlotInfo,
    now: i64,
) -> Vec<String> {
    if let Some(t) = &info.held {
        return vec![if t.is_live(now) {
            format!("leased to {} (token {})", t.holder, t.token)
        } else {
            say("its lease expired but was not ended (")
                .hand("doctor --repair")
                .text(")")
                .into()
        }];
    }
    if let Some(task) = info.tasks.first() {
        return vec![format!("task {} is {}", task.name, task.state.to_string())];
    }
    let path = info.slot.path.as_path();
    if !path.exists() {
        return vec![];
    }
    safety::reuse_blockers(scan, repo, path)
}

/// Whether `remove_slot` expects the slot's directory to be there (prune) or gone (doctor).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnDisk {
    Present,
    Missing,
}

/// Unregisters and deletes a slot's worktree (git checks it is clean once more) and marks the
/// slot pruned; its resource and token history stay in the ledger. Returns whether it did.
///
/// The slot is retired in the ledger first, under the worktree-list lock: one transaction checks
/// that no tenure holds it and marks it pruned, so a spawn that chose it meanwhile either
/// claimed it before (and the slot is kept) or finds it pruned and picks another. A decision
/// taken from an older read must never delete a worktree that was leased since.
pub(crate) fn remove_slot(
    git: &Git,
    common: &Path,
    ledger: &mut Ledger,
    path: &WorktreeKey,
    expect: OnDisk,
) -> Result<bool> {
    // Lock order: the slot's, then the worktree list's.
    let _slot = super::pool::slot::SlotLock::acquire(common, path.as_path())?;
    let _lock = super::pool::slot::lock_worktree_list(common)?;
    if (expect == OnDisk::Missing) == path.as_path().exists() {
        return Ok(false); // The disk changed since we looked: leave it to the next run.
    }
    let res = crate::ledger::Resource::worktree_on(ledger.machine(), path);
    let retired = ledger.write(|tx| {
        let removed = tx.remove_free_slot(path)?;
        if removed {
            tx.log(EventKind::SlotPruned, &res, None, None)?;
        }
        Ok(removed)
    })?;
    if !retired {
        return Ok(false);
    }
    // Unlocking an unlocked worktree fails harmlessly; `remove` (or `prune`) must succeed.
    let _ = git.output(&["worktree", "unlock", path.as_str()]);
    let removed = match expect {
        OnDisk::Present => git.run(&["worktree", "remove", path.as_str()]),
        OnDisk::Missing => git.run(&["worktree", "prune"]),
    };
    if let Err(e) = removed {
        // git kept the worktree (it found changes, say): so does the ledger.
        ledger.write(|tx| tx.restore_slot(path))?;
        let _ = git.output(&[
            "worktree",
            "lock",
            "--reason",
            "git-hand slot",
            path.as_str(),
        ]);
        return Err(e.into());
    }
    if let Some(parent) = Path::new(path).parent() {
        // The `<n>` directory held only this worktree; a non-empty one is left alone.
        let _ = std::fs::remove_dir(parent);
    }
    Ok(true)
}
