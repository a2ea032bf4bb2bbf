//! Why the pool could not give, lock, check or set up a slot: the facts of each case. The
//! message says what is still true; the exit code and the way out are `cli`'s
//! (`cli::way_out`).

use std::path::PathBuf;

use super::slot::NotTheSlot;
use crate::ops::Kind;

#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// Neither `HOME` nor `XDG_DATA_HOME` is set, and no `hand.root`.
    #[error("cannot tell where the pool lives: neither HOME nor XDG_DATA_HOME is set")]
    NoRoot,
    /// The pool's directory for this repository cannot be made.
    #[error("cannot create the pool directory {}: {reason}", dir.display())]
    CannotCreateDir { dir: PathBuf, reason: String },
    /// A directory or file git-hand set out to remove and could not (`what` says what it is,
    /// after its path: ", a half-written worktree admin dir").
    #[error("cannot remove {}{what}: {reason}", path.display())]
    CannotRemove {
        path: PathBuf,
        what: &'static str,
        reason: String,
    },
    /// The lock git-hand takes around `git worktree` list changes (`lock`, in `dir`).
    #[error("cannot lock {} ({reason}); nothing was changed", lock.display())]
    WorktreeListUnlockable {
        lock: PathBuf,
        dir: PathBuf,
        reason: String,
    },
    /// One slot's lock (`lock`, in `dir`).
    #[error(
        "cannot lock slot {} ({}: {reason}); nothing was changed in it",
        slot.display(),
        lock.display()
    )]
    SlotUnlockable {
        slot: PathBuf,
        lock: PathBuf,
        dir: PathBuf,
        reason: String,
    },
    /// The lease this process acts under is no longer the slot's held tenure: the slot is free
    /// (`now_held_by` is `None`) or another holder's (holder, token).
    #[error(
        "slot {} is no longer held by lease {lease} ({}); git-hand stopped before changing it",
        slot.display(),
        held_by(now_held_by)
    )]
    NoLongerHeld {
        slot: PathBuf,
        /// The lease id, shortened as messages show it.
        lease: String,
        now_held_by: Option<(String, i64)>,
    },
    /// A reset left files that are still not clean.
    #[error("slot {} is still not clean after a reset: {}", slot.display(), dirty.join(", "))]
    NotCleanAfterReset { slot: PathBuf, dirty: Vec<String> },
    /// The directory at a slot's path is not the slot git-hand made: nothing in it is touched.
    #[error("{0}; it is not the slot git-hand made there, so nothing in it was touched")]
    NotTheSlot(NotTheSlot),
    /// The stamp in a worktree's admin dir cannot be read (`reason`).
    #[error("{reason}; this worktree's lease cannot be checked")]
    StampUnreadable { stamp: PathBuf, reason: String },
    /// The ledger a stamp names is gone: nothing can be checked, nothing is lost.
    #[error(
        "this worktree was leased from the ledger {ledger}, which is gone, so its lease cannot be \
         checked; your commits stay in this worktree"
    )]
    LedgerGone { ledger: String, stamp: PathBuf },
    /// The repository's hooks directory (`hooks_dir`) could not be copied into the slot.
    #[error(
        "cannot copy the hooks directory {} into the slot ({}): {reason}",
        hooks_dir.display(),
        dest.display()
    )]
    HooksNotCopied {
        hooks_dir: PathBuf,
        dest: PathBuf,
        slot: PathBuf,
        reason: String,
    },
    /// `core.hooksPath` is relative (`rel`) and a copy of `hooks_dir` would be untracked in the
    /// slot, which would then never be clean again: nothing was copied.
    #[error(
        "core.hooksPath is {rel}, relative, so each worktree runs hooks from its own {rel}; the \
         slot has none, and a copy of {} would be untracked there (git does not ignore it), so \
         the slot would never be clean again: nothing was copied (fix: add /{rel}/ to \
         .gitignore and commit it, or make core.hooksPath an absolute path shared by every \
         worktree)",
        hooks_dir.display()
    )]
    RelativeHooksPathUntracked { rel: String, hooks_dir: PathBuf },
}

impl PoolError {
    pub fn kind(&self) -> Kind {
        match self {
            PoolError::NoRoot => Kind::Usage,
            PoolError::NoLongerHeld { .. }
            | PoolError::NotTheSlot(_)
            | PoolError::RelativeHooksPathUntracked { .. } => Kind::Precondition,
            PoolError::CannotCreateDir { .. }
            | PoolError::CannotRemove { .. }
            | PoolError::WorktreeListUnlockable { .. }
            | PoolError::SlotUnlockable { .. }
            | PoolError::NotCleanAfterReset { .. }
            | PoolError::StampUnreadable { .. }
            | PoolError::LedgerGone { .. }
            | PoolError::HooksNotCopied { .. } => Kind::Failed,
        }
    }
}

fn held_by(holder: &Option<(String, i64)>) -> String {
    match holder {
        None => "it is free".into(),
        Some((who, token)) => format!("{who} holds it with token {token}"),
    }
}

/// The error for a directory or file (`path`; `what` it is, after its path) git-hand set out to
/// remove and could not.
pub(crate) fn cannot_remove(
    path: &std::path::Path,
    what: &'static str,
    e: std::io::Error,
) -> PoolError {
    PoolError::CannotRemove {
        path: path.to_path_buf(),
        what,
        reason: e.to_string(),
    }
}
