//! Branch fencing (`hand.fenceBranches`): a push that updates the branch of a live task is
//! refused unless it presents that task's current lease.
//!
//! The fence is keyed on what the remote sees: the normalized URL of the remote and the branch
//! there, as issue leases are keyed on the normalized origin URL. A task records the remote its
//! branch is pushed to (origin's push URL at spawn time); a push to the same remote and branch is
//! fenced wherever the pushing clone is, so a second clone of the same origin on the same ledger
//! cannot push over a live task's branch (issue 10), while the same branch name on another
//! remote is another branch. Tasks recorded before the ledger knew remotes (schema version 3 and
//! older) are fenced by their repository, as they were.
//!
//! A room of `ops` (issue 26): with its children, what a holder presents and how it is judged:
//! the credential (`credential`), the same lease as push options (`credential_push`), the
//! verdict every hook and `status`/`check` share (`verdict`), and the branch fence here.
//!
//! The query: one indexed query per branch (`View::fence_candidates`), the pusher's own lease left
//! out in SQL, a candidate's tenure read before its task row, and the remote's key worked out only
//! when there is a branch to fence.

use std::path::Path;

use crate::git::Repo;
use crate::git::url::normalize_remote_url;
use crate::ledger::{LeaseId, Task, Tenure, View};

pub mod credential;
pub mod credential_push;
pub mod verdict;

/// The remote a new task's branch is recorded against, and so the one a local ref update is
/// fenced on: origin's push URL (`pushurl`, rewrites applied), normalized, a local path resolved
/// from the main worktree. `None` for a repository without an origin.
pub(crate) fn task_remote(repo: &Repo) -> Option<String> {
    repo.push_url("origin")
        .map(|url| remote_key(&url, &repo.main_dir()))
}

/// The remote a push goes to, from the pre-push hook's `<url>` argument. git resolves a relative
/// local path from the worktree it pushes from, which is where the hook runs (`cwd`).
pub(crate) fn pushed_remote(url: &str, cwd: &Path) -> String {
    remote_key(url, cwd)
}

/// One remote, however it is spelled: [`normalize_remote_url`], with a local path (or a
/// `file://` URL, whatever its host) first made absolute against `base` and resolved as git
/// resolves it ([`repository_at`]: `/srv/x` may be `/srv/x.git`, symlinks and `..` followed),
/// so two clones that name one bare repository differently agree (issue 22).
fn remote_key(url: &str, base: &Path) -> String {
    if let Some(path) = crate::git::url::local_path(url)
        && let Some(real) = repository_at(&base.join(path))
    {
        return normalize_remote_url(&real.to_string_lossy());
    }
    normalize_remote_url(url)
}

/// The repository git opens for the local path `path`, resolved: git's own order (`enter_repo`
/// tries `<path>/.git`, `<path>`, `<path>.git/.git`, `<path>.git`, taking the first that is a
/// git directory or a gitfile), else the path itself when it exists.
fn repository_at(path: &Path) -> Option<std::path::PathBuf> {
    let is_git_dir = |p: &Path| p.join("HEAD").is_file() && p.join("objects").is_dir();
    for suffix in ["/.git", "", ".git/.git", ".git"] {
        let mut candidate = path.as_os_str().to_owned();
        candidate.push(suffix);
        let candidate = std::path::PathBuf::from(candidate);
        let found = std::fs::metadata(&candidate)
            .is_ok_and(|m| m.is_file() || (m.is_dir() && is_git_dir(&candidate)));
        if found {
            return std::fs::canonicalize(&candidate).ok();
        }
    }
    std::fs::canonicalize(path).ok()
}

/// The branches `refnames` update (`refs/heads/<branch>`; any other ref fences nothing), sorted
/// and each once: what [`fenced`] looks up, one query per branch.
pub fn branches<'a>(refnames: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut branches: Vec<String> = refnames
        .into_iter()
        .filter_map(|name| name.strip_prefix("refs/heads/"))
        .map(str::to_string)
        .collect();
    branches.sort();
    branches.dedup();
    branches
}

/// A live task whose branch the push would update, with the branch and the tenure.
pub(crate) type Fenced = (String, Task, Tenure);

/// The first open task, among those a push of `branches` to `remote` would update, whose slot
/// lease is live and is not `presented` (the pusher's current lease). Without a remote (the hook
/// got no URL) the repository's own newest task on the branch is fenced, as before remotes were
/// recorded. One indexed query per branch, in the caller's read snapshot: it returns only the
/// other tasks' ids and leases, so a push of the pusher's own branch reads no row beyond it, and
/// a candidate's tenure is read before its task, so a stale one's wide task row is never read.
pub fn fenced(
    view: &View<'_>,
    remote: Option<&str>,
    common_dir: &Path,
    branches: &[String],
    presented: Option<&LeaseId>,
) -> crate::ledger::Result<Option<Fenced>> {
    for branch in branches {
        let found = match remote {
            Some(remote) => live_candidate(view, remote, common_dir, branch, presented)?,
            None => live_in_repo(view, common_dir, branch, presented)?,
        };
        if let Some((task, tenure)) = found {
            return Ok(Some((branch.clone(), task, tenure)));
        }
    }
    Ok(None)
}

/// The newest open task pushed to `remote` (or recorded without a remote in this repository)
/// on `branch` whose lease is live and not `presented`: each candidate's tenure first, its task
/// row only for the one that fences.
fn live_candidate(
    view: &View<'_>,
    remote: &str,
    common_dir: &Path,
    branch: &str,
    presented: Option<&LeaseId>,
) -> crate::ledger::Result<Option<(Task, Tenure)>> {
    for (id, lease_id) in view.fence_candidates(remote, common_dir, branch, presented)? {
        let Some(tenure) = live_tenure(view, &lease_id, presented)? else {
            continue;
        };
        if let Some(task) = view.task(id)? {
            return Ok(Some((task, tenure)));
        }
    }
    Ok(None)
}

/// This repository's newest open task on `branch`, when its lease is live and not `presented`.
fn live_in_repo(
    view: &View<'_>,
    common_dir: &Path,
    branch: &str,
    presented: Option<&LeaseId>,
) -> crate::ledger::Result<Option<(Task, Tenure)>> {
    let Some(repo) = view.repo_by_dir(common_dir)? else {
        return Ok(None);
    };
    let Some(task) = view.open_task_on_branch(&repo.id, branch)? else {
        return Ok(None);
    };
    let Some(lease_id) = task.lease_id.as_ref() else {
        return Ok(None);
    };
    Ok(live_tenure(view, lease_id, presented)?.map(|tenure| (task, tenure)))
}

/// The tenure of `lease_id` when it is live and not the one the pusher `presented` (pre-push's
/// fence and the server's pre-receive alike).
pub(super) fn live_tenure(
    view: &View<'_>,
    lease_id: &LeaseId,
    presented: Option<&LeaseId>,
) -> crate::ledger::Result<Option<Tenure>> {
    Ok(view
        .tenure(lease_id)?
        .filter(|t| t.is_live(view.now()) && presented != Some(&t.lease_id)))
}

#[cfg(test)]
mod tests {
    use super::remote_key;
    use std::path::Path;

    #[test]
    fn a_local_remote_is_one_key_however_it_is_spelled() {
        let dir = tempfile::tempdir().unwrap();
        let bare = dir.path().join("origin.git");
        std::fs::create_dir(&bare).unwrap();
        std::fs::create_dir(dir.path().join("clone")).unwrap();
        let want = remote_key(bare.to_str().unwrap(), Path::new("/"));
        assert!(!want.ends_with(".git"), "{want}");
        let clone = dir.path().join("clone");
        for spelling in [
            format!("file://{}", bare.display()),
            "../origin.git".to_string(),
            format!("{}/../origin.git/", clone.display()),
        ] {
            assert_eq!(remote_key(&spelling, &clone), want, "{spelling}");
        }
        assert_eq!(
            remote_key("git@github.com:o/r.git", &clone),
            remote_key("https://github.com/o/r", Path::new("/"))
        );
    }
}
