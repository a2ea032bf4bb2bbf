//! The append-only event log: every acquire, renew, release, expiry takeover, refusal and repair.
//!
//! Rows are only ever inserted (triggers refuse updates and deletes), so the ledger is its own
//! audit trail. `git hand log` reads it newest first, scoped to one repository or one task
//! ([`EventScope`]).
//!
//! An event row names a resource, not a repository: a repository's events are those about its
//! slots, the worktrees its tasks held, the worktrees git lists for it, and the issues in its
//! namespace. A task's events are those naming one of its leases, and those about its slot
//! while it was open (its `task-done`, a refused push in it).

use rusqlite::{Row, params};
use serde::{Deserialize, Serialize};

use super::ids::{LeaseId, RepoId};
use super::tenure::{Resource, Tenure};
use super::{Result, Tx, View};
use crate::clock::Millis;

/// What happened; its word is the `kind` stored in the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    Acquired,
    /// The same holder acquired again: same tenure, new expiry.
    Reacquired,
    Renewed,
    Released,
    /// A tenure ended for a reason other than release (expiry takeover, abandonment, repair).
    Ended,
    /// An acquire, renew or release that was refused.
    Refused,
    /// A push the pre-push hook refused.
    PushRefused,
    /// A ref update the reference-transaction hook aborted (issue 16).
    RefUpdateRefused,
    Repaired,
    SlotPruned,
    TaskSpawned,
    TaskDone,
    /// The post-checkout hook saw a worktree made by a plain `git worktree add`.
    WorktreeAdded,
    /// The post-checkout hook saw a branch checked out in a leased slot.
    CheckedOut,
    Migrated,
}

crate::word::words!(EventKind: "event kind");

/// One row of the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Event {
    pub id: i64,
    pub at: Millis,
    pub kind: String,
    pub resource_kind: Option<String>,
    pub resource_key: Option<String>,
    pub lease_id: Option<LeaseId>,
    pub token: Option<i64>,
    pub holder: Option<String>,
    pub detail: Option<String>,
}

impl Event {
    fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            id: r.get(0)?,
            at: r.get(1)?,
            kind: r.get(2)?,
            resource_kind: r.get(3)?,
            resource_key: r.get(4)?,
            lease_id: r.get(5)?,
            token: r.get(6)?,
            holder: r.get(7)?,
            detail: r.get(8)?,
        })
    }
}

/// An event as `git hand log` shows it: with the number of the pool slot it is about, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedEvent {
    pub event: Event,
    pub slot: Option<i64>,
}

/// Which events [`View::events_in`] reads.
#[derive(Debug, Clone)]
pub enum EventScope<'a> {
    /// Every event of the ledger, a migration's too.
    All,
    /// One repository's.
    Repo(RepoEvents<'a>),
    /// The events of these tasks (every task of one name): see [`View::task_spans`].
    Tasks(&'a [TaskSpan]),
}

/// What makes an event one repository's.
#[derive(Debug, Clone)]
pub struct RepoEvents<'a> {
    /// `None` for a repository the ledger never registered (it may have issue leases).
    pub repo_id: Option<&'a RepoId>,
    /// Its issue namespace: an issue `<namespace>#<id>` is its. `None`: no issue is.
    pub issue_namespace: Option<&'a str>,
    /// Worktrees git lists for it (canonical paths): one registered by the post-checkout hook
    /// but never leased is named by no slot or task.
    pub worktrees: &'a [String],
}

/// One task, as far as its events go: its leases, and its slot from spawn to done.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskSpan {
    pub leases: Vec<LeaseId>,
    pub slot: Option<String>,
    pub from: Millis,
    /// `Millis::MAX` while the task is open.
    pub to: Millis,
}

/// The columns of an event row, then the slot number, for [`LoggedEvent::from_row`].
const LOGGED: &str = "SELECT e.id, e.at, e.kind, e.resource_kind, e.resource_key, e.lease_id, \
     e.token, e.holder, e.detail, s.n FROM events e \
     LEFT JOIN slots s ON e.resource_kind = 'worktree' AND s.path = e.resource_key";

impl LoggedEvent {
    fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            event: Event::from_row(r)?,
            slot: r.get(9)?,
        })
    }
}

impl Tx<'_> {
    /// Appends one event. `tenure` names the lease concerned, if any.
    pub fn log(
        &self,
        kind: EventKind,
        res: &Resource,
        tenure: Option<&Tenure>,
        detail: Option<&str>,
    ) -> Result<()> {
        self.conn.execute(
            "INSERT INTO events (at, kind, resource_kind, resource_key, lease_id, token, holder, detail) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                self.now,
                kind.as_str(),
                res.kind.as_str(),
                res.key,
                tenure.map(|t| &t.lease_id),
                tenure.map(|t| t.token),
                tenure.map(|t| &t.holder),
                detail,
            ],
        )?;
        Ok(())
    }
}

impl View<'_> {
    /// The newest `limit` events, newest first.
    pub fn events(&self, limit: u32) -> Result<Vec<Event>> {
        let mut stmt = self.conn.prepare(
            "SELECT id, at, kind, resource_kind, resource_key, lease_id, token, holder, detail \
             FROM events ORDER BY id DESC LIMIT ?1",
        )?;
        let rows = stmt.query_map([limit], Event::from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The newest `limit` events of `scope`, newest first.
    ///
    /// The log is read from its newest row back until `limit` rows match; the sets a row is
    /// matched against (a repository's worktrees, a task's leases) are built once per query.
    pub fn events_in(&self, scope: &EventScope<'_>, limit: u32) -> Result<Vec<LoggedEvent>> {
        let rows = match scope {
            EventScope::All => {
                let sql = format!("{LOGGED} ORDER BY e.id DESC LIMIT ?1");
                let mut stmt = self.conn.prepare(&sql)?;
                let rows = stmt.query_map([limit], LoggedEvent::from_row)?;
                rows.collect::<rusqlite::Result<_>>()?
            }
            EventScope::Repo(repo) => {
                let sql = format!(
                    "{LOGGED} WHERE (e.resource_kind = 'worktree' AND e.resource_key IN ( \
                       SELECT path FROM slots WHERE repo_id = ?1 \
                       UNION SELECT slot_path FROM tasks WHERE repo_id = ?1 \
                       UNION SELECT value FROM json_each(?2))) \
                     OR (e.resource_kind = 'issue' AND ?3 IS NOT NULL \
                       AND substr(e.resource_key, 1, length(?3)) = ?3) \
                     ORDER BY e.id DESC LIMIT ?4"
                );
                let worktrees = serde_json::to_string(repo.worktrees).unwrap_or_default();
                let issues = repo.issue_namespace.map(|ns| format!("{ns}#"));
                let mut stmt = self.conn.prepare(&sql)?;
                let args = params![repo.repo_id, worktrees, issues, limit];
                let rows = stmt.query_map(args, LoggedEvent::from_row)?;
                rows.collect::<rusqlite::Result<_>>()?
            }
            EventScope::Tasks(spans) => {
                let sql = format!(
                    "{LOGGED} WHERE e.lease_id IN (SELECT value FROM json_each(?1)) \
                     OR (e.resource_kind = 'worktree' AND EXISTS ( \
                       SELECT 1 FROM json_each(?2) j WHERE j.value ->> '$.slot' = e.resource_key \
                       AND e.at BETWEEN j.value ->> '$.from' AND j.value ->> '$.to')) \
                     ORDER BY e.id DESC LIMIT ?3"
                );
                let leases: Vec<&LeaseId> = spans.iter().flat_map(|s| &s.leases).collect();
                let leases = serde_json::to_string(&leases).unwrap_or_default();
                let spans = serde_json::to_string(spans).unwrap_or_default();
                let mut stmt = self.conn.prepare(&sql)?;
                let rows = stmt.query_map(params![leases, spans, limit], LoggedEvent::from_row)?;
                rows.collect::<rusqlite::Result<_>>()?
            }
        };
        Ok(rows)
    }

    /// Every task named `name` (of `repo`, or of any repository), as far as its events go.
    pub fn task_spans(&self, name: &str, repo: Option<&RepoId>) -> Result<Vec<TaskSpan>> {
        let mut stmt = self.conn.prepare(
            "SELECT lease_id, issue_lease_id, slot_path, created_at, done_at FROM tasks \
             WHERE name = ?1 AND (?2 IS NULL OR repo_id = ?2) ORDER BY id",
        )?;
        let rows = stmt.query_map(params![name, repo], |r| {
            let lease: Option<LeaseId> = r.get(0)?;
            let issue: Option<LeaseId> = r.get(1)?;
            Ok(TaskSpan {
                leases: lease.into_iter().chain(issue).collect(),
                slot: r.get(2)?,
                from: r.get(3)?,
                to: r.get::<_, Option<Millis>>(4)?.unwrap_or(Millis::MAX),
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every event about one lease, oldest first.
    pub fn events_of_lease(&self, lease_id: &LeaseId) -> Result<Vec<Event>> {
        let mut stmt = self.conn.prepare(
            "SELECT id, at, kind, resource_kind, resource_key, lease_id, token, holder, detail \
             FROM events WHERE lease_id = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map([lease_id], Event::from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}
