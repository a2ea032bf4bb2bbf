//! Which hook manager a repository runs, and the one recipe that makes it call git-hand: what
//! `git hand install --manual` prints, and what the `core.hooksPath` refusal prints on stdout.
//!
//! The managers are one table ([`TABLE`]): each row names a [`Manager`], says how to tell it is
//! in use (from the work tree's files and where git runs hooks from) and renders its recipe. The
//! first row that matches wins; the hand-written row matches everything, so it comes last. To
//! support another manager, add a [`Manager`] variant and a row before the hand-written one, and
//! a section of docs/hooks.md with the same text (a test runs each recipe as written).
//!
//! Detection reads a few files and never runs git; the recipes are text. How each manager hands
//! git's arguments and stdin to the command is documented in docs/hooks.md.

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

/// The recipe for the manager in use.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Recipe {
    pub manager: Manager,
    pub text: String,
}

/// One manager: how to tell it is in use, and its recipe.
struct Row {
    manager: Manager,
    detect: fn(&Scene<'_>) -> bool,
    recipe: fn(&Scene<'_>) -> String,
}

/// Every manager git-hand knows, most specific first; the hand-written row matches anything.
const TABLE: &[Row] = &[
    Row {
        manager: Manager::Husky,
        // `.husky/` in the work tree counts before `npm install` has run husky: once it has,
        // core.hooksPath moves hooks there and a shim in .git/hooks would no longer run.
        detect: |s| is_husky_dir(&s.location.active) || s.has(".husky"),
        recipe: |_| husky_recipe(),
    },
    Row {
        manager: Manager::PreCommit,
        // pre-commit refuses to install under core.hooksPath, so it lives in .git/hooks.
        detect: |s| {
            !s.location.is_redirected()
                && (s.has(".pre-commit-config.yaml")
                    || HookName::ALL
                        .iter()
                        .any(|h| precommit::is_script(&s.location.default.join(h.as_str()))))
        },
        recipe: |s| pre_commit_recipe(main_worktree(s)),
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
        recipe: |s| lefthook_recipe(main_worktree(s)),
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
        recipe: |s| git_lfs_recipe(main_worktree(s)),
    },
    Row {
        manager: Manager::HandWritten,
        detect: |_| true,
        recipe: |s| hand_written_recipe(&s.location.active),
    },
];

/// The one recipe for the manager `scene` shows.
pub fn recipe(scene: &Scene<'_>) -> Recipe {
    let row = TABLE
        .iter()
        .find(|row| (row.detect)(scene))
        .unwrap_or(&TABLE[TABLE.len() - 1]);
    Recipe {
        manager: row.manager,
        text: (row.recipe)(scene),
    }
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
fn hook_lines(hook: HookName) -> String {
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

fn husky_recipe() -> String {
    format!(
        "\
# husky: add these lines to .husky/pre-push and commit it (husky runs the file with sh -e and
# git's arguments and stdin; put them before any line that reads stdin). In a clone without
# git-hand they do nothing, except in a worktree git-hand leased, where the push is refused:
{}# and this line to .husky/post-checkout:
{}# and these to .husky/reference-transaction (git >= 2.28; a ref update in a slot by a process
# whose lease ended is refused):
{}",
        hook_lines(HookName::PrePush),
        hook_lines(HookName::PostCheckout),
        hook_lines(HookName::ReferenceTransaction)
    )
}

const PRE_COMMIT: &str = "\
# pre-commit: nothing to add to .pre-commit-config.yaml. pre-commit keeps its hooks in .git/hooks
# and runs <hook>.legacy first, with git's arguments and stdin; git-hand installs its hooks there,
# before or after `pre-commit install`, and `git hand spawn` does it for you:
git hand install
";

/// The pre-commit recipe, with where `pre-commit install` must run: in a slot it refuses, since
/// git-hand's `core.hooksPath` is set there (docs/hooks.md, issue 25, rule 8).
fn pre_commit_recipe(main: Option<&Path>) -> String {
    format!(
        "{PRE_COMMIT}# Run `pre-commit install` in the main worktree{}: in a slot it refuses.\n",
        at(main)
    )
}

/// The git-lfs recipe, with where to run it and git-lfs's installers: in a slot `git lfs install`
/// refuses (git-hand's forwarders are there), and `git lfs update --force` replaces git-hand's
/// entries in the hooks directory of linked worktrees, so slots' pushes go unchecked.
fn git_lfs_recipe(main: Option<&Path>) -> String {
    format!(
        "{GIT_LFS_HEAD}# Run it and git-lfs's installers in the main worktree{}:\n# in a slot \
         they refuse, or replace git-hand's hooks.\n{GIT_LFS_COMMAND}",
        at(main)
    )
}

/// ` (<path>)` when the main worktree's path is known, else nothing.
fn at(main: Option<&Path>) -> String {
    main.map(|m| format!(" ({})", m.display()))
        .unwrap_or_default()
}

/// The main worktree's top, when detection can tell it without running git: the parent of a
/// common dir named `.git` (a repository made by `git init` or `git clone`). Not for a bare
/// repository or a separate git dir, which the recipes then name only as "the main worktree".
fn main_worktree<'a>(scene: &Scene<'a>) -> Option<&'a Path> {
    let common = scene.location.default.parent()?;
    (common.file_name()? == ".git")
        .then(|| common.parent())
        .flatten()
}

const LEFTHOOK_HEAD: &str = "\
# lefthook: add these scripts and commit them with lefthook.yml. In a clone without git-hand they
# do nothing, except in a worktree git-hand leased, where the push is refused:
";

/// The lefthook recipe, with where `lefthook install` must run: in a slot it puts its launchers
/// in place of git-hand's forwarders in the hooks directory of linked worktrees (those of the
/// hooks its configuration names), until the next sync moves them aside.
fn lefthook_recipe(main: Option<&Path>) -> String {
    format!(
        "{LEFTHOOK_HEAD}# Run `lefthook install` in the main worktree{}: in a slot it replaces \
         git-hand's hooks.\n{LEFTHOOK}",
        at(main)
    )
}

const LEFTHOOK: &str = "\
mkdir -p .lefthook/pre-push && cat > .lefthook/pre-push/git-hand <<'EOF'
if command -v git-hand >/dev/null 2>&1; then
\texec git-hand hook pre-push \"$@\"
elif [ -n \"${GIT_HAND_LEASE:-}\" ] || [ -e \"$(git rev-parse --git-dir)/git-hand-stamp\" ]; then
\techo \"git-hand: this worktree is leased by git-hand, which is not on PATH: push refused (add git-hand's directory to PATH)\" >&2
\texit 1
fi
EOF
# git >= 2.28: a ref update in a slot by a process whose lease ended is refused. It starts
# git-hand only for a prepared transaction by a process presenting a credential (or in a slot
# that requires one):
mkdir -p .lefthook/reference-transaction && cat > .lefthook/reference-transaction/git-hand <<'EOF'
if [ \"${1:-}\" = prepared ] && { [ -n \"${GIT_HAND_LEASE:-}${GIT_HAND_TOKEN:-}\" ] || [ -e \"${GIT_DIR:-.git}/git-hand-require-credential\" ]; } && command -v git-hand >/dev/null 2>&1; then
\texec git-hand hook reference-transaction \"$@\"
fi
EOF
# Executable in the commit: lefthook makes a script executable before it runs it, and a mode
# change would leave every slot dirty (and so not reusable) after its first ref update.
chmod +x .lefthook/pre-push/git-hand .lefthook/reference-transaction/git-hand
# then merge into lefthook.yml. Scripts, not commands: lefthook skips a pre-push command when
# the push changes no file it can see, and the lease must be checked on every push. use_stdin
# hands git's ref lines to them (lefthook gives them to only one job per hook):
pre-push:
  scripts:
    git-hand:
      runner: sh
      use_stdin: true
post-checkout:
  commands:
    git-hand:
      run: command -v git-hand >/dev/null 2>&1 && git-hand hook post-checkout {1} {2} {3} || true
reference-transaction:
  scripts:
    git-hand:
      runner: sh
      use_stdin: true
";

const GIT_LFS_HEAD: &str = "\
# git-lfs: nothing to add. When git-lfs's hook is not in front of git-hand's (git lfs install
# refuses to replace it), git-hand's pre-push runs `git lfs pre-push` itself, after the lease
# check allows the push. To let git-lfs's own hooks run (post-checkout, post-commit, post-merge)
# beside git-hand's:
";

const GIT_LFS_COMMAND: &str = "git lfs update --force && git hand install\n";

/// Lines for executable hook files in the active hooks directory.
fn hand_written_recipe(dir: &Path) -> String {
    let mut out = format!(
        "# git hooks in {dir}: put these lines right after the #! line of each executable hook\n\
         # file there, before anything that reads stdin (`git hand install --hooks-path` chains\n\
         # the files that are there instead):\n",
        dir = dir.display()
    );
    for hook in HookName::ALL {
        out.push_str(&format!(
            "# {}:\n{}",
            dir.join(hook.as_str()).display(),
            hook_lines(hook)
        ));
    }
    out
}

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
        dir.join(format!("{}.legacy", hook.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn location(active: &str, default: &str) -> HooksLocation {
        HooksLocation {
            active: active.into(),
            default: default.into(),
            hooks_path: (active != default).then(|| active.into()),
            linked: None,
            main_hooks_path: None,
        }
    }

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
    fn one_recipe_for_the_manager_in_use_and_the_hand_written_one_otherwise() {
        let husky = location("/r/.husky/_", "/r/.git/hooks");
        let scene = Scene {
            location: &husky,
            work_tree: None,
        };
        let recipe = recipe(&scene);
        assert_eq!(recipe.manager, Manager::Husky);
        assert!(recipe.text.contains(".husky/pre-push"));
        assert!(!recipe.text.contains("lefthook"));

        let plain = location("/r/.githooks", "/r/.git/hooks");
        let scene = Scene {
            location: &plain,
            work_tree: None,
        };
        let recipe = super::recipe(&scene);
        assert_eq!(recipe.manager, Manager::HandWritten);
        assert!(recipe.text.contains("/r/.githooks/pre-push"));
    }

    #[test]
    fn docs_hooks_md_shows_each_recipe_exactly_as_printed() {
        let docs = include_str!("../../docs/hooks.md");
        for recipe in [
            husky_recipe(),
            pre_commit_recipe(Some(Path::new("/path/to/repo"))),
            git_lfs_recipe(Some(Path::new("/path/to/repo"))),
            hand_written_recipe(Path::new("/path/to/hooks")),
        ] {
            assert!(docs.contains(&recipe), "docs/hooks.md lacks:\n{recipe}");
        }
    }

    /// Rule 8 of issue 25: the installers that refuse in a slot, or replace git-hand's hooks
    /// for slots there (lefthook's too), are to be run in the main worktree, named when
    /// detection knows it.
    #[test]
    fn the_manager_recipes_say_to_run_their_installers_in_the_main_worktree() {
        let recipe_in = |default: &str, manager: Manager| {
            let at = location(default, default);
            let row = TABLE.iter().find(|r| r.manager == manager).unwrap();
            (row.recipe)(&Scene {
                location: &at,
                work_tree: None,
            })
        };
        let (pre_commit, lfs) = (
            recipe_in("/r/app/.git/hooks", Manager::PreCommit),
            recipe_in("/r/app/.git/hooks", Manager::GitLfs),
        );
        assert!(
            pre_commit.contains("`pre-commit install` in the main worktree (/r/app)"),
            "{pre_commit}"
        );
        assert!(
            lfs.contains("git-lfs's installers in the main worktree (/r/app)"),
            "{lfs}"
        );
        // The command stays the recipe's one line to run, after its comments.
        assert!(lfs.ends_with("\ngit lfs update --force && git hand install\n"));
        let lefthook = recipe_in("/r/app/.git/hooks", Manager::Lefthook);
        assert!(
            lefthook.contains("`lefthook install` in the main worktree (/r/app)"),
            "{lefthook}"
        );
        // A bare repository has no main worktree to name: the words stay, without a path.
        let bare = recipe_in("/r/app.git/hooks", Manager::PreCommit);
        assert!(
            bare.contains("in the main worktree: in a slot it refuses"),
            "{bare}"
        );
    }

    #[test]
    fn every_recipe_that_adds_lines_calls_git_hand_directly() {
        for text in [husky_recipe(), hand_written_recipe(Path::new("/r/h"))] {
            assert!(text.contains("git-hand hook pre-push \"$@\" || exit $?"));
            assert!(text.contains("git-hand hook post-checkout \"$@\""));
            assert!(text.contains("git-hand-stamp"));
            assert!(!text.contains("git hand hook"));
            assert!(!text.contains("--no-verify"));
        }
    }
}
