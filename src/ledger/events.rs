//! The append-only event log: every acquire, renew, release, expiry takeover, refusal and repair.
//!
//! Rows are only ever inserted (triggers refuse updates and deletes), so the ledger is its own
//! audit trail. `git hand log` reads it newest first, scoped to one repository or one task
//! ([`EventScope`]).
//!
//! An event row names a resource, not a repository: a repository's events are those about its
//! slots, the worktrees its tasks held (by lease), the worktrees git lists for it, and the
//! issues in its namespace. A task's events are those naming one of its leases (its
//! `task-done` too, since issue 13).

use serde::{Deserialize, Serialize};

use super::db::Row;
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
    /// `git hand ledger copy` brought a task (and its leases) over from a machine's file ledger.
    Copied,
}

crate::word::words!(EventKind: "event kind");

/// One row of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// The columns of an event row, for [`Event::from_row`].
const EVENT: &str =
    "SELECT id, at, kind, resource_kind, resource_key, lease_id, token, holder, detail FROM events";

impl Event {
    fn from_row(r: &Row<'_>) -> Result<Self> {
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
    /// Those naming one of these leases (the leases of the tasks of one name: see
    /// [`View::task_leases`]).
    Leases(&'a [LeaseId]),
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

/// The columns of an event row, then the slot number, for [`LoggedEvent::from_row`].
const LOGGED: &str = "SELECT e.id, e.at, e.kind, e.resource_kind, e.resource_key, e.lease_id, \
     e.token, e.holder, e.detail, s.n FROM events e \
     LEFT JOIN slots s ON e.resource_kind = 'worktree' AND s.path = e.resource_key";

impl LoggedEvent {
    fn from_row(r: &Row<'_>) -> Result<Self> {
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
        self.db.once().exec(
            "INSERT INTO events (at, kind, resource_kind, resource_key, lease_id, token, holder, detail) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            &[
                &self.now,
                &kind.to_string(),
                &res.kind.to_string(),
                &res.key,
                &tenure.map(|t| &t.lease_id),
                &tenure.map(|t| t.token),
                &tenure.map(|t| &t.holder),
                &detail,
            ],
        )?;
        Ok(())
    }
}

impl View<'_> {
    /// The newest `limit` events, newest first.
    pub fn events(&self, limit: u32) -> Result<Vec<Event>> {
        let sql = format!("{EVENT} ORDER BY id DESC LIMIT ?1");
        self.db
            .once()
            .rows(&sql, &[&i64::from(limit)], Event::from_row)
    }

    /// The newest `limit` events of `scope`, newest first.
    ///
    /// A repository's events are read from the newest back until `limit` match, each matched
    /// through indexes (its slot by path, a task by lease); a task's through the lease index
    /// alone. So a `log` costs what it shows, however long the history, as long as this
    /// repository is not a small part of a ledger many others write to.
    pub(crate) fn events_in(&self, scope: &EventScope<'_>, limit: u32) -> Result<Vec<LoggedEvent>> {
        let limit = i64::from(limit);
        match scope {
            EventScope::All => self.db.once().rows(
                &format!("{LOGGED} ORDER BY e.id DESC LIMIT ?1"),
                &[&limit],
                LoggedEvent::from_row,
            ),
            EventScope::Repo(repo) => {
                let sql = format!(
                    "{LOGGED} WHERE s.repo_id = ?1 \
                     OR (e.resource_kind = 'issue' AND ?3 IS NOT NULL \
                       AND substr(e.resource_key, 1, length(?3)) = ?3) \
                     OR (e.resource_kind = 'worktree' AND s.n IS NULL \
                       AND (e.resource_key IN ({}) \
                         OR EXISTS (SELECT 1 FROM tasks t \
                           WHERE t.lease_id = e.lease_id AND t.repo_id = ?1))) \
                     ORDER BY e.id DESC LIMIT ?4",
                    self.db.each_text(2)
                );
                let worktrees = serde_json::to_string(repo.worktrees).unwrap_or_default();
                let issues = repo.issue_namespace.map(|ns| format!("{ns}#"));
                let args: &[&dyn super::db::Param] = &[&repo.repo_id, &worktrees, &issues, &limit];
                self.db.once().rows(&sql, args, LoggedEvent::from_row)
            }
            EventScope::Leases(leases) => {
                let sql = format!(
                    "{LOGGED} WHERE e.lease_id IN ({}) ORDER BY e.id DESC LIMIT ?2",
                    self.db.each_text(1)
                );
                let leases = serde_json::to_string(leases).unwrap_or_default();
                self.db
                    .once()
                    .rows(&sql, &[&leases, &limit], LoggedEvent::from_row)
            }
        }
    }

    /// The slot and issue leases of every task named `name` (of `repo`, or of any repository);
    /// `None` when no task had the name.
    pub(crate) fn task_leases(
        &self,
        name: &str,
        repo: Option<&RepoId>,
    ) -> Result<Option<Vec<LeaseId>>> {
        let rows = self.db.once().rows(
            "SELECT lease_id, issue_lease_id FROM tasks \
             WHERE name = ?1 AND (?2 IS NULL OR repo_id = ?2) ORDER BY id",
            &[&name, &repo],
            |r| Ok([r.get::<Option<LeaseId>>(0)?, r.get(1)?]),
        )?;
        let mut found = None;
        for pair in rows {
            let leases: &mut Vec<LeaseId> = found.get_or_insert_default();
            leases.extend(pair.into_iter().flatten());
        }
        Ok(found)
    }

    /// Every event about one lease, oldest first.
    pub fn events_of_lease(&self, lease_id: &LeaseId) -> Result<Vec<Event>> {
        let sql = format!("{EVENT} WHERE lease_id = ?1 ORDER BY id");
        self.db.once().rows(&sql, &[lease_id], Event::from_row)
    }
}
