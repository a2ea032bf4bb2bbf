//! The two questions other verbs ask about hooks: "install them if they are missing, and tell me
//! whether they are in force" (`spawn`, [`ensure_installed`]) and "what is installed?" (`status`,
//! `doctor`, [`installed_state`]).
//!
//! Neither ever writes into a `core.hooksPath` directory: that belongs to another tool unless the
//! user runs `git hand install --hooks-path` themselves. Neither prints; a hook that is not in
//! force comes back as data with a message the caller shows loudly.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use super::chain::{chained_path, is_our_shim};
use super::files::is_executable;
use super::install::{
    Found, HookChange, Seen, Warning, drop_layout, install_layout, locate_past_a_stale_layout, look,
};
use super::locate::{HooksLocation, locate};
use super::{HookError, HookName};
use crate::git::Git;
use crate::hint::{Hint, say};

/// What [`ensure_installed`] did and whether a stale holder's push will be refused.
#[derive(Debug)]
pub struct EnsureReport {
    /// The directory git runs hooks from.
    pub hooks_dir: PathBuf,
    /// What this call wrote (empty when everything was in place or nothing could be written).
    pub changes: Vec<HookChange>,
    /// Files another tool wrote into the hooks directory of linked worktrees, moved aside to
    /// these paths (`<name>.git-hand-displaced`) so git-hand's entries could take their place.
    pub displaced: Vec<PathBuf>,
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
    pub fn hints(&self) -> Vec<crate::hint::Hint> {
        match self {
            NotInForce::HooksPath { .. } => vec![
                Hint::hand("install --manual").why("the lines to add to your hook manager"),
                Hint::hand("install --hooks-path").why("or let git-hand write its shims there"),
            ],
            NotInForce::NotWritable { dir, .. } => vec![
                Hint::run(format!("ls -ld {}", dir.display())).why("who may write there?"),
                Hint::hand("install").why("once it is writable"),
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
            NotInForce::NotOnPath => vec![Hint::run(
                "install git-hand (./install.sh in its checkout) or add its directory to PATH",
            )],
            NotInForce::Lefthook { .. } => vec![Hint::hand("install --manual").why(
                "lefthook's lines: lefthook then calls git-hand itself, through every re-sync",
            )],
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

/// Whether git-hand's current hooks are in force for the repository whose common dir is `common`
/// without starting git: pre-push and post-checkout current and executable in `<common>/hooks`,
/// no reference-transaction shim of an older git-hand left there, git-hand's hooks directory for
/// linked worktrees as install leaves it ([`super::linked::check`]), and `git-hand` on PATH.
/// Used by spawn as a fast path; the caller must know that no `core.hooksPath` of another tool's
/// moves the hooks. `false` means "not proven", never "not installed": the caller then asks
/// [`ensure_installed`].
pub fn current_in(common: &Path) -> bool {
    let hooks_dir = common.join("hooks");
    let shim = shim_text();
    HookName::MAIN.into_iter().all(|hook| {
        let path = hooks_dir.join(hook.to_string());
        std::fs::read(&path).is_ok_and(|bytes| super::shim::is_current(hook, &bytes))
            && is_executable(&path)
    }) && !is_our_shim(&hooks_dir.join(HookName::ReferenceTransaction.to_string()))
        && super::linked::check(common, &hooks_dir, shim).is_ok_and(|c| c.is_current())
        && not_on_path().is_none()
}

/// Whether a `git switch` run by git-hand itself in a repository whose common dir is `common`
/// would run nothing but git-hand's own post-checkout and reference-transaction shims (which do
/// nothing for git-hand's calls: they exit on `GIT_HAND_INTERNAL`): neither has a chained hook,
/// in the repository's hooks directory or in the one of linked worktrees (where the switch of a
/// slot runs them), and each, if there, is ours. Then git-hand may skip hooks for that call.
pub fn only_our_switch_hooks(common: &Path) -> bool {
    let dirs = [common.join("hooks"), super::linked::hooks_dir(common)];
    [HookName::PostCheckout, HookName::ReferenceTransaction]
        .into_iter()
        .all(|hook| {
            dirs.iter().all(|dir| {
                let ours_or_none = match std::fs::read(dir.join(hook.to_string())) {
                    Ok(bytes) => {
                        super::shim::is_ours(&bytes)
                            || super::linked::forward_target(&bytes).is_some()
                    }
                    Err(e) => e.kind() == io::ErrorKind::NotFound,
                };
                // A dangling link in L (D has no such hook yet) runs nothing.
                let chained_runs = match std::fs::read(chained_path(dir, hook)) {
                    Ok(bytes) => !super::shim::is_ours(&bytes),
                    Err(e) => e.kind() != io::ErrorKind::NotFound,
                };
                ours_or_none && !chained_runs
            })
        })
}

/// Whether the git at hand runs a `reference-transaction` hook (git >= 2.28); `None` when its
/// version cannot be told. Older git ignores the file, so it is installed anyway (a `spawn` would
/// otherwise find the hooks incomplete every time) and `install` says that it does not run.
pub fn runs_reference_transaction(git: &Git) -> Option<bool> {
    git.run(&["version"])
        .ok()
        .and_then(|v| version_at_least(&v, 2, 28))
}

/// `git version 2.47.3` (or `2.39.5 (Apple Git-154)`) at least `major.minor`.
fn version_at_least(text: &str, major: u32, minor: u32) -> Option<bool> {
    let version = text.trim().strip_prefix("git version ")?;
    let mut parts = version.split(['.', ' ']).map(str::parse::<u32>);
    let (have_major, have_minor) = (parts.next()?.ok()?, parts.next()?.ok()?);
    Some((have_major, have_minor) >= (major, minor))
}

/// Installs git-hand's hooks when they are missing or stale (same rules as `git hand install`,
/// never into a `core.hooksPath` directory) and says whether they are in force. Only failures
/// nobody can act on from the message alone (git cannot be run, an unexpected I/O error) are
/// `Err`.
pub fn ensure_installed(git: &Git) -> Result<EnsureReport, HookError> {
    let (location, mut dropped) = locate_past_a_stale_layout(git)?;
    let hooks_dir = location.active.clone();
    if location.is_redirected() {
        // A core.hooksPath set since git-hand's layout for linked worktrees was written (husky
        // installed later): the layout would shadow it in slots, so it goes, and slots follow
        // core.hooksPath as the main worktree does.
        dropped.extend(drop_layout(&location)?);
        let changes = dropped;
        let problem = (!ours_in_both(&location)?).then(|| NotInForce::HooksPath {
            value: location.hooks_path.clone().unwrap_or_default(),
            dir: hooks_dir.clone(),
        });
        let problem = problem.or_else(not_on_path);
        return Ok(EnsureReport {
            hooks_dir,
            changes,
            displaced: vec![],
            problem,
        });
    }
    let mut displaced = vec![];
    let installed = install_layout(&location, super::install::Rewrite::IfStale, &mut displaced);
    let (changes, problem) = match installed {
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
        changes: dropped
            .into_iter()
            .chain(changes)
            .filter(|c| c.change.wrote())
            .collect(),
        displaced,
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
    match super::foreign::is_lefthook_launcher(hook, &path) {
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
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

crate::word::words!(FileState: "hook file state", LapseKind: "lapse kind");

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
        git_hand: super::shim::reachable(),
    })
}

fn state_of(location: &HooksLocation, hook: HookName) -> Result<HookState, HookError> {
    let dir = dir_of(location, hook);
    let seen = look(&dir, hook)?;
    let file = match seen.found {
        Found::Missing => FileState::Missing,
        Found::Foreign => FileState::Foreign,
        Found::Ours { .. } if !is_executable(&seen.path) => FileState::NotExecutable,
        Found::Ours { current: true } => FileState::Current,
        Found::Ours { current: false } => FileState::Stale,
    };
    Ok(HookState {
        hook,
        chained: seen.has_chained.then(|| chained_path(&dir, hook)),
        path: seen.path,
        file,
    })
}

/// Where git-hand's shim for `hook` lives: the reference-transaction shim in the hooks directory
/// of linked worktrees (L) unless another tool's `core.hooksPath` took all three, the others
/// where git runs hooks from.
fn dir_of(location: &HooksLocation, hook: HookName) -> PathBuf {
    match hook == HookName::ReferenceTransaction && !location.is_redirected() {
        true => super::linked::hooks_dir(location.common()),
        false => location.active.clone(),
    }
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

/// Whether the shims this process writes (or finds current) cannot start git-hand: not on
/// `PATH`, and not at the path they record (this executable's).
fn not_on_path() -> Option<NotInForce> {
    super::shim::reachable()
        .is_none()
        .then_some(NotInForce::NotOnPath)
}

fn is_not_writable(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem
    )
}

/// Why the hooks are not (fully) in force for one worktree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LapseKind {
    /// No `pre-push` hook where git runs hooks from for this worktree.
    Missing,
    /// git-hand's shim is there without an execute bit: git skips it.
    NotExecutable,
    /// `core.hooksPath` sends git to a directory whose `pre-push` does not run git-hand.
    HooksPath,
    /// Another tool renamed git-hand's shim (lefthook keeps it as `pre-push.old`) and put its
    /// own hook, which does not run git-hand, in its place.
    Renamed,
    /// A foreign `pre-push` that does not run git-hand.
    Foreign,
    /// The hook git-hand chained is not executable: git-hand skips it as git would, so the
    /// user's own hook no longer runs. The fence still holds.
    ChainedBroken,
    /// git-hand's post-checkout shim is missing or not executable: a slot whose lease ended
    /// gets no warning on checkout. The fence still holds.
    PostCheckout,
    /// The shim cannot find `git-hand` on this PATH: every push from here is refused.
    NotOnPath,
    /// git-hand's reference-transaction shim is missing or not executable: a superseded holder's
    /// commit in a slot is not refused (its push still is).
    ReferenceTransaction,
    /// The hooks directory of linked worktrees is not as git-hand keeps it, though the fence
    /// holds: an older git-hand's layout (the main worktree pays for a reference-transaction
    /// hook it does not need), a hook of the main worktree's that slots run without its
    /// companions (added since), or an entry another tool wrote there.
    LinkedHooks,
}

impl LapseKind {
    /// Whether this lapse lets a stale holder's push through unchecked.
    pub(crate) fn unchecks_pushes(self) -> bool {
        !matches!(
            self,
            LapseKind::ChainedBroken
                | LapseKind::PostCheckout
                | LapseKind::NotOnPath
                | LapseKind::ReferenceTransaction
                | LapseKind::LinkedHooks
        )
    }
}

/// One thing wrong with the hooks of a worktree, with the commands that fix it.
#[derive(Debug, Clone)]
pub struct Lapse {
    pub kind: LapseKind,
    pub message: String,
    pub hints: Vec<crate::hint::Hint>,
    /// Whether `git hand install` (and so `doctor --repair`) fixes it: never for a
    /// `core.hooksPath` directory another tool owns, which needs the user's flag or recipe.
    pub repairable: bool,
}

/// What runs git-hand's pre-push check for a worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Enforcer {
    /// git-hand's shim, executable.
    Shim,
    /// A hook manager's hook that calls `git-hand hook pre-push` (seen in the hook itself or in
    /// the manager's configuration this file names).
    Manager(PathBuf),
    /// Nothing runs git-hand.
    Nothing,
}

/// Whether git-hand's hooks are in force for one worktree: what git will run there on a push,
/// asked of git in that worktree (`git rev-parse --git-path hooks` honours a per-worktree
/// `core.hooksPath`), and what is wrong with it.
#[derive(Debug, Clone)]
pub struct InForce {
    /// The directory git runs hooks from for this worktree.
    pub dir: PathBuf,
    /// `core.hooksPath` when it moves hooks away from the repository's own directory.
    pub hooks_path: Option<String>,
    /// The hooks directory of linked worktrees this worktree runs hooks from, forwarding to
    /// [`Self::dir`] (a slot's, issue 25).
    pub linked: Option<PathBuf>,
    pub pre_push: Enforcer,
    pub lapses: Vec<Lapse>,
}

impl InForce {
    /// Whether a stale holder's push from this worktree is checked (refused).
    pub fn in_force(&self) -> bool {
        self.pre_push != Enforcer::Nothing && !self.lapses.iter().any(|l| l.kind.unchecks_pushes())
    }

    /// The lapse that leaves pushes unchecked, if any.
    pub fn unchecked(&self) -> Option<&Lapse> {
        self.lapses.iter().find(|l| l.kind.unchecks_pushes())
    }
}

/// Files where a hook manager keeps the commands it runs, relative to the work tree: a foreign
/// `pre-push` is taken to run git-hand when one of them does (the recipes in docs/hooks.md).
const MANAGER_FILES: &[&str] = &[
    ".husky/pre-push",
    "lefthook.yml",
    "lefthook.yaml",
    ".lefthook.yml",
    ".lefthook.yaml",
    "lefthook-local.yml",
    ".lefthook-local.yml",
    ".pre-commit-config.yaml",
];

/// The call a hook or a manager's configuration must make for the fence to hold.
const CALL: &str = "git-hand hook pre-push";

/// Reads what git will run on a push from the worktree `git` runs in; `workdir` is that work
/// tree (where a manager's configuration lives). Reads, never writes: one git call (two under
/// `core.hooksPath`), a few small file reads.
pub fn in_force(git: &Git, workdir: Option<&Path>) -> Result<InForce, HookError> {
    let location = locate(git)?;
    let dir = location.active.clone();
    // `git hand install` (and so `doctor --repair`) may fix a lapse only in the repository's
    // own hooks directory, never in a `core.hooksPath` another tool owns.
    let repairable = !location.is_redirected();
    // In a slot git runs L's pre-push: git-hand's forwarder to the main worktree's (judged there),
    // or what took its place (an installer run in the slot, a moved repository's missing L).
    let pre_push = match &location.linked {
        Some(l) if !forwards(l, &dir, HookName::PrePush) => look(l, HookName::PrePush)?,
        _ => look(&dir, HookName::PrePush)?,
    };
    let (pre_push_enforcer, mut lapses) = enforcer_of(&pre_push, workdir, repairable);
    if pre_push_enforcer == Enforcer::Nothing && lapses.is_empty() {
        lapses.push(not_running(&location, &pre_push.path, &pre_push.found));
    }
    if pre_push_enforcer == Enforcer::Shim {
        lapses.extend(beside_the_shim(&location, &pre_push, workdir, repairable)?);
    }
    if let (Some(l), Some(main)) = (&location.linked, &location.main_hooks_path) {
        lapses.push(Lapse {
            kind: LapseKind::LinkedHooks,
            message: format!(
                "core.hooksPath is set to {main} for the main worktree since git-hand wrote {}, \
                 which slots still run and which forwards to {}: slots do not run {main}'s hooks",
                l.display(),
                dir.display()
            ),
            hints: vec![
                Hint::hand("doctor --repair")
                    .why("slots then run core.hooksPath's hooks, as the main worktree does"),
                Hint::hand("install --manual")
                    .why("the lines your hook manager needs for git-hand's fence"),
            ],
            repairable: true,
        });
    }
    Ok(InForce {
        dir,
        hooks_path: location.hooks_path.clone(),
        linked: location.linked.clone(),
        pre_push: pre_push_enforcer,
        lapses,
    })
}

/// What runs git-hand's check on a push, judged from the `pre-push` file: our shim (when git
/// can execute it: a lapse otherwise), a foreign hook that calls git-hand itself or through its
/// manager's configuration in `workdir`, or nothing.
fn enforcer_of(
    pre_push: &Seen,
    workdir: Option<&Path>,
    repairable: bool,
) -> (Enforcer, Vec<Lapse>) {
    match pre_push.found {
        Found::Ours { .. } if !is_executable(&pre_push.path) => {
            let lapse = Lapse {
                kind: LapseKind::NotExecutable,
                message: format!(
                    "git-hand's pre-push hook {} is not executable, so git skips it",
                    pre_push.path.display()
                ),
                hints: vec![
                    Hint::run(format!("chmod +x {}", pre_push.path.display())),
                    Hint::hand("doctor --repair").why("or reinstall git-hand's hooks"),
                ],
                repairable,
            };
            (Enforcer::Nothing, vec![lapse])
        }
        Found::Ours { .. } => (Enforcer::Shim, vec![]),
        Found::Foreign => match calls_git_hand(&pre_push.path, workdir) {
            Some(by) => (Enforcer::Manager(by), vec![]),
            None => (Enforcer::Nothing, vec![]),
        },
        Found::Missing => (Enforcer::Nothing, vec![]),
    }
}

/// What is wrong beside a pre-push shim that is in force: the fence holds, but the hook it
/// chained no longer runs, a companion shim (post-checkout, reference-transaction) is missing
/// or not executable, or `git-hand` is not on PATH (every push is refused, none checked).
fn beside_the_shim(
    location: &HooksLocation,
    pre_push: &Seen,
    workdir: Option<&Path>,
    repairable: bool,
) -> Result<Vec<Lapse>, HookError> {
    let dir = &location.active;
    let mut lapses = vec![];
    let chained = chained_path(dir, HookName::PrePush);
    if pre_push.has_chained && !is_executable(&chained) {
        lapses.push(Lapse {
            kind: LapseKind::ChainedBroken,
            message: format!(
                "the pre-push hook git-hand chained, {}, is not executable, so it no longer \
                 runs (git-hand's check still does)",
                chained.display()
            ),
            hints: vec![Hint::run(format!("chmod +x {}", chained.display()))],
            repairable: false,
        });
    }
    let post = look(dir, HookName::PostCheckout)?;
    if !runs(&post) {
        lapses.push(Lapse {
            kind: LapseKind::PostCheckout,
            message: format!(
                "git-hand's post-checkout hook {} is missing or not executable: a checkout \
                 in a slot whose lease ended is not warned about",
                post.path.display()
            ),
            hints: vec![Hint::hand("doctor --repair")],
            repairable,
        });
    }
    if !location.is_redirected() {
        lapses.extend(linked_lapses(location, workdir)?);
    } else {
        // `install --hooks-path`: all three shims are in that directory.
        let refs = look(dir, HookName::ReferenceTransaction)?;
        if !runs(&refs) {
            lapses.push(Lapse {
                kind: LapseKind::ReferenceTransaction,
                message: format!(
                    "git-hand's reference-transaction hook {} is missing or not executable: a \
                     superseded lease holder's commit in a slot is not refused (its push still is)",
                    refs.path.display()
                ),
                hints: vec![Hint::hand("doctor --repair")],
                repairable,
            });
        }
    }
    if let Some(NotInForce::NotOnPath) = not_on_path() {
        lapses.push(Lapse {
            kind: LapseKind::NotOnPath,
            message: Warning::NotOnPath.message(),
            hints: NotInForce::NotOnPath.hints(),
            repairable: false,
        });
    }
    Ok(lapses)
}

/// Whether `<l>/<hook>` is git-hand's forwarder (or link) to `<dir>/<hook>`: a slot then runs
/// the main worktree's hook.
fn forwards(l: &Path, dir: &Path, hook: HookName) -> bool {
    let (entry, target) = (l.join(hook.to_string()), dir.join(hook.to_string()));
    match std::fs::symlink_metadata(&entry) {
        Ok(m) if m.file_type().is_symlink() => {
            std::fs::read_link(&entry).is_ok_and(|t| t == target)
        }
        Ok(_) => std::fs::read(&entry)
            .is_ok_and(|b| super::linked::forward_target(&b).as_deref() == Some(target.as_path())),
        Err(_) => false,
    }
}

/// What is wrong with the hooks directory of linked worktrees (L), where git-hand's
/// reference-transaction shim lives when the repository's own hooks directory is the main
/// worktree's: each lapse is one `doctor --repair` (a sync of L) mends, but for entries another
/// tool wrote into L.
fn linked_lapses(
    location: &HooksLocation,
    workdir: Option<&Path>,
) -> Result<Vec<Lapse>, HookError> {
    let (d, common) = (&location.default, location.common());
    let l = super::linked::hooks_dir(common);
    let paths = super::linked::Paths::of(common);
    let mut check = super::linked::check(common, d, shim_text())?;
    let l_shim = l.join(HookName::ReferenceTransaction.to_string());
    // lefthook's launcher in L's place (lefthook installed in a slot) with git-hand's lefthook
    // recipe: its script runs git-hand's reference-transaction check, so the fence holds.
    if workdir.is_some_and(|top| {
        super::foreign::lefthook_runs_git_hand_at(HookName::ReferenceTransaction, &l_shim, top)
    }) {
        check.shim_current = true;
    }
    let old = is_our_shim(&d.join(HookName::ReferenceTransaction.to_string()));
    let repair = || {
        vec![Hint::hand("doctor --repair").why("rewrites git-hand's hooks for linked worktrees")]
    };
    let mut lapses = vec![];
    let pointed = super::linked::recorded_hooks_path(common);
    if check.included && pointed.as_ref().is_some_and(|p| *p != l) {
        lapses.push(Lapse {
            kind: LapseKind::HooksPath,
            message: format!(
                "{} sends linked worktrees to {}, which is not this repository's (was it moved?), \
                 so git runs no hook at all in slots: a stale lease holder's push from a slot is \
                 NOT checked",
                paths.config.display(),
                pointed.map(|p| p.display().to_string()).unwrap_or_default()
            ),
            hints: repair(),
            repairable: true,
        });
    } else if !check.included || !check.shim_current || pointed.is_none() {
        let why = if !check.included {
            format!(
                "{} holds no [includeIf \"gitdir:./worktrees/**\"] section of git-hand's",
                paths.repo_config.display()
            )
        } else if pointed.is_none() {
            format!(
                "{} is missing, so slots run the main worktree's hooks directly",
                paths.config.display()
            )
        } else {
            format!("{} is missing, stale or not executable", l_shim.display())
        };
        let (kind, what) = match old {
            // An older git-hand's shim in D still fences slots, at the main worktree's cost.
            true => (
                LapseKind::LinkedHooks,
                format!(
                    "git-hand's reference-transaction hook is in {}, where an older git-hand put \
                     it: the main worktree starts it on every ref update (a fetch many times \
                     over); slots are fenced",
                    d.display()
                ),
            ),
            false => (
                LapseKind::ReferenceTransaction,
                "git-hand's reference-transaction hook does not run in linked worktrees: a \
                 superseded lease holder's commit in a slot is not refused (its push still is)"
                    .to_string(),
            ),
        };
        lapses.push(Lapse {
            kind,
            message: format!("{what} ({why})"),
            hints: repair(),
            repairable: true,
        });
    } else if old || !check.config_current || !check.stale.is_empty() {
        let what = match old {
            true => format!(
                "git-hand's reference-transaction shim of an older version is still in {}, where \
                 the main worktree runs it on every ref update",
                d.display()
            ),
            false if !check.config_current => format!("{} is stale", paths.config.display()),
            false => format!(
                "{} no longer match the hooks of {} (added or removed since), so slots do not run \
                 them as the main worktree does",
                names(&check.stale),
                d.display()
            ),
        };
        lapses.push(Lapse {
            kind: LapseKind::LinkedHooks,
            message: format!("{what}; the fence holds"),
            hints: repair(),
            repairable: true,
        });
    }
    // Files another tool wrote there (an installer run in a slot) are moved aside by a repair;
    // anything else (a directory) needs the user's hand.
    let (files, others): (Vec<PathBuf>, Vec<PathBuf>) =
        check.foreign.iter().cloned().partition(|p| !p.is_dir());
    if !files.is_empty() {
        lapses.push(Lapse {
            kind: LapseKind::LinkedHooks,
            message: say(format!(
                "{} in {}: not git-hand's (an installer run in a slot writes there), so slots \
                 run it instead of the main worktree's hook of that name; a repair moves it \
                 aside, and the tool's installer belongs in the main worktree (then ",
                names(&files),
                l.display()
            ))
            .hand("install")
            .text(")")
            .into(),
            hints: vec![
                Hint::hand("doctor --repair").why(
                    say(
                        "moves it aside (<name>.git-hand-displaced) and puts git-hand's back; \
                         then run the tool's installer in the main worktree, and ",
                    )
                    .hand("install"),
                ),
            ],
            repairable: true,
        });
    }
    if !others.is_empty() {
        lapses.push(Lapse {
            kind: LapseKind::LinkedHooks,
            message: format!(
                "{} in {}: not a file git-hand wrote, so slots do not run the main worktree's \
                 hook of that name",
                names(&others),
                l.display()
            ),
            hints: vec![
                Hint::run(format!(
                    "rm -r {}",
                    others
                        .iter()
                        .map(|p| crate::hooks::shim::sh_quote(&p.display().to_string()))
                        .collect::<Vec<_>>()
                        .join(" ")
                ))
                .why(say("then ").hand("doctor --repair")),
            ],
            repairable: false,
        });
    }
    Ok(lapses)
}

/// The file names of `paths`, for a message.
fn names(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .filter_map(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(", ")
}

/// git-hand's reference-transaction shim, as install writes it into L.
fn shim_text() -> &'static str {
    super::shim::content(HookName::ReferenceTransaction)
}

/// Whether git runs the hook file: there (ours or another tool's) and executable.
fn runs(seen: &Seen) -> bool {
    matches!(seen.found, Found::Ours { .. } | Found::Foreign) && is_executable(&seen.path)
}

/// The lapse when nothing in `dir` runs git-hand on a push.
fn not_running(location: &HooksLocation, path: &Path, found: &Found) -> Lapse {
    let dir = &location.active;
    let unchecked = "a stale lease holder's push from here is NOT checked";
    if let Some(renamed) = renamed_shim(dir) {
        return Lapse {
            kind: LapseKind::Renamed,
            message: format!(
                "git-hand's pre-push shim was renamed to {} (by another hook tool?) and {} does \
                 not run git-hand: {unchecked}",
                renamed.display(),
                path.display()
            ),
            hints: vec![
                Hint::hand("install --manual").why("the line your hook manager needs"),
                Hint::hand("doctor --repair").why("or chain that tool's hook behind git-hand's"),
            ],
            repairable: !location.is_redirected(),
        };
    }
    if location.is_redirected() {
        return Lapse {
            kind: LapseKind::HooksPath,
            message: format!(
                "core.hooksPath is set to {}, so git runs hooks from {}, {}: {unchecked}",
                location.hooks_path.as_deref().unwrap_or_default(),
                dir.display(),
                if dir.is_dir() {
                    "and its pre-push does not run git-hand"
                } else {
                    "which does not exist in this worktree, so git runs no hook at all"
                }
            ),
            hints: vec![
                Hint::hand("install --manual").why("the lines to add to your hook manager"),
                Hint::hand("install --hooks-path").why("or let git-hand write its shims there"),
            ],
            repairable: false,
        };
    }
    let (kind, what) = match found {
        Found::Foreign => (
            LapseKind::Foreign,
            format!(
                "{} is another tool's and does not run git-hand",
                path.display()
            ),
        ),
        _ => (
            LapseKind::Missing,
            format!("git-hand's pre-push hook {} is missing", path.display()),
        ),
    };
    Lapse {
        kind,
        message: format!("{what}: {unchecked}"),
        hints: vec![Hint::hand("doctor --repair").why("reinstalls git-hand's hooks")],
        repairable: true,
    }
}

/// A file in `dir` named `pre-push.<something>` (not the chained hook) that is git-hand's shim.
fn renamed_shim(dir: &Path) -> Option<PathBuf> {
    let chained = HookName::PrePush.chained_file_name();
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("pre-push.") && n != chained)
        })
        .find(|p| is_our_shim(p))
}

/// The file that makes a foreign `pre-push` run git-hand: the hook itself when it calls
/// `git-hand hook pre-push`, else a hook manager's configuration in the work tree that does
/// (husky's `.husky/pre-push`, `lefthook.yml`, `.pre-commit-config.yaml`). A heuristic, on
/// purpose generous: `check` must not cry wolf at a manager set up from docs/hooks.md.
fn calls_git_hand(hook: &Path, workdir: Option<&Path>) -> Option<PathBuf> {
    let mentions = |p: &Path| std::fs::read_to_string(p).is_ok_and(|t| t.contains(CALL));
    if mentions(hook) {
        return Some(hook.to_path_buf());
    }
    let workdir = workdir?;
    // lefthook's launcher, with git-hand's lefthook recipe (its scripts call git-hand).
    if super::foreign::lefthook_runs_git_hand_at(HookName::PrePush, hook, workdir) {
        return Some(hook.to_path_buf());
    }
    MANAGER_FILES
        .iter()
        .map(|f| workdir.join(f))
        .find(|p| mentions(p))
}

/// Records the user's opt-out (`git hand uninstall`): `hand.installHooks=false` in the
/// repository's own config, so the next `spawn` does not silently put the hooks back.
pub fn record_opt_out(git: &Git) -> Result<(), crate::git::GitError> {
    git.run(&["config", "--local", "hand.installHooks", "false"])
        .map(|_| ())
}

/// Undoes [`record_opt_out`] (`git hand install`): `true` when there was one to undo.
pub fn clear_opt_out(git: &Git) -> Result<bool, crate::git::GitError> {
    // Only the opt-out: a `true` the user wrote is theirs and means what install means.
    let set = git
        .run(&[
            "config",
            "--local",
            "--type=bool",
            "--get",
            "hand.installHooks",
        ])
        .is_ok_and(|v| v.trim() == "false");
    if set {
        git.run(&["config", "--local", "--unset-all", "hand.installHooks"])?;
    }
    Ok(set)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_versions_are_compared_by_major_and_minor() {
        assert_eq!(version_at_least("git version 2.47.3\n", 2, 28), Some(true));
        assert_eq!(version_at_least("git version 2.28.0", 2, 28), Some(true));
        assert_eq!(version_at_least("git version 2.27.9", 2, 28), Some(false));
        assert_eq!(
            version_at_least("git version 2.39.5 (Apple Git-154)", 2, 28),
            Some(true)
        );
        assert_eq!(version_at_least("git version 3.0.0", 2, 28), Some(true));
        assert_eq!(version_at_least("something else", 2, 28), None);
    }

    #[test]
    fn git_hands_own_reference_transaction_shim_keeps_the_quiet_switch_and_anything_else_does_not()
    {
        let dir = tempfile::tempdir().unwrap();
        let common = dir.path();
        assert!(only_our_switch_hooks(common), "no hooks at all");
        // Both directories a switch may run them from: the repository's own (the main
        // worktree's) and the one of linked worktrees (a slot's).
        for hooks in [
            common.join("hooks"),
            super::super::linked::hooks_dir(common),
        ] {
            std::fs::create_dir_all(&hooks).unwrap();
            for hook in [HookName::PostCheckout, HookName::ReferenceTransaction] {
                std::fs::write(
                    hooks.join(hook.to_string()),
                    super::super::shim::content(hook),
                )
                .unwrap();
            }
            assert!(only_our_switch_hooks(common), "only git-hand's shims");
            let chained = chained_path(&hooks, HookName::ReferenceTransaction);
            std::fs::write(&chained, "#!/bin/sh\nexit 0\n").unwrap();
            assert!(
                !only_our_switch_hooks(common),
                "a chained reference-transaction hook in {}",
                hooks.display()
            );
            std::fs::remove_file(&chained).unwrap();
            let hook = hooks.join("reference-transaction");
            std::fs::write(
                &hook,
                "#!/bin/sh\nexec lefthook run reference-transaction \"$@\"\n",
            )
            .unwrap();
            assert!(
                !only_our_switch_hooks(common),
                "a foreign reference-transaction hook in {}",
                hooks.display()
            );
            std::fs::write(
                &hook,
                super::super::shim::content(HookName::ReferenceTransaction),
            )
            .unwrap();
        }
    }
}
