//! `git hand prune --branches`: delete the branches that done tasks leave behind, once every
//! commit on them has landed. A dry run unless told otherwise; every branch kept is listed with
//! the reason.
//!
//! Which branches: the `hand/*` branch of a task of this repository that is done, and only
//! when no open task uses it. A `hand/*` branch no task names is not prune's (someone made it
//! by hand), nor is a branch a task was given with `--branch` outside `hand/` (the user's own).
//!
//! Landed: every commit reachable from the branch is reachable from the branch its task was
//! based on (`spawn --base release`, recorded since schema version 5), from the default branch
//! (the base spawn picks without `--base`) or from a remote-tracking ref (`git log <tip> --not
//! --remotes <base> <default>` lists nothing). `git branch -d` is not enough: it asks only about HEAD
//! or the branch's upstream. A branch checked out in any worktree is kept.
//!
//! The deletion is a compare-and-delete (`git update-ref -d refs/heads/<b> <oid>`): a branch
//! that moved after prune proved it landed is kept, and so is one an open task took meanwhile.

use std::collections::{BTreeMap, BTreeSet};

use super::Run;
use crate::git::{Git, Repo};
use crate::ledger::{Ledger, TaskState, Tasks};
use crate::ops::{Context, Result, pool::safety};

/// The branches prune considers: those spawn names, `hand/<task>`.
const TASK_BRANCHES: &str = "hand/";

#[derive(Debug, Clone)]
pub struct BranchReport {
    /// Branches deleted (or, in a dry run, that would be).
    pub deleted: Vec<Deleted>,
    /// Branches kept, and why.
    pub kept: Vec<KeptBranch>,
    pub dry_run: bool,
}

/// A branch prune deleted: where it pointed, so `git branch <branch> <oid>` brings it back.
#[derive(Debug, Clone)]
pub struct Deleted {
    pub branch: String,
    pub oid: String,
    /// The done tasks that used it.
    pub tasks: Vec<String>,
}

/// A branch prune left in place.
#[derive(Debug, Clone)]
pub struct KeptBranch {
    pub branch: String,
    pub why: Vec<String>,
    /// The command that shows what kept it, when there is one to run.
    pub hint: Option<String>,
}

impl KeptBranch {
    fn new(branch: &str, why: String, hint: Option<String>) -> Self {
        Self {
            branch: branch.to_string(),
            why: vec![why],
            hint,
        }
    }
}

/// What the ledger says of one branch of this repository.
#[derive(Default)]
struct Users {
    /// Done tasks that used it.
    done: Vec<String>,
    /// The refs those tasks were based on (full names), where they recorded one.
    bases: BTreeSet<String>,
    /// An open task that uses it, and its state.
    open: Option<(String, TaskState)>,
}

pub fn prune_branches(ctx: &Context, ledger: &mut Ledger, run: Run) -> Result<BranchReport> {
    let repo = ctx.repo()?;
    let mut report = BranchReport {
        deleted: vec![],
        kept: vec![],
        dry_run: run == Run::DryRun,
    };
    let Some(repo_id) = ctx.repo_id(ledger)? else {
        return Ok(report);
    };
    let all = ledger.read(|v| v.tasks(&repo_id, Tasks::All))?;
    let mut users: BTreeMap<String, Users> = BTreeMap::new();
    for task in all {
        let entry = users.entry(task.branch.clone()).or_default();
        if task.state == TaskState::Done {
            entry.done.push(task.name);
            entry.bases.extend(task.base_ref);
        } else {
            entry.open = Some((task.name, task.state));
        }
    }
    let git = repo.git();
    let landing = Landing::of(repo);
    let checked_out = checked_out(&git)?;
    for (branch, users) in users {
        if !branch.starts_with(TASK_BRANCHES) || users.done.is_empty() {
            continue;
        }
        let landing = landing.and_bases(repo, &users.bases);
        match judge(repo, &git, &landing, &checked_out, &branch, &users) {
            Judged::Gone => {}
            Judged::Kept(kept) => report.kept.push(kept),
            Judged::Landed(oid) => report.deleted.push(Deleted {
                branch,
                oid,
                tasks: users.done,
            }),
        }
    }
    if run == Run::Remove {
        let landed = std::mem::take(&mut report.deleted);
        for d in landed {
            match delete(&git, ledger, &repo_id, &d)? {
                None => report.deleted.push(d),
                Some(kept) => report.kept.push(kept),
            }
        }
    }
    Ok(report)
}

/// Where a commit counts as landed: local branches (the default branch, if it exists here, and
/// the branches the tasks were based on) and every remote-tracking ref.
struct Landing {
    /// Short names of local branches, the default one last.
    branches: Vec<String>,
}

impl Landing {
    fn of(repo: &Repo) -> Self {
        let default = crate::ops::repo::base::default_branch(repo)
            .filter(|b| repo.ref_oid(&format!("refs/heads/{b}")).is_some());
        Self {
            branches: default.into_iter().collect(),
        }
    }

    /// This landing and the local branches among `bases` (full names) that still exist. A
    /// remote-tracking base is already among `--remotes`.
    fn and_bases(&self, repo: &Repo, bases: &BTreeSet<String>) -> Self {
        let mut branches: Vec<String> = bases
            .iter()
            .filter(|full| repo.ref_oid(full).is_some())
            .filter_map(|full| full.strip_prefix("refs/heads/"))
            .filter(|b| !self.branches.iter().any(|d| d == b))
            .map(str::to_string)
            .collect();
        branches.extend(self.branches.iter().cloned());
        Self { branches }
    }

    /// The refs whose history is landed, for `git log <tip> --not <these>`.
    fn refs(&self) -> Vec<String> {
        let mut refs = vec!["--remotes".to_string()];
        refs.extend(self.branches.iter().map(|b| format!("refs/heads/{b}")));
        refs
    }

    /// The same refs as a person types them, for a hint.
    fn typed(&self) -> String {
        let mut typed = vec!["--remotes"];
        typed.extend(self.branches.iter().map(String::as_str));
        typed.join(" ")
    }

    /// "main nor a remote-tracking branch", as a kept branch's reason says it.
    fn words(&self) -> String {
        if self.branches.is_empty() {
            "no remote-tracking branch (and no default branch here)".to_string()
        } else {
            format!(
                "neither {} nor a remote-tracking branch",
                self.branches.join(", ")
            )
        }
    }
}

enum Judged {
    /// No such branch any more: nothing to say.
    Gone,
    Kept(KeptBranch),
    /// Every commit landed; the branch points at this commit.
    Landed(String),
}

/// Whether a done task's branch may go. Only reads. Fails closed: what cannot be proven keeps it.
fn judge(
    repo: &Repo,
    git: &Git,
    landing: &Landing,
    checked_out: &BTreeMap<String, String>,
    branch: &str,
    users: &Users,
) -> Judged {
    if let Some((task, state)) = &users.open {
        return Judged::Kept(KeptBranch::new(
            branch,
            format!("task {task} is {state} on it"),
            None,
        ));
    }
    let Some(tip) = repo.ref_oid(&format!("refs/heads/{branch}")) else {
        return Judged::Gone;
    };
    if let Some(path) = checked_out.get(branch) {
        return Judged::Kept(KeptBranch::new(
            branch,
            format!("checked out in {path}"),
            None,
        ));
    }
    let refs = landing.refs();
    let refs: Vec<&str> = refs.iter().map(String::as_str).collect();
    match safety::commits_only_in(git, &[&tip], &refs, &[]) {
        Ok(unlanded) if unlanded.is_empty() => Judged::Landed(tip),
        Ok(unlanded) => {
            let why = format!(
                "{} commit(s) on {}, e.g. {}",
                unlanded.len(),
                landing.words(),
                unlanded[0]
            );
            let hint = format!(
                "git log --oneline {branch} --not {}   # push or merge them, then prune again",
                landing.typed()
            );
            Judged::Kept(KeptBranch::new(branch, why, Some(hint)))
        }
        Err(e) => Judged::Kept(KeptBranch::new(
            branch,
            format!("cannot prove its commits landed: {e}"),
            None,
        )),
    }
}

/// Deletes one landed branch if it still points where prune proved it landed and no open task
/// took it since; `Some` says why it stayed.
fn delete(
    git: &Git,
    ledger: &mut Ledger,
    repo_id: &crate::ledger::RepoId,
    d: &Deleted,
) -> Result<Option<KeptBranch>> {
    // A spawn that names the branch records its task before git checks it out: asked last,
    // the ledger leaves only the time of one git command for a spawn to slip in.
    if let Some(task) = ledger.read(|v| v.open_task_on_branch(repo_id, &d.branch))? {
        let why = format!("task {} took it while prune ran", task.name);
        return Ok(Some(KeptBranch::new(&d.branch, why, None)));
    }
    let name = format!("refs/heads/{}", d.branch);
    let out = git.output(&["update-ref", "-d", &name, &d.oid])?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let why = format!("it moved while prune ran ({})", stderr.trim());
        return Ok(Some(KeptBranch::new(&d.branch, why, None)));
    }
    // `git branch -d` drops the branch's section too; without it, a branch made later under
    // the same name would inherit the old upstream. There may be none.
    let _ = git.output(&[
        "config",
        "--remove-section",
        &format!("branch.{}", d.branch),
    ]);
    Ok(None)
}

/// The branches checked out in some worktree of the repository (the main one too), and where.
fn checked_out(git: &Git) -> Result<BTreeMap<String, String>> {
    let list = git.run(&["worktree", "list", "--porcelain"])?;
    let mut out = BTreeMap::new();
    let mut path = "";
    for line in list.lines() {
        if let Some(p) = line.strip_prefix("worktree ") {
            path = p;
        } else if let Some(b) = line.strip_prefix("branch refs/heads/") {
            out.insert(b.to_string(), path.to_string());
        }
    }
    Ok(out)
}
