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
pub const LOCK_FILE: &str = "git-hand-worktrees.lock";

/// Held while the worktree list is being changed; released on drop.
#[derive(Debug)]
pub struct WorktreeListLock {
    _file: File,
}

impl WorktreeListLock {
    pub fn acquire(common_dir: &Path) -> std::io::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(common_dir.join(LOCK_FILE))?;
        file.lock()?;
        Ok(Self { _file: file })
    }
}
