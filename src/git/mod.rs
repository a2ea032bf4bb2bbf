//! Everything git: gix for reading ([`inspect`]), one runner for every git CLI call ([`runner`]),
//! and pure helpers ([`url`]). This module does not know about the ledger.

pub mod inspect;
pub mod link;
pub mod lock;
pub mod runner;
pub mod url;

pub use inspect::{ConfigError, InspectError, LinkedWorktree, Location, Repo, canonical};
pub use lock::WorktreeListLock;
pub use runner::{Git, GitError, INTERNAL_ENV};
