//! Remotes whose URL is a relative path (`git remote add origin ../origin.git`). git resolves
//! such a path against the top of the worktree it runs in, so from a slot, which lives under the
//! pool, every push and fetch went somewhere else (issue 22 item 11). Before a slot is leased,
//! spawn pins each one: `url.<absolute>.insteadOf <relative>` in the repository's config, the
//! absolute path being what the main worktree resolves it to, so the main worktree goes where it
//! always went and every slot goes there too. The remote's own setting is left as the user wrote
//! it (`git config --unset url.<absolute>.insteadOf` undoes the pin).

use std::path::{Path, PathBuf};

use crate::git::Repo;
use crate::hint::say;
use crate::ops::Result;

/// What was pinned: the key, the relative URL, the absolute one it now stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pinned {
    pub key: String,
    pub url: String,
    pub absolute: PathBuf,
}

/// Pins every relative remote URL of `repo` (none in the common case, read without a git
/// process). A URL naming no directory from the main worktree either is left alone: it is
/// broken everywhere, and git says so.
pub fn pin(repo: &Repo) -> Result<Vec<Pinned>> {
    let relative = repo.relative_remote_urls();
    if relative.is_empty() {
        return Ok(vec![]);
    }
    let git = repo.git();
    let base = main_worktree(repo)?;
    let mut pinned = vec![];
    for (key, url) in relative {
        let Ok(absolute) = std::fs::canonicalize(base.join(&url)) else {
            continue;
        };
        let Some(abs) = absolute.to_str() else {
            continue;
        };
        git.run(&["config", "--add", &format!("url.{abs}.insteadOf"), &url])?;
        pinned.push(Pinned { key, url, absolute });
    }
    Ok(pinned)
}

/// Where git in the main worktree resolves a relative URL: its top (the git dir of a bare
/// repository), the first entry `git worktree list` prints.
fn main_worktree(repo: &Repo) -> Result<PathBuf> {
    let list =
        crate::git::Git::new(&repo.loc.common_dir).run(&["worktree", "list", "--porcelain"])?;
    let first = list
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("worktree "))
        .map(Path::new)
        .unwrap_or(&repo.loc.common_dir);
    Ok(first.to_path_buf())
}

/// What `status` says in a linked worktree whose repository has a relative remote URL spawn has
/// not pinned (set after the last spawn): git resolves it here, so a push from here goes
/// somewhere else than the main worktree's. `None` elsewhere.
pub(crate) fn unpinned_here(repo: &Repo) -> Option<String> {
    if !repo.loc.is_linked() {
        return None;
    }
    let relative = repo.relative_remote_urls();
    let (key, url) = relative.first()?;
    Some(
        say(format!(
            "{key} is the relative path {url:?}, which git resolves from this worktree's top, \
             not the main worktree's: a push or fetch from here goes somewhere else ("
        ))
        .hand("spawn")
        .text(format!(
            " pins it; or git config url.<absolute path>.insteadOf {url:?})"
        ))
        .into(),
    )
}
