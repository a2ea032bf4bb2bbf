//! What git takes as the name of a new branch, judged in-process the way
//! `git check-ref-format --branch` and `git switch -c` judge it, so a name git would refuse is
//! refused before anything is leased instead of failing a `git switch` in a claimed slot.
//! git-hand's own, stricter rules live with the other names users type (`ops::repo::names`).
//! Also how a branch pattern of the server's settings (`hand.requireLease`) matches a branch.

use gix::bstr::ByteSlice;

/// Why git would read `name` as something other than a new branch's name: `HEAD` and `@` (its
/// shorthand) name the current commit, and a leading `-` is read as an option. `None` when it
/// would not.
pub(crate) fn misread_as_branch(name: &str) -> Option<&'static str> {
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
pub(crate) fn invalid_branch(name: &str) -> Option<String> {
    let full = format!("refs/heads/{name}");
    gix::validate::reference::branch_name(full.as_bytes().as_bstr())
        .err()
        .map(|e| e.to_string().to_lowercase())
}

/// Whether `branch` (a branch's short name: `main`, `release/1.2`) matches `pattern`, a branch
/// name or glob as a server's `hand.requireLease` holds it, optionally written in full
/// (`refs/heads/release/*`). Matched as git matches ref globs: `*`, `?` and `[...]` stay inside
/// one path component, `**` crosses them (`team/**` matches `team/a/b`); a pattern is never a
/// prefix (`release` does not match `release/1.2`).
pub(crate) fn branch_matches(pattern: &str, branch: &str) -> bool {
    use gix::glob::wildmatch::Mode;
    let pattern = pattern.strip_prefix("refs/heads/").unwrap_or(pattern);
    gix::glob::wildmatch(
        pattern.as_bytes().as_bstr(),
        branch.as_bytes().as_bstr(),
        Mode::NO_MATCH_SLASH_LITERAL,
    )
}

/// Why `pattern` (a `hand.requireLease` value) can match no branch, in lower case for the
/// middle of a sentence; `None` when it is a branch pattern. A full ref name outside
/// `refs/heads/` names no branch; a `[` that never closes is a glob wildmatch cannot read (it
/// then matches nothing, silently); and the name left once each wildcard stands for one letter
/// must be one `git check-ref-format --branch` takes (`release/`, `a..b` are not).
pub(crate) fn invalid_branch_pattern(pattern: &str) -> Option<String> {
    if pattern.starts_with("refs/") && !pattern.starts_with("refs/heads/") {
        return Some(
            "a full ref name must start refs/heads/ (the branches): it protects no branch".into(),
        );
    }
    let pattern = pattern.strip_prefix("refs/heads/").unwrap_or(pattern);
    let mut name = String::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            // An escaped character is itself (a `*` or `[` then fails the name check: no branch
            // holds one).
            '\\' => name.extend(chars.next()),
            '*' | '?' => name.push('x'),
            '[' => {
                // A class: `]` right after `[`, `[!` or `[^` is a member, not its end.
                let mut class = chars.clone();
                let mut first = true;
                let closed = loop {
                    match class.next() {
                        None => break false,
                        Some('!' | '^') if first => continue,
                        Some(']') if !first => break true,
                        Some(_) => first = false,
                    }
                };
                if !closed {
                    return Some("its `[` never closes: wildmatch cannot read it".into());
                }
                chars = class;
                name.push('x');
            }
            c => name.push(c),
        }
    }
    invalid_branch(&name).map(|why| format!("no branch can match it: {why}"))
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

    #[test]
    fn a_star_stays_in_one_component_and_a_double_star_crosses_them() {
        let cases = [
            ("main", "main", true),
            ("main", "mainline", false),
            ("main", "x/main", false),
            ("refs/heads/main", "main", true),
            ("release/*", "release/1.2", true),
            ("release/*", "release/1/2", false),
            ("release/*", "release", false),
            ("release", "release/1.2", false),
            ("refs/heads/release/*", "release/1.2", true),
            ("team/**", "team/a", true),
            ("team/**", "team/a/b", true),
            ("team/**", "teams/a", false),
            ("**/hotfix", "a/b/hotfix", true),
            ("*", "main", true),
            ("*", "feature/x", false),
            ("v?", "v1", true),
            ("[ab]x", "bx", true),
            ("[]]x", "]x", true),
        ];
        for (pattern, branch, expected) in cases {
            assert_eq!(
                branch_matches(pattern, branch),
                expected,
                "{pattern:?} against {branch:?}"
            );
        }
    }

    #[test]
    fn patterns_that_can_match_no_branch_are_invalid() {
        for bad in [
            "refs/tags/v*",
            "refs/remotes/origin/main",
            "refs/heads/",
            "release/[12",
            "[!",
            "release/",
            "a..b",
            "a b",
            "x.lock",
            "a\\*",
        ] {
            assert!(invalid_branch_pattern(bad).is_some(), "{bad:?}");
        }
        for good in [
            "main",
            "refs/heads/release/*",
            "team/**",
            "**/hotfix",
            "*",
            "v?",
            "[ab]x",
            "[!a]x",
            "[]]x",
            "[[:alpha:]]x",
            "heads/main",
        ] {
            assert_eq!(invalid_branch_pattern(good), None, "{good:?}");
        }
    }
}
