//! The verdict: may the holder in this worktree push? Shared by `git hand status`, `git hand
//! check` and the pre-push hook, so all three always agree.
//!
//! Judging is a pure read of one ledger snapshot: the allow path writes nothing.

use std::ffi::OsStr;
use std::path::PathBuf;

use serde::Serialize;

use super::stamp::{self, Stamp};
use super::{Context, Result};
use crate::clock::Millis;
use crate::ledger::{Ledger, Resource, Task, Tenure, TenureState, View};

/// Where the credential came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CredentialSource {
    /// `GIT_HAND_LEASE` / `GIT_HAND_TOKEN` in the environment.
    Env,
    /// The stamp in the worktree's admin dir.
    Stamp,
}

/// What a holder presents: a lease id and, usually, the token that came with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Credential {
    pub lease_id: String,
    pub token: Option<i64>,
    pub source: CredentialSource,
}

/// The credential in the environment: `None` when neither `GIT_HAND_LEASE` nor
/// `GIT_HAND_TOKEN` is set to something; else the credential, or why it does not parse.
pub fn env_credential() -> Option<Result<Credential, String>> {
    parse_env_credential(
        std::env::var_os("GIT_HAND_LEASE").as_deref(),
        std::env::var_os("GIT_HAND_TOKEN").as_deref(),
    )
}

/// A credential from the two variables' values. Present when either is set and not empty; then
/// the lease id must be 32 lower-case hex characters and the token, when set, a positive integer
/// that fits an i64. A credential that does not parse is never "no credential" (which would
/// fall back to the stamp and could be judged `current`): it is judged `unknown-lease`, with the
/// variable to fix (issue 10).
pub fn parse_env_credential(
    lease: Option<&OsStr>,
    token: Option<&OsStr>,
) -> Option<Result<Credential, String>> {
    let set = |v: Option<&OsStr>| v.is_some_and(|v| !v.is_empty());
    if !set(lease) && !set(token) {
        return None;
    }
    let lease_id = match lease.filter(|v| !v.is_empty()) {
        None => {
            return Some(Err(
                "GIT_HAND_TOKEN is set but GIT_HAND_LEASE is empty".into()
            ));
        }
        Some(raw) => match raw.to_str().filter(|id| crate::ids::is_lease_id(id)) {
            Some(id) => id.to_string(),
            None => {
                return Some(Err(format!(
                    "GIT_HAND_LEASE={:?} is not a lease id (32 lower-case hex characters)",
                    raw.to_string_lossy()
                )));
            }
        },
    };
    let token = match token {
        None => None,
        Some(raw) => match raw.to_str().and_then(parse_token) {
            Some(t) => Some(t),
            None => {
                return Some(Err(format!(
                    "GIT_HAND_TOKEN={:?} is not a positive integer",
                    raw.to_string_lossy()
                )));
            }
        },
    };
    Some(Ok(Credential {
        lease_id,
        token,
        source: CredentialSource::Env,
    }))
}

/// A token as `git hand env` prints it: digits only, at least 1, at most `i64::MAX`.
fn parse_token(text: &str) -> Option<i64> {
    let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    digits
        .then(|| text.parse::<i64>().ok())
        .flatten()
        .filter(|t| *t > 0)
}

impl From<&Stamp> for Credential {
    fn from(s: &Stamp) -> Self {
        Credential {
            lease_id: s.lease_id.clone(),
            token: Some(s.token),
            source: CredentialSource::Stamp,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Unmanaged => "unmanaged",
            Verdict::Current => "current",
            Verdict::Stale => "stale",
            Verdict::Expired => "expired",
            Verdict::Released => "released",
            Verdict::UnknownLease => "unknown-lease",
            Verdict::IssueLost => "issue-lost",
            Verdict::NoCredential => "no-credential",
        }
    }
}

/// A verdict and the facts behind it, for the message.
#[derive(Debug, Clone)]
pub struct Finding {
    pub verdict: Verdict,
    /// The slot (worktree key), when this is a managed worktree.
    pub slot: Option<String>,
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

/// Judges the worktree at `workdir` (a realpath).
pub fn judge(
    view: &View<'_>,
    workdir: &str,
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
    let slot = Resource::worktree(workdir);
    f.slot = Some(workdir.to_string());
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
    f.tenure = view.tenure(&cred.lease_id)?;
    let Some(tenure) = f.tenure.clone() else {
        f.verdict = Verdict::UnknownLease;
        return Ok(f);
    };
    f.task = view.task_by_lease(&tenure.lease_id)?;
    if tenure.resource != slot || cred.token.is_some_and(|t| t != tenure.token) {
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
pub struct Subject {
    pub stamp: Option<Stamp>,
    /// The work tree's realpath (a slot's ledger key).
    pub key: String,
    /// The stamp's ledger when there is a stamp (it granted the lease: a hook running under
    /// another HOME or XDG_STATE_HOME still checks the right one instead of failing open), else
    /// the default location.
    pub ledger_path: PathBuf,
    pub rule: CredentialRule,
}

impl Subject {
    /// The work tree's realpath, as [`Subject::key`] (the ledger key of a slot).
    pub fn key_of(ctx: &Context) -> Result<String> {
        Ok(ctx
            .repo()?
            .loc
            .workdir
            .as_deref()
            .map(|w| w.to_string_lossy().into_owned())
            .unwrap_or_default())
    }

    pub fn of(ctx: &Context) -> Result<Self> {
        let repo = ctx.repo()?;
        let stamp = stamp::read_checked(&repo.loc.admin_dir)?;
        let ledger_path = match &stamp {
            Some(s) => s.ledger.clone(),
            None => ctx.ledger_location()?.path,
        };
        let key = repo
            .loc
            .workdir
            .as_deref()
            .map(|w| w.to_string_lossy().into_owned())
            .unwrap_or_default();
        let rule = if repo.config_bool("hand.requireCredential", false)? {
            CredentialRule::EnvRequired
        } else {
            CredentialRule::StampSuffices
        };
        Ok(Self {
            stamp,
            key,
            ledger_path,
            rule,
        })
    }

    /// The granting ledger, never created. `None` when there is none and nothing was stamped
    /// (git-hand never ran here); a stamped worktree whose ledger is gone is an error.
    pub fn ledger(&self, ctx: &Context) -> Result<Option<Ledger>> {
        match ctx.open_existing(&self.ledger_path)? {
            Some(ledger) => Ok(Some(ledger)),
            None if self.stamp.is_some() => Err(stamp::ledger_gone(
                &self.ledger_path,
                &ctx.repo()?.loc.admin_dir,
            )),
            None => Ok(None),
        }
    }

    /// The verdict, with the credential from the environment, else the stamp.
    pub fn judge(&self, view: &View<'_>) -> crate::ledger::Result<Finding> {
        judge(
            view,
            &self.key,
            self.stamp.as_ref(),
            env_credential(),
            self.rule,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(lease: Option<&str>, token: Option<&str>) -> Option<Result<Credential, String>> {
        parse_env_credential(lease.map(OsStr::new), token.map(OsStr::new))
    }

    #[test]
    fn no_variable_set_is_no_credential() {
        assert_eq!(parse(None, None), None);
        assert_eq!(parse(Some(""), Some("")), None);
        assert_eq!(parse(None, Some("")), None);
    }

    #[test]
    fn a_well_formed_credential_parses_with_or_without_its_token() {
        let id = "ab".repeat(16);
        let c = parse(Some(&id), Some("7")).unwrap().unwrap();
        assert_eq!((c.lease_id.as_str(), c.token), (id.as_str(), Some(7)));
        let c = parse(Some(&id), None).unwrap().unwrap();
        assert_eq!(c.token, None);
        let max = i64::MAX.to_string();
        assert_eq!(
            parse(Some(&id), Some(&max)).unwrap().unwrap().token,
            Some(i64::MAX)
        );
    }

    #[test]
    fn a_credential_that_does_not_parse_names_the_variable() {
        let id = "ab".repeat(16);
        let huge = "1".repeat(23);
        for token in ["abc", "", "0", "-1", "+1", " 1", "1 ", "1e3", huge.as_str()] {
            let why = parse(Some(&id), Some(token)).unwrap().unwrap_err();
            assert!(why.starts_with("GIT_HAND_TOKEN="), "{token:?}: {why}");
        }
        for lease in ["zz", &"AB".repeat(16), &id[..31]] {
            let why = parse(Some(lease), Some("1")).unwrap().unwrap_err();
            assert!(why.starts_with("GIT_HAND_LEASE="), "{lease:?}: {why}");
        }
        let why = parse(Some(""), Some("1")).unwrap().unwrap_err();
        assert!(why.contains("GIT_HAND_LEASE"), "{why}");
        let why = parse(None, Some("1")).unwrap().unwrap_err();
        assert!(why.contains("GIT_HAND_LEASE"), "{why}");
    }
}
