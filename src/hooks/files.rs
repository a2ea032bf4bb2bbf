//! Writing and removing hook files safely: atomic writes (a temporary file in the same
//! directory, synced, then renamed, or linked where nothing may be replaced), the temporary
//! files a crash leaves behind, and the I/O error that names the action and the path. Shared by
//! every part of `hooks` that writes a file: install, the linked worktrees' hooks directory, the
//! server's hooks.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::HookError;

/// Prefix of the temp files an atomic write leaves behind only if the process dies mid-write.
pub(super) const TEMP_PREFIX: &str = ".git-hand-tmp-";

/// What [`write_atomic`] may replace at its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Over {
    /// Whatever is there.
    Anything,
    /// Nothing: a file that appeared there since we looked is left alone.
    Nothing,
}

/// Whether [`write_atomic`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Written {
    There,
    /// [`Over::Nothing`] and something appeared at the path meanwhile: it was left alone.
    NotThere,
}

/// Writes `content` to `path` atomically with mode 0755, over what `over` allows.
pub(super) fn write_atomic(path: &Path, content: &[u8], over: Over) -> Result<Written, HookError> {
    write_atomic_mode(path, content, over, 0o755)
}

/// [`write_atomic`] with another mode: a temporary file in the same directory, synced, then
/// renamed into place.
pub(super) fn write_atomic_mode(
    path: &Path,
    content: &[u8],
    over: Over,
    mode: u32,
) -> Result<Written, HookError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .tempfile_in(dir)
        .map_err(io_err("create a temporary file in", dir))?;
    tmp.write_all(content)
        .and_then(|()| {
            tmp.as_file()
                .set_permissions(fs::Permissions::from_mode(mode))
        })
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(io_err("write", tmp.path()))?;
    let persisted = match over {
        Over::Anything => tmp.persist(path),
        Over::Nothing => tmp.persist_noclobber(path),
    };
    match persisted {
        Ok(_) => Ok(Written::There),
        Err(e) if over == Over::Nothing && e.error.kind() == io::ErrorKind::AlreadyExists => {
            Ok(Written::NotThere)
        }
        Err(e) => Err(io_err("write", path)(e.error)),
    }
}

pub(super) fn remove_if_present(path: &Path) -> Result<(), HookError> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io_err("remove", path)(e)),
        _ => Ok(()),
    }
}

/// Removes temp files a crashed install left behind, so uninstall leaves nothing of ours. Best
/// effort: a file we cannot remove is no hook git would run.
pub(super) fn sweep_temp_files(dir: &Path) {
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

pub(super) fn io_err(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> HookError {
    let path = path.to_path_buf();
    move |source| HookError::Io {
        action,
        path,
        source,
    }
}
