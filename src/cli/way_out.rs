//! The exit code and the way out of each typed error an operation returns: the operation says
//! what happened (the error's facts and its message), this says which kind of failure it is and
//! which commands get the user out of it.

use std::path::Path;

use super::error::{Failure, Kind};
use crate::hint::{Hint, cd_to_slot, say};
use crate::ops::task::{TaskError, TeardownError};

impl From<TaskError> for Failure {
    fn from(e: TaskError) -> Self {
        let (kind, hints) = match &e {
            TaskError::SlotNotOnDisk { .. } => (
                Kind::Precondition,
                vec![Hint::hand("doctor --repair").why("settles a task whose slot is gone")],
            ),
            TaskError::NoSuchTask { .. } | TaskError::NoOpenTask { .. } => {
                (Kind::Failed, vec![Hint::hand("list")])
            }
            TaskError::Done { name, .. } => (
                Kind::Precondition,
                vec![Hint::hand(format!("spawn {name}")).why("to work on it again")],
            ),
            TaskError::NoTasksHere => (Kind::Failed, vec![Hint::hand("spawn <task>")]),
            TaskError::NotASlot
            | TaskError::CredentialUnreadable { .. }
            | TaskError::NoTaskHolds { .. } => (Kind::Usage, vec![Hint::hand("list")]),
            TaskError::CredentialOfAnotherSlot { task, ending: true } => {
                (Kind::Usage, vec![Hint::hand(format!("done {task}"))])
            }
            TaskError::CredentialOfAnotherSlot {
                task,
                ending: false,
            } => (
                Kind::Usage,
                vec![Hint::run(cd_to_slot(task)).why("its slot")],
            ),
            TaskError::NoLeaseId { task } => {
                (Kind::Failed, vec![Hint::hand(format!("teardown {task}"))])
            }
            TaskError::IssueLeaseLost { task, .. } => (
                Kind::Precondition,
                vec![Hint::hand(format!("teardown {task}"))],
            ),
            TaskError::LeaseLost { task, branch, .. } => (
                Kind::Precondition,
                vec![
                    Hint::hand(format!("teardown {task}")).why(format!("commits stay on {branch}")),
                ],
            ),
            TaskError::LeaseUnknown { task } => (
                Kind::Failed,
                vec![Hint::hand(format!("teardown {task}")).why("then spawn it again")],
            ),
        };
        Failure {
            kind,
            message: e.to_string(),
            hints,
        }
    }
}

impl From<TeardownError> for Failure {
    fn from(e: TeardownError) -> Self {
        let (kind, hints) = match &e {
            TeardownError::NoSuchTask { .. } => (Kind::Failed, vec![Hint::hand("list --all")]),
            TeardownError::StillSpawning { .. } => (
                Kind::Precondition,
                vec![Hint::hand("doctor --repair").why("settles a crashed spawn")],
            ),
            TeardownError::InProgress { task, .. } => (
                Kind::Precondition,
                vec![
                    Hint::run(say("wait for it to finish, then: ").hand("list --all")),
                    Hint::hand(format!("teardown {task}"))
                        .why("again, if that process dies before it is done"),
                ],
            ),
            TeardownError::OnTeardownFailed { task, .. } => (
                Kind::Failed,
                vec![
                    Hint::hand(format!("teardown {task}")).why("again, once it is fixed"),
                    Hint::hand(format!("teardown {task} --no-setup"))
                        .why("or without hand.onTeardown"),
                ],
            ),
            TeardownError::CutOff { task, .. } => (
                Kind::Precondition,
                vec![
                    Hint::hand(format!("teardown {task}"))
                        .why("again once the server answers: it resumes where this one stopped"),
                ],
            ),
            TeardownError::Branchless { task, slot, .. } => (
                Kind::Precondition,
                vec![
                    Hint::run(format!(
                        "git -C {} branch rescue/{task} HEAD",
                        slot.display()
                    ))
                    .why("keep them, then teardown again"),
                ],
            ),
            TeardownError::CannotProve { slot, .. } => (
                Kind::Precondition,
                vec![Hint::run(format!("git -C {} status", slot.display()))],
            ),
            TeardownError::NotLanded {
                task,
                branch,
                slot,
                dirty,
                unlanded,
            } => (
                Kind::Precondition,
                not_landed_hints(task, branch, slot, dirty, unlanded),
            ),
        };
        Failure {
            kind,
            message: e.to_string(),
            hints,
        }
    }
}

/// The commands that get a teardown refused for unlanded work going, one per cause: changes
/// are committed or discarded, commits are pushed. Untracked files alone are usually scratch:
/// their hints look at them, commit them, set them aside or discard them, and never say push
/// (issues 11 and 13).
fn not_landed_hints(
    task: &str,
    branch: &str,
    slot: &Path,
    dirty: &[String],
    unlanded: &[String],
) -> Vec<Hint> {
    let p = slot.display();
    let untracked_only = !dirty.is_empty() && dirty.iter().all(|f| f.starts_with("??"));
    let mut hints = vec![];
    if untracked_only {
        hints.push(
            Hint::run(format!("git -C {p} status"))
                .why("see the untracked files; delete the ones you do not need"),
        );
        hints.push(
            Hint::run(format!(
                "git -C {p} add -A && git -C {p} commit -m <message>"
            ))
            .why(format!("or keep them as a commit on {branch}")),
        );
        hints.push(
            Hint::run(format!("git -C {p} stash --include-untracked"))
                .why("or set them aside (git stash pop brings them back)"),
        );
    } else if !dirty.is_empty() {
        hints.push(
            Hint::run(format!(
                "git -C {p} add -A && git -C {p} commit -m <message>"
            ))
            .why("keep the changes as a commit, then push it"),
        );
    }
    if !unlanded.is_empty() {
        hints
            .push(Hint::run(format!("git -C {p} push -u origin {branch}")).why("land the commits"));
    }
    if untracked_only {
        hints.push(Hint::hand(format!("teardown {task} --force")).why(format!(
            "discard the untracked files (ignored ones stay); commits stay on {branch}"
        )));
    } else if !dirty.is_empty() {
        hints.push(Hint::hand(format!("teardown {task} --force")).why(format!(
            "discard uncommitted and untracked files (ignored ones stay); commits stay on {branch}"
        )));
    } else {
        hints.push(Hint::hand(format!("teardown {task} --force")).why(format!(
            "end the task anyway; the commits stay on local branch {branch}"
        )));
    }
    hints
}
