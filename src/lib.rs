//! git-hand leases a repository's worktrees to parallel tasks and makes git refuse the push of a
//! holder whose lease is no longer current.
//!
//! Calls go one way (docs/architecture.md):
//! - [`cli`]: the command line: clap definitions, one file per verb, rendering text and `--json`;
//! - [`ops`]: what each verb does, returning facts and `ops::Error` (never prints);
//! - [`ledger`]: the SQLite ledger, its migrations and the lease engine (no git, no CLI);
//! - [`git`]: what git-hand knows of git's files and of gix, and the one runner of git commands;
//! - [`hooks`]: every file git-hand writes into a hooks directory;
//! - [`platform`]: what the operating system answers (the machine's identity, cloning files),
//!   behind one seam;
//! - [`clock`], [`ids`], [`failpoint`], [`word`]: time, random ids, crash points and the one
//!   spelling of every enum's words, shared by everything;
//! - [`repo_file`], [`shown`]: the one reader of a file a repository hands git-hand, and the one
//!   way a string from outside is shown.

pub mod cli;
pub mod clock;
pub mod failpoint;
pub mod git;
pub mod hooks;
pub mod ids;
pub mod ledger;
pub mod ops;
pub mod platform;
pub mod repo_file;
pub mod shown;
pub mod word;
