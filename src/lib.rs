//! git-hand leases a repository's worktrees to parallel tasks and makes git refuse the push of a
//! holder whose lease is no longer current.
//!
//! - [`ledger`]: the SQLite ledger, its migrations and the lease engine (no git, no CLI).
//! - [`clock`], [`ids`], [`failpoint`], [`word`]: time, random ids, crash points and the one
//!   spelling of every enum's words, shared by everything.

pub mod cli;
pub mod clock;
pub mod failpoint;
pub mod git;
pub mod hooks;
pub mod ids;
pub mod ledger;
pub mod ops;
pub mod word;
