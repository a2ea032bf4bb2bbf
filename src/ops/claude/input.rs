//! What Claude Code hands a hook command: one JSON object on stdin. Only the fields git-hand
//! uses are read; unknown ones are ignored (Claude Code adds fields between releases), and the
//! worktree's name is read from `name`, else `worktree_name` (its docs have said both).

use super::ClaudeError;
use std::io::Read;
use std::path::PathBuf;

use serde::Deserialize;

use crate::ops::{Error, Result};

/// The most a hook's stdin may hold: the object is a few hundred bytes; anything near this is
/// not Claude Code's.
const INPUT_CAP: u64 = 1 << 20;

/// A Claude Code session id: what its hooks send as `session_id` and its Bash commands carry as
/// `CLAUDE_CODE_SESSION_ID` (a UUID today). Only letters, digits, `-` and `_`, at most 64: it
/// is part of a holder, and a `:` in it would make the holder ambiguous.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionId(String);

impl SessionId {
    /// What [`SessionId::parse`] takes, in the words of the errors that refuse a session id.
    pub(crate) const RULE: &str = "letters, digits, - and _, at most 64";

    pub fn parse(s: &str) -> Option<Self> {
        let ok = (1..=64).contains(&s.len())
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'));
        ok.then(|| Self(s.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for SessionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The fields of a hook's input git-hand reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookInput {
    pub session: Option<SessionId>,
    /// Where the session runs: the project directory (`WorktreeCreate`), the worktree
    /// (`SessionStart`).
    pub cwd: Option<PathBuf>,
    pub event: Option<String>,
    /// `WorktreeCreate`: the worktree name the session asked for.
    pub name: Option<String>,
    /// `WorktreeRemove`: the worktree to remove.
    pub worktree_path: Option<PathBuf>,
    /// `SessionStart`: `startup`, `resume`, `clear` or `compact`.
    pub source: Option<String>,
}

#[derive(Deserialize)]
struct Raw {
    session_id: Option<serde_json::Value>,
    cwd: Option<String>,
    hook_event_name: Option<String>,
    name: Option<String>,
    worktree_name: Option<String>,
    worktree_path: Option<String>,
    source: Option<String>,
}

impl HookInput {
    /// Reads and parses the hook's stdin.
    pub fn read(stdin: impl Read) -> Result<Self> {
        let mut text = Vec::new();
        stdin
            .take(INPUT_CAP + 1)
            .read_to_end(&mut text)
            .map_err(|e| bad(format!("cannot read the hook's input: {e}")))?;
        if text.len() as u64 > INPUT_CAP {
            return Err(bad(format!(
                "the hook's input is larger than {} KiB: not Claude Code's",
                INPUT_CAP >> 10
            )));
        }
        Self::parse(&text)
    }

    /// Parses the hook's input.
    pub fn parse(text: &[u8]) -> Result<Self> {
        if text.iter().all(u8::is_ascii_whitespace) {
            return Err(bad("the hook's input is empty".into()));
        }
        let value: serde_json::Value = serde_json::from_slice(text)
            .map_err(|e| bad(format!("the hook's input is not JSON ({e})")))?;
        if !value.is_object() {
            return Err(bad("the hook's input is JSON but not an object".into()));
        }
        let raw: Raw = serde_json::from_value(value).map_err(|e| {
            bad(format!(
                "the hook's input has a field of the wrong type ({e})"
            ))
        })?;
        let session = match raw.session_id {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::String(s)) if s.is_empty() => None,
            Some(serde_json::Value::String(s)) => Some(SessionId::parse(&s).ok_or_else(|| {
                bad(format!(
                    "session_id {} is not a session id ({})",
                    crate::shown::shown(&s),
                    SessionId::RULE
                ))
            })?),
            Some(other) => {
                return Err(bad(format!("session_id is not a string: {other}")));
            }
        };
        let nonempty = |s: Option<String>| s.filter(|s| !s.is_empty());
        Ok(Self {
            session,
            cwd: nonempty(raw.cwd).map(PathBuf::from),
            event: nonempty(raw.hook_event_name),
            name: nonempty(raw.name).or_else(|| nonempty(raw.worktree_name)),
            worktree_path: nonempty(raw.worktree_path).map(PathBuf::from),
            source: nonempty(raw.source),
        })
    }
}

/// A hook input git-hand cannot use: nothing was leased or changed.
fn bad(why: String) -> Error {
    ClaudeError::BadInput { why }.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_fields_claude_code_sends_and_ignores_the_rest() {
        let i = HookInput::parse(
            br#"{"session_id":"0b6c2f1e-5a4d-4c3b-9e8f-123456789abc","transcript_path":"/t.jsonl",
                "cwd":"/repo","hook_event_name":"WorktreeCreate","name":"feat1","future":{"x":1}}"#,
        )
        .unwrap();
        assert_eq!(
            i.session.as_ref().map(SessionId::as_str),
            Some("0b6c2f1e-5a4d-4c3b-9e8f-123456789abc")
        );
        assert_eq!(i.cwd, Some(PathBuf::from("/repo")));
        assert_eq!(i.event.as_deref(), Some("WorktreeCreate"));
        assert_eq!(i.name.as_deref(), Some("feat1"));
    }

    #[test]
    fn the_name_falls_back_to_worktree_name() {
        let i = HookInput::parse(br#"{"worktree_name":"old","cwd":"/r"}"#).unwrap();
        assert_eq!(i.name.as_deref(), Some("old"));
        let i = HookInput::parse(br#"{"name":"new","worktree_name":"old"}"#).unwrap();
        assert_eq!(i.name.as_deref(), Some("new"));
        let i = HookInput::parse(br#"{"name":"","worktree_name":"old"}"#).unwrap();
        assert_eq!(i.name.as_deref(), Some("old"));
    }

    #[test]
    fn the_desktop_apps_input_has_no_session() {
        let i = HookInput::parse(br#"{"cwd":"/r","hook_event_name":"WorktreeCreate","name":"a"}"#)
            .unwrap();
        assert_eq!(i.session, None);
        let i = HookInput::parse(br#"{"session_id":null,"name":"a"}"#).unwrap();
        assert_eq!(i.session, None);
    }

    #[test]
    fn bad_input_is_a_usage_error_that_says_what_it_got() {
        for (text, says) in [
            (&b""[..], "is empty"),
            (b"  \n", "is empty"),
            (b"{", "is not JSON"),
            (b"[1]", "not an object"),
            (br#"{"cwd": 3}"#, "wrong type"),
            (br#"{"session_id": 3}"#, "not a string"),
            (br#"{"session_id": "a:b"}"#, "is not a session id"),
        ] {
            let e = HookInput::parse(text).unwrap_err();
            assert!(
                matches!(e, Error::Claude(ref c) if matches!(**c, ClaudeError::BadInput { .. }))
                    && e.to_string().contains(says),
                "{text:?}: {e}"
            );
        }
    }

    #[test]
    fn read_caps_what_it_takes() {
        let big = vec![b' '; (INPUT_CAP + 10) as usize];
        let e = HookInput::read(&big[..]).unwrap_err();
        assert!(e.to_string().contains("larger than"), "{e}");
    }
}
