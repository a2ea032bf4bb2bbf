//! The shim files git-hand writes into a hooks directory, embedded from `hooks/` at build time,
//! and how a hook file is recognised as git-hand's: by its marker line, never by its name.
//!
//! Pure: no file system, no git. What a shim does at run time is documented in docs/hooks.md.

use super::HookName;

/// The line that makes a hook file git-hand's. The version after it is informational: upgrades
/// compare whole contents, so any older shim carrying the marker is rewritten in place.
pub const MARKER: &str = "# git-hand-managed-hook";

/// How far into a file the marker may sit. Ours is line 2; looking further would claim a foreign
/// script that merely ends with a copy of our shim pasted below its own code.
const MARKER_WITHIN_LINES: usize = 5;

const PRE_PUSH: &str = include_str!("../../hooks/pre-push");
const POST_CHECKOUT: &str = include_str!("../../hooks/post-checkout");

/// The current shim for `hook`.
pub fn content(hook: HookName) -> &'static str {
    match hook {
        HookName::PrePush => PRE_PUSH,
        HookName::PostCheckout => POST_CHECKOUT,
    }
}

/// Whether these bytes are a hook git-hand wrote (any version).
pub fn is_ours(bytes: &[u8]) -> bool {
    bytes
        .split(|b| *b == b'\n')
        .take(MARKER_WITHIN_LINES)
        .any(|line| line.trim_ascii().starts_with(MARKER.as_bytes()))
}

/// Whether these bytes are exactly the current shim for `hook`.
pub fn is_current(hook: HookName, bytes: &[u8]) -> bool {
    bytes == content(hook).as_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_shim_carries_the_marker_and_execs_its_own_hook() {
        for hook in HookName::ALL {
            let text = content(hook);
            assert!(text.starts_with("#!/bin/sh\n"), "{hook}");
            assert!(is_ours(text.as_bytes()), "{hook}");
            assert!(
                text.trim_end()
                    .ends_with(&format!("exec git-hand hook {hook} \"$@\"")),
                "{hook}"
            );
            assert!(text.contains("export GIT_HAND_HOOK_DIR"), "{hook}");
            assert!(text.contains("command -v git-hand"), "{hook}");
        }
    }

    #[test]
    fn an_older_shim_is_ours_but_not_current() {
        let old = b"#!/bin/sh\n# git-hand-managed-hook v0\nexec git hand hook pre-push \"$@\"\n";
        assert!(is_ours(old));
        assert!(!is_current(HookName::PrePush, old));
        assert!(is_current(
            HookName::PrePush,
            content(HookName::PrePush).as_bytes()
        ));
    }

    #[test]
    fn a_foreign_hook_is_not_ours_even_when_it_mentions_the_marker_late() {
        assert!(!is_ours(b"#!/bin/sh\nexec lefthook run pre-push \"$@\"\n"));
        assert!(!is_ours(b""));
        assert!(!is_ours(&[0xff, 0xfe, 0x00, b'\n']));
        let pasted = format!(
            "#!/bin/sh\nmake lint\nmake test\nmake docs\necho ok\n{}",
            content(HookName::PrePush)
        );
        assert!(!is_ours(pasted.as_bytes()));
        assert!(!is_ours(
            b"#!/bin/sh\ngrep '# git-hand-managed-hook' \"$0\"\n"
        ));
    }
}
