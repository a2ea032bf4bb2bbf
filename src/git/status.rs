//! What `git status` says of a worktree, read the way git-hand's proofs need it.

use super::{Git, GitError};

/// Files `git status` reports (modified, staged, untracked; ignored files are build cache and
/// are kept), as `XY path` lines.
pub(crate) fn dirty_files(git: &Git) -> Result<Vec<String>, GitError> {
    // --no-optional-locks: a plain `git status` refreshes the index under index.lock, and a
    // concurrent spawn checking this slot while another switches it made that switch fail
    // ("index.lock: File exists"), measured with 8 parallel spawns.
    let out = git.run(&[
        "--no-optional-locks",
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        "--ignore-submodules=none",
    ])?;
    let mut files = vec![];
    let mut entries = out.split('\0').filter(|e| !e.is_empty());
    while let Some(entry) = entries.next() {
        // A rename is followed by its source path as a separate entry.
        if entry.starts_with('R') || entry.starts_with('C') {
            entries.next();
        }
        files.push(entry.to_string());
    }
    Ok(files)
}
