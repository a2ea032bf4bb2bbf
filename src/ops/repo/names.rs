//! Validation of the names users type: task names, branch names, issue ids, holders, lease ids,
//! and the paths that end up in the ledger and the stamp.
//!
//! Task names become directory and branch names, so the rule is strict: `[A-Za-z0-9._-]{1,64}`,
//! not starting with `-` or `.`. No accepted name can climb out of the pool root.
//!
//! Everything a user names may end up in a message another user reads (a refused push names the
//! holder, the branch, the task), so no name may carry a control character (it breaks line
//! formats and can rewrite a terminal) or a bidirectional-formatting character (it displays text
//! in another order than it is stored, so a holder could make a refusal read as something else).

use std::path::{Path, PathBuf};

use crate::ledger::LeaseId;
use crate::ops::{Kind, Result};

/// A name or path a user gave that git-hand refuses (always bad input: nothing was done). The
/// message says which rule it breaks; `cli` gives the example that keeps it.
#[derive(Debug, thiserror::Error)]
pub enum NameError {
    #[error(
        "invalid task name {name:?}: use 1 to 64 of A-Z a-z 0-9 . _ -, not starting with - or ."
    )]
    Task { name: String },
    #[error("invalid issue id {id:?}: use 1 to 128 printable characters without spaces")]
    Issue { id: String },
    /// `why`: what git (or git-hand, stricter) finds wrong with it.
    #[error("{name:?} is not a valid branch name: {why}; nothing was created")]
    Branch { name: String, why: String },
    /// The branch spawn names for `task` by default (`hand/<task>`) is not one git takes: the
    /// task name rules take names (`x.lock`, `a..b`) git refuses in a branch.
    #[error("{name:?} is not a valid branch name: {why}; nothing was created")]
    DefaultBranch {
        task: String,
        name: String,
        why: String,
    },
    #[error(
        "invalid holder {holder:?}: use 1 to 200 characters, no control or \
         bidirectional-formatting characters; nothing was changed"
    )]
    Holder { holder: String },
    #[error("--lease {id:?} is not a lease id (32 lower-case hex characters); nothing was changed")]
    LeaseId { id: String },
    /// A path git-hand would record: `what` says which and where it came from, `fix` is the
    /// command that sets a better one.
    #[error("{what} {path:?} {why}, which git-hand cannot record; nothing was written")]
    Path {
        what: String,
        path: PathBuf,
        why: String,
        fix: String,
    },
}

impl NameError {
    /// Always bad input.
    pub fn kind(&self) -> Kind {
        Kind::Usage
    }
}

/// Whether `c` may not appear in anything a user names: a control character or one of the
/// bidirectional-formatting characters (embeddings and overrides U+202A–U+202E, isolates
/// U+2066–U+2069, the marks U+200E, U+200F and U+061C).
pub(crate) fn is_deceptive(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}'
        )
}

/// The first character of `s` that [`is_deceptive`], for the message.
fn deceptive_in(s: &str) -> Option<char> {
    s.chars().find(|c| is_deceptive(*c))
}

pub(crate) fn task_name(name: &str) -> Result<&str> {
    let ok = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && !name.starts_with(['-', '.']);
    if ok {
        Ok(name)
    } else {
        Err(NameError::Task {
            name: name.to_string(),
        }
        .into())
    }
}

/// An issue id as typed (`42`, `#42`, `PROJ-123`): a leading `#` is dropped.
pub(crate) fn issue_id(id: &str) -> Result<&str> {
    let id = id.strip_prefix('#').unwrap_or(id);
    let ok = (1..=128).contains(&id.len()) && id.chars().all(|c| c.is_ascii_graphic());
    if ok {
        Ok(id)
    } else {
        Err(NameError::Issue { id: id.to_string() }.into())
    }
}

/// A branch name for `git switch -c`, judged in-process the way `git check-ref-format --branch`
/// judges it ([`crate::git::refname`]), so a name git would refuse is a usage error before the
/// ledger is opened instead of a failed `git switch` after a slot was claimed (issue 10). Three
/// refusals are stricter than git: `@` alone (git's shorthand for HEAD), a name starting with
/// `refs/` (it would become `refs/heads/refs/...`), and [deceptive](is_deceptive) characters.
pub fn branch(name: &str) -> Result<&str> {
    match branch_problem(name) {
        None => Ok(name),
        Some(why) => Err(NameError::Branch {
            name: name.to_string(),
            why,
        }
        .into()),
    }
}

/// The branch spawn gives `task` when none is named (`hand/<task>`), judged before anything is
/// leased (issue 22 item 10).
pub fn default_branch(task: &str) -> Result<String> {
    let name = format!("hand/{task}");
    match branch_problem(&name) {
        None => Ok(name),
        Some(why) => Err(NameError::DefaultBranch {
            task: task.to_string(),
            name,
            why,
        }
        .into()),
    }
}

fn branch_problem(name: &str) -> Option<String> {
    use crate::git::refname;
    if let Some(why) = refname::misread_as_branch(name) {
        return Some(why.into());
    }
    if name.starts_with("refs/") {
        return Some("name the branch without refs/heads/ (git-hand adds it)".into());
    }
    if let Some(c) = deceptive_in(name) {
        return Some(format!("it contains the character {}", code_point(c)));
    }
    refname::invalid_branch(name)
}

pub fn holder(holder: &str) -> Result<&str> {
    let ok = (1..=200).contains(&holder.len()) && deceptive_in(holder).is_none();
    if ok {
        Ok(holder)
    } else {
        Err(NameError::Holder {
            holder: holder.to_string(),
        }
        .into())
    }
}

/// A lease id given on the command line (`--lease`): 32 lower-case hex characters, as minted.
pub fn lease_id(id: &str) -> Result<LeaseId> {
    LeaseId::parse(id).ok_or_else(|| NameError::LeaseId { id: id.to_string() }.into())
}

/// A path git-hand records (in the ledger, the stamp, messages): it must be UTF-8 and carry no
/// [deceptive](is_deceptive) character, because the stamp is one field per line and a newline in
/// a path would end its field early. `what` says which path and where it came from; `fix` is the
/// command that sets a better one. Returns the path as text.
pub fn path<'p>(path: &'p Path, what: &str, fix: &str) -> Result<&'p str> {
    let why = match path.to_str() {
        None => "is not valid UTF-8".to_string(),
        Some(text) => match deceptive_in(text) {
            None => return Ok(text),
            Some(c) => format!("contains the character {}", code_point(c)),
        },
    };
    Err(NameError::Path {
        what: what.to_string(),
        path: path.to_path_buf(),
        why,
        fix: fix.to_string(),
    }
    .into())
}

/// `U+000A`: how a character that cannot be shown is named in a message.
pub(crate) fn code_point(c: char) -> String {
    format!("U+{:04X}", u32::from(c))
}

/// Whether `id` may name a machine on a team ledger (`hand.machine`, `/etc/machine-id`): 1 to
/// 64 letters, digits, `.`, `_` and `-`. Never a `:`, which separates the machine from the path
/// in a worktree resource's key.
pub(crate) fn is_machine_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_names_that_could_escape_or_confuse_are_refused() {
        let long = "a".repeat(65);
        for bad in [
            "",
            "../x",
            "-x",
            ".x",
            "a/b",
            "a b",
            "a\\b",
            long.as_str(),
            "é",
        ] {
            assert!(task_name(bad).is_err(), "{bad:?}");
        }
        for good in ["fix-login", "a", "A.b_c-9", &"a".repeat(64)] {
            assert!(task_name(good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn holders_with_control_or_bidi_characters_are_refused() {
        for bad in [
            "",
            "a\nb",
            "a\u{1b}[2Kb",
            "a\u{202E}b",
            "\u{2066}a",
            "a\u{200F}",
            "a\u{061C}",
        ] {
            assert!(holder(bad).is_err(), "{bad:?}");
        }
        for good in ["alice@laptop", "agent 7", "ü-日本"] {
            assert!(holder(good).is_ok(), "{good:?}");
        }
        let message = holder("a\u{202E}b").unwrap_err().to_string();
        assert!(message.contains("\\u{202e}"), "shown escaped: {message}");
    }

    #[test]
    fn branch_names_git_takes_but_git_hand_refuses_are_refused() {
        for bad in ["@", "refs/heads/x", "refs/x", "a\u{202E}b", "HEAD", "-x"] {
            assert!(branch(bad).is_err(), "{bad:?}");
        }
        for good in ["hand/t", "feature/x-1", "x/HEAD", "a/@", "é"] {
            assert!(branch(good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn paths_git_hand_cannot_record_are_refused() {
        use std::os::unix::ffi::OsStrExt;
        let odd = std::ffi::OsStr::from_bytes(b"/a/\xff/b");
        for bad in [Path::new("/a\nb"), Path::new("/a\u{202E}b"), Path::new(odd)] {
            assert!(path(bad, "the pool root", "fix").is_err(), "{bad:?}");
        }
        assert_eq!(path(Path::new("/a b/ü"), "x", "fix").unwrap(), "/a b/ü");
    }

    #[test]
    fn lease_ids_on_the_command_line_are_32_lower_case_hex() {
        assert!(lease_id(&"ab".repeat(16)).is_ok());
        for bad in ["nothex", "", &"AB".repeat(16), &"ab".repeat(17)] {
            assert!(lease_id(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn issue_ids_drop_a_leading_hash() {
        assert_eq!(issue_id("#42").unwrap(), "42");
        assert!(issue_id("4 2").is_err());
        assert!(issue_id("").is_err());
    }
}
