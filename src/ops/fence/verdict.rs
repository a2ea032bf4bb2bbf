//! The verdict: may the holder in this worktree push? Shared by `git hand status`, `git hand
//! check` and the pre-push hook, so all three always agree.
//!
//! Judging is a pure read of one ledger snapshot: the allow path writes nothing.

use serde::{Deserialize, Serialize};

use crate::clock::Millis;
use crate::ledger::{Ledger, Place, Task, Tenure, TenureState, View, WorktreeKey};
use crate::ops::claude::{SessionHolder, SessionId};
use crate::ops::pool::stamp::{self, Stamp};
use crate::ops::{Context, Result};

pub use crate::ops::fence::credential::{
    Credential, CredentialSource, Unparsed, env_credential, parse_env_credential,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Not a pool slot: allowed.
    Unmanaged,
    /// The presented lease is the slot's live tenure: allowed.
    Current,
    /// A newer tenure holds (or held) the slot: refused.
    Stale,
    /// The presented lease expired: refused.
    Expired,
    /// The presented lease was released (or the slot is free): refused.
    Released,
    /// The presented lease is not one this ledger granted for this slot: refused.
    UnknownLease,
    /// The task's issue lease is no longer live and its own: refused.
    IssueLost,
    /// `hand.requireCredential` is set and the environment carries none: refused.
    NoCredential,
}

impl Verdict {
    pub fn allows(self) -> bool {
        matches!(self, Verdict::Unmanaged | Verdict::Current)
    }
}

crate::word::words!(Verdict: "verdict");

/// A verdict and the facts behind it, for the message.
#[derive(Debug, Clone)]
pub struct Finding {
    pub verdict: Verdict,
    /// The slot (worktree key), when this is a managed worktree.
    pub slot: Option<WorktreeKey>,
    /// The presented tenure is of another resource than this slot (its key names the machine
    /// on a team ledger, so it is compared here, where the slot's resource is known).
    pub granted_elsewhere: bool,
    pub credential: Option<Credential>,
    /// Why the credential in the environment does not parse (the verdict is then
    /// `unknown-lease`): names the variable.
    pub credential_error: Option<String>,
    /// The tenure the credential names.
    pub tenure: Option<Tenure>,
    /// The slot's newest tenure (the one a stale credential lost to).
    pub newest: Option<Tenure>,
    /// The task of the presented tenure, or of the slot's live tenure.
    pub task: Option<Task>,
    /// The task's issue tenure, when it has one.
    pub issue: Option<Tenure>,
    /// The issue's live tenure now, when it is not the task's (who took it).
    pub issue_now: Option<Tenure>,
    pub now: Millis,
}

impl Finding {
    /// Not a slot: nothing to check.
    pub fn unmanaged(now: Millis) -> Self {
        Finding {
            verdict: Verdict::Unmanaged,
            slot: None,
            granted_elsewhere: false,
            credential: None,
            credential_error: None,
            tenure: None,
            newest: None,
            task: None,
            issue: None,
            issue_now: None,
            now,
        }
    }
}

/// Whether the stamp may stand in for a credential the environment does not carry
/// (`hand.requireCredential`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CredentialRule {
    /// No credential in the environment: the stamp's is judged.
    StampSuffices,
    /// `hand.requireCredential=true`: without one in the environment, `no-credential`.
    EnvRequired,
}

/// Judges the worktree at `workdir` (a realpath) for a process that may run in a Claude Code
/// session (`session`, from `CLAUDE_CODE_SESSION_ID`). The session id is only ever a refusal
/// signal (any process can set it): a session that held an earlier tenure of this slot, which
/// now belongs to another tenure, is refused as stale whatever else it presents, which also
/// covers the sessions Claude Code's hooks did not reach (no credential in their environment,
/// so the stamp, the new holder's, would have been judged). One exception keeps subagents
/// working: the credential `SessionStart` exported is the lease of the worktree the session
/// started in, and every Bash command of the session carries it, also a subagent's in its own
/// slot; a credential of the same session for another slot, where the session holds a tenure
/// of this one, is set aside and the stamp judged instead, as for a process presenting none.
pub(crate) fn judge_in_session(
    view: &View<'_>,
    workdir: &WorktreeKey,
    stamp: Option<&Stamp>,
    env: Option<Result<Credential, String>>,
    rule: CredentialRule,
    session: Option<&SessionId>,
) -> crate::ledger::Result<Finding> {
    let mut f = judge(view, workdir, stamp, env, rule)?;
    // The hooks' usual case, a process of no session: nothing more to read or copy.
    let Some(session) = session else {
        return Ok(f);
    };
    if f.slot.is_none() {
        return Ok(f);
    }
    let prefix = SessionHolder::prefix_of(session);
    let Some(own) = view.newest_of_holder(&view.worktree(workdir), &prefix)? else {
        return Ok(f);
    };
    let sessions_own_elsewhere = f.granted_elsewhere
        && f.credential
            .as_ref()
            .is_some_and(|c| c.source == CredentialSource::Env)
        && f.tenure
            .as_ref()
            .is_some_and(|t| t.holder.starts_with(&prefix));
    if sessions_own_elsewhere {
        f = judge(view, workdir, stamp, None, rule)?;
    }
    let judged_own = f
        .tenure
        .as_ref()
        .is_some_and(|t| t.lease_id == own.lease_id);
    if f.verdict.allows() && !judged_own {
        f.verdict = Verdict::Stale;
        f.credential = Some(Credential {
            lease_id: own.lease_id.clone(),
            token: Some(own.token),
            source: CredentialSource::Session,
        });
        f.task = view.task_by_lease(&own.lease_id)?;
        f.issue = None;
        f.issue_now = None;
        f.tenure = Some(own);
    }
    Ok(f)
}

/// Judges the worktree at `workdir` (a realpath).
pub fn judge(
    view: &View<'_>,
    workdir: &WorktreeKey,
    stamp: Option<&Stamp>,
    env: Option<Result<Credential, String>>,
    rule: CredentialRule,
) -> crate::ledger::Result<Finding> {
    let now = view.now();
    let mut f = Finding::unmanaged(now);
    let is_slot = view.slot_by_path(workdir)?.is_some();
    if !is_slot && stamp.is_none() {
        return Ok(f);
    }
    let slot = view.worktree(workdir);
    f.slot = Some(workdir.clone());
    f.newest = view.newest(&slot)?;
    let env = match env {
        Some(Err(why)) => {
            f.credential_error = Some(why);
            f.verdict = Verdict::UnknownLease;
            return Ok(f);
        }
        Some(Ok(credential)) => Some(credential),
        None => None,
    };
    let from_env = env.is_some();
    f.credential = env.or_else(|| stamp.map(Credential::from));
    let Some(cred) = f.credential.clone() else {
        f.verdict = if view.held(&slot)?.is_some() {
            Verdict::UnknownLease
        } else {
            Verdict::Released
        };
        return Ok(f);
    };
    // The slot's newest tenure is, in a push from a current slot, the presented one: read once.
    f.tenure = match &f.newest {
        Some(newest) if newest.lease_id == cred.lease_id => Some(newest.clone()),
        _ => view.tenure(&cred.lease_id)?,
    };
    let Some(tenure) = f.tenure.clone() else {
        f.verdict = Verdict::UnknownLease;
        return Ok(f);
    };
    f.task = view.task_by_lease(&tenure.lease_id)?;
    f.granted_elsewhere = tenure.resource != slot;
    if f.granted_elsewhere || cred.token.is_some_and(|t| t != tenure.token) {
        f.verdict = Verdict::UnknownLease;
        return Ok(f);
    }
    if f.newest.as_ref().is_some_and(|n| n.token > tenure.token) {
        f.verdict = Verdict::Stale;
        return Ok(f);
    }
    f.verdict = match tenure.state(now) {
        TenureState::Ended => Verdict::Released,
        TenureState::Expired => Verdict::Expired,
        TenureState::Live => Verdict::Current,
    };
    if f.verdict == Verdict::Current {
        if rule == CredentialRule::EnvRequired && !from_env {
            f.verdict = Verdict::NoCredential;
        } else if let Some(issue_id) = f.task.as_ref().and_then(|t| t.issue_lease_id.clone()) {
            f.issue = view.tenure(&issue_id)?;
            if let Some(issue) = f.issue.clone().filter(|t| !t.is_live(now)) {
                f.verdict = Verdict::IssueLost;
                f.issue_now = view.current(&issue.resource)?;
            } else if f.issue.is_none() {
                f.verdict = Verdict::IssueLost;
            }
        }
    }
    Ok(f)
}

/// The worktree a verdict is about: its stamp, its key in the ledger, the ledger that granted its
/// lease, and whether the environment must carry the credential. Shared by `status`, `check`
/// and the pre-push hook, so all three look in the same ledger.
pub(crate) struct Subject {
    pub stamp: Option<Stamp>,
    /// The work tree's realpath (a slot's ledger key).
    pub key: WorktreeKey,
    /// The stamp's ledger when there is a stamp (it granted the lease: a hook running under
    /// another HOME or XDG_STATE_HOME still checks the right one instead of failing open;
    /// `Context::stamped_ledger` says how a team ledger is reached), else the configured one.
    pub ledger: Place,
    pub rule: CredentialRule,
    /// The Claude Code session the process runs in (`CLAUDE_CODE_SESSION_ID`): a refusal
    /// signal ([`judge_in_session`]).
    pub session: Option<SessionId>,
    /// The credential the context's environment presents, if any (or why it does not parse).
    pub presented: Option<std::result::Result<Credential, String>>,
}

impl Subject {
    /// The work tree's realpath, as [`Subject::key`] (the ledger key of a slot).
    pub(crate) fn key_of(ctx: &Context) -> Result<WorktreeKey> {
        let workdir = ctx.repo()?.loc.workdir.clone().unwrap_or_default();
        Ok(WorktreeKey::from_canonical(&workdir))
    }

    pub fn of(ctx: &Context) -> Result<Self> {
        let repo = ctx.repo()?;
        let stamp = stamp::read_checked(&repo.loc.admin_dir)?;
        let ledger = match &stamp {
            Some(s) => ctx.stamped_ledger(&s.ledger),
            None => ctx.ledger_location()?.place,
        };
        let key = Self::key_of(ctx)?;
        let rule = if crate::ops::repo::settings::require_credential(repo)? {
            CredentialRule::EnvRequired
        } else {
            CredentialRule::StampSuffices
        };
        Ok(Self {
            stamp,
            key,
            ledger,
            rule,
            session: crate::ops::claude::session_in_env(ctx.env()),
            presented: env_credential(ctx.env()),
        })
    }

    /// The granting ledger, never created. `None` when there is none and nothing was stamped
    /// (git-hand never ran here); a stamped worktree whose ledger is gone is an error.
    pub fn ledger(&self, ctx: &Context) -> Result<Option<Ledger>> {
        match ctx.open_existing(&self.ledger)? {
            Some(ledger) => Ok(Some(ledger)),
            None if self.stamp.is_some() => {
                Err(stamp::ledger_gone(&self.ledger, &ctx.repo()?.loc.admin_dir))
            }
            None => Ok(None),
        }
    }

    /// The verdict, with the credential from the environment, else the stamp (and the
    /// session's own earlier tenure refusing it).
    pub fn judge(&self, view: &View<'_>) -> crate::ledger::Result<Finding> {
        judge_in_session(
            view,
            &self.key,
            self.stamp.as_ref(),
            self.presented.clone(),
            self.rule,
            self.session.as_ref(),
        )
    }
}
