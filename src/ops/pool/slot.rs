//! One owner per slot mutation, and proof that a slot is itself before anything touches it.
//!
//! Every git command that changes a slot's files or HEAD (spawn's checkout, teardown's reset,
//! clean and detach, the undo of a failed spawn, doctor's repairs) runs through a [`SlotGuard`]:
//! an OS file lock on the slot, held across the git command, plus a ledger read just before each
//! command proving that the caller's lease still holds the slot, plus the proof that the directory is the worktree git-hand made. So a
//! teardown that was overtaken (issue 10: a slow teardown raced by a second one, the slot leased
//! to the next task meanwhile) stops before touching the next tenant's files, and a slot replaced
//! by a symlink, or orphaned when its repository was cloned again, is never reset, cleaned or
//! stamped.
//!
//! Lock order, everywhere: a slot's lock before the worktree-list lock, and both before the
//! ledger's. A transaction may run under a slot's lock (the lease check before each command,
//! teardown's release, spawn's activation, prune's removal of a slot); no transaction ever waits
//! for a slot's lock, and none is held across a git command.

use std::fs::File;
use std::path::{Path, PathBuf};

use super::PoolError;
use crate::git::link::{self, LinkError};
use crate::git::lock::LOCK_FILE;
use crate::git::status::dirty_files;
use crate::git::{Git, GitError, WorktreeListLock};
use crate::hint::say;
use crate::ledger::{LeaseId, Ledger, Resource, Step, WorktreeKey};
use crate::ops::{Error, Result};
use crate::platform::procs::Scan;

/// Takes the lock that serializes changes to the repository's worktree list (see
/// [`WorktreeListLock`]: every slot is a worktree), with an error that says nothing was changed
/// and what to check.
pub(crate) fn lock_worktree_list(common: &Path) -> Result<WorktreeListLock> {
    WorktreeListLock::acquire(common).map_err(|e| {
        PoolError::WorktreeListUnlockable {
            lock: common.join(LOCK_FILE),
            dir: common.to_path_buf(),
            reason: e.to_string(),
        }
        .into()
    })
}

/// Why the directory at a slot's path is not the slot git-hand made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotTheSlot {
    #[error("nothing is at {}", path.display())]
    Gone { path: PathBuf },
    #[error("{} leads elsewhere ({}): a symlink is on the way", path.display(), now.display())]
    Redirected { path: PathBuf, now: PathBuf },
    #[error("{} is not a directory", path.display())]
    NotADirectory { path: PathBuf },
    #[error("{} is not linked to this repository: {link}", path.display())]
    Unlinked { path: PathBuf, link: LinkError },
}

impl NotTheSlot {
    /// Whether nothing is there at all (a slot the disk lost), as opposed to something else
    /// being there.
    pub(crate) fn is_gone(&self) -> bool {
        matches!(self, NotTheSlot::Gone { .. })
    }
}

/// Proves that the slot at `path` (a realpath, as the ledger stores it) is the linked worktree of
/// this repository that git-hand made there, and returns its admin dir: a real directory with no
/// symlink anywhere on its path (its realpath is itself), whose `.git` names this repository's
/// admin dir for it and whose admin dir names it back.
pub fn prove(common_dir: &Path, path: &Path) -> std::result::Result<PathBuf, NotTheSlot> {
    let meta = std::fs::symlink_metadata(path).map_err(|_| NotTheSlot::Gone {
        path: path.to_path_buf(),
    })?;
    if meta.file_type().is_symlink() {
        let now = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        return Err(NotTheSlot::Redirected {
            path: path.to_path_buf(),
            now,
        });
    }
    if !meta.is_dir() {
        return Err(NotTheSlot::NotADirectory {
            path: path.to_path_buf(),
        });
    }
    match std::fs::canonicalize(path) {
        Ok(real) if real == path => {}
        Ok(now) => {
            return Err(NotTheSlot::Redirected {
                path: path.to_path_buf(),
                now,
            });
        }
        Err(_) => {
            return Err(NotTheSlot::Gone {
                path: path.to_path_buf(),
            });
        }
    }
    link::prove(common_dir, path).map_err(|link| NotTheSlot::Unlinked {
        path: path.to_path_buf(),
        link,
    })
}

/// Whether a slot's path is free to create a worktree at: nothing there, and nothing on the way
/// that is a symlink (its parent's realpath is itself).
pub(crate) fn prove_absent(path: &Path) -> std::result::Result<(), NotTheSlot> {
    if std::fs::symlink_metadata(path).is_ok() {
        return Err(NotTheSlot::NotADirectory {
            path: path.to_path_buf(),
        });
    }
    let mut parent = path.parent();
    // The nearest ancestor that exists must be its own realpath.
    while let Some(dir) = parent {
        if std::fs::symlink_metadata(dir).is_ok() {
            return match std::fs::canonicalize(dir) {
                Ok(real) if real == dir => Ok(()),
                Ok(now) => Err(NotTheSlot::Redirected {
                    path: dir.to_path_buf(),
                    now,
                }),
                Err(_) => Err(NotTheSlot::Gone {
                    path: dir.to_path_buf(),
                }),
            };
        }
        parent = dir.parent();
    }
    Ok(())
}

/// The OS lock of one slot: an advisory `flock` on a file in the repository's common dir, named
/// after the slot's path (a slot may not exist yet, and an adopted worktree is not in the pool).
/// Released when dropped or when the process dies, so a crash never leaves a slot locked.
#[derive(Debug)]
#[must_use = "the slot is locked only while this lives"]
pub(crate) struct SlotLock {
    _file: File,
}

const LOCK_DIR: &str = "git-hand-locks";

impl SlotLock {
    /// Waits for the slot's lock. Only processes that hold the slot's lease in the ledger take
    /// it, so a wait is for a holder finishing its git command, or for one that lost the lease
    /// and is about to find out.
    pub fn acquire(common_dir: &Path, slot: &Path) -> Result<Self> {
        let dir = common_dir.join(LOCK_DIR);
        let path = dir.join(format!("slot-{:016x}.lock", fnv1a(slot.as_os_str())));
        let locked = std::fs::create_dir_all(&dir).and_then(|()| crate::git::lock::hold(&path));
        match locked {
            Ok(file) => Ok(Self { _file: file }),
            Err(e) => Err(PoolError::SlotUnlockable {
                slot: slot.to_path_buf(),
                lock: path,
                dir,
                reason: e.to_string(),
            }
            .into()),
        }
    }
}

/// FNV-1a, 64 bits: a stable name for a path (a collision only makes two slots share a lock).
fn fnv1a(s: &std::ffi::OsStr) -> u64 {
    use std::os::unix::ffi::OsStrExt;
    s.as_bytes().iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// What a spawn being undone was doing to its slot's worktree (its [`Step`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SpawnWork {
    /// Switching a worktree that was there before (`preparing`, or an earlier step).
    Switching,
    /// Making the worktree (`creating`: a new slot, or one the disk lost).
    Creating,
}

impl SpawnWork {
    /// What a spawn recorded at `step` was doing.
    pub fn at(step: Option<Step>) -> Self {
        if step == Some(Step::Creating) {
            SpawnWork::Creating
        } else {
            SpawnWork::Switching
        }
    }
}

/// A slot this process may change: locked, and held by `lease_id` in the ledger, which every
/// git command through [`SlotGuard::git`] checks again first.
#[derive(Debug)]
#[must_use = "the slot is locked only while this lives"]
pub(crate) struct SlotGuard {
    scan: Scan,
    common_dir: PathBuf,
    path: PathBuf,
    lease_id: LeaseId,
    _lock: SlotLock,
}

impl SlotGuard {
    /// Locks the slot for the holder of `lease_id`. The lease is checked before each change
    /// made through the guard ([`SlotGuard::git`], [`SlotGuard::ensure_still_held`]), not here: a check now
    /// would only be repeated a moment later (a ledger read each, on spawn's hot path).
    pub fn lock(scan: Scan, common_dir: &Path, path: &Path, lease_id: &LeaseId) -> Result<Self> {
        Ok(Self {
            scan,
            common_dir: common_dir.to_path_buf(),
            path: path.to_path_buf(),
            lease_id: lease_id.clone(),
            _lock: SlotLock::acquire(common_dir, path)?,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Fails unless this guard's lease is still the slot's held tenure.
    pub(crate) fn ensure_still_held(&self, ledger: &mut Ledger) -> Result<()> {
        let res = Resource::worktree_on(ledger.machine(), &WorktreeKey::from_canonical(&self.path));
        let held = ledger.read(|v| v.held(&res))?;
        match held {
            Some(t) if t.lease_id == self.lease_id => Ok(()),
            other => Err(PoolError::NoLongerHeld {
                slot: self.path.clone(),
                lease: crate::ids::short(self.lease_id.as_str()).to_string(),
                now_held_by: other.map(|t| (t.holder, t.token)),
            }
            .into()),
        }
    }

    /// Proves the slot is itself (see [`prove`]) and returns its admin dir.
    pub fn prove(&self) -> Result<PathBuf> {
        prove(&self.common_dir, &self.path).map_err(|e| not_the_slot(&e))
    }

    /// Runs git in the slot after checking, just before, that the lease still holds it and that
    /// it is still itself. A lock file a killed git left in the slot's own admin dir
    /// (`index.lock`, `HEAD.lock`) is removed and the command run once more, when nothing can
    /// hold it: this process holds the slot's lock and lease, so no git-hand works there, and no
    /// process sits inside the slot. Without that, one `kill -9` at the wrong moment left a slot
    /// that every later teardown, spawn and repair failed on.
    pub fn git(&self, ledger: &mut Ledger, args: &[&str]) -> Result<String> {
        self.ensure_still_held(ledger)?;
        let admin = self.prove()?;
        let git = Git::new(&self.path);
        let first = git.run(args);
        self.again_if_stale_lock(ledger, &git, &admin, args, first)
    }

    /// Like [`SlotGuard::git`], but `meanwhile` runs on this thread, with the ledger, while the
    /// first run of git does (spawn trims the ledger's WAL while `git switch` works). The lease
    /// is checked before git starts, as always; `meanwhile` must not change the slot.
    pub(crate) fn git_meanwhile(
        &self,
        ledger: &mut Ledger,
        args: &[&str],
        meanwhile: impl FnOnce(&mut Ledger),
    ) -> Result<String> {
        self.ensure_still_held(ledger)?;
        let admin = self.prove()?;
        let git = Git::new(&self.path);
        let first = std::thread::scope(|scope| {
            let running = scope.spawn(|| git.run(args));
            meanwhile(ledger);
            running
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        });
        self.again_if_stale_lock(ledger, &git, &admin, args, first)
    }

    /// A run of git that failed on a stale lock file is run once more (see [`SlotGuard::git`]),
    /// as many times as it fails on another one: a git killed in `reset --hard` leaves both
    /// `index.lock` and its branch's lock, and git names one per run.
    fn again_if_stale_lock(
        &self,
        ledger: &mut Ledger,
        git: &Git,
        admin: &Path,
        args: &[&str],
        first: std::result::Result<String, GitError>,
    ) -> Result<String> {
        let mut run = first;
        let mut removed: Vec<PathBuf> = vec![];
        loop {
            match run {
                Err(GitError::Failed { ref stderr, .. }) => {
                    match self.remove_stale_lock(admin, stderr, &removed) {
                        Some(lock) => removed.push(lock),
                        None => return Ok(run?),
                    }
                }
                other => return Ok(other?),
            }
            self.ensure_still_held(ledger)?;
            run = git.run(args);
        }
    }

    /// Removes the lock file git's message names, if it is the slot's own, no process is inside
    /// the slot and no other git runs in the repository. The slot's own: in its admin dir, or the
    /// lock of the branch checked out in it (`refs/heads/<branch>.lock` in the common dir: `reset
    /// --hard` writes through HEAD to that branch). git moves a branch checked out in a worktree
    /// only from that worktree (`git branch -f` and `switch` elsewhere refuse it); but `git gc
    /// --auto` and `git maintenance`, started from any worktree of the repository, expire reflogs
    /// holding those same locks for seconds. With nobody inside and no other git in the
    /// repository, only a killed git can have left the lock.
    ///
    /// Returns the lock it removed; never one already in `removed` (a lock back after its removal
    /// is somebody's).
    fn remove_stale_lock(
        &self,
        admin: &Path,
        stderr: &str,
        removed: &[PathBuf],
    ) -> Option<PathBuf> {
        let lock = locked_file(stderr)?;
        let is_lock = lock.extension().is_some_and(|e| e == "lock");
        let ours = lock.parent() == Some(admin) || self.is_checked_out_branch_lock(admin, &lock);
        let nobody_inside = || {
            crate::ops::pool::procs::occupants(self.scan, &self.path).is_ok_and(|o| o.is_empty())
        };
        let unheld = || nobody_inside() && !self.another_git_in_the_repository();
        (is_lock && ours && !removed.contains(&lock) && unheld())
            .then(|| std::fs::remove_file(&lock).ok())
            .flatten()
            .map(|()| lock)
    }

    /// Whether a git that is not this process's own (nor one of its callers: `git hand` runs
    /// git-hand under a waiting `git`) runs in the repository: in its common dir, its main
    /// worktree or any linked worktree. Unprovable (no `/proc`) counts as yes.
    fn another_git_in_the_repository(&self) -> bool {
        // The main worktree holds a `.git` common dir; a bare one is its own place.
        let mut places = match self.common_dir.file_name() == Some(".git".as_ref()) {
            true => self
                .common_dir
                .parent()
                .map(Path::to_path_buf)
                .into_iter()
                .collect(),
            false => vec![self.common_dir.clone()],
        };
        let admins = link::admin_dirs(&self.common_dir).unwrap_or_default();
        places.extend(admins.iter().filter_map(|admin| link::worktree_of(admin)));
        let places: Vec<&Path> = places.iter().map(PathBuf::as_path).collect();
        let callers = self.scan.ancestors();
        crate::ops::pool::procs::occupants_of(self.scan, &places).map_or(true, |found| {
            found
                .iter()
                .any(|o| o.command == "git" && !callers.contains(&o.pid))
        })
    }

    /// Whether `lock` is the lock file of the branch the slot's HEAD names (`ref: refs/heads/..`
    /// in its admin dir), as the same file in the common dir however either path is spelled (it
    /// exists: git just failed to create it).
    fn is_checked_out_branch_lock(&self, admin: &Path, lock: &Path) -> bool {
        let Ok(head) = std::fs::read_to_string(admin.join("HEAD")) else {
            return false;
        };
        let Some(branch) = head.trim_end().strip_prefix("ref: refs/heads/") else {
            return false;
        };
        let expected = self.common_dir.join(format!("refs/heads/{branch}.lock"));
        match (expected.canonicalize(), lock.canonicalize()) {
            (Ok(expected), Ok(lock)) => expected == lock,
            _ => false,
        }
    }

    /// Undoes what a failed or killed spawn did to the slot: a clean detached checkout again; or,
    /// for a slot the spawn was making ([`SpawnWork::Creating`]) that git cannot read any more
    /// (a `worktree add` killed halfway), the worktree is removed, so the slot is simply missing
    /// and the next spawn makes it again.
    pub fn undo(&self, ledger: &mut Ledger, work: SpawnWork) -> Result<()> {
        let creating = work == SpawnWork::Creating;
        let restored = match prove(&self.common_dir, &self.path) {
            Ok(_) => self.restore_clean(ledger),
            // Nothing was made there: nothing to undo, unless an admin dir was.
            Err(e) if e.is_gone() && !creating => return Ok(()),
            Err(e) => Err(not_the_slot(&e)),
        };
        match restored {
            Ok(()) => Ok(()),
            Err(_) if creating => self.unmake(ledger),
            Err(e) => Err(e),
        }
    }

    /// Removes a worktree this spawn made and git cannot read: every admin dir of the repository
    /// that names the slot back (one with an empty `commondir` otherwise breaks every `git
    /// worktree` command of the repository), then the slot's directory. Nothing of anyone's is
    /// in it: the spawn that made it was never handed it.
    fn unmake(&self, ledger: &mut Ledger) -> Result<()> {
        self.ensure_still_held(ledger)?;
        let _list = lock_worktree_list(&self.common_dir)?;
        let failed = |what: &Path, e| super::cannot_remove(what, "", e);
        for admin in link::admin_dirs(&self.common_dir).unwrap_or_default() {
            if link::names_back(&admin, &self.path).is_ok() {
                std::fs::remove_dir_all(&admin).map_err(|e| failed(&admin, e))?;
            }
        }
        let real_dir = std::fs::symlink_metadata(&self.path).is_ok_and(|m| m.is_dir());
        if real_dir {
            std::fs::remove_dir_all(&self.path).map_err(|e| failed(&self.path, e))?;
        }
        Ok(())
    }

    /// Puts the slot back to a clean checkout of its HEAD, detached: what a spawn that failed
    /// after it proved the slot clean (or made it new) leaves behind. Only this spawn's half-done
    /// checkout is discarded: the slot was clean before, and nobody was handed it since. Ignored
    /// files (the build cache) stay.
    pub(crate) fn restore_clean(&self, ledger: &mut Ledger) -> Result<()> {
        self.git(ledger, &["reset", "--hard", "--quiet"])?;
        self.git(ledger, &["clean", "-d", "--force", "--quiet"])?;
        self.git(ledger, &["switch", "--detach", "--quiet"])?;
        let dirty = dirty_files(&Git::new(&self.path)).map_err(Error::from)?;
        if dirty.is_empty() {
            Ok(())
        } else {
            Err(PoolError::NotCleanAfterReset {
                slot: self.path.clone(),
                dirty,
            }
            .into())
        }
    }
}

/// The file a git "Unable to create '<path>.lock': File exists." message names.
fn locked_file(stderr: &str) -> Option<PathBuf> {
    let start = stderr.find("Unable to create '")? + "Unable to create '".len();
    let end = stderr[start..].find('\'')?;
    Some(PathBuf::from(&stderr[start..start + end]))
}

/// Why a slot that is not itself stays: a repair sets it aside.
pub(crate) fn sets_aside(e: &NotTheSlot) -> String {
    say(format!("not the slot git-hand made ({e}): "))
        .hand("doctor --repair")
        .text(" sets it aside")
        .into()
}

/// The error for a slot that is not itself: nothing was touched.
pub(crate) fn not_the_slot(e: &NotTheSlot) -> Error {
    PoolError::NotTheSlot(e.clone()).into()
}
