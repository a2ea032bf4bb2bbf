//! `git hand install --server`: the `pre-receive` shim in a repository clients push to (a bare
//! repository on the team's server), and `receive.advertisePushOptions=true`, without which git
//! refuses a push that carries the push options the fence reads. `git hand uninstall` in such a
//! repository takes the shim away again.
//!
//! Two layouts, chosen from what the server already runs ([`Layout`]):
//! - **chained**: git-hand's shim is `pre-receive`, and a `pre-receive` already there is kept and
//!   chained under the same rules as the client hooks ([`super::install`]);
//! - **dispatched**: the server runs every executable in a `pre-receive.d/` directory itself
//!   (Gitea's and Forgejo's generated `hooks/pre-receive`, GitLab's `custom_hooks/pre-receive.d`):
//!   git-hand's shim is one more file there, [`DISPATCHED_NAME`], and the dispatcher is left
//!   byte for byte as it was. Gitea rewrites its `pre-receive` whenever its hooks are
//!   resynchronized, which would drop a shim put in its place; the files in `pre-receive.d/`
//!   other than its own it leaves alone.
//!
//! It writes where git runs that repository's hooks from (`core.hooksPath` included: on a server
//! that is the directory whose hooks actually run), or in a directory the caller names whose
//! `pre-receive.d/` the server dispatches itself. Like the rest of [`super`], it never reads the
//! ledger and never prints.

use std::fs;
use std::path::{Path, PathBuf};

use super::chain::{chained_path, is_executable_file, is_our_shim};
use super::files::{Over, Written, io_err, is_executable, remove_if_present, write_atomic};
use super::install::{
    self, Change, HookChange, Rewrite, UninstallReport, install_hooks_into, uninstall_hooks_from,
};
use super::locate::{HooksLocation, locate};
use super::{HookError, HookName, shim};
use crate::git::Git;

/// The setting that makes `git receive-pack` accept push options (git >= 2.10).
pub(crate) const ADVERTISE_PUSH_OPTIONS: &str = "receive.advertisePushOptions";

/// The directory a server's dispatcher runs every executable file of, in name order.
pub(crate) const DISPATCH_DIR: &str = "pre-receive.d";

/// git-hand's file in [`DISPATCH_DIR`]. Digits sort before letters in every collation (the
/// dispatcher's shell glob under any locale, GitLab's alphabetical order), so the fence (one
/// ledger read, no side effects) judges before hooks that scan objects or notify, and a
/// dispatcher that stops at the first failure (GitLab) spends nothing more on a push it refuses.
pub(crate) const DISPATCHED_NAME: &str = "00-git-hand";

/// GitLab's per-repository server hooks directory, beside `hooks/` in the repository (Gitaly
/// points `core.hooksPath` at its own hooks while it receives, and runs these from there).
pub(crate) const GITLAB_CUSTOM_HOOKS: &str = "custom_hooks";

/// The key Gitaly writes into a GitLab repository's configuration ([`gitlab_signs`]).
pub(crate) const GITLAB_FULLPATH: &str = "gitlab.fullpath";

/// Where the server shim lives; its word is `layout` in `install --server --json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// `<hooks>/pre-receive` is git-hand's shim; a hook that was there runs first, chained.
    Chained,
    /// `<dir>/pre-receive.d/00-git-hand`, run by the server's dispatcher beside the others.
    Dispatched,
}

/// Where `install --server` puts the shim.
#[derive(Debug, Clone, Copy)]
pub enum ServerTarget<'a> {
    /// Where git runs this repository's hooks from, in the layout found there (see
    /// [`install_server`]).
    Detect,
    /// `<dir>/pre-receive.d/`: a directory whose hooks the server dispatches itself (GitLab's
    /// global `custom_hooks_dir`, or a staging copy of `custom_hooks` for `gitaly hooks set`).
    Dispatcher(&'a Path),
}

/// What `install --server` did.
#[derive(Debug, Clone)]
pub struct ServerReport {
    pub location: HooksLocation,
    /// The directory written to: the hooks directory (chained) or the `pre-receive.d/` one.
    pub dir: PathBuf,
    pub layout: Layout,
    /// The shim's change, after the dispatcher put back in place when an earlier install had
    /// chained it (`restored`).
    pub hooks: Vec<HookChange>,
    /// Whether [`ADVERTISE_PUSH_OPTIONS`] was set by this call (false: it was already true).
    pub advertised: bool,
}

/// Installs the server's shim and turns push options on.
///
/// With [`ServerTarget::Detect`], in this order: a GitLab repository ([`gitlab_signs`], or a
/// `custom_hooks/` directory in it) gets the shim in `custom_hooks/pre-receive.d/`, created if
/// missing (Gitaly never runs the repository's `hooks/`); a hooks directory with a
/// `pre-receive.d/` that the `pre-receive` beside it dispatches gets it there (and a dispatcher an
/// earlier git-hand chained is put back first); both at once is refused (`LayoutAmbiguous`:
/// `--hooks-dir` says which); anything else gets the chained layout. A
/// `pre-receive.d/` nothing dispatches would never run git-hand, so it does not count: the fence
/// fails open only if it is written where nothing runs it.
pub fn install_server(
    git: &Git,
    rewrite: Rewrite,
    target: ServerTarget,
) -> Result<ServerReport, HookError> {
    let location = locate(git)?;
    let active = location.active.clone();
    let dispatch_dir = match target {
        ServerTarget::Dispatcher(dir) => Some(dir.join(DISPATCH_DIR)),
        ServerTarget::Detect => detect_dispatch_dir(&location, gitlab_signs(git, &location))?,
    };
    let (layout, dir, hooks) = match dispatch_dir {
        Some(dir) => {
            // The new file first: if it cannot be written (a foreign `00-git-hand`), the old
            // chained shim still fences and nothing changed. Between the two steps both run: the
            // chained dispatcher starts `00-git-hand` under `GIT_HAND_IN_HOOK=pre-receive`, where
            // it exits 0 at once, so a push is judged once.
            let installed = install_dispatched(&dir, rewrite)?;
            let mut hooks = unchain_dispatcher(&active, &dir)?;
            hooks.push(installed);
            (Layout::Dispatched, dir, hooks)
        }
        None => {
            let hooks = install_hooks_into(&active, &HookName::SERVER, rewrite)?;
            (Layout::Chained, active, hooks)
        }
    };
    let advertised = advertise_push_options(git)?;
    Ok(ServerReport {
        location,
        dir,
        layout,
        hooks,
        advertised,
    })
}

/// `git hand uninstall` in a bare repository: the client hooks and the server's shim, in both
/// layouts: the chained `pre-receive` (putting back the hook it chained, as for the client
/// hooks) and git-hand's file in the `pre-receive.d/` directories install would use. A file there
/// that is not git-hand's is left alone (`not-ours`), and so is an older copy of the server's
/// dispatcher still chained beside the dispatcher it wrote again (`stale-chained`): it blocks
/// nothing else.
pub fn uninstall_server(git: &Git) -> Result<UninstallReport, HookError> {
    let location = locate(git)?;
    let mut dropped = Vec::new();
    let mut stale = Vec::new();
    for dir in location.dirs() {
        dropped.extend(drop_identical_chained(dir)?);
        stale.extend(stale_dispatcher_copy(dir));
    }
    let dispatch_dirs = dispatch_dirs(&location);
    let mut report = install::uninstall_hooks(location, |dir| {
        let mut hooks = HookName::ALL.to_vec();
        if !stale.iter().any(|s| s.path.parent() == Some(dir)) {
            hooks.extend(HookName::SERVER);
        }
        hooks
    })?;
    report.hooks.extend(dropped);
    report.hooks.extend(stale);
    for dir in dispatch_dirs {
        if let Some(change) = uninstall_dispatched(&dir)? {
            report.dirs.push(dir);
            report.hooks.push(change);
        }
    }
    Ok(report)
}

/// The `pre-receive.d/` directory the server dispatches for this repository, if it has one.
fn detect_dispatch_dir(
    location: &HooksLocation,
    gitlab: Option<String>,
) -> Result<Option<PathBuf>, HookError> {
    let custom_hooks = gitlab_custom_hooks(location);
    let gitlab = gitlab.or_else(|| {
        custom_hooks
            .is_dir()
            .then(|| format!("it has {}", custom_hooks.display()))
    });
    let dir = location.active.join(DISPATCH_DIR);
    let head = location.active.join(HookName::PreReceive.to_string());
    let chained = chained_path(&location.active, HookName::PreReceive);
    let runs_dir = is_dispatcher(&head) || (is_our_shim(&head) && is_dispatcher(&chained));
    let hooks_dispatched = (dir.is_dir() && runs_dir).then_some(dir);
    match (gitlab, hooks_dispatched) {
        // A repository copied from GitLab into Gitea keeps `gitlab.fullpath`; one GitLab keeps
        // may have been given a dispatcher by hand. Guessing wrong leaves no fence at all.
        (Some(gitlab), Some(dispatched)) => Err(HookError::LayoutAmbiguous {
            repo: location
                .default
                .parent()
                .unwrap_or(&location.default)
                .into(),
            gitlab,
            dispatched,
            custom_hooks,
        }),
        (Some(_), None) => Ok(Some(custom_hooks.join(DISPATCH_DIR))),
        (None, dispatched) => Ok(dispatched),
    }
}

/// Whether GitLab keeps this repository: Gitaly writes `gitlab.fullpath` (the project's path)
/// into each repository's own configuration (its `SetFullPath` RPC), and stores repositories
/// under `@hashed/` (hashed storage, every project since GitLab 14.0) or, behind Praefect,
/// `@cluster/` (its generated replica paths, GitLab 15.0 and later). Gitaly never runs such a
/// repository's `hooks/`, so a chained shim there would be written where nothing runs it.
/// `Some`: what says so, in words for an error.
fn gitlab_signs(git: &Git, location: &HooksLocation) -> Option<String> {
    let fullpath = git
        .run(&["config", "--local", "--get", GITLAB_FULLPATH])
        .is_ok_and(|v| !v.trim().is_empty());
    let repo = location.default.parent().unwrap_or(&location.default);
    let stored = repo.components().find_map(|c| {
        let name = c.as_os_str().to_string_lossy();
        (name == "@hashed" || name == "@cluster").then(|| name.into_owned())
    });
    match (fullpath, stored) {
        (true, _) => Some(format!("{GITLAB_FULLPATH} is set in its config")),
        (false, Some(name)) => Some(format!("its path is under {name}/")),
        (false, None) => None,
    }
}

/// `<repository>/custom_hooks`: beside the repository's own hooks directory.
fn gitlab_custom_hooks(location: &HooksLocation) -> PathBuf {
    let repo = location.default.parent().unwrap_or(&location.default);
    repo.join(GITLAB_CUSTOM_HOOKS)
}

/// Every `pre-receive.d/` an install may have written to.
fn dispatch_dirs(location: &HooksLocation) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = location
        .dirs()
        .iter()
        .map(|d| d.join(DISPATCH_DIR))
        .collect();
    dirs.push(gitlab_custom_hooks(location).join(DISPATCH_DIR));
    dirs
}

/// How a dispatcher names the directory it runs: literally, or from its own name as Gitea's and
/// Forgejo's generated hook does (`${GIT_DIR}/hooks/${hookname}.d/*`, with
/// `hookname=$(basename $0)`), as the widely copied hand-written ones do (`$hook_name.d`), or
/// inline.
const DISPATCH_DIR_SPELLINGS: [&str; 8] = [
    "pre-receive.d",
    "${hookname}.d",
    "$hookname.d",
    "${hook_name}.d",
    "$hook_name.d",
    "$(basename $0).d",
    "$(basename \"$0\").d",
    "`basename $0`.d",
];

/// Whether `path` is a server's dispatcher for `pre-receive.d/`: an executable file that is not
/// git-hand's and names that directory in one of [`DISPATCH_DIR_SPELLINGS`]. A guess from its
/// text, kept narrow: a file that does not pass gets the chained layout, where git-hand runs it
/// as the chained hook, so a dispatcher it did not recognise still runs, and so does the fence.
fn is_dispatcher(path: &Path) -> bool {
    let Ok(bytes) = fs::read(path) else {
        return false;
    };
    let text = String::from_utf8_lossy(&bytes);
    is_executable_file(path)
        && !shim::is_ours(&bytes)
        && DISPATCH_DIR_SPELLINGS
            .iter()
            .any(|spelling| text.contains(spelling))
}

/// When an earlier install chained the dispatcher (shim in front, dispatcher kept as
/// `pre-receive.git-hand-chained`), puts the dispatcher back in place: it runs git-hand's file in
/// `pre-receive.d/` from now on. A copy of the dispatcher left chained after the server rewrote
/// `pre-receive` (Gitea's resynchronize) is dropped when it is the same bytes. Only when the new
/// shim goes into this hooks directory's own `pre-receive.d/`.
fn unchain_dispatcher(active: &Path, dispatch_dir: &Path) -> Result<Vec<HookChange>, HookError> {
    if dispatch_dir != active.join(DISPATCH_DIR) {
        return Ok(vec![]);
    }
    if let Some(change) = drop_identical_chained(active)? {
        return Ok(vec![change]);
    }
    let head = active.join(HookName::PreReceive.to_string());
    match is_our_shim(&head) && is_dispatcher(&chained_path(active, HookName::PreReceive)) {
        true => uninstall_hooks_from(active, &[HookName::PreReceive]),
        false => Ok(vec![]),
    }
}

/// Removes `pre-receive.git-hand-chained` when a foreign `pre-receive` with exactly its bytes is
/// in place (the server rewrote the hook git-hand had chained): nothing is lost, and uninstall is
/// no longer blocked by a chained hook it could not put back.
fn drop_identical_chained(dir: &Path) -> Result<Option<HookChange>, HookError> {
    let hook = HookName::PreReceive;
    let (head, chained) = (dir.join(hook.to_string()), chained_path(dir, hook));
    let Ok(held) = fs::read(&chained) else {
        return Ok(None);
    };
    let in_place = fs::read(&head).ok();
    if in_place.as_deref() != Some(held.as_slice()) || shim::is_ours(&held) {
        return Ok(None);
    }
    remove_if_present(&chained)?;
    Ok(Some(HookChange {
        hook,
        path: head,
        change: Change::Restored,
        chained: Some(chained),
    }))
}

/// `<dir>/pre-receive` is a dispatcher that is not git-hand's (the server wrote it again, over
/// the shim an earlier install had put in front of it), and `pre-receive.git-hand-chained` still
/// holds a different, older copy: nothing runs that copy, and putting it back would overwrite
/// the server's dispatcher, so uninstall leaves it and says so.
fn stale_dispatcher_copy(dir: &Path) -> Option<HookChange> {
    let hook = HookName::PreReceive;
    let (head, chained) = (dir.join(hook.to_string()), chained_path(dir, hook));
    let stale = is_dispatcher(&head) && fs::symlink_metadata(&chained).is_ok();
    stale.then_some(HookChange {
        hook,
        path: head,
        change: Change::StaleChained,
        chained: Some(chained),
    })
}

/// Writes git-hand's file into the dispatched directory `dir` (created if missing): as the
/// chained layout treats its shim, except that a foreign file under git-hand's name is refused,
/// never moved: the dispatcher runs it where it is.
fn install_dispatched(dir: &Path, rewrite: Rewrite) -> Result<HookChange, HookError> {
    let hook = HookName::PreReceive;
    let path = dir.join(DISPATCHED_NAME);
    let content = shim::content(hook).as_bytes();
    let existing = match fs::symlink_metadata(&path) {
        Ok(meta) if !meta.is_file() => return Err(HookError::NotAFile { path }),
        Ok(_) => Some(fs::read(&path).map_err(io_err("read", &path))?),
        Err(_) => None,
    };
    let change = match existing {
        None => Change::Installed,
        Some(bytes) if !shim::is_ours(&bytes) => return Err(HookError::NameTaken { path }),
        Some(bytes) if bytes == content && is_executable(&path) => match rewrite {
            Rewrite::IfStale => Change::Unchanged,
            Rewrite::Always => Change::Rewritten,
        },
        Some(_) => Change::Upgraded,
    };
    if change.wrote() {
        fs::create_dir_all(dir).map_err(io_err("create", dir))?;
        let over = match change {
            Change::Installed => Over::Nothing,
            _ => Over::Anything,
        };
        if write_atomic(&path, content, over)? == Written::NotThere {
            return Err(HookError::NameTaken { path });
        }
    }
    Ok(HookChange {
        hook,
        path,
        change,
        chained: None,
    })
}

/// Removes git-hand's file from the dispatched directory `dir`; `None` when there is none.
fn uninstall_dispatched(dir: &Path) -> Result<Option<HookChange>, HookError> {
    let path = dir.join(DISPATCHED_NAME);
    let Ok(meta) = fs::symlink_metadata(&path) else {
        return Ok(None);
    };
    let ours = meta.is_file() && is_our_shim(&path);
    if ours {
        remove_if_present(&path)?;
    }
    Ok(Some(HookChange {
        hook: HookName::PreReceive,
        path,
        change: if ours {
            Change::Removed
        } else {
            Change::NotOurs
        },
        chained: None,
    }))
}

/// Sets [`ADVERTISE_PUSH_OPTIONS`] unless it is already true; whether this call set it.
fn advertise_push_options(git: &Git) -> Result<bool, HookError> {
    let was_on = git
        .run(&["config", "--type=bool", "--get", ADVERTISE_PUSH_OPTIONS])
        .is_ok_and(|v| v.trim() == "true");
    if !was_on {
        git.run(&["config", "--local", ADVERTISE_PUSH_OPTIONS, "true"])
            .map_err(|source| HookError::Configure {
                key: ADVERTISE_PUSH_OPTIONS,
                dir: git.dir().to_path_buf(),
                source,
            })?;
    }
    Ok(!was_on)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(dir: &Path, name: &str, text: &str, mode: u32) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join(name);
        fs::write(&path, text).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
        path
    }

    #[test]
    fn a_dispatcher_is_an_executable_foreign_file_that_names_its_directory() {
        let dir = tempfile::tempdir().unwrap();
        // The loop of Gitea's and Forgejo's generated pre-receive (modules/repository/hooks.go).
        let gitea = "#!/usr/bin/env bash\n# AUTO GENERATED BY GITEA, DO NOT MODIFY\ndata=$(cat)\nhookname=$(basename $0)\nfor hook in ${GIT_DIR}/hooks/${hookname}.d/*; do\n  echo \"${data}\" | \"${hook}\"\ndone\n";
        assert!(is_dispatcher(&file(dir.path(), "a", gitea, 0o755)));
        let gist = "#!/bin/sh\nhook_dir=\"$(dirname $0)/pre-receive.d\"\n";
        assert!(is_dispatcher(&file(dir.path(), "b", gist, 0o755)));
        assert!(!is_dispatcher(&file(dir.path(), "c", gitea, 0o644)));
        let copied =
            "#!/bin/sh\nhook_name=$(basename \"$0\")\nhook_dir=\"$script_dir/$hook_name.d\"\n";
        assert!(is_dispatcher(&file(dir.path(), "b2", copied, 0o755)));
        let inline = "#!/bin/sh\nfor h in \"$(dirname $0)/$(basename $0).d\"/*; do \"$h\"; done\n";
        assert!(is_dispatcher(&file(dir.path(), "b3", inline, 0o755)));
        let checker = "#!/bin/sh\nexec /usr/local/bin/check-commits\n";
        assert!(!is_dispatcher(&file(dir.path(), "d", checker, 0o755)));
        // Other `.d` directories a hook may read are not its own hook directory.
        let conf = "#!/bin/sh\nfor f in /etc/githooks/conf.d/*; do . \"$f\"; done\ncheck\n";
        assert!(!is_dispatcher(&file(dir.path(), "d2", conf, 0o755)));
        let rules = "#!/bin/sh\nexec scan --rules \"${RULES}.d/\"\n";
        assert!(!is_dispatcher(&file(dir.path(), "d3", rules, 0o755)));
        let ours = shim::content(HookName::PreReceive);
        assert!(!is_dispatcher(&file(dir.path(), "e", ours, 0o755)));
        assert!(!is_dispatcher(&dir.path().join("missing")));
    }
}
