//! Names that differ only in case. Task names and branch names are case-sensitive, but on a
//! case-insensitive filesystem (macOS's default) the branches `hand/fix` and `hand/Fix` are one
//! loose ref file: git there reads one as the other, and a task's commits land on another's
//! branch. Spawn refuses such a pair on every platform, so a repository (and a team ledger shared
//! with Macs) never holds one (issue 24 item 3).
//!
//! [`refuse_twins`] runs once the groundwork is laid (one listing of `refs/heads/`, one ledger
//! read, no git process); the intent transaction asks the ledger again ([`task_twin`]), so two
//! spawns racing with `Fix` and `fix` cannot both be recorded.

use crate::git::Repo;
use crate::hint::{Hint, say};
use crate::ledger::{Ledger, RepoId, Task};
use crate::ops::{Error, Result};

/// Why two names that differ only in case cannot both be used, for every message here.
const WHY: &str = "branches whose names differ only in case are one ref file on a \
                   case-insensitive filesystem (macOS's default), so git-hand refuses such a pair \
                   on every platform";

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
    let whose = match &owner {
        Some(t) => format!("open task {}'s branch {twin}", t.name),
        None => format!("the existing branch {twin}"),
    };
    let mut hints = vec![if named {
        Hint::hand(format!("spawn {task} --branch {branch}-2")).why("work on another branch")
    } else {
        Hint::hand(format!("spawn {task}-2")).why("work under another name")
    }];
    hints.push(match &owner {
        Some(t) => Hint::hand(format!("teardown {}", t.name)).why("or end that task first"),
        None => Hint::hand(format!("spawn {task} --branch {twin}")).why("or continue that branch"),
    });
    Err(Error::precondition(
        format!("branch {branch} differs only in case from {whose}: {WHY}; nothing was created"),
        hints,
    ))
}

/// The refusal of task `task` while open task `other` has its name but for case; `machine` is
/// the ledger's, to say when `other` is another machine's.
pub(super) fn task_twin(task: &str, other: &Task, machine: &str) -> Error {
    let end = if other.machine == machine {
        Hint::hand(format!("teardown {}", other.name)).why("or end that task first")
    } else {
        ask_to_end(other)
    };
    let on = if other.machine == machine {
        String::new()
    } else {
        format!(" on machine {}, held by {}", other.machine, other.holder)
    };
    Error::precondition(
        format!(
            "task {task} differs only in case from open task {}{on}: {WHY}; nothing was created",
            other.name
        ),
        vec![
            Hint::hand(format!("spawn {task}-2")).why("work under another name"),
            end,
        ],
    )
}

/// Ask the holder of `other`, a task of another machine, to end it there.
pub(super) fn ask_to_end(other: &Task) -> Hint {
    Hint::run(
        say(format!(
            "ask {} to run on {}: ",
            other.holder, other.machine
        ))
        .hand(format!("teardown {}", other.name)),
    )
}
