//! Why a hook's decision could not be made, or adoption could not lease: the facts of each
//! case. The message says what is still true; the exit code is the error's
//! [`kind`](OnHookError::kind), the commands that get the user out of it are `cli`'s
//! (`cli::way_out`).

use std::path::PathBuf;

use crate::ops::Kind;
use crate::ops::repo::settings::BadPattern;

#[derive(Debug, thiserror::Error)]
pub enum OnHookError {
    /// A `hand.requireLease` value of the served repository (`common`) matches no branch: the
    /// server refuses every push until it is fixed (it fails closed).
    #[error("{bad}; every push is refused until it is fixed")]
    BadRequireLease { bad: BadPattern, common: PathBuf },
    /// No ledger where the server's own `hand.ledger` says (`place`, from `source`).
    #[error(
        "there is no ledger at {place} (from {source_of}); point it at the clients' ledger (the \
         team ledger's URL, or the SQLite file they share)"
    )]
    NoServerLedger {
        place: String,
        source_of: &'static str,
        common: PathBuf,
    },
    /// What git gave the hook on its standard input does not parse (`why`).
    #[error("{why}")]
    Unread { why: String },
    /// A pushed ref's symbolic-ref chain could not be resolved (`reason`).
    #[error("it cannot tell which branch the push updates: {reason}")]
    UnresolvedRef { reason: String },
    /// The adopted worktree's branch is a live task's: one branch is never two tasks'.
    #[error(
        "not adopted: branch {branch} is live task {owner}'s{}, and one branch is never two \
         tasks'; this worktree is not leased (work here on a branch of its own: git switch -c \
         <branch>)",
        slot_path.as_ref().map(|p| format!(" (in {p})")).unwrap_or_default()
    )]
    BranchOfLiveTask {
        branch: String,
        owner: String,
        slot_path: Option<String>,
    },
    /// The worktree was leased as task `name`, but its stamp could not be written (`reason`).
    #[error("leased this worktree as task {name} but could not write its stamp ({reason})")]
    AdoptedUnstamped { name: String, reason: String },
}

impl OnHookError {
    pub fn kind(&self) -> Kind {
        match self {
            OnHookError::BranchOfLiveTask { .. } => Kind::Precondition,
            OnHookError::BadRequireLease { .. }
            | OnHookError::NoServerLedger { .. }
            | OnHookError::UnresolvedRef { .. }
            | OnHookError::Unread { .. }
            | OnHookError::AdoptedUnstamped { .. } => Kind::Failed,
        }
    }
}
