//! Choosing the commit a task starts from: `--base REV`, else the default branch (origin/HEAD's
//! target, else `init.defaultBranch`, else main/master), taking whichever of the local branch and
//! its remote-tracking ref is ahead. No network unless the caller fetched first. A repository
//! with no commit at all is told so, not asked about its default branch.

use crate::git::{Git, Repo};
use crate::ops::Result;
use crate::ops::repo::RepoError;

/// A resolved base: the commit, and how the user would name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Base {
    pub oid: String,
    /// As the user typed it (`release-1.2`, `HEAD~2`, an oid), or the default branch as spawn
    /// took it (`main`, `origin/main`).
    pub label: String,
    /// The full name of the branch or remote-tracking branch the base is (`refs/heads/main`,
    /// `refs/remotes/origin/main`), which the task records to be measured against later;
    /// `None` for a commit named any other way (`HEAD~2`, an oid, a tag, `HEAD`).
    pub full_ref: Option<String>,
}

impl Base {
    fn branch(oid: String, label: String, full_ref: String) -> Self {
        Self {
            oid,
            label,
            full_ref: Some(full_ref),
        }
    }
}

/// The short name of a branch or remote-tracking branch's full name (`refs/heads/release` is
/// `release`, `refs/remotes/origin/main` is `origin/main`), as git shows it.
pub(crate) fn short_ref(full: &str) -> &str {
    full.strip_prefix("refs/heads/")
        .or_else(|| full.strip_prefix("refs/remotes/"))
        .unwrap_or(full)
}

pub(crate) fn resolve(repo: &Repo, git: &Git, rev: Option<&str>) -> Result<Base> {
    if let Some(base) = rev.and_then(|rev| read_in_process(repo, rev)) {
        return Ok(base);
    }
    if let Some(rev) = rev {
        let out = git.output(&[
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &format!("{rev}^{{commit}}"),
        ])?;
        let oid = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !out.status.success() || oid.is_empty() {
            return Err(RepoError::BaseNotACommit {
                rev: rev.to_string(),
            }
            .into());
        }
        return Ok(Base {
            oid,
            label: rev.to_string(),
            full_ref: branch_named(git, rev)?,
        });
    }
    let Some(branch) = default_branch(repo) else {
        return Err(no_commits(repo, git)?
            .unwrap_or(RepoError::NoDefaultBranch)
            .into());
    };
    let local_ref = format!("refs/heads/{branch}");
    let remote_ref = format!("refs/remotes/origin/{branch}");
    let local = repo.ref_oid(&local_ref);
    let remote = repo.ref_oid(&remote_ref);
    let on_local = |oid| Base::branch(oid, branch.clone(), local_ref.clone());
    let on_remote = |oid| Base::branch(oid, format!("origin/{branch}"), remote_ref.clone());
    match (local, remote) {
        (Some(l), Some(r)) if l == r => Ok(on_local(l)),
        (Some(l), Some(r)) => {
            // The remote-tracking ref wins only when it is strictly ahead of the local branch.
            if git.test(&["merge-base", "--is-ancestor", &l, &r])? {
                Ok(on_remote(r))
            } else {
                Ok(on_local(l))
            }
        }
        (Some(l), None) => Ok(on_local(l)),
        (None, Some(r)) => Ok(on_remote(r)),
        (None, None) => Err(no_commits(repo, git)?
            .unwrap_or(RepoError::DefaultBranchUnborn { branch })
            .into()),
    }
}

/// A base git need not be asked about: `HEAD`, or the full name of a branch or remote-tracking
/// branch that exists (what Claude Code's `WorktreeCreate` hands spawn), read by gix. Anything
/// else (`HEAD~2`, a short name a tag could shadow) is left to `git rev-parse`.
fn read_in_process(repo: &Repo, rev: &str) -> Option<Base> {
    if rev == "HEAD" {
        return repo.head_oid().map(|oid| Base {
            oid,
            label: rev.to_string(),
            full_ref: None,
        });
    }
    if !(rev.starts_with("refs/heads/") || rev.starts_with("refs/remotes/")) {
        return None;
    }
    let oid = repo.ref_oid(rev)?;
    Some(Base::branch(
        oid,
        short_ref(rev).to_string(),
        rev.to_string(),
    ))
}

/// The full name of the branch or remote-tracking branch `rev` names, as git reads it (a tag
/// of the same name wins, as it does in git), or `None` when `rev` names a commit some other
/// way. `HEAD` and `@` name whatever is checked out, not a branch the user chose.
fn branch_named(git: &Git, rev: &str) -> Result<Option<String>> {
    if matches!(rev, "HEAD" | "@") {
        return Ok(None);
    }
    let out = git.output(&[
        "rev-parse",
        "--verify",
        "--quiet",
        "--symbolic-full-name",
        "--end-of-options",
        rev,
    ])?;
    let name = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let is_branch = name.starts_with("refs/heads/") || name.starts_with("refs/remotes/");
    Ok((out.status.success() && is_branch).then_some(name))
}

/// The error for a repository with no commit at all (HEAD unborn, no branch, no remote-tracking
/// branch), if this is one: the real reason no default branch can be found, which a newcomer
/// in a fresh `git init` would otherwise read as a configuration problem.
fn no_commits(repo: &Repo, git: &Git) -> Result<Option<RepoError>> {
    if repo.head_oid().is_some() {
        return Ok(None);
    }
    let out = git.output(&[
        "for-each-ref",
        "--count=1",
        "--format=%(objectname)",
        "refs/heads",
        "refs/remotes",
    ])?;
    if !out.status.success() || !out.stdout.trim_ascii().is_empty() {
        return Ok(None);
    }
    Ok(Some(RepoError::NoCommits))
}

/// The default branch's short name.
pub(crate) fn default_branch(repo: &Repo) -> Option<String> {
    if let Some(target) = repo.symref_target("refs/remotes/origin/HEAD")
        && let Some(short) = target.strip_prefix("refs/remotes/origin/")
    {
        return Some(short.to_string());
    }
    let exists = |b: &str| {
        repo.ref_oid(&format!("refs/heads/{b}")).is_some()
            || repo.ref_oid(&format!("refs/remotes/origin/{b}")).is_some()
    };
    if let Some(configured) = repo
        .config_string("init.defaultBranch")
        .filter(|b| exists(b))
    {
        return Some(configured);
    }
    ["main", "master"]
        .into_iter()
        .find(|b| exists(b))
        .map(str::to_string)
}
