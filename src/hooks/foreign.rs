//! What a foreign hook file is: a hook another tool generated (lefthook's launcher, git-lfs's
//! one-liner) or one a person wrote, and what an older git-hand shim carries beyond git-hand's own
//! lines (lines someone appended, as `git lfs update --manual` advises).
//!
//! Pure: bytes in, answers out; no file system, no git. The install rules that use these answers
//! live in [`super::install`]; the pre-push hook asks [`runs_lfs_pre_push`] whether the chain
//! already uploads LFS objects.
//!
//! Why recognising generated hooks matters: a manager that re-syncs (lefthook when its config
//! changes, `git lfs update --force`) writes a fresh copy of its hook where git-hand's shim was,
//! while git-hand still holds the previous copy as the chained hook. Both are the manager's
//! generated launcher, so the newer one may replace the older one without losing anything a
//! person wrote, and git-hand's shim goes back in front. Two hooks a person wrote are never
//! merged or dropped.

use super::HookName;

/// The word lefthook itself looks for (`isLefthookFile`: any line containing it) to decide that a
/// hook file is its own.
const LEFTHOOK_FINGERPRINT: &str = "LEFTHOOK";

/// Which tool generated a hook file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Generator {
    /// lefthook's launcher (`lefthook install`, or lefthook re-syncing on its own).
    Lefthook,
    /// git-lfs's hook (`git lfs install`, `git lfs update`).
    GitLfs,
}

/// The tool that generated `bytes` as its `hook` hook, if one did.
pub(crate) fn generator(hook: HookName, bytes: &[u8]) -> Option<Generator> {
    let text = std::str::from_utf8(bytes).ok()?;
    if is_lefthook(hook, text) {
        Some(Generator::Lefthook)
    } else if is_git_lfs(hook, text) {
        Some(Generator::GitLfs)
    } else {
        None
    }
}

/// Whether the file at `path` is lefthook's launcher for `hook`.
pub fn is_lefthook_launcher(hook: HookName, path: &std::path::Path) -> bool {
    std::fs::read(path).is_ok_and(|b| generator(hook, &b) == Some(Generator::Lefthook))
}

/// Whether the file at `path` is lefthook's launcher for `hook` and the lefthook configuration at
/// the work tree `top` carries git-hand's recipe: that hook then runs git-hand's check.
pub(crate) fn lefthook_runs_git_hand_at(
    hook: HookName,
    path: &std::path::Path,
    top: &std::path::Path,
) -> bool {
    is_lefthook_launcher(hook, path) && lefthook_runs_git_hand(top)
}

/// lefthook's launcher: carries lefthook's fingerprint and runs `lefthook run "<hook>"`.
fn is_lefthook(hook: HookName, text: &str) -> bool {
    text.contains(LEFTHOOK_FINGERPRINT)
        && (text.contains(&format!("run \"{hook}\"")) || text.contains(&format!("run {hook}")))
}

/// git-lfs's hook, exactly as `git lfs install` writes it: a `#!/bin/sh` line, the line that
/// fails when git-lfs is missing, and `git lfs <hook> "$@"`. Only the message inside the second
/// line varies (it names the hook's path).
fn is_git_lfs(hook: HookName, text: &str) -> bool {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    matches!(lines.as_slice(),
        ["#!/bin/sh", check, run]
            if check.starts_with("command -v git-lfs >/dev/null 2>&1 || {")
                && *run == format!("git lfs {hook} \"$@\""))
}

/// Whether running this hook file runs git-lfs's `pre-push` (so LFS objects are uploaded): a
/// line that runs `git lfs pre-push` (git-lfs's hook, or its lines added to a hand-written one),
/// or lefthook's launcher, which runs `git lfs pre-push` itself before its commands whenever
/// git-lfs is installed.
pub(crate) fn runs_lfs_pre_push(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    is_lefthook(HookName::PrePush, &text)
        || text.lines().any(|line| {
            let line = line.trim();
            !line.starts_with('#') && line.contains("git lfs pre-push")
        })
}

/// lefthook's configuration files, as lefthook looks for them at the top of the work tree (the
/// `-local` ones are a person's additions beside the team's).
const LEFTHOOK_CONFIGS: [&str; 16] = [
    "lefthook.yml",
    ".lefthook.yml",
    "lefthook.yaml",
    ".lefthook.yaml",
    "lefthook.toml",
    ".lefthook.toml",
    "lefthook.json",
    ".lefthook.json",
    "lefthook-local.yml",
    ".lefthook-local.yml",
    "lefthook-local.yaml",
    ".lefthook-local.yaml",
    "lefthook-local.toml",
    ".lefthook-local.toml",
    "lefthook-local.json",
    ".lefthook-local.json",
];

/// Whether lefthook, run from the work tree at `top`, calls git-hand's pre-push: a lefthook
/// configuration there names git-hand, and either one of its commands runs `git-hand hook
/// pre-push` or the script of git-hand's recipe (`.lefthook/pre-push/git-hand`) does. Then
/// lefthook's launcher in the hooks directory enforces the lease on its own, and lefthook
/// replacing git-hand's shim (its re-sync) is no lapse.
pub(crate) fn lefthook_runs_git_hand(top: &std::path::Path) -> bool {
    let configs: Vec<String> = LEFTHOOK_CONFIGS
        .iter()
        .filter_map(|name| std::fs::read_to_string(top.join(name)).ok())
        .collect();
    let calls = |text: &str| {
        text.lines()
            .any(|l| !l.trim_start().starts_with('#') && l.contains("git-hand hook pre-push"))
    };
    configs.iter().any(|c| calls(c))
        || (configs.iter().any(|c| c.contains("git-hand"))
            && [
                ".lefthook/pre-push/git-hand",
                ".lefthook-local/pre-push/git-hand",
            ]
            .iter()
            .any(|script| std::fs::read_to_string(top.join(script)).is_ok_and(|t| calls(&t))))
}

/// The lines someone appended to an older git-hand shim: what follows the end of a shim git-hand
/// shipped (any version in `shipped`, each a template whose `@NAME@` placeholders match any
/// text on their line). `None` when the file is not one of those shims followed by more lines.
pub(crate) fn appended_lines<'a>(bytes: &'a [u8], shipped: &[&str]) -> Option<&'a str> {
    let text = std::str::from_utf8(bytes).ok()?;
    shipped.iter().find_map(|template| {
        let rest = strip_template(text, template)?;
        (!rest.trim().is_empty()).then_some(rest)
    })
}

/// `text` without a leading copy of `template` (line by line; a template line holding a
/// `@PLACEHOLDER@` matches any line with the same text before the placeholder).
fn strip_template<'a>(text: &'a str, template: &str) -> Option<&'a str> {
    let mut rest = text;
    for want in template.split_inclusive('\n') {
        let end = rest.find('\n').map_or(rest.len(), |i| i + 1);
        let (line, after) = rest.split_at(end);
        let matches = match placeholder_prefix(want) {
            Some(prefix) => line.starts_with(prefix),
            None => line == want || (line.trim_end() == want.trim_end() && !want.ends_with('\n')),
        };
        if !matches {
            return None;
        }
        rest = after;
    }
    Some(rest)
}

/// The text before `@NAME@` on a template line that has such a placeholder.
fn placeholder_prefix(line: &str) -> Option<&str> {
    let start = line.find('@')?;
    let name_len = line[start + 1..].find('@')?;
    let name = &line[start + 1..start + 1 + name_len];
    (!name.is_empty() && name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'))
        .then(|| &line[..start])
}

/// A hook file that runs only `lines` (what was appended to a shim), with `#!/bin/sh` first
/// unless the lines bring their own `#!` line.
pub(crate) fn hook_of_lines(lines: &str) -> String {
    let body = lines.trim_start_matches('\n');
    let mut out = if body.starts_with("#!") {
        String::new()
    } else {
        "#!/bin/sh\n".to_string()
    };
    out.push_str(body);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LFS_PRE_PUSH: &str = "#!/bin/sh\ncommand -v git-lfs >/dev/null 2>&1 || { echo >&2 \"\\nThis repository is configured for Git LFS but 'git-lfs' was not found on your path. If you no longer wish to use Git LFS, remove this hook by deleting '.git/hooks/pre-push'.\\n\"; exit 2; }\ngit lfs pre-push \"$@\"\n";

    const LEFTHOOK_PRE_PUSH: &str = "#!/bin/sh\n\nif [ \"$LEFTHOOK_VERBOSE\" = \"1\" ]; then\n  set -x\nfi\n\ncall_lefthook()\n{\n  lefthook \"$@\"\n}\n\ncall_lefthook run \"pre-push\" \"$@\"\n";

    #[test]
    fn generated_hooks_are_told_apart_from_hand_written_ones() {
        assert_eq!(
            generator(HookName::PrePush, LFS_PRE_PUSH.as_bytes()),
            Some(Generator::GitLfs)
        );
        assert_eq!(
            generator(HookName::PrePush, LEFTHOOK_PRE_PUSH.as_bytes()),
            Some(Generator::Lefthook)
        );
        // lfs's pre-push hook is not its post-checkout hook.
        assert_eq!(
            generator(HookName::PostCheckout, LFS_PRE_PUSH.as_bytes()),
            None
        );
        // A person's hook that also runs lfs is theirs, not lfs's.
        let mine = format!("{LFS_PRE_PUSH}make test\n");
        assert_eq!(generator(HookName::PrePush, mine.as_bytes()), None);
        assert_eq!(
            generator(HookName::PrePush, b"#!/bin/sh\nexec make test\n"),
            None
        );
    }

    #[test]
    fn lfs_in_the_chain_is_seen_in_lfs_hooks_hand_written_ones_and_lefthook() {
        assert!(runs_lfs_pre_push(LFS_PRE_PUSH.as_bytes()));
        assert!(runs_lfs_pre_push(LEFTHOOK_PRE_PUSH.as_bytes()));
        assert!(runs_lfs_pre_push(
            b"#!/bin/sh\nmake test\ngit lfs pre-push \"$@\"\n"
        ));
        assert!(!runs_lfs_pre_push(
            b"#!/bin/sh\n# git lfs pre-push \"$@\"\nmake\n"
        ));
        assert!(!runs_lfs_pre_push(b"#!/bin/sh\nexit 0\n"));
    }

    #[test]
    fn lines_appended_to_a_shipped_shim_are_found_and_nothing_else_is() {
        let shim = "#!/bin/sh\n# git-hand-managed-hook v9\nx=@GIT_HAND_INSTALLED@\nexec git-hand hook pre-push \"$@\"\n";
        let rendered = shim.replace("@GIT_HAND_INSTALLED@", "'/opt/bin/git-hand'");
        let appended = format!("{rendered}git lfs pre-push \"$@\"\n");
        assert_eq!(
            appended_lines(appended.as_bytes(), &[shim]),
            Some("git lfs pre-push \"$@\"\n")
        );
        assert_eq!(appended_lines(rendered.as_bytes(), &[shim]), None);
        let edited = rendered.replace("exec git-hand", "exec /bin/git-hand");
        assert_eq!(
            appended_lines(format!("{edited}more\n").as_bytes(), &[shim]),
            None
        );
        assert_eq!(
            hook_of_lines("git lfs pre-push \"$@\""),
            "#!/bin/sh\ngit lfs pre-push \"$@\"\n"
        );
    }
}
