//! The ledger: one SQLite file per user (or a team's PostgreSQL database) that records every
//! lease of every repository.
//!
//! This module owns the [`Ledger`] handle. Its rooms: opening one (`open`: [`Ledger::open`] with
//! a [`Mode`]), the ways in (`transaction`: [`Ledger::write_with`], [`Ledger::write`],
//! [`Ledger::read`]), what a transaction holds (`tx`: [`Tx`], [`View`]), the connection's
//! settings (`connection`), the write-ahead log (`wal`), the file (`file`), the schema and its
//! migrations ([`schema`]), the errors (`error`), and the tables' queries (leases, tasks, repos,
//! events, copy). It knows nothing of git or of the command line; callers hand it paths and
//! names, it hands back domain values.
//!
//! The machine is bound once ([`Ledger::on_machine`]): every [`Tx`] and [`View`], retries included,
//! carries it, so `ops` never passes a machine around.

mod connection;
mod copy;
mod db;
mod error;
mod events;
mod file;
mod ids;
mod leases;
mod lifecycle;
mod location;
mod open;
pub mod recovery;
mod repos;
#[doc(hidden)]
pub mod schema;
pub mod server;
mod task_state;
mod tasks;
pub mod team;
mod tenure;
mod transaction;
mod tx;
mod wal;

use std::path::PathBuf;
use std::time::Duration;

use rusqlite::Connection;

use crate::clock::Clock;

pub use copy::{Conflict, Export, Imported};
pub use error::{LedgerError, Result};
pub use events::{Event, EventKind, EventScope, LoggedEvent, RepoEvents};
pub use ids::{LeaseId, RepoId, WorktreeKey};
pub use leases::{Acquire, By, Release, Renew};
pub use lifecycle::IssueLease;
pub use location::{LedgerLocation, Place, default_location, same_file, state_dir};
pub use open::Mode;
pub use repos::RegisteredRepo;
pub use schema::LATEST_VERSION;
pub use task_state::{EndReason, Step, TaskState};
pub use tasks::{NewTask, Slot, Task, Tasks};
pub use team::{Fate, Lost};
pub use tenure::{Resource, ResourceKind, Tenure, TenureState};
pub use transaction::{Durability, Idempotent, PendingSync, Retry};
pub use tx::{Tx, View};

/// An open ledger.
pub struct Ledger {
    store: Store,
    path: PathBuf,
    clock: Box<dyn Clock>,
    /// How a commit reaches the disk, which decides what a durable commit still owes it.
    journal: Journal,
    /// Inside a [`Durability::Relaxed`] write: the commit is not durable, so it syncs nothing.
    relaxed: bool,
    /// What opening did that the user should hear about (a file made private).
    notices: Vec<String>,
}

/// A machine's id as the ledger records it (`repos`, `slots` and `tasks.machine`, and the
/// qualified keys of worktree resources): empty for a file ledger, whose every row is this
/// machine's. Shared, so that every transaction carries it without copying it.
pub(crate) type Machine = std::sync::Arc<str>;

impl std::fmt::Debug for Ledger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ledger")
            .field("place", &self.place())
            .finish_non_exhaustive()
    }
}

impl Ledger {
    /// This ledger as seen from machine `id` (a team ledger): its repositories, slots and
    /// tasks are that machine's, and its worktree resources are qualified with it. A file
    /// ledger is one machine and keeps the empty id.
    pub fn on_machine(mut self, id: &str) -> Self {
        if let Store::Team(team) = &mut self.store {
            team.machine = Machine::from(id);
        }
        self
    }

    /// The machine this ledger's transactions act for (empty: a file ledger).
    pub fn machine(&self) -> &str {
        match &self.store {
            Store::File(_) => "",
            Store::Team(team) => &team.machine,
        }
    }

    /// What opening the ledger did that the user should hear about (a file made private), for
    /// the command line to print; taken once.
    pub(crate) fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    /// On a team ledger, this machine's clock against the server's, in milliseconds (positive:
    /// ahead); `None` for a file ledger, whose only clock is this machine's.
    pub fn clock_skew_ms(&mut self) -> Result<Option<i64>> {
        match &mut self.store {
            Store::File(_) => Ok(None),
            Store::Team(team) => team.clock_skew_ms().map(Some),
        }
    }

    /// Where this ledger is: its file, or the team ledger's URL (which prints without its
    /// password), as stamps record it and messages show it.
    pub fn place(&self) -> Place {
        match &self.store {
            Store::File(_) => Place::File(self.path.clone()),
            Store::Team(team) => Place::Server(team.url().clone()),
        }
    }

    /// Changes how long a writer waits for another before [`LedgerError::Busy`] (tests use a
    /// short one; the binary keeps the 5 s default).
    pub fn set_busy_timeout(&mut self, timeout: Duration) -> Result<()> {
        match &mut self.store {
            Store::File(conn) => connection::wait_for_the_lock(conn, timeout),
            Store::Team(team) => team.set_lock_timeout(timeout),
        }
    }
}

/// How the ledger's commits reach the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Journal {
    /// Write-ahead log: what git-hand sets up, and what a deferred sync relies on.
    Wal,
    /// A rollback journal (a ledger git-hand could not switch back to WAL yet): every commit
    /// is durable inline.
    Rollback,
    /// [`Ledger::empty`]: nothing reaches a disk.
    Memory,
    /// A team ledger: each commit is durable when the server acknowledges it.
    Server,
}

/// Where the ledger's rows live.
enum Store {
    /// The SQLite file (or memory, for [`Ledger::empty`]).
    File(Connection),
    /// A team ledger on a PostgreSQL server.
    Team(Box<team::Team>),
}
