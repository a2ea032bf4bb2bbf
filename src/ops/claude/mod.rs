//! Claude Code hands its worktrees to git-hand through its `WorktreeCreate`, `WorktreeRemove` and
//! `SessionStart` hooks (docs/agents.md). This module reads what those hooks are handed and names
//! a session's leases; the hooks' work lives in one file each.
//!
//! A session's slot is keyed by its session id *and* the worktree name it asked for (a subagent
//! with `isolation: worktree` shares its parent's session id and asks for `agent-<id>`). Both are
//! kept in the holder of the slot's tenure, `claude:<session id>:<name>` (see [`SessionHolder`]),
//! so a retried `WorktreeCreate` is the holder's idempotent acquire, and a session's own tenures
//! of a slot are found by holder, never by who holds the slot now.

pub mod create;
mod error;
pub mod exclude;
pub mod input;
pub mod remove;
pub mod session_start;
pub mod settings;

pub use error::ClaudeError;

pub use input::{HookInput, SessionId};

/// The prefix of every holder a Claude Code session's lease carries.
pub const HOLDER_PREFIX: &str = "claude:";

/// The environment variable Claude Code sets in every Bash command of a session.
pub(crate) const SESSION_ENV: &str = "CLAUDE_CODE_SESSION_ID";

/// Who holds a slot leased for a Claude Code session: the session (when Claude Code said which)
/// and the worktree name it asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionHolder {
    pub session: Option<SessionId>,
    pub name: String,
}

impl SessionHolder {
    /// The holder string: `claude:<session id>:<name>`, or `claude::<name>` when Claude Code sent
    /// no session id (the slot is then keyed by name alone).
    pub fn holder(&self) -> String {
        let session = self.session.as_ref().map_or("", SessionId::as_str);
        format!("{HOLDER_PREFIX}{session}:{}", self.name)
    }

    /// The holder's parts, when it is a session's; `None` for any other holder.
    pub fn parse(holder: &str) -> Option<Self> {
        let rest = holder.strip_prefix(HOLDER_PREFIX)?;
        let (session, name) = rest.split_once(':')?;
        let session = match session {
            "" => None,
            s => Some(SessionId::parse(s)?),
        };
        Some(Self {
            session,
            name: name.to_string(),
        })
    }

    /// The prefix every holder of `session`'s leases starts with, whatever worktree name.
    pub(crate) fn prefix_of(session: &SessionId) -> String {
        format!("{HOLDER_PREFIX}{}:", session.as_str())
    }
}

/// The session id the environment carries (`CLAUDE_CODE_SESSION_ID`), when it is one. Read only
/// as a refusal signal: a session that held an earlier tenure of a slot is refused there, but
/// the variable never grants anything (any process can set it).
pub(crate) fn session_in_env(env: &crate::platform::env::Env) -> Option<SessionId> {
    env.var(SESSION_ENV).and_then(|s| SessionId::parse(&s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_holder_round_trips_with_and_without_a_session() {
        let sid = SessionId::parse("0b6c2f1e-5a4d-4c3b-9e8f-123456789abc").unwrap();
        let h = SessionHolder {
            session: Some(sid.clone()),
            name: "agent-a1b2:x".into(),
        };
        assert_eq!(
            h.holder(),
            "claude:0b6c2f1e-5a4d-4c3b-9e8f-123456789abc:agent-a1b2:x"
        );
        assert_eq!(SessionHolder::parse(&h.holder()), Some(h.clone()));
        assert!(h.holder().starts_with(&SessionHolder::prefix_of(&sid)));
        let by_name = SessionHolder {
            session: None,
            name: "feat1".into(),
        };
        assert_eq!(by_name.holder(), "claude::feat1");
        assert_eq!(SessionHolder::parse("claude::feat1"), Some(by_name));
        for other in ["alice@laptop", "claude", "claude:", "claude:bad id:x"] {
            assert_eq!(SessionHolder::parse(other), None, "{other}");
        }
    }
}
