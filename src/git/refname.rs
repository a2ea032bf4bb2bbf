//! What git takes as the name of a new branch, judged in-process the way
//! `git check-ref-format --branch` and `git switch -c` judge it, so a name git would refuse is
//! refused before anything is leased instead of failing a `git switch` in a claimed slot.
//! git-hand's own, stricter rules live with the other names users type (`ops::names`).

use gix::bstr::ByteSlice;

/// Why git would read `name` as something other than a new branch's name: `HEAD` and `@` (its
/// shorthand) name the current commit, and a leading `-` is read as an option. `None` when it
/// would not.
pub fn misread_as_branch(name: &str) -> Option<&'static str> {
    if name == "HEAD" || name == "@" {
        Some("git reads it as the current commit")
    } else if name.starts_with('-') {
        Some("git would read it as an option")
    } else {
        None
    }
}

/// Why `refs/heads/<name>` breaks git's reference-name rules (gix's reading of
/// `git check-ref-format`), in lower case for the middle of a sentence; `None` when it is valid.
pub fn invalid_branch(name: &str) -> Option<String> {
    let full = format!("refs/heads/{name}");
    gix::validate::reference::branch_name(full.as_bytes().as_bstr())
        .err()
        .map(|e| e.to_string().to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_git_reads_as_a_commit_or_an_option_are_misread() {
        for misread in ["HEAD", "@", "-x", "--force"] {
            assert!(misread_as_branch(misread).is_some(), "{misread:?}");
        }
        for plain in ["x/HEAD", "a/@", "x-", "head"] {
            assert_eq!(misread_as_branch(plain), None, "{plain:?}");
        }
    }

    #[test]
    fn names_git_check_ref_format_refuses_are_invalid() {
        for bad in [
            "a..b", "a b", "a~1", "a^", "a:b", "a?", "a*", "a[", "x.lock", "a/", "", "a\nb",
        ] {
            assert!(invalid_branch(bad).is_some(), "{bad:?}");
        }
        for good in ["hand/t", "feature/x-1", "é", "refs/heads/x"] {
            assert_eq!(invalid_branch(good), None, "{good:?}");
        }
    }
}
