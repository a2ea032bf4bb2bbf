//! The exact lines that make a hook manager (or a hand-written hook) call git-hand, for when
//! `core.hooksPath` puts hooks in another tool's hands and git-hand must not write there silently.
//!
//! Pure text. How each manager hands git's arguments and stdin to the command is documented in
//! docs/hooks.md; keep the two in step.

use std::path::Path;

use super::HookName;

/// One snippet per way of running hooks (JSON: `hooks_dir`, `husky`, `lefthook`, `pre-commit`,
/// `git-lfs`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ManualLines {
    /// For a plain hook file in the directory git runs hooks from.
    pub hooks_dir: String,
    pub husky: String,
    pub lefthook: String,
    #[serde(rename = "git-lfs")]
    pub git_lfs: String,
    #[serde(rename = "pre-commit")]
    pub pre_commit: String,
}

const HUSKY: &str = "\
# husky: add this line to .husky/pre-push (husky runs it with sh -e, git's arguments and stdin):
git-hand hook pre-push \"$@\"
# and this line to .husky/post-checkout:
git-hand hook post-checkout \"$@\"
";

const LEFTHOOK: &str = "\
# lefthook: add this script and commit it with lefthook.yml. In a clone without git-hand it does
# nothing, except in a worktree git-hand leased, where the push is refused:
mkdir -p .lefthook/pre-push && cat > .lefthook/pre-push/git-hand <<'EOF'
if command -v git-hand >/dev/null 2>&1; then
\texec git-hand hook pre-push \"$@\"
elif [ -n \"${GIT_HAND_LEASE:-}\" ] || [ -e \"$(git rev-parse --git-dir)/git-hand-stamp\" ]; then
\techo \"git-hand: this worktree is leased by git-hand, which is not on PATH: push refused (add git-hand's directory to PATH)\" >&2
\texit 1
fi
EOF
# then merge into lefthook.yml. A script, not a command: lefthook skips a pre-push command when
# the push changes no file it can see, and the lease must be checked on every push. use_stdin
# hands git's ref lines to it (lefthook gives them to only one job per hook):
pre-push:
  scripts:
    git-hand:
      runner: sh
      use_stdin: true
post-checkout:
  commands:
    git-hand:
      run: command -v git-hand >/dev/null 2>&1 && git-hand hook post-checkout {1} {2} {3} || true
";

const GIT_LFS: &str = "\
# git-lfs: nothing to add. When git-lfs's hook is not in front of git-hand's (git lfs install
# refuses to replace it), git-hand's pre-push runs `git lfs pre-push` itself, after the lease
# check allows the push. To let git-lfs's own hooks run (post-checkout, post-commit, post-merge)
# beside git-hand's:
git lfs update --force && git hand install
";

const PRE_COMMIT: &str = "\
# pre-commit: merge into .pre-commit-config.yaml, then run
#   pre-commit install --hook-type pre-push --hook-type post-checkout
# pre-commit passes hooks no git arguments and an empty stdin; these entries rebuild the
# arguments from the PRE_COMMIT_* variables it exports.
repos:
  - repo: local
    hooks:
      - id: git-hand-pre-push
        name: git-hand lease check
        entry: sh -c 'exec git-hand hook pre-push \"$PRE_COMMIT_REMOTE_NAME\" \"$PRE_COMMIT_REMOTE_URL\"'
        language: system
        stages: [pre-push]
        pass_filenames: false
        always_run: true
      - id: git-hand-post-checkout
        name: git-hand checkout
        entry: sh -c 'exec git-hand hook post-checkout \"$PRE_COMMIT_FROM_REF\" \"$PRE_COMMIT_TO_REF\" \"$PRE_COMMIT_CHECKOUT_TYPE\"'
        language: system
        stages: [post-checkout]
        pass_filenames: false
        always_run: true
";

impl ManualLines {
    /// The snippets, with `hooks_dir` naming the directory git runs hooks from.
    pub fn for_dir(hooks_dir: &Path) -> Self {
        Self {
            hooks_dir: hooks_dir_lines(hooks_dir),
            husky: HUSKY.into(),
            lefthook: LEFTHOOK.into(),
            git_lfs: GIT_LFS.into(),
            pre_commit: PRE_COMMIT.into(),
        }
    }

    /// All snippets, one blank line apart.
    pub fn render(&self) -> String {
        [
            &self.hooks_dir,
            &self.husky,
            &self.lefthook,
            &self.pre_commit,
            &self.git_lfs,
        ]
        .map(String::as_str)
        .join("\n")
    }
}

/// Lines for executable hook files in the active hooks directory. `|| exit $?` because a plain
/// hook is not run with `sh -e`: a refusal on a line that is not the last must still fail it.
fn hooks_dir_lines(dir: &Path) -> String {
    let mut out = format!(
        "# git hooks in {dir}: put each line right after the #! line of its executable hook file\n\
         # there, before anything that reads stdin (`git hand install --hooks-path` does it for you):\n",
        dir = dir.display()
    );
    for hook in HookName::ALL {
        out.push_str(&format!(
            "# {}:\ngit-hand hook {hook} \"$@\" || exit $?\n",
            dir.join(hook.as_str()).display()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_snippet_calls_both_hooks_through_git_hand_directly() {
        let lines = ManualLines::for_dir(Path::new("/r/.husky"));
        for snippet in [
            &lines.hooks_dir,
            &lines.husky,
            &lines.lefthook,
            &lines.pre_commit,
        ] {
            assert!(snippet.contains("git-hand hook pre-push"), "{snippet}");
            assert!(snippet.contains("git-hand hook post-checkout"), "{snippet}");
            assert!(!snippet.contains("git hand hook"), "{snippet}");
        }
        assert!(lines.hooks_dir.contains("/r/.husky/pre-push"));
        assert!(lines.render().contains("stages: [post-checkout]"));
    }
}
