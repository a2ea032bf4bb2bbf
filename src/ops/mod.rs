//! Operations: the logic behind each verb. An operation takes plain options, talks to the
//! ledger and to git, and returns data; it never sees clap and never prints.

pub mod claude;
pub mod context;
pub mod doctor;
pub mod fence;
pub mod lease;
pub mod ledger_place;
pub mod on_hook;
pub mod pool;
pub mod prune;
pub mod repo;
pub mod task;

pub use context::Context;

use crate::git::{GitError, InspectError};
use crate::hint::Hint;
use crate::ledger::LedgerError;

/// Which kind of failure an error is, as the exit-code table (docs/cli.md) sorts them: 0 ok,
/// 1 refused or failed, 2 usage, 3 precondition. A fact of each typed error (its `kind()`);
/// `cli` turns it into the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Failed = 1,
    Usage = 2,
    Precondition = 3,
}

crate::word::words!(Kind: "error kind");

/// Why an operation could not do what was asked. Each variant carries what the user needs to
/// get out of it, and its kind, which the CLI turns into the exit code.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Inspect(#[from] InspectError),
    /// A `hand.*` value that does not parse: a usage error (exit 2), before anything is written;
    /// `cli` says which command fixes the value and where to find it.
    #[error("{0}; nothing was changed")]
    Config(Box<crate::git::ConfigError>),
    /// A task that could not be found or renewed. Each typed error below carries its facts and
    /// its `kind()`; `cli/way_out.rs` gives its way out. (Boxed: see `typed_errors!`.)
    #[error(transparent)]
    Task(Box<task::TaskError>),
    /// A teardown that stopped.
    #[error(transparent)]
    Teardown(Box<task::TeardownError>),
    /// A name or path the user gave that git-hand refuses (exit 2).
    #[error(transparent)]
    Name(Box<repo::names::NameError>),
    /// A slot the pool could not give, lock, check or set up.
    #[error(transparent)]
    Pool(Box<pool::PoolError>),
    /// A spawn that created nothing, or a failed one and what it left.
    #[error(transparent)]
    Spawn(Box<task::spawn::SpawnError>),
    /// A Claude Code hook that could not lease, remove or set up a worktree.
    #[error(transparent)]
    Claude(Box<claude::ClaudeError>),
    /// Doctor could not back up, rebuild or repair.
    #[error(transparent)]
    Doctor(Box<doctor::DoctorError>),
    /// A hook's decision that could not be made, or an adoption that could not lease.
    #[error(transparent)]
    OnHook(Box<on_hook::OnHookError>),
    /// An operation that could not tell where it runs: no repository, no ledger place, no
    /// machine id, or a server's ledger setting refused.
    #[error(transparent)]
    Context(Box<context::ContextError>),
    /// A ledger copy that was refused, or a missing ledger that is not created again.
    #[error(transparent)]
    Place(Box<ledger_place::PlaceError>),
    /// A base, an approval or a setting of the repository that stopped a verb.
    #[error(transparent)]
    Repo(Box<repo::RepoError>),
    /// A ledger, git or inspection error with the commands that get the user out of it: the
    /// wrapped error keeps its kind (a busy ledger stays a precondition), its message and its
    /// source chain.
    #[error(transparent)]
    Hinted(Box<Hinted>),
}

/// An error and the commands that get the user out of it. It says what the error says and its
/// source is the error's own source: the hints are data, not a link of the chain, so a printer
/// that walks the chain says nothing twice.
#[derive(Debug)]
pub struct Hinted {
    pub error: Error,
    pub hints: Vec<Hint>,
}

impl std::fmt::Display for Hinted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for Hinted {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.error.source()
    }
}

impl Error {
    /// Whether this is a precondition the operation itself refused on (exit 3): something else
    /// holds what was asked for, or going on is unsafe. Not a ledger's, git's or an inspection's
    /// error, whatever their exit code, nor one with hints added ([`Error::Hinted`]).
    pub fn is_precondition(&self) -> bool {
        self.typed_kind() == Some(Kind::Precondition)
    }

    /// Adds the command that gets the user out of this error, whatever its variant.
    pub(crate) fn with_hint(mut self, hint: Hint) -> Self {
        if let Error::Hinted(hinted) = &mut self {
            hinted.hints.push(hint);
            return self;
        }
        Error::Hinted(Box::new(Hinted {
            error: self,
            hints: vec![hint],
        }))
    }
}

/// `From` each room's typed error (boxed, so an `Error` stays small on the happy path), and
/// `typed_kind`, the kind of whichever typed error this is: one list, so no variant is left out
/// of either.
macro_rules! typed_errors {
    ($($variant:ident($ty:ty)),+ $(,)?) => {
        $(
            impl From<$ty> for Error {
                fn from(e: $ty) -> Self {
                    Error::$variant(Box::new(e))
                }
            }
        )+

        impl Error {
            /// The kind of a room's typed error (the exit code it gives); `None` for every
            /// other variant (a ledger's, git's, an inspection's, a bad setting's, a hinted one).
            pub fn typed_kind(&self) -> Option<Kind> {
                match self {
                    $(Error::$variant(e) => Some(e.kind()),)+
                    _ => None,
                }
            }
        }
    };
}

typed_errors! {
    Task(task::TaskError),
    Teardown(task::TeardownError),
    Name(repo::names::NameError),
    Pool(pool::PoolError),
    Spawn(task::spawn::SpawnError),
    Claude(claude::ClaudeError),
    Doctor(doctor::DoctorError),
    OnHook(on_hook::OnHookError),
    Context(context::ContextError),
    Place(ledger_place::PlaceError),
    Repo(repo::RepoError),
}

impl From<crate::git::ConfigError> for Error {
    fn from(e: crate::git::ConfigError) -> Self {
        Error::Config(Box::new(e))
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    fn ledger_open_error() -> LedgerError {
        LedgerError::Open {
            path: "/nowhere/ledger.db".into(),
            source: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        }
    }

    #[test]
    fn a_hint_on_a_wrapped_error_keeps_its_message_and_its_source_chain() {
        let bare = Error::from(ledger_open_error());
        let hinted = Error::from(ledger_open_error()).with_hint(Hint::hand("doctor"));
        assert_eq!(hinted.to_string(), bare.to_string());
        // The hint adds no link of its own: the chain is the wrapped error's, so a printer that
        // walks it says nothing twice.
        fn chain(e: &(dyn std::error::Error + 'static)) -> Vec<String> {
            let mut out = Vec::new();
            let mut next = e.source();
            while let Some(cause) = next {
                out.push(cause.to_string());
                next = cause.source();
            }
            out
        }
        assert_eq!(chain(&hinted), chain(&bare));
        assert_eq!(chain(&hinted), ["permission denied"]);
    }
}
