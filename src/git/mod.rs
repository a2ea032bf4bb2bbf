//! Everything git: gix for reading ([`inspect`]; a committed settings file, [`config_file`]), a linked worktree's files ([`link`]), one
//! runner for every git CLI call ([`runner`]), the worktree-list lock ([`lock`]), which ref a
//! symbolic ref writes ([`symref`]), and pure
//! helpers ([`refname`], [`url`]). `ops` is to reach git's files and gix only through these, not
//! by itself. This module does not know about the ledger.

pub mod config_file;
pub mod inspect;
pub mod link;
pub mod lock;
pub mod refname;
pub mod runner;
pub mod status;
pub mod symref;
pub mod url;

pub use config_file::{ConfigFile, ConfigOrigin};
pub use inspect::{ConfigError, InspectError, LinkedWorktree, Location, Repo, canonical};
pub use lock::WorktreeListLock;
pub use runner::{Git, GitError, INTERNAL_ENV};
