//! Names that differ only in case. Task names and branch names are case-sensitive, but on a
//! case-insensitive filesystem (macOS's default) the branches `hand/fix` and `hand/Fix` are one
//! loose ref file: git there reads one as the other, and a task's commits land on another's
//! branch. Spawn refuses such a pair on every platform, so a repository (and a team ledger shared
//! with Macs) never holds one (issue 24 item 3).
//!
//! [`refuse_twins`] runs once the groundwork is laid (one listing of `refs/heads/`, one ledger
//! read, no git process); the intent transaction asks the ledger again ([`task_twin`]), so two
//! spawns racing with `Fix` and `fix` cannot both be recorded.

use super::{OtherTask, SpawnError};
use crate::git::Repo;
use crate::ledger::{Ledger, RepoId, Task};
use crate::ops::{Error, Result};

/// Refuses a spawn of `task` on `branch` when an open task's name, or a local branch's, is
/// theirs but for case. `named`: the branch was given with `--branch`.
pub(super) fn refuse_twins(
    ledger: &mut Ledger,
    repo: &Repo,
    repo_id: &RepoId,
    task: &str,
    branch: &str,
    named: bool,
) -> Result<()> {
    let machine = ledger.machine().to_string();
    let open = ledger.read(|v| v.open_task_ignoring_case(repo_id, task))?;
    if let Some(other) = open.filter(|t| t.name != task) {
        return Err(task_twin(task, &other, &machine));
    }
    let Some(twin) = repo.branches_differing_in_case(branch).into_iter().next() else {
        return Ok(());
    };
    let owner = ledger.read(|v| v.open_task_on_branch(repo_id, &twin))?;
    Err(SpawnError::BranchCaseTwin {
        task: task.to_string(),
        branch: branch.to_string(),
        twin,
        owner: owner.map(|t| t.name),
        named,
    }
    .into())
}

/// The refusal of task `task` while open task `other` has its name but for case; `machine` is
/// the ledger's, to say when `other` is another machine's.
pub(super) fn task_twin(task: &str, other: &Task, machine: &str) -> Error {
    SpawnError::TaskCaseTwin {
        task: task.to_string(),
        other: other_task(other, machine),
    }
    .into()
}

/// `other` as a refusal names it, seen from `machine` (the ledger's).
pub(super) fn other_task(other: &Task, machine: &str) -> OtherTask {
    OtherTask {
        name: other.name.clone(),
        elsewhere: (other.machine != machine)
            .then(|| (other.machine.clone(), other.holder.clone())),
    }
}
