//! Admin dirs a `git worktree add` killed before it wrote their `gitdir` left behind.
//!
//! git writes a new worktree's admin dir (`.git/worktrees/<id>/`) file by file, `locked` first
//! (git's "initializing", or the reason of `--lock`: every slot is added with "git-hand slot"),
//! then `gitdir`, which names the worktree, then the rest. An add killed between the two leaves
//! `locked` alone, or with a `gitdir` still empty. Such a dir is no worktree to git (`git worktree
//! list` leaves it out, as `Repo::linked_worktrees` does) and `git worktree prune` keeps it
//! because it is locked: harmless, but nothing ever removes it. Only what is certainly a killed
//! add's is removed here; anything else is reported with the command a human would run.

use std::path::{Path, PathBuf};

use super::{Checkup, Finding, Problem, ProblemKind};
use crate::git::link;
use crate::ops::{Result, pool::slot};

/// The `locked` reasons a killed add leaves: git's own while it adds without `--lock`, and
/// the one git-hand adds every slot with.
const ADD_REASONS: [&str; 2] = ["initializing", "git-hand slot"];

/// The files a killed add can have written before its `gitdir` named the worktree.
const ADD_FIRST_FILES: [&str; 2] = ["locked", "gitdir"];

impl Checkup<'_> {
    /// Admin dirs whose `gitdir` names no worktree. With `repair`, those a killed add certainly
    /// left are removed under the worktree-list lock: every git-hand registration holds it, so no
    /// git-hand is writing one then, and they are judged again under it.
    pub(super) fn half_added_worktrees(&self, out: &mut Vec<Problem>) -> Result<()> {
        let common = &self.repo.loc.common_dir;
        let found = half_added(common);
        if !(self.repair && found.iter().any(HalfAdded::removable)) {
            out.extend(found.iter().map(HalfAdded::problem));
            return Ok(());
        }
        let _lock = slot::lock_worktree_list(common)?;
        for h in half_added(common) {
            let mut p = h.problem();
            if h.removable() {
                // A plain `git worktree add` (not git-hand's) could be between its `locked` and
                // its `gitdir` this very moment: it then fails to write them, and loses nothing.
                std::fs::remove_dir_all(&h.admin)
                    .map_err(|e| crate::ops::pool::cannot_remove(&h.admin, "", e))?;
                p.repaired = true;
            }
            out.push(p);
        }
        Ok(())
    }
}

/// One admin dir whose `gitdir` names no worktree.
struct HalfAdded {
    admin: PathBuf,
    /// Why its `gitdir` names none: "is missing", "is empty", "cannot be read (...)".
    gitdir: String,
    /// Its `locked` reason, if it is locked.
    reason: Option<String>,
    /// Files a killed add could not have written yet (it wrote `gitdir` before them).
    others: Vec<String>,
}

impl HalfAdded {
    /// Certainly a killed add's: locked as only an add locks, holding nothing else.
    fn removable(&self) -> bool {
        self.reason
            .as_deref()
            .is_some_and(|r| ADD_REASONS.contains(&r))
            && self.others.is_empty()
    }

    fn problem(&self) -> Problem {
        Problem {
            kind: ProblemKind::HalfAddedWorktree,
            subject: self.admin.display().to_string(),
            finding: Finding::HalfAdded {
                admin: self.admin.clone(),
                gitdir: self.gitdir.clone(),
                reason: self.reason.clone(),
                others: self.others.clone(),
                removable: self.removable(),
            },
            repaired: false,
        }
    }
}

/// Every admin dir under `common`'s `worktrees/` whose `gitdir` names no worktree (none, an
/// empty one, or one that cannot be read), sorted by name. An admin dir that names one is a
/// worktree, seen by the other checks.
fn half_added(common: &Path) -> Vec<HalfAdded> {
    let mut found: Vec<HalfAdded> = link::admin_dirs(common)
        .unwrap_or_default()
        .iter()
        .filter(|admin| std::fs::symlink_metadata(admin).is_ok_and(|m| m.is_dir()))
        .filter_map(|admin| judge(admin))
        .collect();
    found.sort_by(|a, b| a.admin.cmp(&b.admin));
    found
}

/// `admin` as a [`HalfAdded`], unless its `gitdir` names a worktree.
fn judge(admin: &Path) -> Option<HalfAdded> {
    let gitdir = match std::fs::read(admin.join("gitdir")) {
        Ok(text) if !text.trim_ascii().is_empty() => return None,
        Ok(_) => "is empty".to_string(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => "is missing".to_string(),
        Err(e) => format!("cannot be read ({e})"),
    };
    // git takes any `locked` file for a lock, one it cannot read too.
    let reason = match std::fs::read(admin.join("locked")) {
        Ok(r) => Some(String::from_utf8_lossy(&r).trim().to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => Some(format!("a locked file that cannot be read: {e}")),
    };
    let mut others: Vec<String> = std::fs::read_dir(admin)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| !ADD_FIRST_FILES.contains(&name.as_str()))
                .collect()
        })
        .unwrap_or_default();
    others.sort();
    Some(HalfAdded {
        admin: admin.to_path_buf(),
        gitdir,
        reason,
        others,
    })
}
