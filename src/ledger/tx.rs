//! What a transaction's closure holds: [`Tx`] (a write) and [`View`] (the reads, inside either),
//! and the instant both judge by, never earlier than any writer's.

use super::Result;
use super::db::Db;
use super::{Machine, Resource, WorktreeKey};
use crate::clock::Millis;

/// The largest `now` any writer has recorded.
pub(super) fn high_water_mark(db: Db<'_>) -> Result<Millis> {
    Ok(db
        .once()
        .row("SELECT max_now FROM clock", &[], |r| r.get(0))?
        .unwrap_or(0))
}

/// Records `now` as the largest `now` any writer has seen.
pub(super) fn remember_now(db: Db<'_>, now: Millis) -> Result<()> {
    db.once().exec("UPDATE clock SET max_now = ?1", &[&now])?;
    Ok(())
}

/// A read snapshot: the queries every path may run.
pub struct View<'a> {
    pub(super) db: Db<'a>,
    pub(super) now: Millis,
    /// See [`Machine`]: whose repositories, slots and tasks "this machine's" means.
    pub(super) machine: Machine,
}

impl<'a> View<'a> {
    pub(super) fn new(db: Db<'a>, now: Millis) -> Self {
        Self {
            db,
            now,
            machine: Machine::default(),
        }
    }

    /// This snapshot as seen from `machine` (a team ledger's [`Ledger::read`]; the server's
    /// pre-receive hook judging a lease another machine was granted).
    pub(crate) fn for_machine(&self, machine: &Machine) -> Self {
        Self {
            db: self.db,
            now: self.now,
            machine: machine.clone(),
        }
    }

    /// The instant this snapshot judges liveness against.
    pub fn now(&self) -> Millis {
        self.now
    }

    /// The machine this snapshot acts for: empty on a file ledger.
    pub fn machine(&self) -> &str {
        &self.machine
    }

    /// The worktree resource of this machine's worktree at `key` (see [`Resource::worktree_on`]).
    pub fn worktree(&self, key: &WorktreeKey) -> Resource {
        Resource::worktree_on(&self.machine, key)
    }
}

/// One write transaction. Reads are available through [`Tx::view`].
pub struct Tx<'a> {
    pub(super) db: Db<'a>,
    pub(super) now: Millis,
    pub(super) machine: Machine,
    /// This is the second run of an [`Idempotent`] write whose first run's `COMMIT` was sent
    /// and never answered (see [`Tx::after_unanswered_commit`]).
    pub(super) after_unanswered_commit: bool,
}

impl<'a> Tx<'a> {
    pub(super) fn new(db: Db<'a>, now: Millis) -> Self {
        Self {
            db,
            now,
            machine: Machine::default(),
            after_unanswered_commit: false,
        }
    }

    /// Whether this is the second run of an [`Idempotent`] write whose first run sent its
    /// `COMMIT` and lost the answer: the first run may have done what this one is asked to, and
    /// others may have acted since (a release then finds its tenure already ended).
    pub(crate) fn retries_an_unanswered_commit(&self) -> bool {
        self.after_unanswered_commit
    }

    pub fn now(&self) -> Millis {
        self.now
    }
    /// The read queries, inside this transaction.
    pub fn view(&self) -> View<'a> {
        View {
            db: self.db,
            now: self.now,
            machine: self.machine.clone(),
        }
    }
}
