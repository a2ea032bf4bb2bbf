//! A lock that serializes changes to a repository's list of worktrees.
//!
//! `git worktree add` is not safe to run concurrently: while one process has created
//! `.git/worktrees/<id>/` but not yet written its `commondir`, another `worktree add` listing the
//! worktrees fails with "failed to read .git/worktrees/<id>/commondir". Eight parallel spawns hit
//! it. git-hand holds this lock (an advisory `flock` on a file in the common dir) only while it
//! registers, unlocks or removes a worktree; the slow part, checking out the files, runs outside.

use std::fs::File;
use std::path::Path;

/// The lock file, in the common dir.
pub(crate) const LOCK_FILE: &str = "git-hand-worktrees.lock";

/// Held while the worktree list is being changed; released on drop.
#[derive(Debug)]
#[must_use = "the worktree list is locked only while this lives"]
pub struct WorktreeListLock {
    _file: File,
}

impl WorktreeListLock {
    pub fn acquire(common_dir: &Path) -> std::io::Result<Self> {
        Ok(Self {
            _file: hold(&common_dir.join(LOCK_FILE))?,
        })
    }
}

/// Waits for an exclusive advisory lock on the file at `path` (created if missing, never
/// truncated) and returns it open: the lock lasts until the file is dropped or the process
/// dies, so a crash never leaves it taken.
pub fn hold(path: &Path) -> std::io::Result<File> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    file.lock()?;
    Ok(file)
}
