//! Which hook manager a repository runs, and the shell lines that make a hook call git-hand;
//! the recipe around them (what `install --manual` and the `core.hooksPath` refusal print) is
//! the command line's (`cli::recipe`).
//!
//! The managers are one table ([`TABLE`]): each row names a [`Manager`] and says how to tell it
//! is in use (from the work tree's files and where git runs hooks from). The first row that
//! matches wins; the hand-written row matches everything, so it comes last. To support another
//! manager, add a [`Manager`] variant and a row before the hand-written one, its recipe in
//! `cli::recipe`, and a section of docs/hooks.md with the same text (a test runs each recipe as
//! written).
//!
//! Detection reads a few files and never runs git. How each manager hands git's arguments and
//! stdin to the command is documented in docs/hooks.md.

use std::path::{Path, PathBuf};

use super::HookName;
use super::locate::HooksLocation;

/// A way of running hooks that git-hand has a recipe for. Its word (JSON, docs): `husky`,
/// `pre-commit`, `lefthook`, `git-lfs`, `hand-written`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Manager {
    /// husky 9: `core.hooksPath=.husky/_`, generated files that run the committed `.husky/<hook>`.
    Husky,
    /// pre-commit: its script in `.git/hooks` runs `<hook>.legacy` first.
    PreCommit,
    Lefthook,
    /// git-lfs: its hooks in `.git/hooks` (`git lfs install`), its objects under `<common>/lfs`.
    GitLfs,
    /// Plain executable hook files: in a `core.hooksPath` directory, or `.git/hooks`.
    HandWritten,
}

crate::word::words!(Manager: "hook manager");

/// What detection looks at: where git runs hooks from, and the work tree (if any) whose files
/// name the manager.
#[derive(Debug, Clone, Copy)]
pub struct Scene<'a> {
    pub location: &'a HooksLocation,
    pub work_tree: Option<&'a Path>,
}

impl Scene<'_> {
    /// `<work tree>/<rel>` exists.
    fn has(&self, rel: &str) -> bool {
        self.work_tree.is_some_and(|w| w.join(rel).exists())
    }
}

/// One manager: how to tell it is in use.
struct Row {
    manager: Manager,
    detect: fn(&Scene<'_>) -> bool,
}

/// Every manager git-hand knows, most specific first; the hand-written row matches anything.
const TABLE: &[Row] = &[
    Row {
        manager: Manager::Husky,
        // `.husky/` in the work tree counts before `npm install` has run husky: once it has,
        // core.hooksPath moves hooks there and a shim in .git/hooks would no longer run.
        detect: |s| is_husky_dir(&s.location.active) || s.has(".husky"),
    },
    Row {
        manager: Manager::PreCommit,
        // pre-commit refuses to install under core.hooksPath, so it lives in .git/hooks.
        detect: |s| {
            !s.location.is_redirected()
                && (s.has(".pre-commit-config.yaml")
                    || HookName::ALL
                        .iter()
                        .any(|h| precommit::is_script(&s.location.default.join(h.to_string()))))
        },
    },
    Row {
        manager: Manager::Lefthook,
        detect: |s| {
            [
                "lefthook.yml",
                ".lefthook.yml",
                "lefthook.yaml",
                ".lefthook.yaml",
            ]
            .iter()
            .any(|f| s.has(f))
        },
    },
    Row {
        manager: Manager::GitLfs,
        // Objects in the common dir, `filter=lfs` in the work tree's .gitattributes, or git-lfs's
        // filter configured (`git lfs install` sets it even when it refuses to write its hook).
        detect: |s| {
            let common = s.location.default.parent();
            common.is_some_and(|c| c.join("lfs").is_dir())
                || s.work_tree.is_some_and(|w| {
                    std::fs::read_to_string(w.join(".gitattributes"))
                        .is_ok_and(|a| a.contains("filter=lfs"))
                })
                || lfs_filter_configured(common)
        },
    },
    Row {
        manager: Manager::HandWritten,
        detect: |_| true,
    },
];

/// The one manager `scene` shows (the command line writes its recipe).
pub fn manager(scene: &Scene<'_>) -> Manager {
    TABLE
        .iter()
        .find(|row| (row.detect)(scene))
        .unwrap_or(&TABLE[TABLE.len() - 1])
        .manager
}

/// The main worktree's top, when detection can tell it without running git: the parent of a
/// common dir named `.git` (a repository made by `git init` or `git clone`). Not for a bare
/// repository or a separate git dir, which the recipes then name only as "the main worktree".
pub fn main_worktree<'a>(scene: &Scene<'a>) -> Option<&'a Path> {
    let common = scene.location.default.parent()?;
    (common.file_name()? == ".git")
        .then(|| common.parent())
        .flatten()
}

/// Whether git-lfs's filter is configured in the repository's or the user's git config, read as
/// text (detection runs no git): `[filter "lfs"]` in `<common>/config`, `$GIT_CONFIG_GLOBAL` or
/// `~/.gitconfig`.
fn lfs_filter_configured(common: Option<&Path>) -> bool {
    let global = std::env::var_os("GIT_CONFIG_GLOBAL")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".gitconfig")));
    [common.map(|c| c.join("config")), global]
        .into_iter()
        .flatten()
        .any(|f| std::fs::read_to_string(f).is_ok_and(|t| t.contains("[filter \"lfs\"]")))
}

/// Whether `dir` is husky's generated hooks directory (`.husky/_`, or any directory holding
/// husky's runner `h` beside `husky.sh`). husky's generated files find the script to run from
/// their own file name, so git-hand must never rename (chain) them.
pub(crate) fn is_husky_dir(dir: &Path) -> bool {
    let named = dir.file_name().is_some_and(|n| n == "_")
        && dir
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|n| n == ".husky");
    named || (dir.join("h").is_file() && dir.join("husky.sh").is_file())
}

/// The lines for one hook, for a file run by sh (husky runs its scripts with `sh -e`; a plain
/// hook file may not use `-e`, hence `|| exit $?`). They call git-hand with git's arguments and
/// stdin; where git-hand is not installed they do nothing, unless this worktree is one git-hand
/// leased (its stamp in the admin dir, or a credential in the environment): there pre-push fails
/// closed. post-checkout never fails.
pub fn hook_lines(hook: HookName) -> String {
    match hook {
        HookName::PrePush => "\
if command -v git-hand >/dev/null 2>&1; then
\tgit-hand hook pre-push \"$@\" || exit $?
elif [ -n \"${GIT_HAND_LEASE:-}\" ] || [ -e \"$(git rev-parse --git-dir)/git-hand-stamp\" ]; then
\techo \"git-hand: this worktree is leased by git-hand, which is not on PATH: push refused (add git-hand's directory to PATH)\" >&2
\texit 1
fi
"
        .into(),
        HookName::PostCheckout => "\
if command -v git-hand >/dev/null 2>&1; then git-hand hook post-checkout \"$@\" || :; fi
"
        .into(),
        // Starts git-hand only for a prepared transaction by a process presenting a credential
        // (or in a slot that requires one), as git-hand's own shim does: a fetch stays cheap.
        HookName::ReferenceTransaction => REF_LINES.into(),
        // A server hook: no manager recipe (`git hand install --server` writes it).
        HookName::PreReceive => String::new(),
    }
}

const REF_LINES: &str = "\
if [ \"${1:-}\" = prepared ] && { [ -n \"${GIT_HAND_LEASE:-}${GIT_HAND_TOKEN:-}\" ] || [ -e \"${GIT_DIR:-.git}/git-hand-require-credential\" ]; } && command -v git-hand >/dev/null 2>&1; then
\tgit-hand hook reference-transaction \"$@\" || exit $?
fi
";

/// pre-commit's hook script, which runs `<hook>.legacy` before pre-commit's own hooks.
pub(super) mod precommit {
    use super::*;

    /// The ids pre-commit writes into its script, current and prior (pre-commit's
    /// `install_uninstall.py`, `CURRENT_HASH` and `PRIOR_HASHES`), by which it knows its own.
    const IDS: [&str; 6] = [
        "138fd403232d2ddd5efb44317e38bf03",
        "4d9958c90bc262f47553e2c073f14cfe",
        "d8ee923c46731b42cd95cc869add4062",
        "49fd668cb42069aa1b6048464be5d395",
        "79f09a650522a87b0da915d0d983b2de",
        "e358c9dae00eac5d06b38dfdb1e33a8c",
    ];

    /// Whether the file at `path` is pre-commit's hook script (as pre-commit itself judges).
    ///
    /// `str::contains` rather than comparing every window of the bytes with every id: that
    /// took 1.9 M of a spawn's 7.2 M instructions (three hook files read, six ids each).
    /// The ids are ASCII, so reading the file lossily finds them wherever they are.
    pub(crate) fn is_script(path: &Path) -> bool {
        std::fs::read(path).is_ok_and(|bytes| is_script_in(&bytes))
    }

    /// [`is_script`] of bytes already read (a hook file `install::look` read once for all it
    /// judges).
    pub(crate) fn is_script_in(bytes: &[u8]) -> bool {
        let text = String::from_utf8_lossy(bytes);
        IDS.iter().any(|id| text.contains(id))
    }

    /// `<dir>/<hook>.legacy`: the hook pre-commit's script runs first.
    pub(crate) fn legacy_path(dir: &Path, hook: HookName) -> PathBuf {
        dir.join(format!("{hook}.legacy"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pre_commit_script_is_known_by_any_of_its_ids_wherever_it_stands() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            path
        };
        let current = at(
            "current",
            b"#!/usr/bin/env bash\n# ID: 138fd403232d2ddd5efb44317e38bf03\n",
        );
        let prior = at(
            "prior",
            b"\xff\xfe not utf-8 e358c9dae00eac5d06b38dfdb1e33a8c\xff",
        );
        let other = at(
            "other",
            b"#!/bin/sh\n# ID: 138fd403232d2ddd5efb44317e38bf0\n",
        );
        assert!(precommit::is_script(&current));
        assert!(precommit::is_script(&prior));
        assert!(!precommit::is_script(&other));
        assert!(!precommit::is_script(&dir.path().join("missing")));
    }

    #[test]
    fn one_manager_in_use_and_the_hand_written_one_otherwise() {
        let husky = HooksLocation::at("/r/.husky/_", "/r/.git/hooks");
        let scene = Scene {
            location: &husky,
            work_tree: None,
        };
        assert_eq!(manager(&scene), Manager::Husky);

        let plain = HooksLocation::at("/r/.githooks", "/r/.git/hooks");
        let scene = Scene {
            location: &plain,
            work_tree: None,
        };
        assert_eq!(manager(&scene), Manager::HandWritten);
    }
}
