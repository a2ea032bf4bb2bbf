//! The recipe `git hand install --manual` prints for the hook manager in use: the lines to add
//! to its configuration, and where to run its installer. `hooks::manual` tells which manager is
//! in use and the shell lines a hook needs; the words around them are written here.

use std::path::Path;

use crate::hooks::manual::{hook_lines, main_worktree};
use crate::hooks::{HookName, Manager, Scene};

/// The recipe for the manager in use.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Recipe {
    pub manager: Manager,
    pub text: String,
}

/// The one recipe for the manager `scene` shows.
pub fn recipe(scene: &Scene<'_>) -> Recipe {
    let manager = crate::hooks::manual::manager(scene);
    Recipe {
        manager,
        text: text(manager, scene),
    }
}

/// `manager`'s recipe in `scene`.
fn text(manager: Manager, scene: &Scene<'_>) -> String {
    match manager {
        Manager::Husky => husky_recipe(),
        Manager::PreCommit => pre_commit_recipe(main_worktree(scene)),
        Manager::Lefthook => lefthook_recipe(main_worktree(scene)),
        Manager::GitLfs => git_lfs_recipe(main_worktree(scene)),
        Manager::HandWritten => hand_written_recipe(&scene.location.active),
    }
}

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
            dir.join(hook.to_string()).display(),
            hook_lines(hook)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::locate::HooksLocation;

    #[test]
    fn one_recipe_for_the_manager_in_use_and_the_hand_written_one_otherwise() {
        let husky = HooksLocation::at("/r/.husky/_", "/r/.git/hooks");
        let scene = Scene {
            location: &husky,
            work_tree: None,
        };
        let recipe = recipe(&scene);
        assert_eq!(recipe.manager, Manager::Husky);
        assert!(recipe.text.contains(".husky/pre-push"));
        assert!(!recipe.text.contains("lefthook"));

        let plain = HooksLocation::at("/r/.githooks", "/r/.git/hooks");
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
            let at = HooksLocation::at(default, default);
            text(
                manager,
                &Scene {
                    location: &at,
                    work_tree: None,
                },
            )
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
