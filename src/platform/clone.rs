//! Cloning a file, a symbolic link or a whole directory tree, keeping what `cp -a` keeps.
//!
//! git-hand once ran GNU `cp --reflink=auto -a` for this; BSD `cp` (macOS) has no such flag, and
//! an external tool's failure is a line of text. What a clone keeps, and why:
//! - A regular file's blocks are shared where the filesystem clones (btrfs and XFS through
//!   `FICLONE`, APFS through `clonefile`, both by the `reflink-copy` crate), so a 1 GiB
//!   `node_modules` costs almost nothing; elsewhere they are copied (`std::fs::copy`).
//! - A symbolic link is copied as the link it is, never followed.
//! - Every file's and directory's mode, and its access and modification times: cargo's
//!   fingerprints compare a file's modification time with its build's, so a `target/` copied with
//!   new times would rebuild everything.
//! - Files hard-linked to each other inside the tree stay one file, as `cp -a` keeps them (pnpm
//!   links every file of its `node_modules` to one file in its store per content).
//! - Not kept: the owner (a copy belongs to whoever spawns), a link's own times (std cannot set
//!   them; nothing reads them), and on Linux extended attributes and ACLs (macOS's `clonefile`
//!   and `std::fs::copy`, `fcopyfile` there, do keep them).
//! - A FIFO, a socket or a device fails the clone: std cannot make one, and a tree copied without
//!   it would not be the tree that was matched.
//!
//! A clone that fails leaves what it had written: the caller clones to a temporary name and
//! removes it (`ops::repo::include`), so that rule lives in one place.

use std::collections::HashMap;
use std::fs::{self, File, FileTimes, Metadata};
use std::io;
use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};

/// Why a clone failed: what it was doing, and where.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    #[error("cannot {doing} {}: {source}", path.display())]
    Io {
        doing: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    #[error("{} is a {kind}: only files, links and directories are copied", path.display())]
    Unsupported { path: PathBuf, kind: &'static str },
}

/// What one [`Cloner::clone_tree`] wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Cloned {
    /// Regular files whose blocks were written (a second hard link to one writes none).
    pub files: u64,
    /// Of those, the ones the filesystem cloned rather than copied.
    pub reflinked: u64,
}

impl Cloned {
    /// Whether the filesystem cloned every file; `None` when there was no regular file to tell.
    pub(crate) fn all_reflinked(&self) -> Option<bool> {
        (self.files > 0).then_some(self.reflinked == self.files)
    }
}

/// Clones trees, one after another, learning from the first file whether the destination's
/// filesystem clones at all.
#[derive(Debug)]
pub(crate) struct Cloner {
    /// False once a clone failed because the filesystem cannot clone (ext4, tmpfs, another
    /// device): every later file is copied straight away. Each failed clone creates and removes
    /// its destination, which made a tree of 30000 small files half as slow again on ext4.
    try_reflink: bool,
}

impl Default for Cloner {
    fn default() -> Self {
        Self::new()
    }
}

impl Cloner {
    pub fn new() -> Self {
        Self { try_reflink: true }
    }

    /// Clones `from` (a file, a link, or a directory and everything in it, no link followed) to
    /// `to`, which must not exist; its parent must.
    pub(crate) fn clone_tree(&mut self, from: &Path, to: &Path) -> Result<Cloned, Error> {
        let mut tree = Tree {
            cloner: self,
            cloned: Cloned::default(),
            linked: HashMap::new(),
        };
        tree.entry(from, to)?;
        Ok(tree.cloned)
    }

    /// Writes the regular file `from` to `to`, a new path: cloned if the filesystem can, else
    /// copied with its mode. Whether it was cloned.
    fn write(&mut self, from: &Path, to: &Path) -> Result<bool, Error> {
        if self.try_reflink {
            match reflink_copy::reflink(from, to) {
                Ok(()) => return Ok(true),
                Err(e) if cannot_clone_here(&e) => self.try_reflink = false,
                // What a copy would fail on too.
                Err(e) if is_fatal(&e) => return Err(io_error("copy", from)(e)),
                // One file this filesystem will not clone (btrfs refuses to clone between
                // files with different copy-on-write settings): copied, and the next tried.
                Err(_) => {}
            }
        }
        fs::copy(from, to).map_err(io_error("copy", from))?;
        Ok(false)
    }
}

/// A clone failed because the destination's filesystem never clones: ext4 and tmpfs say it is
/// not supported, and no filesystem clones across devices.
fn cannot_clone_here(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::Unsupported | io::ErrorKind::CrossesDevices
    )
}

/// The failures a copy would meet as well (the ones `reflink-copy`'s `reflink_or_copy` does not
/// fall back on).
fn is_fatal(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::PermissionDenied | io::ErrorKind::AlreadyExists
    )
}

/// One tree being cloned.
struct Tree<'a> {
    cloner: &'a mut Cloner,
    cloned: Cloned,
    /// The first copy of each file with more than one link, by device and inode.
    linked: HashMap<(u64, u64), PathBuf>,
}

impl Tree<'_> {
    fn entry(&mut self, from: &Path, to: &Path) -> Result<(), Error> {
        let meta = fs::symlink_metadata(from).map_err(io_error("read", from))?;
        let kind = meta.file_type();
        if kind.is_symlink() {
            let target = fs::read_link(from).map_err(io_error("read the link", from))?;
            std::os::unix::fs::symlink(target, to).map_err(io_error("create the link", to))
        } else if kind.is_dir() {
            self.directory(from, to, &meta)
        } else if kind.is_file() {
            self.file(from, to, &meta)
        } else {
            Err(Error::Unsupported {
                path: from.to_path_buf(),
                kind: special(&kind),
            })
        }
    }

    fn directory(&mut self, from: &Path, to: &Path, meta: &Metadata) -> Result<(), Error> {
        fs::create_dir(to).map_err(io_error("create", to))?;
        for entry in fs::read_dir(from).map_err(io_error("list", from))? {
            let name = entry.map_err(io_error("list", from))?.file_name();
            self.entry(&from.join(&name), &to.join(&name))?;
        }
        // After the contents: writing them changed the directory's times, and a read-only
        // directory would have refused them. Both through one handle, so a mode that takes
        // away the owner's read cannot stop the times being set.
        let dir = File::open(to).map_err(io_error("open", to))?;
        dir.set_times(times(meta))
            .map_err(io_error("set the times of", to))?;
        dir.set_permissions(meta.permissions())
            .map_err(io_error("set the mode of", to))
    }

    fn file(&mut self, from: &Path, to: &Path, meta: &Metadata) -> Result<(), Error> {
        let key = (meta.dev(), meta.ino());
        if meta.nlink() > 1
            && let Some(first) = self.linked.get(&key)
        {
            return fs::hard_link(first, to).map_err(io_error("link", to));
        }
        let reflinked = self.cloner.write(from, to)?;
        self.cloned.files += 1;
        self.cloned.reflinked += u64::from(reflinked);
        // The mode came with the blocks; the times are set here, through a handle that only
        // reads, which a read-only file allows its owner.
        File::open(to)
            .and_then(|file| file.set_times(times(meta)))
            .map_err(io_error("set the times of", to))?;
        if meta.nlink() > 1 {
            self.linked.insert(key, to.to_path_buf());
        }
        Ok(())
    }
}

/// The access and modification times `meta` was read with.
fn times(meta: &Metadata) -> FileTimes {
    let mut times = FileTimes::new();
    if let Ok(accessed) = meta.accessed() {
        times = times.set_accessed(accessed);
    }
    if let Ok(modified) = meta.modified() {
        times = times.set_modified(modified);
    }
    times
}

/// What a file that is no file, link nor directory is, for the error.
fn special(kind: &fs::FileType) -> &'static str {
    if kind.is_fifo() {
        "FIFO"
    } else if kind.is_socket() {
        "socket"
    } else if kind.is_block_device() || kind.is_char_device() {
        "device"
    } else {
        "file of unknown kind"
    }
}

fn io_error<'a>(doing: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> Error + 'a {
    move |source| Error::Io {
        doing,
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::{PermissionsExt as _, symlink};
    use std::time::{Duration, SystemTime};

    use super::*;

    /// 2020-09-13, to the nanosecond: no copy made now has it by chance.
    fn long_ago() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::new(1_600_000_000, 123_456_789)
    }

    fn set_mode(path: &Path, mode: u32) {
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    }

    fn set_times(path: &Path, at: SystemTime) {
        let times = FileTimes::new().set_accessed(at).set_modified(at);
        File::open(path).unwrap().set_times(times).unwrap();
    }

    fn mode(path: &Path) -> u32 {
        fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
    }

    /// A `target/`-like tree: an executable, a private file, a read-only directory, a relative
    /// link, a link to a directory and two names for one file; every time long ago (the
    /// directories' set last, as their contents change them).
    fn target(root: &Path) -> PathBuf {
        let top = root.join("target");
        fs::create_dir_all(top.join("debug/.fingerprint")).unwrap();
        fs::create_dir(top.join("sealed")).unwrap();
        fs::write(top.join("debug/app"), "\x7fELF").unwrap();
        set_mode(&top.join("debug/app"), 0o755);
        fs::write(top.join("debug/.fingerprint/app"), "fingerprint").unwrap();
        set_mode(&top.join("debug/.fingerprint/app"), 0o600);
        fs::write(top.join("sealed/file"), "sealed").unwrap();
        fs::hard_link(top.join("sealed/file"), top.join("debug/same")).unwrap();
        symlink("debug/app", top.join("latest")).unwrap();
        symlink("debug", top.join("out")).unwrap();
        for file in ["debug/app", "debug/.fingerprint/app", "sealed/file"] {
            set_times(&top.join(file), long_ago());
        }
        for dir in ["debug/.fingerprint", "debug", "sealed", ""] {
            set_times(&top.join(dir), long_ago());
        }
        set_mode(&top.join("sealed"), 0o555);
        top
    }

    /// Asserts the clone of [`target`] at `top` kept what `cp -a` keeps; the access times only
    /// with `atimes` (reading a source moves its own).
    fn assert_kept(top: &Path, atimes: bool) {
        // Times first: reading a file's content may move its access time.
        for path in [
            "",
            "debug",
            "debug/.fingerprint",
            "sealed",
            "debug/app",
            "sealed/file",
        ] {
            let meta = fs::metadata(top.join(path)).unwrap();
            assert_eq!(meta.modified().unwrap(), long_ago(), "mtime of {path:?}");
            if atimes {
                assert_eq!(meta.accessed().unwrap(), long_ago(), "atime of {path:?}");
            }
        }
        assert_eq!(mode(&top.join("debug/app")), 0o755);
        assert_eq!(mode(&top.join("debug/.fingerprint/app")), 0o600);
        assert_eq!(mode(&top.join("sealed")), 0o555);
        assert_eq!(fs::read(top.join("debug/app")).unwrap(), b"\x7fELF");
        assert_eq!(
            fs::read_to_string(top.join("debug/.fingerprint/app")).unwrap(),
            "fingerprint"
        );
        for link in ["latest", "out"] {
            let meta = fs::symlink_metadata(top.join(link)).unwrap();
            assert!(meta.is_symlink(), "{link} is no link");
        }
        assert_eq!(
            fs::read_link(top.join("latest")).unwrap(),
            Path::new("debug/app")
        );
        assert_eq!(fs::read_link(top.join("out")).unwrap(), Path::new("debug"));
        let one = fs::metadata(top.join("sealed/file")).unwrap();
        let other = fs::metadata(top.join("debug/same")).unwrap();
        assert_eq!((one.dev(), one.ino()), (other.dev(), other.ino()));
    }

    /// Clones [`target`] from a directory in `from_in` to one in `to_in`, and checks it.
    fn clone_between(from_in: &Path, to_in: &Path) -> (Cloner, Cloned) {
        let from = tempfile::tempdir_in(from_in).unwrap();
        let to = tempfile::tempdir_in(to_in).unwrap();
        let top = target(from.path());
        let mut cloner = Cloner::new();
        let cloned = cloner.clone_tree(&top, &to.path().join("target")).unwrap();
        assert_kept(&to.path().join("target"), true);
        // The source is left as it was.
        assert_kept(&top, false);
        // A read-only directory would keep the temporary directories from being removed.
        set_mode(&from.path().join("target/sealed"), 0o755);
        set_mode(&to.path().join("target/sealed"), 0o755);
        (cloner, cloned)
    }

    #[test]
    fn a_tree_keeps_its_modes_times_links_and_hard_links_on_the_test_filesystem() {
        let (_, cloned) = clone_between(&std::env::temp_dir(), &std::env::temp_dir());
        // Three files written; the second name of one is a link, not a fourth copy.
        assert_eq!(cloned.files, 3);
        assert!(cloned.all_reflinked().is_some());
    }

    /// tmpfs never clones: every file is copied, the first clone's failure is learned once,
    /// and a copy from another filesystem keeps the same.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_tree_keeps_its_modes_times_links_and_hard_links_on_a_tmpfs() {
        let shm = Path::new("/dev/shm");
        for (from, to) in [(shm, shm), (&*std::env::temp_dir(), shm)] {
            let (cloner, cloned) = clone_between(from, to);
            assert_eq!(
                (cloned.files, cloned.all_reflinked()),
                (3, Some(false)),
                "{from:?} to {to:?}"
            );
            assert!(!cloner.try_reflink, "the failed clone was not learned");
        }
    }

    #[test]
    fn a_single_file_or_link_is_cloned_as_what_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("run.sh");
        fs::write(&file, "#!/bin/sh\n").unwrap();
        set_mode(&file, 0o750);
        set_times(&file, long_ago());
        symlink("run.sh", dir.path().join("link")).unwrap();
        let mut cloner = Cloner::new();

        let cloned = cloner.clone_tree(&file, &dir.path().join("copy")).unwrap();
        assert_eq!(cloned.files, 1);
        let copy = dir.path().join("copy");
        assert_eq!(fs::metadata(&copy).unwrap().modified().unwrap(), long_ago());
        assert_eq!(mode(&copy), 0o750);
        assert_eq!(fs::read_to_string(&copy).unwrap(), "#!/bin/sh\n");

        let cloned =
            (cloner.clone_tree(&dir.path().join("link"), &dir.path().join("link2"))).unwrap();
        assert_eq!(cloned, Cloned::default());
        assert_eq!(cloned.all_reflinked(), None);
        assert_eq!(
            fs::read_link(dir.path().join("link2")).unwrap(),
            Path::new("run.sh")
        );
    }

    #[test]
    fn a_fifo_in_a_tree_fails_the_clone() {
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path().join("node_modules");
        fs::create_dir(&tree).unwrap();
        let fifo = tree.join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let e = Cloner::new()
            .clone_tree(&tree, &dir.path().join("copy"))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{} is a FIFO: only files, links and directories are copied",
                fifo.display()
            )
        );
    }

    #[test]
    fn a_clone_never_writes_over_what_is_there() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a"), "new").unwrap();
        fs::write(dir.path().join("b"), "kept").unwrap();
        let e =
            (Cloner::new().clone_tree(&dir.path().join("a"), &dir.path().join("b"))).unwrap_err();
        assert!(
            matches!(e, Error::Io { ref source, .. } if source.kind() == io::ErrorKind::AlreadyExists),
            "{e}"
        );
        assert_eq!(fs::read_to_string(dir.path().join("b")).unwrap(), "kept");
    }
}
