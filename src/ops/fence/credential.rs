//! The credential: what a holder presents (`GIT_HAND_LEASE`, `GIT_HAND_TOKEN`, and the task's
//! name in `GIT_HAND_TASK`), read from the environment or from the slot's stamp, and the
//! variables `spawn --exec` and `git hand env` hand out. The one place that knows their names.

use std::ffi::OsStr;

use serde::Serialize;

use crate::ledger::{LeaseId, Task, Tenure};
use crate::ops::pool::stamp::Stamp;
use crate::platform::env::Env;

/// The lease id a holder presents.
pub(crate) const LEASE_ENV: &str = "GIT_HAND_LEASE";
/// The fencing token that came with it.
pub(crate) const TOKEN_ENV: &str = "GIT_HAND_TOKEN";
/// The task's name (for people and scripts; never judged).
pub(crate) const TASK_ENV: &str = "GIT_HAND_TASK";

/// The variables that carry a task's credential, as `git hand env` prints them and `spawn --exec`
/// sets them.
pub(crate) fn env_vars(task: &Task, tenure: &Tenure) -> Vec<(&'static str, String)> {
    vec![
        (LEASE_ENV, tenure.lease_id.to_string()),
        (TOKEN_ENV, tenure.token.to_string()),
        (TASK_ENV, task.name.clone()),
    ]
}

/// Where the credential came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CredentialSource {
    /// `GIT_HAND_LEASE` / `GIT_HAND_TOKEN` in the environment.
    Env,
    /// The stamp in the worktree's admin dir.
    Stamp,
    /// The Claude Code session's own earlier tenure of this slot, found by the session id its
    /// commands carry (`CLAUDE_CODE_SESSION_ID`): only ever the credential of a refusal.
    Session,
}

/// What a holder presents: a lease id and, usually, the token that came with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credential {
    pub lease_id: LeaseId,
    pub token: Option<i64>,
    pub source: CredentialSource,
}

/// The credential in the environment `env`: `None` when neither `GIT_HAND_LEASE` nor
/// `GIT_HAND_TOKEN` is set to something; else the credential, or why it does not parse.
pub fn env_credential(env: &Env) -> Option<Result<Credential, String>> {
    parse_env_credential(
        env.var_os(LEASE_ENV).as_deref(),
        env.var_os(TOKEN_ENV).as_deref(),
    )
    .map(|parsed| parsed.map_err(|e| e.in_env()))
}

/// Why a presented credential does not parse: which of its two values, and the value as given.
/// Each caller words it with its own names for them (the environment's variables, the server's
/// push options).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unparsed {
    /// The token is set; the lease id is unset or empty.
    TokenWithoutLease,
    /// The lease id is not 32 lower-case hex characters.
    Lease(String),
    /// The token is not a positive integer (that fits an i64).
    Token(String),
}

impl Unparsed {
    /// In the environment's words: the variable to fix.
    pub fn in_env(&self) -> String {
        match self {
            Self::TokenWithoutLease => format!("{TOKEN_ENV} is set but {LEASE_ENV} is empty"),
            Self::Lease(value) => {
                format!("{LEASE_ENV}={value:?} is not a lease id (32 lower-case hex characters)")
            }
            Self::Token(value) => format!("{TOKEN_ENV}={value:?} is not a positive integer"),
        }
    }
}

/// A credential from the two values (the environment's, or the push options a server reads).
/// Present when either is set and not empty; then the lease id must be 32 lower-case hex
/// characters and the token, when set, a positive integer that fits an i64. A credential that
/// does not parse is never "no credential" (which would fall back to the stamp and could be
/// judged `current`): it is judged `unknown-lease`, with the value to fix (issue 10).
pub fn parse_env_credential(
    lease: Option<&OsStr>,
    token: Option<&OsStr>,
) -> Option<Result<Credential, Unparsed>> {
    let set = |v: Option<&OsStr>| v.is_some_and(|v| !v.is_empty());
    if !set(lease) && !set(token) {
        return None;
    }
    let Some(raw) = lease.filter(|v| !v.is_empty()) else {
        return Some(Err(Unparsed::TokenWithoutLease));
    };
    let Some(lease_id) = raw.to_str().and_then(LeaseId::parse) else {
        return Some(Err(Unparsed::Lease(raw.to_string_lossy().into_owned())));
    };
    let token = match token {
        None => None,
        Some(raw) => match raw.to_str().and_then(parse_token) {
            Some(t) => Some(t),
            None => return Some(Err(Unparsed::Token(raw.to_string_lossy().into_owned()))),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(lease: Option<&str>, token: Option<&str>) -> Option<Result<Credential, String>> {
        parse_env_credential(lease.map(OsStr::new), token.map(OsStr::new))
            .map(|parsed| parsed.map_err(|e| e.in_env()))
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

    #[test]
    fn the_parser_says_which_value_does_not_parse_and_the_value_as_given() {
        let raw = |lease: Option<&str>, token: Option<&str>| {
            parse_env_credential(lease.map(OsStr::new), token.map(OsStr::new))
                .unwrap()
                .unwrap_err()
        };
        let id = "ab".repeat(16);
        assert_eq!(raw(Some(""), Some("1")), Unparsed::TokenWithoutLease);
        assert_eq!(raw(Some("zz"), Some("x")), Unparsed::Lease("zz".into()));
        assert_eq!(raw(Some(&id), Some("0")), Unparsed::Token("0".into()));
    }
}
