//! The ways into an open ledger: [`Ledger::write_with`] (one `BEGIN IMMEDIATE` transaction, with
//! a [`Durability`] and a [`Retry`]), [`Ledger::write`] (its durable, never-retried sugar) and
//! [`Ledger::read`] (one read snapshot, never a write).
//!
//! `now` inside a transaction is the later of the clock and the largest `now` the ledger has
//! seen, and the ledger remembers it: a clock that went backwards can never extend a lease,
//! because every expiry is computed from, and compared with, that high-water mark.

use std::path::PathBuf;

use rusqlite::TransactionBehavior;

use super::connection::{BUSY_TIMEOUT, wait_for_the_lock};
use super::db::Db;
use super::file::sync_dir_of;
use super::tx::{Tx, View, high_water_mark, remember_now};
use super::wal::{WalTrim, sync_wal, truncate_wal, wal_is_long, wal_path};
use super::{Journal, Ledger, LedgerError, Result, Store};

/// How a write's commit reaches the disk of a file ledger. A team ledger's commit is the
/// server's to make durable: there every write is [`Durability::Durable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Fsynced before [`Ledger::write_with`] returns: what hands out a token.
    Durable,
    /// Not fsynced (WAL `synchronous=NORMAL`): the commit survives a crash of the process, not
    /// a power cut, until the next durable commit syncs the WAL. Only for bookkeeping that
    /// follows a durable intent and that recovery redoes when it is lost (spawn's activation,
    /// teardown's release and finish: `doctor` settles a `spawning` or `tearing-down` row). A
    /// token is never handed out by a relaxed commit.
    Relaxed,
    /// The fsync runs on another thread while the caller goes on: spawn records its intent, then
    /// runs git for milliseconds, and the disk write hides behind it. The commit is visible to
    /// every process at once; it is durable once [`PendingSync::wait`] returns, and nothing it
    /// records may be handed out (a credential, the slot's path on stdout) before that. Outside
    /// WAL mode it is [`Durability::Durable`]. The thread also truncates a long WAL, on a
    /// connection of its own.
    SyncedMeanwhile,
    /// As [`Durability::SyncedMeanwhile`], but the thread only fsyncs: truncating a long WAL is
    /// left to this connection, whose caller calls [`Ledger::keep_wal_short`] where it waits
    /// anyway (spawn: while `git switch` runs). A second connection parses the whole schema
    /// again (~0.5 M instructions, a tenth of a spawn) only to truncate.
    SyncedMeanwhileTrimmedByCaller,
}

/// What a write does when its team ledger's connection breaks during it (the server restarted,
/// the backend was terminated, the network cut). A file ledger has no connection to lose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// It fails with [`LedgerError::ConnectionLost`], which says whether its commit may have
    /// happened.
    Never,
    /// It runs once more, whole, on a new connection made within the connect timeout. Only for
    /// a write that re-running cannot change the outcome of, whether or not the first run
    /// committed: the [`Idempotent`] says which one it is, and the caller's comment says why.
    Once(Idempotent),
}

/// Why a write may run a second time when its connection breaks ([`Retry::Once`]): running it
/// again, whether or not the first run committed, gives the outcome one run gives. Nothing else
/// is: spawn's intent, teardown's pin and every other write fail instead. A spawn or teardown
/// retries its writes after git has changed the slot (a lost connection there must not strand a
/// task half made or half freed, issue 22).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Idempotent {
    /// Acquiring for one holder: when the first run committed, the second finds that holder's
    /// live tenure and returns it (`fresh: false`, the same lease id and token), never a second
    /// token; when it did not, the second is the first.
    AcquireBySameHolder,
    /// Renewing a tenure (by holder or lease id): a second renewal sets the expiry again from
    /// the server's later now, which is what the caller asked for.
    Renew,
    /// Releasing a tenure (by holder or lease id): when the first run committed, the second
    /// finds nothing of the caller's to release (and a lease id never ends another tenure). By
    /// lease id, the second run of a release whose `COMMIT` went unanswered reports the tenure
    /// ended as released, as the first did, even when someone acquired the resource in between.
    Release,
    /// Recording a task's step ([`Tx::set_task_step`]): a second run records the same step.
    SetStep,
    /// Ending a task ([`Tx::end_task`]): its leases are released by their lease ids (a second
    /// run finds them ended and releases nothing) and only a task not yet done is marked done.
    EndTask,
    /// Taking back a spawn's intent ([`Tx::withdraw_intent`]): its leases are released by their
    /// lease ids and only a row still `spawning` is deleted, so a second run finds nothing left.
    Withdraw,
    /// Activating a spawning task (spawn's last transaction): when the first run committed, the
    /// second finds the task active on the same lease and returns it as the first did; when it
    /// did not, the second is the first.
    Activate,
}

impl Ledger {
    /// Runs `f` inside one `BEGIN IMMEDIATE` transaction and commits it when `f` succeeds, the
    /// commit reaching the disk as `durability` says and a broken team connection met as
    /// `retry` says (`f` may then run twice). The [`PendingSync`] is already done unless
    /// `durability` left the fsync to another thread.
    pub fn write_with<T>(
        &mut self,
        durability: Durability,
        retry: Retry,
        f: impl Fn(&Tx<'_>) -> Result<T>,
    ) -> Result<(T, PendingSync)> {
        if let Store::Team(team) = &mut self.store {
            let out = match retry {
                Retry::Never => team.write(f)?,
                Retry::Once(_) => team.write_retrying(f)?,
            };
            return Ok((out, PendingSync::done()));
        }
        match durability {
            Durability::Durable => Ok((self.commit(f)?, PendingSync::done())),
            Durability::Relaxed => Ok((self.commit_relaxed(f)?, PendingSync::done())),
            Durability::SyncedMeanwhile => self.commit_syncing(f, WalTrim::OnItsOwnConnection),
            Durability::SyncedMeanwhileTrimmedByCaller => {
                self.commit_syncing(f, WalTrim::LeftToCaller)
            }
        }
    }

    /// [`Ledger::write_with`] durable and never retried: what every write is unless it says
    /// otherwise.
    pub fn write<T>(&mut self, f: impl Fn(&Tx<'_>) -> Result<T>) -> Result<T> {
        let (out, _done) = self.write_with(Durability::Durable, Retry::Never, f)?;
        Ok(out)
    }

    /// Runs `f` against one consistent read snapshot. Nothing is written. On a team ledger a
    /// connection that breaks is met with one more run of `f` on a new connection (a read
    /// changes nothing, so running it twice cannot either): `f` may run twice.
    pub fn read<T>(&mut self, f: impl Fn(&View<'_>) -> Result<T>) -> Result<T> {
        let conn = match &mut self.store {
            Store::File(conn) => conn,
            Store::Team(team) => return team.read(f),
        };
        let clock_now = self.clock.now_ms();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
        let now = clock_now.max(high_water_mark(Db::Sqlite(&tx))?);
        let out = f(&View::new(Db::Sqlite(&tx), now))?;
        tx.finish()?;
        Ok(out)
    }

    /// One transaction, durable unless [`Ledger::commit_relaxed`] set `relaxed` (a team
    /// ledger's is the server's).
    fn commit<T>(&mut self, f: impl Fn(&Tx<'_>) -> Result<T>) -> Result<T> {
        let conn = match &mut self.store {
            Store::File(conn) => conn,
            Store::Team(team) => return team.write(f),
        };
        let clock_now = self.clock.now_ms();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let seen = high_water_mark(Db::Sqlite(&tx))?;
        let now = clock_now.max(seen);
        if now > seen {
            remember_now(Db::Sqlite(&tx), now)?;
        }
        let out = f(&Tx::new(Db::Sqlite(&tx), now))?;
        tx.commit()?;
        // A relaxed commit owes nothing: it leaves the WAL to the durable one that follows it
        // (a truncation fsyncs the database, which is what relaxing avoids).
        match self.journal {
            _ if self.relaxed => {}
            Journal::Wal => self.keep_wal_short(),
            // The commit point is the deletion of the rollback journal, which SQLite no longer
            // syncs (`SQLITE_DISABLE_DIRSYNC`).
            Journal::Rollback => sync_dir_of(&self.path)?,
            Journal::Memory | Journal::Server => {}
        }
        Ok(out)
    }

    /// [`Durability::Relaxed`]'s commit: `synchronous=NORMAL` for this one transaction.
    fn commit_relaxed<T>(&mut self, f: impl Fn(&Tx<'_>) -> Result<T>) -> Result<T> {
        if let Store::File(conn) = &self.store {
            conn.pragma_update(None, "synchronous", "NORMAL")?;
        }
        self.relaxed = true;
        let out = self.commit(f);
        self.relaxed = false;
        if let Store::File(conn) = &self.store {
            conn.pragma_update(None, "synchronous", "FULL")?;
        }
        out
    }

    /// [`Durability::SyncedMeanwhile`]'s commit: relaxed here, its fsync on a thread.
    fn commit_syncing<T>(
        &mut self,
        f: impl Fn(&Tx<'_>) -> Result<T>,
        trim: WalTrim,
    ) -> Result<(T, PendingSync)> {
        if self.journal != Journal::Wal {
            return Ok((self.commit(f)?, PendingSync::done()));
        }
        let out = self.commit_relaxed(f)?;
        let ledger = self.path.clone();
        let sync = move || sync_wal(&ledger, trim);
        let syncing = match std::thread::Builder::new().spawn(sync.clone()) {
            Ok(thread) => PendingSync {
                thread: Some(thread),
                wal: wal_path(&self.path),
            },
            // No thread to be had: sync here and now.
            Err(_) => {
                sync()?;
                PendingSync::done()
            }
        };
        Ok((out, syncing))
    }

    /// Truncates the WAL once it holds more than [`super::wal::WAL_CHECKPOINT_BYTES`]. Every
    /// git-hand process is the first connection to open the ledger, and the first connection
    /// rebuilds the WAL index by reading every frame, so a long WAL slows every start-up
    /// (measured: ~10 ms at 1 MiB); SQLite's own checkpoints cannot restart the WAL across
    /// processes, because that rebuild forgets what was already checkpointed. The truncation
    /// never waits: with a reader in the way it is left to the next writer. Every durable commit
    /// does this itself; a writer with [`Durability::SyncedMeanwhileTrimmedByCaller`] calls it
    /// where it waits anyway.
    pub(crate) fn keep_wal_short(&mut self) {
        if let Store::File(conn) = &mut self.store
            && self.journal == Journal::Wal
            && wal_is_long(&wal_path(&self.path))
        {
            let _ = truncate_wal(conn);
            let _ = wait_for_the_lock(conn, BUSY_TIMEOUT);
        }
    }
}

/// A commit of [`Durability::SyncedMeanwhile`] on its way to the disk (`thread` is `None` once
/// it is there).
#[must_use = "a commit is durable only once waited for"]
pub struct PendingSync {
    thread: Option<std::thread::JoinHandle<Result<()>>>,
    wal: PathBuf,
}

impl PendingSync {
    fn done() -> Self {
        Self {
            thread: None,
            wal: PathBuf::new(),
        }
    }

    /// Blocks until the commit is on disk.
    pub fn wait(self) -> Result<()> {
        match self.thread.map(std::thread::JoinHandle::join) {
            None => Ok(()),
            Some(Ok(synced)) => synced,
            Some(Err(_)) => Err(LedgerError::Sync {
                path: self.wal,
                source: std::io::Error::other("the thread syncing the ledger panicked"),
            }),
        }
    }
}
