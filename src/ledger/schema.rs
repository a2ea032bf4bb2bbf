//! The ledger's schema and its migrations.
//!
//! The version lives in `PRAGMA user_version`. Migrations are an ordered list; each step runs in
//! one `BEGIN IMMEDIATE` transaction together with its version bump, re-reading the version once it
//! holds the write lock, so two processes that open an old ledger at once migrate it exactly once.
//! A fresh ledger gets every step in a single transaction, so no process ever sees it half made.
//! Never edit a step that has shipped: add a new one.

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use super::{LedgerError, Result};

/// One schema step: the SQL that moves a ledger from `version - 1` to `version`.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    pub version: i64,
    pub sql: &'static str,
}

/// Version 1: repositories, leasable resources, tenures and the event log (the lease engine).
const V1_LEASES: &str = r#"
CREATE TABLE clock (max_now INTEGER NOT NULL);
INSERT INTO clock (max_now) VALUES (0);

CREATE TABLE repos (
    id          TEXT PRIMARY KEY,
    common_dir  TEXT NOT NULL UNIQUE,
    created_at  INTEGER NOT NULL
);

CREATE TABLE resources (
    id          INTEGER PRIMARY KEY,
    kind        TEXT NOT NULL CHECK (kind IN ('worktree', 'issue')),
    key         TEXT NOT NULL,
    last_token  INTEGER NOT NULL DEFAULT 0 CHECK (last_token >= 0),
    UNIQUE (kind, key)
);

CREATE TABLE tenures (
    lease_id     TEXT PRIMARY KEY,
    resource_id  INTEGER NOT NULL REFERENCES resources (id),
    token        INTEGER NOT NULL CHECK (token > 0),
    holder       TEXT NOT NULL,
    ttl_ms       INTEGER,
    acquired_at  INTEGER NOT NULL,
    renewed_at   INTEGER,
    expires_at   INTEGER,
    ended_at     INTEGER,
    end_reason   TEXT,
    UNIQUE (resource_id, token)
);
-- At most one held tenure per resource, whatever the code above it does.
CREATE UNIQUE INDEX tenures_one_held_per_resource ON tenures (resource_id) WHERE ended_at IS NULL;
CREATE INDEX tenures_held ON tenures (ended_at) WHERE ended_at IS NULL;

CREATE TRIGGER tenures_are_never_deleted BEFORE DELETE ON tenures
BEGIN SELECT RAISE(ABORT, 'tenures are history and are never deleted'); END;
CREATE TRIGGER tenures_keep_their_identity
BEFORE UPDATE OF lease_id, resource_id, token, holder, acquired_at ON tenures
BEGIN SELECT RAISE(ABORT, 'a tenure never changes its lease id, resource, token, holder or start'); END;
CREATE TRIGGER tenures_stay_ended BEFORE UPDATE ON tenures WHEN OLD.ended_at IS NOT NULL
BEGIN SELECT RAISE(ABORT, 'an ended tenure is never changed'); END;

CREATE TABLE events (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    at             INTEGER NOT NULL,
    kind           TEXT NOT NULL,
    resource_kind  TEXT,
    resource_key   TEXT,
    lease_id       TEXT,
    token          INTEGER,
    holder         TEXT,
    detail         TEXT
);
CREATE TRIGGER events_are_never_rewritten BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
CREATE TRIGGER events_are_never_deleted BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
"#;

/// Version 2: the worktree pool: slots and tasks.
const V2_POOL: &str = r#"
CREATE TABLE slots (
    resource_id  INTEGER PRIMARY KEY REFERENCES resources (id),
    repo_id      TEXT NOT NULL REFERENCES repos (id),
    n            INTEGER NOT NULL CHECK (n > 0),
    path         TEXT NOT NULL UNIQUE,
    created_at   INTEGER NOT NULL,
    removed_at   INTEGER,
    UNIQUE (repo_id, n)
);

CREATE TABLE tasks (
    id              INTEGER PRIMARY KEY,
    repo_id         TEXT NOT NULL REFERENCES repos (id),
    name            TEXT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('spawning', 'active', 'tearing-down', 'done')),
    slot_path       TEXT,
    lease_id        TEXT REFERENCES tenures (lease_id),
    issue           TEXT,
    issue_lease_id  TEXT REFERENCES tenures (lease_id),
    branch          TEXT NOT NULL,
    base_oid        TEXT,
    holder          TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    done_at         INTEGER,
    done_reason     TEXT,
    pid             INTEGER,
    pid_start       INTEGER,
    step            TEXT,
    checked_out     TEXT
);
CREATE UNIQUE INDEX tasks_one_open_per_name ON tasks (repo_id, name) WHERE state <> 'done';
CREATE INDEX tasks_by_lease ON tasks (lease_id);
CREATE INDEX tasks_open_by_branch ON tasks (repo_id, branch) WHERE state <> 'done';
CREATE INDEX events_by_lease ON events (lease_id);
"#;

/// Version 3: the open tasks of a slot by path. `pool::slots` (run by spawn, list and prune for
/// every slot) asks for them; without this index each question scanned every task ever recorded,
/// which made `git hand list` take 160 ms with 100,000 finished tasks (bench/run bigledger).
const V3_OPEN_TASKS_BY_SLOT: &str = r#"
CREATE INDEX tasks_open_by_slot ON tasks (slot_path) WHERE state <> 'done';
"#;

/// Version 4: the remote a task's branch is pushed to (the normalized URL, as issue namespaces
/// are), so branch fencing is keyed on what the remote sees: a second clone of the same origin
/// on the same ledger pushing a live task's branch is refused too (issue 10). Rows from before
/// keep `NULL` and are fenced by their repository, as they were.
const V4_TASK_REMOTE: &str = r#"
ALTER TABLE tasks ADD COLUMN remote TEXT;
CREATE INDEX tasks_open_by_remote_branch ON tasks (remote, branch) WHERE state <> 'done';
"#;

/// Version 5: the ref a task was based on, as a full name (`refs/heads/release-1.2`,
/// `refs/remotes/origin/main`), when spawn's base was a branch or remote-tracking branch, so
/// `list` measures the task against the branch it came from and `prune --branches` counts a
/// branch landed there (issue 13). `NULL` for a base given as a commit, and in rows from before,
/// which are compared with the default branch as they were.
const V5_TASK_BASE_REF: &str = r#"
ALTER TABLE tasks ADD COLUMN base_ref TEXT;
"#;

/// Version 6: the machine a repository, slot and task belong to (issue 14). The columns are
/// there so that the ledger's SQL is the same text on a file and a team ledger; a file ledger
/// is one machine, so every row keeps the empty id, and its unique keys (a repository by its
/// common dir, a slot by its path) stay as they were.
const V6_MACHINE: &str = r#"
ALTER TABLE repos ADD COLUMN machine TEXT NOT NULL DEFAULT '';
ALTER TABLE slots ADD COLUMN machine TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN machine TEXT NOT NULL DEFAULT '';
"#;

/// Version 7: the PID namespace a process was recorded in (issue 22): a task's `pid` is a
/// number in the namespace whose processes the recording `/proc` showed (`pid_ns`, the inode of
/// its `ns/pid`), and a slot remembers the namespace of the spawn that last claimed it
/// (`pid_ns`), so that a scan which cannot see into that namespace neither takes the spawn's
/// process for gone nor the slot for empty. Rows from before keep `NULL` and are judged in the
/// scan's own numbering, as they were.
const V7_PID_NAMESPACE: &str = r#"
ALTER TABLE tasks ADD COLUMN pid_ns INTEGER;
ALTER TABLE slots ADD COLUMN pid_ns INTEGER;
"#;

/// Every migration, in order. `MIGRATIONS[i].version == i + 1`.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        sql: V1_LEASES,
    },
    Migration {
        version: 2,
        sql: V2_POOL,
    },
    Migration {
        version: 3,
        sql: V3_OPEN_TASKS_BY_SLOT,
    },
    Migration {
        version: 4,
        sql: V4_TASK_REMOTE,
    },
    Migration {
        version: 5,
        sql: V5_TASK_BASE_REF,
    },
    Migration {
        version: 6,
        sql: V6_MACHINE,
    },
    Migration {
        version: 7,
        sql: V7_PID_NAMESPACE,
    },
];

/// The schema version this binary writes.
pub const LATEST_VERSION: i64 = MIGRATIONS.len() as i64;

pub fn user_version(conn: &Connection) -> Result<i64> {
    Ok(conn.pragma_query_value(None, "user_version", |r| r.get(0))?)
}

/// Brings the ledger to [`LATEST_VERSION`].
pub fn migrate(conn: &Connection, path: &Path) -> Result<()> {
    migrate_with(conn, path, MIGRATIONS)
}

/// Brings the ledger to the last version of `steps` (tests pass their own list to prove that a
/// failing step leaves the version where it was).
#[doc(hidden)]
pub fn migrate_with(conn: &Connection, path: &Path, steps: &[Migration]) -> Result<()> {
    let latest = steps.last().map_or(0, |m| m.version);
    let found = user_version(conn)?;
    if found == latest {
        return Ok(());
    }
    if found > latest {
        return Err(LedgerError::TooNew {
            path: path.to_path_buf(),
            found,
            supported: latest,
        });
    }
    if found == 0 {
        create_fresh(conn, steps, latest)?;
    }
    for step in steps {
        apply_step(conn, step)?;
    }
    use_wal(conn)
}

/// A new ledger is created at the latest version in one transaction.
fn create_fresh(conn: &Connection, steps: &[Migration], latest: i64) -> Result<()> {
    let tx = immediate(conn)?;
    if user_version(&tx)? != 0 {
        return Ok(()); // Another process created it while we waited for the lock.
    }
    for step in steps {
        tx.execute_batch(step.sql)
            .map_err(|source| LedgerError::Migration {
                version: step.version,
                source,
            })?;
    }
    tx.pragma_update(None, "user_version", latest)?;
    tx.commit()?;
    Ok(())
}

/// Applies one step unless another process already did.
fn apply_step(conn: &Connection, step: &Migration) -> Result<()> {
    let tx = immediate(conn)?;
    if user_version(&tx)? >= step.version {
        return Ok(());
    }
    tx.execute_batch(step.sql)
        .map_err(|source| LedgerError::Migration {
            version: step.version,
            source,
        })?;
    tx.execute(
        "INSERT INTO events (at, kind, detail) VALUES ((SELECT max_now FROM clock), 'migrated', ?1)",
        [format!("schema version {}", step.version)],
    )
    .map_err(|source| LedgerError::Migration { version: step.version, source })?;
    tx.pragma_update(None, "user_version", step.version)?;
    tx.commit()?;
    Ok(())
}

pub(super) fn immediate(conn: &Connection) -> Result<rusqlite::Transaction<'_>> {
    // `Connection::transaction_with_behavior` needs `&mut`; the unchecked form is the same
    // transaction on a shared reference, and nothing else runs on this connection meanwhile.
    Ok(rusqlite::Transaction::new_unchecked(
        conn,
        TransactionBehavior::Immediate,
    )?)
}

/// Switches the ledger to WAL so readers (the pre-push hook) never wait for a writer.
/// The mode is stored in the file, so this runs only when the ledger was just created or migrated.
fn use_wal(conn: &Connection) -> Result<()> {
    match conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0)) {
        Ok(_) => Ok(()),
        // Another process holds the file open and will get there itself: see `ensure_wal`.
        Err(e) if super::error::is_busy(&e) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Whether the ledger is in WAL mode, switching it if it is not (a ledger another tool turned
/// back, or one whose creator could not switch it). Spawn's deferred sync relies on the WAL;
/// where the switch cannot happen now, the caller commits durably inline instead.
pub(crate) fn ensure_wal(conn: &Connection) -> Result<bool> {
    let mode = |c: &Connection| -> Result<bool> {
        let m: String = c.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
        Ok(m.eq_ignore_ascii_case("wal"))
    };
    if mode(conn)? {
        return Ok(true);
    }
    use_wal(conn)?;
    mode(conn)
}

/// Builds a ledger at an older `version`, the way git-hand publishes a new one (tests of
/// migrations only).
#[doc(hidden)]
pub fn create_at_version(path: &Path, version: i64) -> Result<()> {
    let steps: Vec<Migration> = MIGRATIONS
        .iter()
        .copied()
        .filter(|m| m.version <= version)
        .collect();
    super::file::create(path, |conn| migrate_with(conn, path, &steps)).map(|_| ())
}
