//! A room of `ops` (issue 26): a task's life from the command line: `spawn` in its phases,
//! `teardown` (the one place a task ends by request), the task queries behind `list`, `path`,
//! `renew` and `env` (`tasks`), who is still inside a task's slot (`sessions`), `spawn --exec`
//! (`exec`), why a task could not be found, renewed or torn down (`error`), what `list` shows of a task's worktree (`facts`), and the names the shell
//! completions offer (`candidates`).

pub mod candidates;
mod error;
pub mod exec;
pub mod facts;
pub mod sessions;
pub mod spawn;
pub mod tasks;
pub mod teardown;

pub use error::{Reached, TaskError, TeardownError};
