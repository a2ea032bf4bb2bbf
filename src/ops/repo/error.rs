//! Why a repository's base, approvals or settings stopped a verb: the facts of each case. The
//! message says what is still true; the exit code is the error's [`kind`](RepoError::kind), the
//! commands that get the user out of it are `cli`'s (`cli::way_out`).

use std::path::PathBuf;

use crate::ops::Kind;

#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    /// `--base` names no commit.
    #[error("--base {rev:?} does not name a commit in this repository")]
    BaseNotACommit { rev: String },
    /// No `origin/HEAD`, no `init.defaultBranch`, no `main` or `master`.
    #[error(
        "cannot tell the default branch: no origin/HEAD, no init.defaultBranch, no main or master"
    )]
    NoDefaultBranch,
    /// The default branch has no commit yet.
    #[error("the default branch {branch} has no commit yet")]
    DefaultBranchUnborn { branch: String },
    /// The repository has no commit at all (a fresh `git init`).
    #[error("this repository has no commits yet: make a first commit, then spawn")]
    NoCommits,
    /// Neither `HOME` nor `XDG_STATE_HOME` is set, so the approvals have no place.
    #[error(
        "cannot tell where approvals of .handconfig live: neither HOME nor XDG_STATE_HOME is set"
    )]
    NoApprovalsDir,
    /// The approval record of `file` could not be read (`reason`).
    #[error("cannot read the approval of {}: {reason}", file.display())]
    ApprovalUnreadable { file: PathBuf, reason: String },
    /// The approval could not be recorded in `record` (`reason`).
    #[error("cannot record the approval in {}: {reason}", record.display())]
    ApprovalUnwritten { record: PathBuf, reason: String },
    /// A setup command would run from a `.handconfig` (`file`, as shown) the user has not
    /// approved in its current content; `changed`: the approved blob and the current one (both
    /// short), when an earlier content was approved.
    #[error(
        "{file} asks to run {}, and {}; nothing was run and nothing was changed",
        commands.join("; "),
        match changed {
            None => "you have not trusted it".to_string(),
            Some((then, now)) => format!(
                "it changed since you trusted it (blob {then} then, {now} now)"
            ),
        }
    )]
    Untrusted {
        file: String,
        commands: Vec<String>,
        changed: Option<(String, String)>,
        skip: Option<Skip>,
    },
    /// `hand.requireCredential` could not be read while marking the slots (its message).
    #[error("{0}")]
    RequireCredentialUnread(crate::git::ConfigError),
    /// The slots' marker for `hand.requireCredential` could not be written.
    #[error("cannot mark the slots for hand.requireCredential: {reason}")]
    CannotMarkSlots { reason: String },
}

/// The verb that goes on without the setup commands an untrusted `.handconfig` asks for, where
/// the caller has one to offer: `--no-setup` of spawn or teardown of the task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skip {
    Spawn { task: String },
    Teardown { task: String },
}

impl RepoError {
    pub fn kind(&self) -> Kind {
        match self {
            RepoError::BaseNotACommit { .. }
            | RepoError::NoDefaultBranch
            | RepoError::DefaultBranchUnborn { .. }
            | RepoError::NoCommits
            | RepoError::NoApprovalsDir => Kind::Usage,
            RepoError::Untrusted { .. } => Kind::Precondition,
            RepoError::ApprovalUnreadable { .. }
            | RepoError::ApprovalUnwritten { .. }
            | RepoError::RequireCredentialUnread(_)
            | RepoError::CannotMarkSlots { .. } => Kind::Failed,
        }
    }
}
