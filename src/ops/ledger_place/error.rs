//! Why a ledger could not be copied, or would not be created where one is missing: the facts of
//! each case. The message says what is still true; the exit code is the error's
//! [`kind`](PlaceError::kind), the commands that get the user out of it are `cli`'s
//! (`cli::way_out`).

use std::path::{Path, PathBuf};

use crate::ledger::Conflict;
use crate::ops::Kind;

#[derive(Debug, thiserror::Error)]
pub enum PlaceError {
    /// `ledger copy` where the configured ledger is already the team ledger at `url`.
    #[error(
        "the configured ledger is already the team ledger {url}: there is no file ledger to copy"
    )]
    CopyFromServer { url: String },
    /// `ledger copy` with no file ledger at `from` (`to`: the team ledger, without password).
    #[error("there is no ledger at {}: nothing to copy; nothing was changed", from.display())]
    NothingToCopy { from: PathBuf, to: String },
    /// The team ledger `to` has what is in the copy's way: nothing was changed on either side.
    #[error(
        "cannot copy the ledger into the team ledger: {}; nothing was changed (the ledger {} is \
         as it was)",
        conflicts.iter().map(conflict_text).collect::<Vec<_>>().join("; "),
        from.display()
    )]
    CopyRefused {
        conflicts: Vec<Conflict>,
        from: PathBuf,
        to: String,
    },
    /// The ledger file is missing, but the disk says it existed (`traces`, summed up).
    #[error(
        "the ledger {} is missing, but {traces}; a new ledger would issue their tokens again from \
         1 and leave their pool behind, so git-hand did not create one; nothing was changed",
        ledger.display()
    )]
    LedgerMissing { ledger: PathBuf, traces: String },
}

impl PlaceError {
    pub fn kind(&self) -> Kind {
        match self {
            PlaceError::CopyFromServer { .. } => Kind::Usage,
            PlaceError::NothingToCopy { .. }
            | PlaceError::CopyRefused { .. }
            | PlaceError::LedgerMissing { .. } => Kind::Precondition,
        }
    }
}

fn conflict_text(c: &Conflict) -> String {
    match c {
        Conflict::Held {
            key,
            holder,
            machine,
        } => match machine {
            Some(m) => format!("{key} is held on the team ledger by {holder} on machine {m}"),
            None => format!("{key} is held on the team ledger by {holder}"),
        },
        Conflict::TokensAhead { key, team, ours } => format!(
            "the team ledger has handed out token {team} of {key}, past this ledger's live \
             lease (token {ours}), which therefore cannot keep its token there"
        ),
        Conflict::TaskOpen {
            task,
            what,
            holder,
            machine,
        } => format!(
            "{what} (of task {task}) is open on the team ledger on machine {machine}, held by \
             {holder}"
        ),
        Conflict::Unsettled { task, state } => {
            format!("task {task} is {state}, neither active nor done")
        }
        Conflict::SlotNumber {
            repo,
            n,
            ours,
            theirs,
            pruned,
        } => format!(
            "slot {n} of this machine's repository {} is {theirs} on the team ledger{}, not \
             {ours} as here (a repository's slot numbers are unique there)",
            worktree_of(repo),
            if *pruned { " (pruned)" } else { "" }
        ),
    }
}

/// The main worktree of the repository whose common dir is `common_dir`, as a user names it
/// (`/src/app` for `/src/app/.git`).
pub(crate) fn worktree_of(common_dir: &str) -> String {
    let dir = Path::new(common_dir);
    match dir.file_name() {
        Some(name) if name == ".git" => dir.parent().unwrap_or(dir).display().to_string(),
        _ => common_dir.to_string(),
    }
}
