//! What must be proven before git-hand reuses or frees a slot: it is clean (tracked and
//! untracked), it holds no commit that would be lost, and no process sits inside it.
//! Anything that cannot be proven counts as unsafe: the caller skips the slot, never resets it.

use std::path::Path;

use crate::git::status::dirty_files;
use crate::git::{Git, GitError, Repo};
use crate::platform::procs::Scan;

/// Commits reachable from `tips` and from none of `--branches --remotes --tags` nor `also`:
/// work that exists only in this slot. Oldest last, as `oid subject`.
pub(crate) fn commits_only_in(
    git: &Git,
    tips: &[&str],
    refs: &[&str],
    also: &[&str],
) -> Result<Vec<String>, GitError> {
    let mut args: Vec<&str> = vec!["log", "--format=%h %s"];
    args.extend(tips);
    args.push("--not");
    args.extend(refs);
    args.extend(also);
    args.push("--");
    let out = git.run(&args)?;
    Ok(out.lines().map(str::to_string).collect())
}

/// Why a slot may not be reused, or nothing when its reuse is proven safe. `repo` is the
/// repository the slot belongs to (its refs prove most slots hold no stray commit).
pub(crate) fn reuse_blockers(scan: Scan, repo: &Repo, path: &Path) -> Vec<String> {
    Probe::run(scan, path).blockers(repo, path)
}

/// The part of the proof that needs no repository handle: whether the slot is a worktree on
/// disk, what `git status` reports and which processes sit inside. It may run on another
/// thread; spawn runs it while its intent transaction commits.
pub(crate) struct Probe {
    on_disk: bool,
    dirty: Result<Vec<String>, GitError>,
    occupants: std::io::Result<Vec<crate::ops::pool::procs::Occupant>>,
}

impl Probe {
    pub fn run(scan: Scan, path: &Path) -> Self {
        // A symlink is never followed: what it leads to is not the slot (see `blockers`).
        let real_dir = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir());
        if !real_dir || !crate::git::link::has_git_file(path) {
            return Self {
                on_disk: false,
                dirty: Ok(vec![]),
                occupants: Ok(vec![]),
            };
        }
        Self {
            on_disk: true,
            dirty: dirty_files(&Git::new(path)),
            occupants: crate::ops::pool::procs::occupants(scan, path),
        }
    }

    /// A probe that did not happen (its thread died): proves nothing, so the slot is unsafe.
    pub fn lost() -> Self {
        Self {
            on_disk: true,
            dirty: Ok(vec![]),
            occupants: Err(std::io::Error::other("the probe did not finish")),
        }
    }

    /// The rest of the proof (no commit only this slot holds), and every reason found.
    pub(crate) fn blockers(self, repo: &Repo, path: &Path) -> Vec<String> {
        if let Err(e) = crate::ops::pool::slot::prove(&repo.loc.common_dir, path)
            && !e.is_gone()
        {
            return vec![crate::ops::pool::slot::sets_aside(&e)];
        }
        if !self.on_disk {
            return vec!["not a linked worktree on disk".into()];
        }
        let mut why = vec![];
        match self.dirty {
            Ok(files) if files.is_empty() => {}
            Ok(files) => why.push(format!(
                "{} uncommitted or untracked file(s), e.g. {}",
                files.len(),
                files[0]
            )),
            Err(e) => why.push(format!("cannot prove it is clean: {e}")),
        }
        let walk = || {
            if repo.worktree_head_is_on_a_ref(path) {
                return Ok(vec![]);
            }
            let git = Git::new(path);
            commits_only_in(&git, &["HEAD"], &["--branches", "--remotes", "--tags"], &[])
        };
        match walk() {
            Ok(commits) if commits.is_empty() => {}
            Ok(commits) => why.push(format!(
                "{} commit(s) on no branch, e.g. {}",
                commits.len(),
                commits[0]
            )),
            Err(e) => why.push(format!("cannot prove it holds no unlanded commit: {e}")),
        }
        match self.occupants {
            Ok(procs) if procs.is_empty() => {}
            Ok(procs) => why.push(format!(
                "process {} ({}) is inside it",
                procs[0].pid,
                crate::shown::shown(&procs[0].command)
            )),
            Err(e) => why.push(format!("cannot prove no process is inside it: {e}")),
        }
        why
    }
}
