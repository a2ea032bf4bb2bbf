//! A room of `ops` (issue 26): what a repository says of itself and what follows from it, before
//! any slot is touched: its settings (`settings`: git's configuration over `.handconfig` over the
//! defaults) and the approval of the file's commands (`trust`), the setup commands that run in
//! its slots (`setup`), the files a new slot gets from the main worktree (`include`), the commit
//! a task starts from (`base`), its remotes with relative URLs (`relative_remotes`), the
//! names users type for it (`names`), and what an install does in it beyond the hook files
//! (`install`).

pub mod base;
mod error;
pub mod include;
pub mod install;
pub mod names;
pub mod relative_remotes;
pub mod settings;
pub mod setup;
pub mod trust;

pub use error::{RepoError, Skip};
