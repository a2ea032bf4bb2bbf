//! Hook files: the shims in `hooks/` ([`shim`]), where git runs hooks from ([`locate`]),
//! installing them beside (and chained to) hooks that other tools wrote and uninstalling them so
//! exactly what was there comes back ([`install`]), the checks `spawn`, `status` and `doctor` make
//! ([`ensure`]), the lines a hook manager needs ([`manual`]) and running a chained hook ([`chain`]).
//!
//! This module owns every file in a hooks directory that git-hand touches and nothing else: it
//! never decides a push's verdict (that is `git-hand hook pre-push`), never reads the ledger and
//! never prints. It asks git where hooks live through [`crate::git::Git`], because git is the
//! authority on `core.hooksPath`, `includeIf` and linked worktrees.

pub mod chain;
pub mod ensure;
mod files;
pub mod foreign;
pub mod install;
pub mod linked;
pub mod locate;
pub mod manual;
pub mod server;
pub mod shim;

use std::path::PathBuf;

use crate::git::GitError;
use crate::hint::{Hint, say};

pub use chain::{CHAINED_SUFFIX, HOOK_DIR_ENV, IN_HOOK_ENV, chained_path, run_chained};
pub use ensure::{
    Enforcer, EnsureReport, FileState, HookState, InForce, InstalledState, Lapse, LapseKind,
    NotInForce, clear_opt_out, current_in, ensure_installed, in_force, installed_state,
    only_our_switch_hooks, record_opt_out, runs_reference_transaction,
};
pub use install::{
    Change, HookChange, InstallOptions, InstallReport, Rewrite, Target, UninstallReport, Warning,
    displaced_line, install, install_into, uninstall, uninstall_from,
};
pub use locate::{HooksLocation, locate, not_moved_by_another_tool};
pub use manual::{Manager, Scene};
pub use server::{Layout, ServerReport, ServerTarget, install_server, uninstall_server};

/// The hooks git-hand installs. Serialized as its file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HookName {
    PrePush,
    PostCheckout,
    /// Fences every ref update in a slot, not only the push (issue 16); git >= 2.28.
    ReferenceTransaction,
    /// The server's fence (issue 15): installed only by `git hand install --server`, in a bare
    /// repository that clients push to; never one of [`HookName::ALL`].
    PreReceive,
}

impl HookName {
    /// The client hooks: what `install`, `spawn`, `doctor` and `uninstall` look after.
    pub const ALL: [HookName; 3] = [
        HookName::PrePush,
        HookName::PostCheckout,
        HookName::ReferenceTransaction,
    ];

    /// The client hooks in the repository's own hooks directory, which the main worktree runs:
    /// reference-transaction is in the hooks directory of linked worktrees only (issue 25).
    pub const MAIN: [HookName; 2] = [HookName::PrePush, HookName::PostCheckout];

    /// The hooks `git hand install --server` installs in a repository clients push to.
    pub(crate) const SERVER: [HookName; 1] = [HookName::PreReceive];

    /// The name a foreign hook is kept under once chained: `pre-push.git-hand-chained`.
    pub fn chained_file_name(self) -> String {
        format!("{self}{CHAINED_SUFFIX}")
    }
}

// Spelled as the file name git looks for: `pre-push`, `post-checkout`, `reference-transaction`.
crate::word::words!(HookName: "hook");

/// Why a hook file could not be installed, uninstalled or inspected. Every variant names the
/// paths involved; [`HookError::hints`] gives the commands that get the user out of it.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    #[error("cannot ask git where {} runs hooks from: {source}", dir.display())]
    Locate { dir: PathBuf, source: GitError },
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// `core.hooksPath` hands hooks to another directory (often a hook manager's); git-hand writes
    /// there only when asked (`--hooks-path`).
    #[error(
        "core.hooksPath is set to {value}, so git runs hooks from {}, which another tool may manage; git-hand does not write there unless asked, and wrote nothing",
        dir.display()
    )]
    HooksPathSet { value: String, dir: PathBuf },
    /// `install --hooks-path` into husky's generated directory: chaining renames husky's files,
    /// which find the script they run from their own name, so husky's hooks would stop running.
    #[error(
        "{} is husky's generated hooks directory: its files find the script to run from their own name, so chaining them would silently stop husky's hooks; git-hand wrote nothing",
        dir.display()
    )]
    HuskyHooksPath { dir: PathBuf },
    /// A new foreign hook sits where git-hand's shim belongs while an older foreign hook already
    /// holds the chained name: chaining either would lose the other.
    #[error(
        "{} is not git-hand's, and {} already holds the {hook} hook git-hand chained earlier; git-hand will not choose between them and changed nothing",
        path.display(),
        chained.display()
    )]
    ChainOccupied {
        hook: HookName,
        path: PathBuf,
        chained: PathBuf,
    },
    /// Uninstall would put the chained hook back over a foreign hook someone wrote since.
    #[error(
        "{} is not git-hand's (something replaced its shim), and {} holds the {hook} hook git-hand chained; restoring it would overwrite {}, so git-hand changed nothing",
        path.display(),
        chained.display(),
        path.display()
    )]
    RestoreBlocked {
        hook: HookName,
        path: PathBuf,
        chained: PathBuf,
    },
    /// A setting the hooks need could not be written (`install --server`).
    #[error("cannot set {key} in {}: {source}", dir.display())]
    Configure {
        key: &'static str,
        dir: PathBuf,
        source: GitError,
    },
    /// `install --server`: a file that is not git-hand's holds git-hand's name in a dispatched
    /// `pre-receive.d/`; the dispatcher runs it, so it stays where it is.
    #[error(
        "{} is not git-hand's, and the server runs it from there; git-hand will not replace it and changed nothing",
        path.display()
    )]
    NameTaken { path: PathBuf },
    /// `install --server`: the repository looks like GitLab's (whose Gitaly runs
    /// `custom_hooks/pre-receive.d`) and has a `hooks/pre-receive` that dispatches `hooks/pre-receive.d`
    /// (Gitea's, Forgejo's, or a hand-written one): only one of them is what the server runs, and
    /// a fence written to the other would never run.
    #[error(
        "{} looks like a GitLab repository ({gitlab}) and also has a pre-receive that dispatches {}; git-hand cannot tell which one the server runs and changed nothing",
        repo.display(),
        dispatched.display()
    )]
    LayoutAmbiguous {
        repo: PathBuf,
        gitlab: String,
        dispatched: PathBuf,
        custom_hooks: PathBuf,
    },
    #[error("{} is not a regular file; git-hand leaves it alone", path.display())]
    NotAFile { path: PathBuf },
    /// git-hand's hooks directory for linked worktrees could not be written or read
    /// ([`linked`]).
    #[error(transparent)]
    Linked(Box<linked::LinkedError>),
    /// Another process kept changing the hook while we installed: retrying is safe.
    #[error("{} kept changing while git-hand worked on it (another install or uninstall?)", path.display())]
    Contended { path: PathBuf },
}

impl HookError {
    /// The commands that get the user out of this error.
    pub fn hints(&self) -> Vec<crate::hint::Hint> {
        let show = |p: &PathBuf| p.display().to_string();
        match self {
            HookError::Configure { key, dir, .. } => vec![
                Hint::run(format!("git -C {} config {key} true", show(dir)))
                    .why(say("then run ").hand("install --server").text(" again")),
            ],
            HookError::Locate { dir, .. } => vec![
                Hint::run(format!("git -C {} rev-parse --git-path hooks", show(dir)))
                    .why("must work for git-hand to find the hooks"),
            ],
            HookError::Io { path, .. } | HookError::NotAFile { path } => vec![
                Hint::run(format!("ls -l {}", show(path)))
                    .why("check who owns it and that it is writable"),
                Hint::hand("install").why("again, once fixed; it picks up where it stopped"),
            ],
            HookError::HooksPathSet { .. } => vec![
                Hint::hand("install --manual").why("the lines to add to your hook manager"),
                Hint::hand("install --hooks-path")
                    .why("or write git-hand's shims into that directory"),
            ],
            HookError::HuskyHooksPath { .. } => vec![
                Hint::hand("install --manual")
                    .why("the lines to add to .husky/pre-push and .husky/post-checkout"),
            ],
            HookError::ChainOccupied { path, chained, .. } => vec![
                Hint::run(
                    say(format!(
                        "keep both: append what {} does to {}, delete {}, then run: ",
                        show(path),
                        show(chained),
                        show(path)
                    ))
                    .hand("install"),
                ),
                Hint::run(
                    say(format!(
                        "keep only the new hook: rm {}, then run: ",
                        show(chained)
                    ))
                    .hand("install"),
                ),
                Hint::run(
                    say(format!(
                        "keep only the chained hook: rm {}, then run: ",
                        show(path)
                    ))
                    .hand("install"),
                ),
            ],
            HookError::RestoreBlocked { path, chained, .. } => vec![
                Hint::run(
                    say(format!(
                        "keep {}: merge what you need from {}, rm {}, then run: ",
                        show(path),
                        show(chained),
                        show(chained)
                    ))
                    .hand("uninstall"),
                ),
                Hint::run(
                    say(format!(
                        "restore the chained hook instead: mv {} {}, then run: ",
                        show(chained),
                        show(path)
                    ))
                    .hand("uninstall"),
                ),
            ],
            HookError::Contended { .. } => vec![Hint::run("run the same command again")],
            HookError::Linked(e) => e.hints(),
            HookError::NameTaken { path } => vec![Hint::run(
                say(format!(
                    "mv {} <another name in the same directory>, then run: ",
                    show(path)
                ))
                .hand("install --server"),
            )],
            HookError::LayoutAmbiguous {
                dispatched,
                custom_hooks,
                ..
            } => vec![
                Hint::hand(format!(
                    "install --server --hooks-dir {}",
                    show(custom_hooks)
                ))
                .why("GitLab (Gitaly) runs these"),
                Hint::hand(format!(
                    "install --server --hooks-dir {}",
                    show(&dispatched.parent().unwrap_or(dispatched).to_path_buf())
                ))
                .why("Gitea, Forgejo or your dispatcher runs these"),
            ],
        }
    }

    /// Whether the error means "another party holds this; nothing was changed" (exit 3) rather
    /// than a failure (exit 1).
    pub fn is_precondition(&self) -> bool {
        matches!(
            self,
            HookError::HooksPathSet { .. }
                | HookError::HuskyHooksPath { .. }
                | HookError::ChainOccupied { .. }
                | HookError::RestoreBlocked { .. }
                | HookError::Contended { .. }
                | HookError::NameTaken { .. }
                | HookError::LayoutAmbiguous { .. }
        ) || matches!(self, HookError::Linked(e) if e.is_precondition())
    }
}

impl From<linked::LinkedError> for HookError {
    /// A hook file's own error comes out as itself; the layout's as [`HookError::Linked`].
    fn from(e: linked::LinkedError) -> HookError {
        match e {
            linked::LinkedError::Hook(e) => e,
            e => HookError::Linked(Box::new(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_names_round_trip_and_name_their_chained_file() {
        for hook in HookName::ALL.into_iter().chain(HookName::SERVER) {
            assert_eq!(hook.to_string().parse::<HookName>(), Ok(hook));
        }
        assert_eq!(HookName::PreReceive.to_string(), "pre-receive");
        assert_eq!(
            HookName::PrePush.chained_file_name(),
            "pre-push.git-hand-chained"
        );
        assert!("pre-commit".parse::<HookName>().is_err());
    }
}
