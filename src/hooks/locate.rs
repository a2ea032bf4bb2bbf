//! Where git runs hooks from, as git itself answers it (`git rev-parse --git-path hooks`), and
//! whether `core.hooksPath` moved them away from the repository's own `hooks` directory.
//!
//! Asking git (through the one runner) rather than reading config ourselves is the point: a
//! `core.hooksPath` set through `includeIf`, a global config or a linked worktree's relative path
//! is resolved exactly as the hook run will resolve it. Nothing here writes.

use std::path::{Path, PathBuf};

use super::HookError;
use crate::git::{Git, Repo};

/// Where hooks live for one repository (all paths absolute).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HooksLocation {
    /// The directory git runs hooks from now.
    pub active: PathBuf,
    /// `<common dir>/hooks`: where hooks live when `core.hooksPath` does not move them. Shared
    /// by every worktree of the repository.
    pub default: PathBuf,
    /// `core.hooksPath` as configured, when it moves hooks away from [`Self::default`].
    pub hooks_path: Option<String>,
    /// The directory git really runs hooks from in this worktree when that is git-hand's own
    /// hooks directory for linked worktrees (L, set by `<common>/git-hand/linked.config`; also
    /// the stale path of a moved repository's). [`Self::active`] is then the repository's own
    /// hooks directory, whose hooks L forwards to: git-hand's shims live there, and no other
    /// tool moved the hooks.
    pub linked: Option<PathBuf>,
    /// With [`Self::linked`]: the main worktree's `core.hooksPath` when it no longer is the
    /// repository's own hooks directory (set after git-hand wrote L: husky installed later). L
    /// still forwards to [`Self::active`] then, so slots do not run what the main worktree runs
    /// until `spawn` or `doctor --repair` hands them to `core.hooksPath` too.
    pub main_hooks_path: Option<String>,
}

#[cfg(test)]
impl HooksLocation {
    /// Hooks run from `active`, the repository's own directory being `default` (`core.hooksPath`
    /// set when the two differ), outside any slot: for a test of what is decided from it.
    pub(crate) fn at(active: &str, default: &str) -> Self {
        HooksLocation {
            active: active.into(),
            default: default.into(),
            hooks_path: (active != default).then(|| active.into()),
            linked: None,
            main_hooks_path: None,
        }
    }
}

impl HooksLocation {
    /// Whether `core.hooksPath` sends git somewhere other than the repository's hooks directory.
    pub(crate) fn is_redirected(&self) -> bool {
        self.active != self.default
    }

    /// The repository's common dir: [`Self::default`] is its `hooks`.
    pub fn common(&self) -> &Path {
        self.default.parent().unwrap_or(&self.default)
    }

    /// Where git-hand's shims may be: where git runs hooks from, and the repository's own hooks
    /// directory when `core.hooksPath` sends git elsewhere.
    pub fn dirs(&self) -> Vec<&PathBuf> {
        let mut dirs = vec![&self.active];
        if self.is_redirected() {
            dirs.push(&self.default);
        }
        dirs
    }
}

/// Asks git where `git.dir()` runs hooks from. One git call, two when `core.hooksPath` redirects
/// (to read the configured value for messages).
pub fn locate(git: &Git) -> Result<HooksLocation, HookError> {
    let fail = |source| HookError::Locate {
        dir: git.dir().to_path_buf(),
        source,
    };
    let out = git
        .run(&["rev-parse", "--git-path", "hooks", "--git-common-dir"])
        .map_err(fail)?;
    let mut lines = out.lines();
    let (Some(hooks), Some(common)) = (lines.next(), lines.next()) else {
        return Err(fail(crate::git::GitError::Failed {
            args: "rev-parse --git-path hooks --git-common-dir".into(),
            status: "exit status: 0".into(),
            stderr: format!("expected two lines, got {out:?}"),
        }));
    };
    // git answers relative to the directory it ran in.
    let base = absolute(git.dir());
    let active = resolve(&base.join(hooks));
    let default = resolve(&base.join(common)).join("hooks");
    let default = resolve(&default);
    if active != default && is_linked_dir(default.parent().unwrap_or(&default), &active) {
        let main = main_hooks_path(&default)?;
        return Ok(HooksLocation {
            active: default.clone(),
            default,
            hooks_path: None,
            linked: Some(active),
            main_hooks_path: main,
        });
    }
    let hooks_path = if active == default {
        None
    } else {
        Some(configured_hooks_path(git).unwrap_or_else(|| active.display().to_string()))
    };
    Ok(HooksLocation {
        active,
        default,
        hooks_path,
        linked: None,
        main_hooks_path: None,
    })
}

/// Whether `repo`'s `core.hooksPath` (as its configuration reads, includes followed) leaves the
/// hooks where git-hand put them: unset, or git-hand's own hooks directory for linked worktrees,
/// which a slot's configuration sets. Lets a caller prove without starting git that no other
/// tool moved the hooks.
pub fn not_moved_by_another_tool(repo: &Repo) -> bool {
    repo.config_string("core.hooksPath")
        .is_none_or(|value| is_linked_dir(&repo.loc.common_dir, Path::new(&value)))
}

/// The main worktree's `core.hooksPath`, read where the layout's include never matches, when it
/// sends hooks anywhere but `default` (one git call).
fn main_hooks_path(default: &Path) -> Result<Option<String>, HookError> {
    let common = default.parent().unwrap_or(default);
    let main = super::linked::main_hooks_dir(common)?;
    let same = main == default || std::fs::canonicalize(&main).is_ok_and(|m| m == default);
    Ok((!same).then(|| main.display().to_string()))
}

/// Whether `dir` is L of the repository whose common dir is `common`, or the path its
/// `linked.config` sets (which a moved repository's slots still read), compared as real paths.
fn is_linked_dir(common: &Path, dir: &Path) -> bool {
    let dir = resolve(dir);
    dir == resolve(&super::linked::hooks_dir(common))
        || super::linked::recorded_hooks_path(common).is_some_and(|set| resolve(&set) == dir)
}

/// `core.hooksPath` as the user wrote it (with `~` expanded by git), if git can tell.
fn configured_hooks_path(git: &Git) -> Option<String> {
    git.run(&["config", "--type=path", "--get", "core.hooksPath"])
        .ok()
        .filter(|v| !v.is_empty())
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The real path when it exists, else its parent's real path joined with its name, else the path
/// made absolute: a hooks directory may not exist yet, and `.git/hooks` may be a symlink.
fn resolve(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => match std::fs::canonicalize(parent) {
            Ok(real) => real.join(name),
            Err(_) => absolute(path),
        },
        _ => absolute(path),
    }
}
