//! Validation of the names users type: task names, issue ids, holders.
//!
//! Task names become directory and branch names, so the rule is strict: `[A-Za-z0-9._-]{1,64}`,
//! not starting with `-` or `.`. No accepted name can climb out of the pool root.

use super::{Error, Result};

pub fn task_name(name: &str) -> Result<&str> {
    let ok = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && !name.starts_with(['-', '.']);
    if ok {
        Ok(name)
    } else {
        Err(Error::Usage {
            message: format!(
                "invalid task name {name:?}: use 1 to 64 of A-Z a-z 0-9 . _ -, not starting with - or ."
            ),
            hints: vec!["git hand spawn fix-login".into()],
        })
    }
}

/// An issue id as typed (`42`, `#42`, `PROJ-123`): a leading `#` is dropped.
pub fn issue_id(id: &str) -> Result<&str> {
    let id = id.strip_prefix('#').unwrap_or(id);
    let ok = (1..=128).contains(&id.len()) && id.chars().all(|c| c.is_ascii_graphic());
    if ok {
        Ok(id)
    } else {
        Err(Error::usage(format!(
            "invalid issue id {id:?}: use 1 to 128 printable characters without spaces"
        ))
        .with_hint("git hand lease acquire 42"))
    }
}

pub fn holder(holder: &str) -> Result<&str> {
    let ok = (1..=200).contains(&holder.len()) && !holder.chars().any(char::is_control);
    if ok {
        Ok(holder)
    } else {
        Err(Error::usage(format!(
            "invalid holder {holder:?}: use 1 to 200 characters, no control characters"
        ))
        .with_hint("--holder alice@laptop   # or set GIT_HAND_HOLDER"))
    }
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
    fn issue_ids_drop_a_leading_hash() {
        assert_eq!(issue_id("#42").unwrap(), "42");
        assert!(issue_id("4 2").is_err());
        assert!(issue_id("").is_err());
    }
}
