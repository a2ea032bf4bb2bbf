//! A linked worktree's two-way link with its repository, read from the files git keeps: the
//! worktree's `.git` file names a private admin dir (`<common>/worktrees/<id>`), whose `gitdir`
//! file names that `.git` file back. Nothing here writes.
//!
//! The link is proven both ways because one way is not enough: when a repository is cloned again
//! in place, or an admin dir is lost, git hands the old admin dir's name to the next worktree it
//! creates, and an orphaned worktree's `.git` then silently resolves to another worktree's HEAD,
//! index and stamp (issue 10, item 11).

use std::path::{Path, PathBuf};

/// Why a directory is not (or no longer) the linked worktree it should be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    #[error("{} has no .git file", worktree.display())]
    NoGitFile { worktree: PathBuf },
    #[error("{} is not a git worktree link ({why})", git_file.display())]
    NotALink { git_file: PathBuf, why: String },
    #[error("its .git names {}, which does not exist (the repository lost it)", admin.display())]
    AdminDirGone { admin: PathBuf },
    #[error("its .git names {}, which is no admin dir of this repository", admin.display())]
    ForeignAdminDir { admin: PathBuf },
    #[error("its admin dir {} belongs to another worktree ({})", admin.display(), names.display())]
    AdminDirNamesAnother { admin: PathBuf, names: PathBuf },
}

/// The directory of a repository's linked worktrees' admin dirs: `<common>/worktrees`.
fn worktrees_dir(common_dir: &Path) -> PathBuf {
    common_dir.join("worktrees")
}

/// Every admin dir of the repository at `common_dir` (`<common>/worktrees/<id>`), in no
/// particular order; none when it has no linked worktree.
pub(crate) fn admin_dirs(common_dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    match std::fs::read_dir(worktrees_dir(common_dir)) {
        Ok(entries) => Ok(entries.flatten().map(|e| e.path()).collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(vec![]),
        Err(e) => Err(e),
    }
}

/// The common dir an admin dir belongs to: `<common>/worktrees/<id>` → `<common>`. `None` for a
/// path not laid out that way.
pub(crate) fn common_dir_of(admin: &Path) -> Option<PathBuf> {
    let parent = admin.parent()?;
    (parent.file_name()? == "worktrees")
        .then(|| parent.parent().map(Path::to_path_buf))
        .flatten()
}

/// Whether `worktree` has a `.git` file (not a directory, symlinks followed): the mark of a linked
/// worktree on disk, before anything proves where it leads.
pub(crate) fn has_git_file(worktree: &Path) -> bool {
    worktree.join(".git").is_file()
}

/// Cuts a worktree off from its repository: its `.git` file (never a symlink's target) is renamed
/// to `.git-hand-orphaned-link`, kept for a human to read, so no git command run there acts on
/// the repository it named. Nothing to do when there is no such file.
pub(crate) fn disarm(worktree: &Path) -> std::io::Result<()> {
    let link = worktree.join(".git");
    if std::fs::symlink_metadata(&link).is_ok_and(|m| m.is_file()) {
        std::fs::rename(&link, worktree.join(".git-hand-orphaned-link"))?;
    }
    Ok(())
}

/// The admin dir a worktree's `.git` file names (canonical), without checking the way back.
pub(crate) fn admin_dir_of(worktree: &Path) -> Result<PathBuf, LinkError> {
    let git_file = worktree.join(".git");
    let meta = std::fs::symlink_metadata(&git_file).map_err(|_| LinkError::NoGitFile {
        worktree: worktree.to_path_buf(),
    })?;
    let not_a_link = |why: &str| LinkError::NotALink {
        git_file: git_file.clone(),
        why: why.to_string(),
    };
    if !meta.file_type().is_file() {
        return Err(not_a_link("not a regular file"));
    }
    let text = std::fs::read_to_string(&git_file).map_err(|e| not_a_link(&e.to_string()))?;
    let named = text
        .strip_prefix("gitdir:")
        .map(str::trim)
        .filter(|d| !d.is_empty() && !d.contains('\n'))
        .ok_or_else(|| not_a_link("no single gitdir: line"))?;
    let admin = worktree.join(named);
    std::fs::canonicalize(&admin).map_err(|_| LinkError::AdminDirGone { admin })
}

/// Proves that `worktree` (a realpath) is linked to this repository both ways and returns its
/// admin dir: `.git` is a regular file naming `<common>/worktrees/<id>`, and that admin dir's
/// `gitdir` names `worktree/.git` back.
pub fn prove(common_dir: &Path, worktree: &Path) -> Result<PathBuf, LinkError> {
    let admin = admin_dir_of(worktree)?;
    if admin.parent() != Some(worktrees_dir(common_dir).as_path()) {
        return Err(LinkError::ForeignAdminDir { admin });
    }
    names_back(&admin, worktree)?;
    Ok(admin)
}

/// The worktree an admin dir's `gitdir` names (the directory of the `.git` file it names, as a
/// realpath when it exists); `None` when `gitdir` is missing, unreadable or empty. git writes an
/// absolute path, or one relative to the admin dir with `worktree.useRelativePaths`.
pub fn worktree_of(admin: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(admin.join("gitdir")).ok()?;
    let named = text.trim_end_matches('\n');
    if named.is_empty() {
        return None;
    }
    let git_file = admin.join(named);
    std::fs::canonicalize(&git_file)
        .unwrap_or(git_file)
        .parent()
        .map(Path::to_path_buf)
}

/// Proves that the admin dir's `gitdir` names `worktree/.git` (`worktree` a realpath): the way
/// back of the link.
pub(crate) fn names_back(admin: &Path, worktree: &Path) -> Result<(), LinkError> {
    let gitdir = admin.join("gitdir");
    let names = std::fs::read_to_string(&gitdir)
        .map(|t| admin.join(t.trim_end_matches('\n')))
        .map_err(|_| LinkError::AdminDirNamesAnother {
            admin: admin.to_path_buf(),
            names: gitdir.clone(),
        })?;
    // git writes an absolute path, or a relative one with worktree.useRelativePaths: both are
    // compared as realpaths, and a `.git` that is gone on the other side proves nothing.
    let names_canonical = std::fs::canonicalize(&names).unwrap_or(names);
    if names_canonical != worktree.join(".git") {
        return Err(LinkError::AdminDirNamesAnother {
            admin: admin.to_path_buf(),
            names: names_canonical,
        });
    }
    Ok(())
}

/// What a worktree's HEAD file says (`ref: refs/heads/x` or an object id), read from its admin
/// dir without a git process.
pub fn head_of(worktree: &Path) -> Option<String> {
    let admin = admin_dir_of(worktree).ok()?;
    Some(
        std::fs::read_to_string(admin.join("HEAD"))
            .ok()?
            .trim()
            .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worktree_an_admin_dir_names_absolute_or_relative_and_none_for_an_empty_gitdir() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let admin = root.join("repo/.git/worktrees/w");
        let worktree = root.join("w");
        std::fs::create_dir_all(&admin).unwrap();
        std::fs::create_dir_all(&worktree).unwrap();
        std::fs::write(worktree.join(".git"), "gitdir: x\n").unwrap();
        let gitdir = admin.join("gitdir");
        std::fs::write(&gitdir, format!("{}\n", worktree.join(".git").display())).unwrap();
        assert_eq!(worktree_of(&admin), Some(worktree.clone()));
        // worktree.useRelativePaths: relative to the admin dir.
        std::fs::write(&gitdir, "../../../../w/.git\n").unwrap();
        assert_eq!(worktree_of(&admin), Some(worktree));
        std::fs::write(&gitdir, "").unwrap();
        assert_eq!(worktree_of(&admin), None);
        std::fs::remove_file(&gitdir).unwrap();
        assert_eq!(worktree_of(&admin), None);
    }
}
