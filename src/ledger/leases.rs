//! The lease engine: acquire, renew, release, current and list over tenures (DESIGN §3).
//!
//! Every write here runs inside the caller's [`Tx`], so an operation that must record more than a
//! lease (spawn records a task too) stays one transaction. Reads filter by liveness and never
//! write: no read path can end a tenure or touch a token.

use super::db::{Param, Row};
use super::events::EventKind;
use super::ids::{LeaseId, RepoId};
use super::tenure::{Resource, ResourceKind, Tenure, TenureState};
use super::{LedgerError, Result, Tx, View};
use crate::clock::Millis;

/// Who is asking: a holder name, or the credential of one tenure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By<'a> {
    Holder(&'a str),
    Lease(&'a LeaseId),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acquire {
    /// `fresh` is false when the same holder already held it (idempotent acquire).
    /// `superseded` is the expired tenure this acquisition ended, if any.
    Acquired {
        tenure: Tenure,
        fresh: bool,
        superseded: Option<Tenure>,
    },
    Held(Tenure),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Renew {
    Renewed(Tenure),
    /// The caller holds no live tenure; the live holder, if there is one.
    NotHolder(Option<Tenure>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Release {
    /// The tenure that was ended, or `None` when there was nothing to release.
    Released(Option<Tenure>),
    NotHolder(Tenure),
}

const TENURE_COLUMNS: &str = "t.lease_id, r.kind, r.key, t.token, t.holder, t.ttl_ms, \
     t.acquired_at, t.renewed_at, t.expires_at, t.ended_at, t.end_reason \
     FROM tenures t JOIN resources r ON r.id = t.resource_id";

/// A tenure as the database returns it, before its kind is checked.
struct TenureRow {
    lease_id: LeaseId,
    kind: String,
    key: String,
    token: i64,
    holder: String,
    ttl_ms: Option<i64>,
    acquired_at: i64,
    renewed_at: Option<i64>,
    expires_at: Option<i64>,
    ended_at: Option<i64>,
    end_reason: Option<String>,
}

impl TenureRow {
    fn from_row(r: &Row<'_>) -> Result<Self> {
        Ok(Self {
            lease_id: r.get(0)?,
            kind: r.get(1)?,
            key: r.get(2)?,
            token: r.get(3)?,
            holder: r.get(4)?,
            ttl_ms: r.get(5)?,
            acquired_at: r.get(6)?,
            renewed_at: r.get(7)?,
            expires_at: r.get(8)?,
            ended_at: r.get(9)?,
            end_reason: r.get(10)?,
        })
    }
}

impl TryFrom<TenureRow> for Tenure {
    type Error = LedgerError;
    fn try_from(row: TenureRow) -> Result<Self> {
        Ok(Tenure {
            lease_id: row.lease_id,
            resource: Resource {
                kind: row.kind.parse()?,
                key: row.key,
            },
            token: row.token,
            holder: row.holder,
            ttl_ms: row.ttl_ms,
            acquired_at: row.acquired_at,
            renewed_at: row.renewed_at,
            expires_at: row.expires_at,
            ended_at: row.ended_at,
            end_reason: row.end_reason,
        })
    }
}

impl View<'_> {
    fn tenure_where(&self, clause: &str, args: &[&dyn Param]) -> Result<Option<Tenure>> {
        let sql = format!("SELECT {TENURE_COLUMNS} WHERE {clause}");
        self.db
            .row(&sql, args, |r| TenureRow::from_row(r)?.try_into())
    }

    pub(super) fn tenures_where(&self, clause: &str, args: &[&dyn Param]) -> Result<Vec<Tenure>> {
        let sql = format!("SELECT {TENURE_COLUMNS} WHERE {clause}");
        self.db
            .rows(&sql, args, |r| TenureRow::from_row(r)?.try_into())
    }

    /// The tenure with this lease id, live or not.
    pub fn tenure(&self, lease_id: &LeaseId) -> Result<Option<Tenure>> {
        self.tenure_where("t.lease_id = ?1", &[lease_id])
    }

    /// The held (not ended) tenure of a resource, even if it has expired.
    pub fn held(&self, res: &Resource) -> Result<Option<Tenure>> {
        self.tenure_where(
            "r.kind = ?1 AND r.key = ?2 AND t.ended_at IS NULL",
            &[&res.kind.to_string(), &res.key],
        )
    }

    /// The held (not ended) tenure of every present slot of a repository, in one query: asking
    /// slot by slot cost a statement compilation each (SQLite recompiles a statement whose
    /// bound value it compared with a partial index's condition).
    pub(crate) fn held_slots(&self, repo_id: &RepoId) -> Result<Vec<Tenure>> {
        self.tenures_where(
            "t.ended_at IS NULL AND r.id IN \
             (SELECT resource_id FROM slots WHERE repo_id = ?1 AND removed_at IS NULL)",
            &[repo_id],
        )
    }

    /// The last token issued for a resource (0 before the first).
    pub fn last_token(&self, res: &Resource) -> Result<i64> {
        Ok(self
            .db
            .row(
                "SELECT last_token FROM resources WHERE kind = ?1 AND key = ?2",
                &[&res.kind.to_string(), &res.key],
                |r| r.get(0),
            )?
            .unwrap_or(0))
    }

    /// The live tenure of a resource, if any.
    pub fn current(&self, res: &Resource) -> Result<Option<Tenure>> {
        Ok(self.held(res)?.filter(|t| t.is_live(self.now)))
    }

    /// The tenure with the largest token of a resource (the one any older credential is stale
    /// against), live or not.
    pub fn newest(&self, res: &Resource) -> Result<Option<Tenure>> {
        self.tenure_where(
            "r.kind = ?1 AND r.key = ?2 ORDER BY t.token DESC LIMIT 1",
            &[&res.kind.to_string(), &res.key],
        )
    }

    /// The tenure with the largest token of a resource among those whose holder starts with
    /// `prefix` (a Claude Code session's own tenures of a slot), live or not.
    pub(crate) fn newest_of_holder(&self, res: &Resource, prefix: &str) -> Result<Option<Tenure>> {
        self.tenure_where(
            "r.kind = ?1 AND r.key = ?2 AND substr(t.holder, 1, length(?3)) = ?3 \
             ORDER BY t.token DESC LIMIT 1",
            &[&res.kind.to_string(), &res.key, &prefix],
        )
    }

    /// Every live tenure of one kind whose key starts with `prefix`, oldest first.
    pub fn list(&self, kind: ResourceKind, prefix: &str) -> Result<Vec<Tenure>> {
        let mut all = self.tenures_where(
            "t.ended_at IS NULL AND r.kind = ?1 AND substr(r.key, 1, length(?2)) = ?2 \
             ORDER BY t.acquired_at, t.lease_id",
            &[&kind.to_string(), &prefix],
        )?;
        all.retain(|t| t.is_live(self.now));
        Ok(all)
    }
}

impl Tx<'_> {
    /// The id of a resource, created with no token issued yet if it is new.
    pub(super) fn resource_id(&self, res: &Resource) -> Result<i64> {
        let args: &[&dyn Param] = &[&res.kind.to_string(), &res.key];
        self.db.once().exec(
            "INSERT INTO resources (kind, key) VALUES (?1, ?2) ON CONFLICT (kind, key) DO NOTHING",
            args,
        )?;
        self.db.once().one(
            "SELECT id FROM resources WHERE kind = ?1 AND key = ?2",
            args,
            |r| r.get(0),
        )
    }

    fn expiry(&self, ttl: Option<Millis>) -> Option<Millis> {
        ttl.map(|ttl| self.now.saturating_add(ttl))
    }

    /// Acquires `res` for `holder` (DESIGN §3). `ttl` `None` means open-ended.
    pub fn acquire(&self, res: &Resource, holder: &str, ttl: Option<Millis>) -> Result<Acquire> {
        let view = self.view();
        let mut superseded = None;
        if let Some(held) = view.held(res)? {
            match held.state(self.now) {
                TenureState::Live if held.holder == holder => {
                    let expires_at = self.expiry(ttl);
                    self.db.once().exec(
                        "UPDATE tenures SET expires_at = ?1, ttl_ms = ?2, renewed_at = ?3 \
                         WHERE lease_id = ?4",
                        &[&expires_at, &ttl, &self.now, &held.lease_id],
                    )?;
                    let tenure = Tenure {
                        expires_at,
                        ttl_ms: ttl,
                        renewed_at: Some(self.now),
                        ..held
                    };
                    self.log(EventKind::Reacquired, &tenure.resource, Some(&tenure), None)?;
                    return Ok(Acquire::Acquired {
                        tenure,
                        fresh: false,
                        superseded: None,
                    });
                }
                TenureState::Live => {
                    let why = format!("acquire by {holder}: held by {}", held.holder);
                    self.log(EventKind::Refused, res, Some(&held), Some(&why))?;
                    return Ok(Acquire::Held(held));
                }
                _ => superseded = Some(self.end(held, "expired-superseded")?),
            }
        }
        let tenure = self.start(res, holder, ttl)?;
        Ok(Acquire::Acquired {
            tenure,
            fresh: true,
            superseded,
        })
    }

    /// Starts a new tenure with the next token. The caller has made sure none is held.
    fn start(&self, res: &Resource, holder: &str, ttl: Option<Millis>) -> Result<Tenure> {
        let rid = self.resource_id(res)?;
        // The token is one more than the largest ever issued; the MAX over tenures is a second
        // witness in case `last_token` were ever wrong, so a token can never be issued twice.
        let (recorded, largest): (i64, i64) = self.db.once().one(
            "SELECT r.last_token, coalesce((SELECT max(token) FROM tenures WHERE resource_id = r.id), 0) \
             FROM resources r WHERE r.id = ?1",
            &[&rid],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let token = recorded.max(largest) + 1;
        let lease_id = LeaseId::mint().map_err(LedgerError::Random)?;
        let expires_at = self.expiry(ttl);
        self.db.once().exec(
            "UPDATE resources SET last_token = ?1 WHERE id = ?2",
            &[&token, &rid],
        )?;
        self.db.once().exec(
            "INSERT INTO tenures (lease_id, resource_id, token, holder, ttl_ms, acquired_at, expires_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            &[&lease_id, &rid, &token, &holder, &ttl, &self.now, &expires_at],
        )?;
        let tenure = Tenure {
            lease_id,
            resource: res.clone(),
            token,
            holder: holder.to_string(),
            ttl_ms: ttl,
            acquired_at: self.now,
            renewed_at: None,
            expires_at,
            ended_at: None,
            end_reason: None,
        };
        self.log(EventKind::Acquired, res, Some(&tenure), None)?;
        Ok(tenure)
    }

    /// Ends a held tenure, keeping its token, and records why.
    pub(super) fn end(&self, held: Tenure, reason: &str) -> Result<Tenure> {
        // An expired tenure ended at its expiry, not when somebody noticed.
        let ended_at = match held.expires_at {
            Some(e) if e < self.now => e,
            _ => self.now,
        };
        self.db.once().exec(
            "UPDATE tenures SET ended_at = ?1, end_reason = ?2 WHERE lease_id = ?3 AND ended_at IS NULL",
            &[&ended_at, &reason, &held.lease_id],
        )?;
        let tenure = Tenure {
            ended_at: Some(ended_at),
            end_reason: Some(reason.to_string()),
            ..held
        };
        let kind = if reason == "released" {
            EventKind::Released
        } else {
            EventKind::Ended
        };
        self.log(kind, &tenure.resource, Some(&tenure), Some(reason))?;
        Ok(tenure)
    }

    /// The held tenure that `by` designates on `res`, and the live tenure (for refusals).
    fn designated(&self, res: &Resource, by: By<'_>) -> Result<(Option<Tenure>, Option<Tenure>)> {
        let view = self.view();
        let held = view.held(res)?;
        let live = held.clone().filter(|t| t.is_live(self.now));
        let mine = match by {
            By::Holder(h) => held.filter(|t| t.holder == h),
            By::Lease(id) => held.filter(|t| &t.lease_id == id),
        };
        Ok((mine, live))
    }

    /// Renews the caller's live tenure. `ttl` `None` reuses the tenure's own TTL.
    pub fn renew(&self, res: &Resource, by: By<'_>, ttl: Option<Millis>) -> Result<Renew> {
        let (mine, live) = self.designated(res, by)?;
        let Some(mine) = mine.filter(|t| t.is_live(self.now)) else {
            let why = format!("renew by {}: not the live holder", describe(by));
            self.log(EventKind::Refused, res, live.as_ref(), Some(&why))?;
            return Ok(Renew::NotHolder(live));
        };
        let ttl = ttl.or(mine.ttl_ms);
        let expires_at = self.expiry(ttl);
        self.db.once().exec(
            "UPDATE tenures SET expires_at = ?1, ttl_ms = ?2, renewed_at = ?3 WHERE lease_id = ?4",
            &[&expires_at, &ttl, &self.now, &mine.lease_id],
        )?;
        let tenure = Tenure {
            expires_at,
            ttl_ms: ttl,
            renewed_at: Some(self.now),
            ..mine
        };
        self.log(EventKind::Renewed, res, Some(&tenure), None)?;
        Ok(Renew::Renewed(tenure))
    }

    /// Makes a live tenure open-ended until it is released, keeping its token: teardown holds
    /// its slot this way while git works in it, so a TTL that runs out meanwhile cannot hand
    /// the slot to a spawn in the middle of a reset.
    pub(crate) fn hold_open(&self, tenure: &Tenure) -> Result<Tenure> {
        self.db.once().exec(
            "UPDATE tenures SET expires_at = NULL, ttl_ms = NULL, renewed_at = ?1 \
             WHERE lease_id = ?2 AND ended_at IS NULL",
            &[&self.now, &tenure.lease_id],
        )?;
        let held = Tenure {
            expires_at: None,
            ttl_ms: None,
            renewed_at: Some(self.now),
            ..tenure.clone()
        };
        self.log(
            EventKind::Renewed,
            &held.resource,
            Some(&held),
            Some("open-ended while torn down"),
        )?;
        Ok(held)
    }

    /// Releases the caller's tenure. Releasing nothing succeeds; anyone may release an expired
    /// tenure; a lease id only ever releases its own tenure.
    pub fn release(&self, res: &Resource, by: By<'_>) -> Result<Release> {
        let (mine, live) = self.designated(res, by)?;
        if let Some(mine) = mine {
            return Ok(Release::Released(Some(self.end(mine, "released")?)));
        }
        // The retry of a release whose COMMIT went unanswered: a tenure this lease id names,
        // ended as released, is what the first run did (it committed), whoever acquired the
        // resource since; refusing would tell the caller its release failed when it happened.
        if let By::Lease(id) = by
            && self.retries_an_unanswered_commit()
            && let Some(ended) = self.view().tenure(id)?
            && ended.resource == *res
            && ended.end_reason.as_deref() == Some("released")
        {
            return Ok(Release::Released(Some(ended)));
        }
        match (by, live) {
            (_, Some(live)) => {
                let why = format!("release by {}: held by {}", describe(by), live.holder);
                self.log(EventKind::Refused, res, Some(&live), Some(&why))?;
                Ok(Release::NotHolder(live))
            }
            (By::Holder(_), None) => match self.view().held(res)? {
                // Expired and held by someone else: anyone may clear it.
                Some(expired) => Ok(Release::Released(Some(self.end(expired, "released")?))),
                None => Ok(Release::Released(None)),
            },
            // An old or unknown lease id never touches the current (expired) tenure.
            (By::Lease(_), None) => Ok(Release::Released(None)),
        }
    }
}

fn describe(by: By<'_>) -> String {
    match by {
        By::Holder(h) => h.to_string(),
        By::Lease(id) => format!("lease {id}"),
    }
}
