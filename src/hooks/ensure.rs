//! The two questions other verbs ask about hooks: "install them if they are missing, and tell me
//! whether they are in force" (`spawn`, [`ensure_installed`]) and "what is installed?" (`status`,
//! `doctor`, [`installed_state`]).
//!
//! Neither ever writes into a `core.hooksPath` directory: that belongs to another tool unless the
//! user runs `git hand install --hooks-path` themselves. Neither prints; a hook that is not in
//! force comes back as data with a message the caller shows loudly.

use std::fmt;
use std::io;
use std::path::PathBuf;

use super::chain::chained_path;
use super::install::{Found, HookChange, Warning, install_into, is_executable, look};
use super::locate::{HooksLocation, locate};
use super::{HookError, HookName};
use crate::git::Git;

/// What [`ensure_installed`] did and whether a stale holder's push will be refused.
#[derive(Debug)]
pub struct EnsureReport {
    /// The directory git runs hooks from.
    pub hooks_dir: PathBuf,
    /// What this call wrote (empty when everything was in place or nothing could be written).
    pub changes: Vec<HookChange>,
    /// Why the hooks are not in force, if they are not.
    pub problem: Option<NotInForce>,
}

impl EnsureReport {
    pub fn in_force(&self) -> bool {
        self.problem.is_none()
    }
}

/// Why git-hand's hooks will not check a push.
#[derive(Debug)]
pub enum NotInForce {
    /// `core.hooksPath` sends git to a directory git-hand was not asked to write into.
    HooksPath { value: String, dir: PathBuf },
    /// The hooks directory refused our write.
    NotWritable { dir: PathBuf, reason: String },
    /// A foreign hook and an earlier chained hook both exist; see [`HookError::ChainOccupied`].
    ChainOccupied {
        hook: HookName,
        path: PathBuf,
        chained: PathBuf,
    },
    /// The shims are there but exec `git-hand`, which the current PATH lacks: pushes are refused
    /// (fail closed), not checked.
    NotOnPath,
    /// lefthook's launcher holds the hook's place (lefthook installed or re-synced over git-hand's
    /// shim and git-hand cannot chain it), and lefthook's configuration does not call git-hand.
    Lefthook { hook: HookName, path: PathBuf },
}

impl NotInForce {
    /// The commands that put the hooks in force.
    pub fn hints(&self) -> Vec<String> {
        match self {
            NotInForce::HooksPath { .. } => vec![
                "git hand install --manual       # the lines to add to your hook manager".into(),
                "git hand install --hooks-path   # or let git-hand write its shims there".into(),
            ],
            NotInForce::NotWritable { dir, .. } => vec![
                format!("ls -ld {}   # who may write there?", dir.display()),
                "git hand install   # once it is writable".into(),
            ],
            NotInForce::ChainOccupied {
                hook,
                path,
                chained,
            } => HookError::ChainOccupied {
                hook: *hook,
                path: path.clone(),
                chained: chained.clone(),
            }
            .hints(),
            NotInForce::NotOnPath => vec![
                "install git-hand (./install.sh in its checkout) or add its directory to PATH"
                    .into(),
            ],
            NotInForce::Lefthook { .. } => vec![
                "git hand install --manual   # lefthook's lines: lefthook then calls git-hand itself, through every re-sync".into(),
            ],
        }
    }
}

impl fmt::Display for NotInForce {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unguarded = "a stale lease holder's push will NOT be refused";
        match self {
            NotInForce::HooksPath { value, dir } => write!(
                f,
                "core.hooksPath is set to {value}, so git runs hooks from {} and not git-hand's: \
                 {unguarded} unless your hook manager runs `git-hand hook pre-push`",
                dir.display()
            ),
            NotInForce::NotWritable { dir, reason } => write!(
                f,
                "git-hand cannot write its hooks into {} ({reason}): {unguarded}",
                dir.display()
            ),
            NotInForce::ChainOccupied {
                hook,
                path,
                chained,
            } => write!(
                f,
                "git-hand's {hook} hook is not installed because {} and {} both hold foreign \
                 hooks: {unguarded}",
                path.display(),
                chained.display()
            ),
            NotInForce::NotOnPath => f.write_str(&Warning::NotOnPath.message()),
            NotInForce::Lefthook { hook, path } => write!(
                f,
                "lefthook's {hook} hook {} took the place of git-hand's, and lefthook's \
                 configuration does not call git-hand: {unguarded}",
                path.display()
            ),
        }
    }
}

/// Whether git-hand's current shims are in force in `hooks_dir` without asking git: both are
/// there, current and executable, and `git-hand` is on PATH. Used by spawn as a fast path; the
/// caller must know that `hooks_dir` is the directory git runs hooks from (no `core.hooksPath`).
/// `false` means "not proven", never "not installed": the caller then asks [`ensure_installed`].
pub fn current_in(hooks_dir: &std::path::Path) -> bool {
    HookName::ALL.into_iter().all(|hook| {
        let path = hooks_dir.join(hook.as_str());
        std::fs::read(&path).is_ok_and(|bytes| super::shim::is_current(hook, &bytes))
            && is_executable(&path)
    }) && not_on_path().is_none()
}

/// Whether a `git switch` run by git-hand itself in a repository whose hooks live in
/// `hooks_dir` would run nothing but git-hand's own post-checkout shim (which does nothing for
/// git-hand's calls): no chained post-checkout hook, no reference-transaction hook, and the
/// post-checkout hook, if any, is ours. Then git-hand may skip hooks for that call.
pub fn only_our_switch_hooks(hooks_dir: &std::path::Path) -> bool {
    let post_checkout = hooks_dir.join(HookName::PostCheckout.as_str());
    let ours_or_none = match std::fs::read(&post_checkout) {
        Ok(bytes) => super::shim::is_ours(&bytes),
        Err(e) => e.kind() == io::ErrorKind::NotFound,
    };
    ours_or_none
        && !chained_path(hooks_dir, HookName::PostCheckout).exists()
        && !hooks_dir.join("reference-transaction").exists()
}

/// Installs git-hand's hooks when they are missing or stale (same rules as `git hand install`,
/// never into a `core.hooksPath` directory) and says whether they are in force. Only failures
/// nobody can act on from the message alone (git cannot be run, an unexpected I/O error) are
/// `Err`.
pub fn ensure_installed(git: &Git) -> Result<EnsureReport, HookError> {
    let location = locate(git)?;
    let hooks_dir = location.active.clone();
    if location.is_redirected() {
        let problem = (!ours_in_both(&location)?).then(|| NotInForce::HooksPath {
            value: location.hooks_path.clone().unwrap_or_default(),
            dir: hooks_dir.clone(),
        });
        let problem = problem.or_else(not_on_path);
        return Ok(EnsureReport {
            hooks_dir,
            changes: vec![],
            problem,
        });
    }
    let (changes, problem) = match install_into(&hooks_dir, false) {
        Ok(changes) => (changes, not_on_path()),
        Err(HookError::ChainOccupied {
            hook,
            path,
            chained,
        }) => (vec![], chain_occupied(git, hook, path, chained)),
        Err(HookError::Io { source, .. }) if is_not_writable(&source) => (
            vec![],
            Some(NotInForce::NotWritable {
                dir: hooks_dir.clone(),
                reason: source.to_string(),
            }),
        ),
        Err(e) => return Err(e),
    };
    Ok(EnsureReport {
        hooks_dir,
        changes: changes.into_iter().filter(|c| c.change.wrote()).collect(),
        problem,
    })
}

/// What a foreign hook beside an older chained one means for enforcement. lefthook's launcher
/// there enforces the lease on its own when lefthook's configuration calls git-hand (its recipe),
/// and otherwise the fix is that recipe, not choosing between two hooks.
fn chain_occupied(
    git: &Git,
    hook: HookName,
    path: PathBuf,
    chained: PathBuf,
) -> Option<NotInForce> {
    let lefthooks = std::fs::read(&path).is_ok_and(|b| {
        super::foreign::generator(hook, &b) == Some(super::foreign::Generator::Lefthook)
    });
    match lefthooks {
        true if super::foreign::lefthook_runs_git_hand(git.dir()) => not_on_path(),
        true => Some(NotInForce::Lefthook { hook, path }),
        false => Some(NotInForce::ChainOccupied {
            hook,
            path,
            chained,
        }),
    }
}

/// What one hook file in the active hooks directory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileState {
    Missing,
    /// git-hand's current shim, executable.
    Current,
    /// git-hand's shim from another version; it still runs git-hand, `install` rewrites it.
    Stale,
    /// git-hand's shim without an execute bit: git skips it.
    NotExecutable,
    /// Someone else's hook.
    Foreign,
}

impl FileState {
    pub fn as_str(self) -> &'static str {
        match self {
            FileState::Missing => "missing",
            FileState::Current => "current",
            FileState::Stale => "stale",
            FileState::NotExecutable => "not-executable",
            FileState::Foreign => "foreign",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookState {
    pub hook: HookName,
    pub path: PathBuf,
    pub file: FileState,
    /// The chained foreign hook, when one exists.
    pub chained: Option<PathBuf>,
}

/// What is installed where git runs hooks from, for `status` and `doctor`.
#[derive(Debug, Clone)]
pub struct InstalledState {
    pub location: HooksLocation,
    pub hooks: Vec<HookState>,
    /// Where `git-hand` resolves on the current PATH.
    pub git_hand: Option<PathBuf>,
}

impl InstalledState {
    /// Both shims run git-hand, and git-hand can be found.
    pub fn in_force(&self) -> bool {
        self.git_hand.is_some()
            && self
                .hooks
                .iter()
                .all(|h| matches!(h.file, FileState::Current | FileState::Stale))
    }
}

/// Reads, never writes: one git call (two under `core.hooksPath`), two small file reads per hook
/// and a PATH lookup.
pub fn installed_state(git: &Git) -> Result<InstalledState, HookError> {
    let location = locate(git)?;
    let hooks = HookName::ALL
        .into_iter()
        .map(|hook| state_of(&location, hook))
        .collect::<Result<_, _>>()?;
    Ok(InstalledState {
        location,
        hooks,
        git_hand: which::which("git-hand").ok(),
    })
}

fn state_of(location: &HooksLocation, hook: HookName) -> Result<HookState, HookError> {
    let seen = look(&location.active, hook)?;
    let file = match seen.found {
        Found::Missing => FileState::Missing,
        Found::Foreign => FileState::Foreign,
        Found::Ours { .. } if !is_executable(&seen.path) => FileState::NotExecutable,
        Found::Ours { current: true } => FileState::Current,
        Found::Ours { current: false } => FileState::Stale,
    };
    Ok(HookState {
        hook,
        chained: seen
            .has_chained
            .then(|| chained_path(&location.active, hook)),
        path: seen.path,
        file,
    })
}

/// Whether `install --hooks-path` already put our shims into the redirected directory.
fn ours_in_both(location: &HooksLocation) -> Result<bool, HookError> {
    for hook in HookName::ALL {
        if !matches!(
            state_of(location, hook)?.file,
            FileState::Current | FileState::Stale
        ) {
            return Ok(false);
        }
    }
    Ok(true)
}

fn not_on_path() -> Option<NotInForce> {
    which::which("git-hand")
        .is_err()
        .then_some(NotInForce::NotOnPath)
}

fn is_not_writable(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem
    )
}
