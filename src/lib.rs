//! git-hand leases a repository's worktrees to parallel tasks and makes git refuse the push of a
//! holder whose lease is no longer current.
//!
//! Calls go one way (docs/architecture.md):
//! - [`cli`]: the command line: clap definitions, one file per verb, rendering text and `--json`;
//! - [`ops`]: what each verb does, returning facts and `ops::Error` (never prints);
//! - [`ledger`]: the ledger (a SQLite file, or a team's PostgreSQL database), its migrations and
//!   the lease engine (no git, no CLI);
//! - [`git`]: what git-hand knows of git's files and of gix, and the one runner of git commands;
//! - [`hooks`]: every file git-hand writes into a hooks directory;
//! - [`platform`]: what the operating system answers (the machine's identity, cloning files),
//!   behind one seam;
//! - [`clock`], [`ids`], [`failpoint`], [`word`], [`hint`]: time, random ids, crash points, the one
//!   spelling of every enum's words, and the command that gets a user out of an error (data, which
//!   the command line words), shared by everything;
//! - [`repo_file`], [`shown`]: the one reader of a file a repository hands git-hand, and the one
//!   way a string from outside is shown.

pub mod cli;
pub mod clock;
pub mod failpoint;
pub mod git;
pub mod hint;
pub mod hooks;
pub mod ids;
pub mod ledger;
pub mod ops;
pub mod platform;
pub mod repo_file;
pub mod shown;
pub mod word;
