//! Installing and uninstalling git-hand's shims in a hooks directory, keeping and chaining the
//! hooks other tools wrote there.
//!
//! The rules, for each of `pre-push` and `post-checkout`:
//! - nothing there: write the shim;
//! - git-hand's shim (marker line): rewrite it when its content differs (or `force`);
//! - a foreign hook: keep it as `<hook>.git-hand-chained` (a rename: same bytes, same mode, same
//!   inode) and write the shim in its place; if that name is already taken, refuse and change
//!   nothing, because chaining would lose one of the two hooks;
//! - uninstall: remove the shim, or put the chained hook back in its place.
//!
//! pre-commit's own hook script runs `<hook>.legacy` before its hooks, with git's arguments and
//! stdin, and moves any hook it finds there when it installs. So where pre-commit's script holds
//! `<hook>`, git-hand's hook file is `<hook>.legacy`, under the same rules: both install orders
//! end in the same files, a `pre-commit install` re-run changes nothing of ours, and git-hand
//! never chains pre-commit's script (which, run from its own legacy hook, refuses: "installed in
//! migration mode").
//!
//! Every hook is looked at before any is changed, so a refusal leaves the directory as it was.
//! Writes are atomic (temp file in the same directory, mode 0755, rename), and every step that
//! could overwrite a file someone else just created uses a no-clobber link instead, so two
//! `spawn`s installing at once never lose a foreign hook. This module never decides a verdict
//! and never prints.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::chain::chained_path;
use super::locate::{HooksLocation, locate};
use super::manual::precommit;
use super::{HookError, HookName, shim};
use crate::git::Git;

/// Prefix of the temp files an atomic write leaves behind only if the process dies mid-write.
const TEMP_PREFIX: &str = ".git-hand-tmp-";

/// How often a hook that changes under our feet is looked at again before giving up.
const ATTEMPTS: usize = 3;

/// Which directory `install` writes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The repository's hooks directory; refused when `core.hooksPath` points elsewhere.
    Default,
    /// Wherever git runs hooks from now, including a `core.hooksPath` directory.
    HooksPath,
}

#[derive(Debug, Clone, Copy)]
pub struct InstallOptions {
    pub target: Target,
    /// Rewrite git-hand's shims even when they are current. Never removes a foreign hook.
    pub force: bool,
}

/// What happened to one hook file. Serialized as [`Change::as_str`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    /// Install: the shim was written where there was no hook.
    Installed,
    /// Install: an older git-hand shim was rewritten in place.
    Upgraded,
    /// Install with `force`: a current shim was rewritten anyway.
    Rewritten,
    /// Install: the shim was already current.
    Unchanged,
    /// Install: a foreign hook was kept as `<hook>.git-hand-chained` and the shim written.
    Chained,
    /// Uninstall: the shim was removed; there was nothing to put back.
    Removed,
    /// Uninstall: the chained hook was put back in place of the shim.
    Restored,
    /// Uninstall: neither a shim nor a chained hook was there.
    NotInstalled,
    /// Uninstall: a foreign hook is there and nothing of git-hand's; left alone.
    NotOurs,
}

impl Change {
    /// The stable word for JSON (docs/hooks.md).
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Installed => "installed",
            Change::Upgraded => "upgraded",
            Change::Rewritten => "rewritten",
            Change::Unchanged => "unchanged",
            Change::Chained => "chained",
            Change::Removed => "removed",
            Change::Restored => "restored",
            Change::NotInstalled => "not-installed",
            Change::NotOurs => "not-ours",
        }
    }

    /// Whether the hook file was written, moved or removed.
    pub fn wrote(self) -> bool {
        !matches!(
            self,
            Change::Unchanged | Change::NotInstalled | Change::NotOurs
        )
    }
}

/// One hook file's change; its JSON form is documented in docs/hooks.md.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HookChange {
    pub hook: HookName,
    /// `<dir>/<hook>`.
    pub path: PathBuf,
    pub change: Change,
    /// Install: the chained foreign hook that exists after the call. Uninstall: the chained file
    /// that was put back.
    pub chained: Option<PathBuf>,
}

#[derive(Debug, Clone)]
pub struct InstallReport {
    pub location: HooksLocation,
    /// The directory written to.
    pub dir: PathBuf,
    pub hooks: Vec<HookChange>,
    /// Where `git-hand` resolves on the current PATH (the one a hook run from here will see).
    pub git_hand: Option<PathBuf>,
}

impl InstallReport {
    pub fn wrote_anything(&self) -> bool {
        self.hooks.iter().any(|h| h.change.wrote())
    }

    /// The stable word for JSON: `installed` when any file was written, else `unchanged`.
    pub fn outcome(&self) -> &'static str {
        if self.wrote_anything() {
            "installed"
        } else {
            "unchanged"
        }
    }

    pub fn warnings(&self) -> Vec<Warning> {
        // The shims fall back to the git-hand that wrote them.
        match self.git_hand.is_some() || shim::recorded().is_some() {
            true => vec![],
            false => vec![Warning::NotOnPath],
        }
    }
}

/// Something installed that will not work as hoped until the user acts. Serialized as
/// `{"kind", "message"}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Warning {
    /// The shims exec `git-hand`, which the current PATH does not have, and could not record
    /// where this one is.
    NotOnPath,
}

impl Warning {
    pub fn as_str(&self) -> &'static str {
        match self {
            Warning::NotOnPath => "not-on-path",
        }
    }

    /// One sentence saying what is true and what to do.
    pub fn message(&self) -> String {
        match self {
            Warning::NotOnPath => {
                "git-hand is not on PATH, so the hooks cannot run it: pushes from \
                worktrees git-hand leased will be refused, other pushes go on unchecked, and \
                checkouts will only warn until it is. Fix: install git-hand (./install.sh in its \
                checkout) or add its directory to PATH."
                    .into()
            }
        }
    }
}

impl serde::Serialize for Warning {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = s.serialize_struct("Warning", 2)?;
        out.serialize_field("kind", self.as_str())?;
        out.serialize_field("message", &self.message())?;
        out.end()
    }
}

#[derive(Debug, Clone)]
pub struct UninstallReport {
    pub location: HooksLocation,
    /// The directories looked at: where git runs hooks from now, and the repository's own hooks
    /// directory when `core.hooksPath` points elsewhere (an earlier install may be there).
    pub dirs: Vec<PathBuf>,
    pub hooks: Vec<HookChange>,
}

impl UninstallReport {
    pub fn removed_anything(&self) -> bool {
        self.hooks.iter().any(|h| h.change.wrote())
    }

    /// The stable word for JSON: `uninstalled`, or `nothing-installed`.
    pub fn outcome(&self) -> &'static str {
        if self.removed_anything() {
            "uninstalled"
        } else {
            "nothing-installed"
        }
    }
}

/// `git hand install`: finds the hooks directory through git and installs both shims there.
pub fn install(git: &Git, opts: InstallOptions) -> Result<InstallReport, HookError> {
    let location = locate(git)?;
    if opts.target == Target::Default && location.is_redirected() {
        return Err(HookError::HooksPathSet {
            value: location.hooks_path.clone().unwrap_or_default(),
            dir: location.active.clone(),
        });
    }
    if opts.target == Target::HooksPath
        && location.is_redirected()
        && super::manual::is_husky_dir(&location.active)
    {
        return Err(HookError::HuskyHooksPath {
            dir: location.active.clone(),
        });
    }
    let dir = location.active.clone();
    let hooks = install_into(&dir, opts.force)?;
    Ok(InstallReport {
        location,
        dir,
        hooks,
        git_hand: which::which("git-hand").ok(),
    })
}

/// `git hand uninstall`: removes git-hand's shims from where git runs hooks and from the
/// repository's own hooks directory, putting chained hooks back.
pub fn uninstall(git: &Git) -> Result<UninstallReport, HookError> {
    let location = locate(git)?;
    let mut dirs = vec![location.active.clone()];
    if location.is_redirected() {
        dirs.push(location.default.clone());
    }
    // Refuse before touching either directory.
    for dir in &dirs {
        for hook in HookName::ALL {
            look(dir, hook)?.uninstall_plan()?;
        }
    }
    let mut hooks = Vec::new();
    for dir in &dirs {
        hooks.extend(uninstall_from(dir)?);
    }
    Ok(UninstallReport {
        location,
        dirs,
        hooks,
    })
}

/// Installs both shims into `dir` (created if missing) under the chaining rules; the building block
/// of [`install`] for a directory already chosen.
pub fn install_into(dir: &Path, force: bool) -> Result<Vec<HookChange>, HookError> {
    for hook in HookName::ALL {
        look(dir, hook)?.install_plan(force)?;
    }
    fs::create_dir_all(dir).map_err(io_err("create", dir))?;
    HookName::ALL
        .into_iter()
        .map(|hook| with_retries(dir, hook, |seen| seen.install(force)))
        .collect()
}

/// Removes both shims from `dir`, putting chained hooks back; refuses, changing nothing, when a
/// chained hook cannot be put back without overwriting a foreign one.
pub fn uninstall_from(dir: &Path) -> Result<Vec<HookChange>, HookError> {
    for hook in HookName::ALL {
        look(dir, hook)?.uninstall_plan()?;
    }
    let changes = HookName::ALL
        .into_iter()
        .map(|hook| with_retries(dir, hook, Seen::uninstall))
        .collect::<Result<Vec<_>, _>>()?;
    sweep_temp_files(dir);
    Ok(changes)
}

/// What is at `<dir>/<hook>` now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Found {
    Missing,
    Ours { current: bool },
    Foreign,
}

/// One hook's files as last looked at.
#[derive(Debug, Clone)]
pub(super) struct Seen {
    pub hook: HookName,
    pub path: PathBuf,
    pub chained: PathBuf,
    pub found: Found,
    pub has_chained: bool,
    /// The hook and the chained name are one file: a chain step (link, then write the shim) was
    /// interrupted, or another process is between its two steps right now.
    pub mid_chain: bool,
    /// The chained file is a copy of pre-commit's script while pre-commit's script holds the
    /// hook (and runs `path`): install and uninstall drop it.
    pub redundant_chained: bool,
}

/// What `install` does to one hook.
enum InstallStep {
    Keep(Change),
    Write(Change),
    Chain,
}

/// What `uninstall` does to one hook.
enum UninstallStep {
    Keep(Change),
    Restore,
    Remove,
    /// Remove the chained name of a file that is also still at the hook's name.
    Unlink,
}

/// What one attempt came to: done, or the files changed between looking and acting.
enum Outcome {
    Done(HookChange),
    Retry,
}

/// Looks at `<dir>/<hook>` and `<dir>/<hook>.git-hand-chained`, as one consistent picture: a
/// concurrent install may swap the hook file between our reads (it links the foreign hook to the
/// chained name, then replaces the hook), so the look is repeated until the hook file is the same
/// file before and after.
pub(super) fn look(dir: &Path, hook: HookName) -> Result<Seen, HookError> {
    let identity = |p: &Path| fs::symlink_metadata(p).ok().map(|m| (m.dev(), m.ino()));
    let mut seen = look_once(dir, hook)?;
    for _ in 0..ATTEMPTS {
        let before = identity(&seen.path);
        seen = look_once(dir, hook)?;
        if identity(&seen.path) == before {
            break;
        }
    }
    Ok(seen)
}

fn look_once(dir: &Path, hook: HookName) -> Result<Seen, HookError> {
    let head = dir.join(hook.as_str());
    let under_pre_commit = precommit::is_script(&head);
    let path = match under_pre_commit {
        true => precommit::legacy_path(dir, hook),
        false => head,
    };
    let chained = chained_path(dir, hook);
    let path_meta = fs::symlink_metadata(&path);
    let found = match &path_meta {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Found::Missing,
        Err(e) => {
            return Err(io_err("inspect", &path)(io::Error::new(
                e.kind(),
                e.to_string(),
            )));
        }
        Ok(meta) if meta.is_dir() => return Err(HookError::NotAFile { path }),
        Ok(_) => match fs::read(&path) {
            Ok(bytes) if shim::is_ours(&bytes) => Found::Ours {
                current: shim::is_current(hook, &bytes) && is_executable(&path),
            },
            Ok(_) => Found::Foreign,
            // A dangling symlink is still something the user put there.
            Err(e) if e.kind() == io::ErrorKind::NotFound => Found::Foreign,
            Err(e) => return Err(io_err("read", &path)(e)),
        },
    };
    let chained_meta = match fs::symlink_metadata(&chained) {
        Ok(meta) => Some(meta),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_err("inspect", &chained)(e)),
    };
    // Judged on the same stat as `found`, not a second one a concurrent install could change.
    let mid_chain = found == Found::Foreign
        && chained_meta.as_ref().is_some_and(|c| {
            path_meta
                .as_ref()
                .is_ok_and(|p| (p.dev(), p.ino()) == (c.dev(), c.ino()))
        });
    // pre-commit's script, chained by an older git-hand before pre-commit took its hook back:
    // pre-commit already runs; run again from its own legacy hook it would refuse.
    let redundant_chained =
        under_pre_commit && chained_meta.is_some() && precommit::is_script(&chained);
    Ok(Seen {
        hook,
        path,
        chained,
        found,
        has_chained: chained_meta.is_some() && !redundant_chained,
        mid_chain,
        redundant_chained,
    })
}

impl Seen {
    fn install_plan(&self, force: bool) -> Result<InstallStep, HookError> {
        Ok(match self.found {
            Found::Missing => InstallStep::Write(Change::Installed),
            Found::Ours { current: true } if !force => InstallStep::Keep(Change::Unchanged),
            Found::Ours { current: true } => InstallStep::Write(Change::Rewritten),
            Found::Ours { current: false } => InstallStep::Write(Change::Upgraded),
            // The foreign hook is already safe under the chained name: finish the chain.
            Found::Foreign if self.mid_chain => InstallStep::Write(Change::Chained),
            Found::Foreign if self.has_chained => {
                return Err(HookError::ChainOccupied {
                    hook: self.hook,
                    path: self.path.clone(),
                    chained: self.chained.clone(),
                });
            }
            Found::Foreign => InstallStep::Chain,
        })
    }

    fn uninstall_plan(&self) -> Result<UninstallStep, HookError> {
        Ok(match (self.found, self.has_chained) {
            // An interrupted chain: dropping the extra name restores exactly what was there.
            (Found::Foreign, true) if self.mid_chain => UninstallStep::Unlink,
            (Found::Foreign, true) => {
                return Err(HookError::RestoreBlocked {
                    hook: self.hook,
                    path: self.path.clone(),
                    chained: self.chained.clone(),
                });
            }
            (Found::Foreign, false) => UninstallStep::Keep(Change::NotOurs),
            (Found::Missing, false) => UninstallStep::Keep(Change::NotInstalled),
            (_, true) => UninstallStep::Restore,
            (Found::Ours { .. }, false) => UninstallStep::Remove,
        })
    }

    fn install(&self, force: bool) -> Result<Outcome, HookError> {
        self.drop_redundant_chained()?;
        let content = shim::content(self.hook).as_bytes();
        let change = match self.install_plan(force)? {
            InstallStep::Keep(change) => change,
            InstallStep::Write(change) => {
                // Over nothing, never clobber: a foreign hook may have appeared since we looked.
                let clobber = self.found != Found::Missing;
                if !write_atomic(&self.path, content, clobber)? {
                    return Ok(Outcome::Retry);
                }
                change
            }
            InstallStep::Chain => {
                if !keep_as_chained(&self.path, &self.chained)? {
                    return Ok(Outcome::Retry);
                }
                // The foreign hook is safe under its new name (a second link to the same file
                // when links work), so replacing the old name is atomic and loses nothing.
                write_atomic(&self.path, content, true)?;
                Change::Chained
            }
        };
        let chained = (change == Change::Chained || self.has_chained).then(|| self.chained.clone());
        Ok(self.done(change, chained))
    }

    fn uninstall(&self) -> Result<Outcome, HookError> {
        self.drop_redundant_chained()?;
        let change = match self.uninstall_plan()? {
            UninstallStep::Keep(change) => change,
            UninstallStep::Remove => {
                remove_if_present(&self.path)?;
                Change::Removed
            }
            UninstallStep::Unlink => {
                remove_if_present(&self.chained)?;
                Change::Restored
            }
            UninstallStep::Restore => {
                if !restore_chained(&self.chained, &self.path, self.found)? {
                    return Ok(Outcome::Retry);
                }
                Change::Restored
            }
        };
        let chained = (change == Change::Restored).then(|| self.chained.clone());
        Ok(self.done(change, chained))
    }

    fn drop_redundant_chained(&self) -> Result<(), HookError> {
        match self.redundant_chained {
            true => remove_if_present(&self.chained),
            false => Ok(()),
        }
    }

    fn done(&self, change: Change, chained: Option<PathBuf>) -> Outcome {
        Outcome::Done(HookChange {
            hook: self.hook,
            path: self.path.clone(),
            change,
            chained,
        })
    }
}

/// Looks, acts, and looks again when the files changed in between.
fn with_retries(
    dir: &Path,
    hook: HookName,
    act: impl Fn(&Seen) -> Result<Outcome, HookError>,
) -> Result<HookChange, HookError> {
    for _ in 0..ATTEMPTS {
        if let Outcome::Done(change) = act(&look(dir, hook)?)? {
            return Ok(change);
        }
    }
    Err(HookError::Contended {
        path: dir.join(hook.as_str()),
    })
}

/// Writes `content` to `path` atomically with mode 0755. Without `clobber`, returns `Ok(false)`
/// when something appeared at `path` meanwhile (and leaves it alone).
fn write_atomic(path: &Path, content: &[u8], clobber: bool) -> Result<bool, HookError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .tempfile_in(dir)
        .map_err(io_err("create a temporary file in", dir))?;
    tmp.write_all(content)
        .and_then(|()| {
            tmp.as_file()
                .set_permissions(fs::Permissions::from_mode(0o755))
        })
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(io_err("write", tmp.path()))?;
    let persisted = if clobber {
        tmp.persist(path)
    } else {
        tmp.persist_noclobber(path)
    };
    match persisted {
        Ok(_) => Ok(true),
        Err(e) if !clobber && e.error.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(io_err("write", path)(e.error)),
    }
}

/// Gives the foreign hook at `path` its chained name without ever overwriting an existing chained
/// file: a hard link fails if the name is taken, where a rename would silently replace it.
/// `Ok(false)`: the chained name was taken meanwhile.
fn keep_as_chained(path: &Path, chained: &Path) -> Result<bool, HookError> {
    match fs::hard_link(path, chained) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        // A file system without hard links: check, then rename (the rename keeps bytes and mode).
        Err(_) if fs::symlink_metadata(chained).is_ok() => Ok(false),
        Err(_) => fs::rename(path, chained)
            .map(|()| true)
            .map_err(io_err("rename", path)),
    }
}

/// Puts the chained hook back at `path`: over our shim with a rename (atomic), over nothing with
/// a no-clobber link. `Ok(false)`: a file appeared at `path` meanwhile.
fn restore_chained(chained: &Path, path: &Path, found: Found) -> Result<bool, HookError> {
    if found != Found::Missing {
        return fs::rename(chained, path)
            .map(|()| true)
            .map_err(io_err("restore", chained));
    }
    match fs::hard_link(chained, path) {
        Ok(()) => fs::remove_file(chained)
            .map(|()| true)
            .map_err(io_err("remove", chained)),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(_) if fs::symlink_metadata(path).is_ok() => Ok(false),
        Err(_) => fs::rename(chained, path)
            .map(|()| true)
            .map_err(io_err("restore", chained)),
    }
}

fn remove_if_present(path: &Path) -> Result<(), HookError> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io_err("remove", path)(e)),
        _ => Ok(()),
    }
}

/// Removes temp files a crashed install left behind, so uninstall leaves nothing of ours. Best
/// effort: a file we cannot remove is no hook git would run.
fn sweep_temp_files(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

pub(super) fn is_executable(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

fn io_err(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> HookError {
    let path = path.to_path_buf();
    move |source| HookError::Io {
        action,
        path,
        source,
    }
}
