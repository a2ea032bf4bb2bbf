//! Reading a file a repository hands git-hand (its committed `.handconfig`, and any such file
//! to come): only a regular file, never through a symbolic link, never more than a cap.
//!
//! A committed file is whatever the repository's author made it. Committed as a symlink to
//! `/dev/zero`, `.handconfig` once made `status`, `config`, `spawn` and the pre-push hook grow by
//! gigabytes a second (and `git push` never returned); a FIFO hung them. git's own rules for
//! `.gitmodules` (and git-lfs's for `.lfsconfig`) are the model: a symlink is not followed.
//!
//! The file is opened with `O_NOFOLLOW | O_NONBLOCK` and judged by `fstat` on what was opened, so
//! nothing swapped in between a check and the open is read, and opening a FIFO or a device
//! never blocks. It knows nothing of what the file means.

use std::fs::OpenOptions;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The cap for a settings file: far more than any hand-written one needs.
pub(crate) const SETTINGS_CAP: u64 = 1 << 20;

/// Why a repository's file was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RepoFileError {
    #[error("{} is a symbolic link, which git-hand does not follow", crate::shown::path(.path))]
    Symlink { path: PathBuf },
    #[error("{} is not a regular file (it is {kind})", crate::shown::path(.path))]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error("{} is larger than {}", crate::shown::path(.path), size(*.cap))]
    TooLarge { path: PathBuf, cap: u64 },
    #[error("{} cannot be read ({why})", crate::shown::path(.path))]
    Unreadable { path: PathBuf, why: String },
}

/// `1 MiB`, `64 KiB`, `100 bytes`.
fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// The content of the regular file at `path`, at most `cap` bytes: `Ok(None)` when there is none.
/// A symlink (even one to a regular file), a FIFO, a device, a directory or a socket is refused,
/// and so is a file larger than `cap`, without reading more than `cap + 1` bytes of it.
pub(crate) fn read_regular(path: &Path, cap: u64) -> Result<Option<Vec<u8>>, RepoFileError> {
    let unreadable = |e: std::io::Error| RepoFileError::Unreadable {
        path: path.to_path_buf(),
        why: e.to_string(),
    };
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        // O_NOFOLLOW on a symlink fails with ELOOP.
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(RepoFileError::Symlink {
                path: path.to_path_buf(),
            });
        }
        Err(e) => return Err(unreadable(e)),
    };
    let meta = file.metadata().map_err(unreadable)?;
    if !meta.is_file() {
        return Err(RepoFileError::NotRegular {
            path: path.to_path_buf(),
            kind: kind(&meta.file_type()),
        });
    }
    let too_large = || RepoFileError::TooLarge {
        path: path.to_path_buf(),
        cap,
    };
    if meta.len() > cap {
        return Err(too_large());
    }
    // The length can grow after the fstat: read no more than one byte past the cap.
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > cap {
        return Err(too_large());
    }
    Ok(Some(bytes))
}

/// What a file that is not a regular one is, in words.
fn kind(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_is_read_and_a_missing_one_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        assert_eq!(read_regular(&path, 10).unwrap(), None);
        std::fs::write(&path, "0123456789").unwrap();
        assert_eq!(read_regular(&path, 10).unwrap().unwrap(), b"0123456789");
        let e = read_regular(&path, 9).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("{} is larger than 9 bytes", path.display())
        );
    }

    #[test]
    fn a_symlink_a_fifo_a_device_or_a_directory_is_refused_without_being_read() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, "[hand]\n").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = read_regular(&link, SETTINGS_CAP).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{} is a symbolic link, which git-hand does not follow",
                link.display()
            )
        );
        let fifo = dir.path().join("fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let e = read_regular(&fifo, SETTINGS_CAP).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("is not a regular file (it is a FIFO)"),
            "{e}"
        );
        let e = read_regular(Path::new("/dev/zero"), SETTINGS_CAP).unwrap_err();
        assert!(e.to_string().ends_with("(it is a character device)"), "{e}");
        let e = read_regular(dir.path(), SETTINGS_CAP).unwrap_err();
        assert!(e.to_string().ends_with("(it is a directory)"), "{e}");
    }

    #[test]
    fn sizes_are_said_in_whole_units() {
        assert_eq!(size(SETTINGS_CAP), "1 MiB");
        assert_eq!(size(2048), "2 KiB");
        assert_eq!(size(1000), "1000 bytes");
    }
}
