//! The append-only event log: every acquire, renew, release, expiry takeover, refusal and repair.
//!
//! Rows are only ever inserted (triggers refuse updates and deletes), so the ledger is its own
//! audit trail. `git hand log` reads it newest first.

use rusqlite::{Row, params};
use serde::{Deserialize, Serialize};

use super::ids::LeaseId;
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
