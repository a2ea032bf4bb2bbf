//! A slot runs the hooks the repository's other worktrees run.
//!
//! With `core.hooksPath` unset, or absolute, every worktree shares one hooks directory and there
//! is nothing to do. A relative `core.hooksPath` is resolved by git in each worktree's own top
//! directory, and the managers that set one generate that directory and ignore it: husky 9 sets
//! `.husky/_`, whose files run the committed `.husky/<hook>` next to them, and writes them when
//! `npm install` runs its `prepare` script, which nobody runs in a new slot. So a fresh slot has
//! no `.husky/_`, and git runs no hook there at all: neither husky's nor the git-hand line in
//! `.husky/pre-push` that fences a stale push.
//!
//! The fix chosen: when the directory is missing in the slot, copy it from the worktree spawn
//! runs in (else the main worktree). The copy runs the slot's own committed scripts (husky's `h`
//! finds them beside its directory), exactly as husky in that worktree would, and it is ignored
//! there as it is here, so the slot stays clean. The alternatives were worse: a per-worktree
//! `core.hooksPath` (`extensions.worktreeConfig`) pointing at the main worktree's directory
//! would run the main worktree's scripts instead of the slot's checked-out ones, and turning that
//! extension on changes the repository format for every tool that reads it; running `husky` in
//! the slot needs node and the package installed there.
//!
//! Generic: any relative `core.hooksPath` inside the work tree that git ignores. A directory that
//! would show as untracked in the slot is not copied (it would make the slot unclean, so never
//! reusable): the spawn fails, naming the fix. Never touches a directory the slot already has
//! (a tracked one, or a copy made earlier).

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use super::PoolError;
use crate::git::{Git, Repo};
use crate::ops::{Error, Result};

/// Copies the repository's generated hooks directory into `slot` when the slot lacks it (see
/// the module docs). Returns the directory copied, if any.
pub(crate) fn inherit(repo: &Repo, slot: &Path) -> Result<Option<PathBuf>> {
    let Some(rel) = relative_hooks_path(repo) else {
        return Ok(None);
    };
    let dest = slot.join(&rel);
    if fs::symlink_metadata(&dest).is_ok() {
        return Ok(None);
    }
    let source = [repo.loc.workdir.clone(), repo.main_workdir()]
        .into_iter()
        .flatten()
        .map(|w| w.join(&rel))
        .find(|dir| dir.is_dir() && !dir.starts_with(slot));
    let Some(source) = source else {
        return Ok(None);
    };
    let failed = |e: io::Error| {
        let _ = fs::remove_dir_all(&dest);
        Error::from(PoolError::HooksNotCopied {
            hooks_dir: source.clone(),
            dest: dest.clone(),
            slot: slot.to_path_buf(),
            reason: e.to_string(),
        })
    };
    copy_tree(&source, &dest).map_err(failed)?;
    let rel_arg = rel.to_string_lossy();
    let untracked = Git::new(slot)
        .run(&[
            "ls-files",
            "--others",
            "--exclude-standard",
            "--",
            &*rel_arg,
        ])
        .map_err(|e| failed(io::Error::other(e.to_string())))?;
    if !untracked.trim().is_empty() {
        let _ = fs::remove_dir_all(&dest);
        return Err(PoolError::RelativeHooksPathUntracked {
            rel: rel_arg.into_owned(),
            hooks_dir: source,
        }
        .into());
    }
    Ok(Some(dest))
}

/// `core.hooksPath` when it is a relative path that stays inside the work tree.
fn relative_hooks_path(repo: &Repo) -> Option<PathBuf> {
    let value = repo.config_string("core.hooksPath")?;
    let path = Path::new(value.trim());
    let inside = path
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    let rel: PathBuf = path.components().collect();
    (inside && !value.starts_with('~') && !rel.as_os_str().is_empty()).then_some(rel)
}

/// Copies `from` to `to` (which must not exist): directories, regular files with their modes,
/// symbolic links as links. Through a temporary name beside `to`, so a crash never leaves half a
/// hooks directory that git would run.
fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    let parent = to.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(parent)?;
    let tmp = tempfile::Builder::new()
        .prefix(".git-hand-tmp-")
        .tempdir_in(parent)?;
    copy_into(from, tmp.path())?;
    fs::set_permissions(tmp.path(), fs::metadata(from)?.permissions())?;
    let tmp = tmp.keep();
    fs::rename(&tmp, to).inspect_err(|_| {
        let _ = fs::remove_dir_all(&tmp);
    })
}

fn copy_into(from: &Path, to: &Path) -> io::Result<()> {
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(&src)?, &dst)?;
        } else if kind.is_dir() {
            fs::create_dir(&dst)?;
            copy_into(&src, &dst)?;
            fs::set_permissions(&dst, fs::metadata(&src)?.permissions())?;
        } else if kind.is_file() {
            fs::copy(&src, &dst)?;
            let mode = fs::metadata(&src)?.permissions().mode();
            fs::set_permissions(&dst, fs::Permissions::from_mode(mode))?;
        }
    }
    Ok(())
}
