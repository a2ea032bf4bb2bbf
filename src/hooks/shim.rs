//! The shim files git-hand writes into a hooks directory, embedded from `hooks/` at build time,
//! and how a hook file is recognised as git-hand's: by its marker line, never by its name.
//!
//! A shim records the absolute path of the git-hand that wrote it (this process's executable),
//! so a hook run with a `PATH` that lacks git-hand (a GUI client, cron) still reaches it. No git,
//! and no file system beyond asking where this executable is. What a shim does at run time is
//! documented in docs/hooks.md.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::HookName;

/// The line that makes a hook file git-hand's. The version after it is informational: upgrades
/// compare whole contents, so any older shim carrying the marker is rewritten in place.
pub(crate) const MARKER: &str = "# git-hand-managed-hook";

/// How far into a file the marker may sit. Ours is line 2; looking further would claim a foreign
/// script that merely ends with a copy of our shim pasted below its own code.
const MARKER_WITHIN_LINES: usize = 5;

const PRE_PUSH: &str = include_str!("../../hooks/pre-push");
const POST_CHECKOUT: &str = include_str!("../../hooks/post-checkout");
const REFERENCE_TRANSACTION: &str = include_str!("../../hooks/reference-transaction");
const PRE_RECEIVE: &str = include_str!("../../hooks/pre-receive");

/// Where the shim templates take the recorded path, as one sh word.
const INSTALLED_SLOT: &str = "@GIT_HAND_INSTALLED@";

/// The current shim for `hook`, recording this executable (see [`recorded`]). Rendered once per
/// process: every install of one run writes the same bytes.
pub fn content(hook: HookName) -> &'static str {
    static RENDERED: OnceLock<[String; 4]> = OnceLock::new();
    let [pre_push, post_checkout, reference_transaction, pre_receive] =
        RENDERED.get_or_init(|| {
            let exe = recorded();
            [
                HookName::PrePush,
                HookName::PostCheckout,
                HookName::ReferenceTransaction,
                HookName::PreReceive,
            ]
            .map(|hook| render(template(hook), exe.as_deref()))
        });
    match hook {
        HookName::PrePush => pre_push,
        HookName::PostCheckout => post_checkout,
        HookName::ReferenceTransaction => reference_transaction,
        HookName::PreReceive => pre_receive,
    }
}

/// The path the shims record: this executable, when it is an absolute path to an existing file
/// that sh can be handed safely (no newline). `None` when it cannot be told (a deleted binary,
/// an odd platform): the shims then rely on `PATH` alone.
pub fn recorded() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let text = exe.to_str()?;
    (exe.is_absolute() && !text.contains('\n') && exe.is_file()).then_some(exe)
}

/// The shim for `hook` as the git-hand at `exe` writes it (for tests and for comparing with a
/// shim another git-hand wrote).
pub fn content_for(hook: HookName, exe: Option<&Path>) -> String {
    render(template(hook), exe)
}

fn template(hook: HookName) -> &'static str {
    match hook {
        HookName::PrePush => PRE_PUSH,
        HookName::PostCheckout => POST_CHECKOUT,
        HookName::ReferenceTransaction => REFERENCE_TRANSACTION,
        HookName::PreReceive => PRE_RECEIVE,
    }
}

/// The git-hand a shim written by this process would run: `git-hand` on the current `PATH`,
/// else the recorded executable. `None`: pushes from leased worktrees would be refused.
pub fn reachable() -> Option<PathBuf> {
    which::which("git-hand").ok().or_else(recorded)
}

/// A template with the recorded path put in, single-quoted for sh (`''` when there is none).
fn render(template: &str, exe: Option<&Path>) -> String {
    let text = exe.and_then(Path::to_str).unwrap_or_default();
    template.replace(INSTALLED_SLOT, &sh_quote(text))
}

/// `text` as one sh word: single-quoted, each `'` in it written `'\''`.
pub(crate) fn sh_quote(text: &str) -> String {
    String::from_utf8_lossy(&sh_quote_bytes(text.as_bytes())).into_owned()
}

/// [`sh_quote`] of bytes, so a path need not be UTF-8: in single quotes, each `'` as `'\''`.
pub(crate) fn sh_quote_bytes(bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![b'\''];
    for &b in bytes {
        match b {
            b'\'' => out.extend_from_slice(b"'\\''"),
            _ => out.push(b),
        }
    }
    out.push(b'\'');
    out
}

/// Whether these bytes are a hook git-hand wrote (any version).
pub fn is_ours(bytes: &[u8]) -> bool {
    bytes
        .split(|b| *b == b'\n')
        .take(MARKER_WITHIN_LINES)
        .any(|line| line.trim_ascii().starts_with(MARKER.as_bytes()))
}

/// Whether these bytes are exactly the current shim for `hook`.
pub(crate) fn is_current(hook: HookName, bytes: &[u8]) -> bool {
    bytes == content(hook).as_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_shim_carries_the_marker_and_execs_its_own_hook() {
        for hook in HookName::ALL.into_iter().chain(HookName::SERVER) {
            let text = content(hook);
            // sh, never a `#!` line naming git-hand: git 2.47 hangs a push whose pre-push it
            // cannot start (a deleted git-hand), where sh says so and returns (docs/hooks.md).
            assert!(text.starts_with("#!/bin/sh\n"), "{hook}");
            assert!(is_ours(text.as_bytes()), "{hook}");
            // reference-transaction hands on the lines it read itself (a here-document).
            let (end, sep) = match hook {
                HookName::ReferenceTransaction => (" <<EOF\n", "then\n\t"),
                _ => ("; fi\n", "then "),
            };
            assert!(
                text.contains(&format!("{sep}exec git-hand hook {hook} \"$@\"{end}")),
                "{hook}"
            );
            assert!(
                text.contains(&format!(
                    "{sep}exec \"$git_hand_installed\" hook {hook} \"$@\"{end}"
                )),
                "{hook}"
            );
            assert!(text.contains("export GIT_HAND_HOOK_DIR"), "{hook}");
            assert!(text.contains("command -v git-hand"), "{hook}");
            assert!(!text.contains(INSTALLED_SLOT), "{hook}");
            assert!(!text.contains("--no-verify"), "{hook}");
        }
    }

    #[test]
    fn the_recorded_path_is_one_sh_word_whatever_it_contains() {
        let text = render(PRE_PUSH, Some(Path::new("/opt/it's here/git-hand")));
        assert!(text.contains("git_hand_installed='/opt/it'\\''s here/git-hand'\n"));
        let none = render(PRE_PUSH, None);
        assert!(none.contains("git_hand_installed=''\n"));
        let exe = recorded().unwrap();
        assert!(content(HookName::PrePush).contains(&format!("='{}'", exe.display())));
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
