//! Why a verb could not find the task it was asked about, renew it or tear it down: the facts
//! of each case.
//! The message says what is still true; the exit code and the commands that get the user out
//! of it are `cli`'s (`cli::way_out`).

use std::path::PathBuf;

use crate::ledger::{EndReason, Fate, LeaseId};
use crate::ops::Kind;
use crate::ops::claude::SessionId;
use crate::ops::fence::credential::LEASE_ENV;

#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    /// The task's row names a slot that is not on disk.
    #[error("task {task}'s slot is not on disk")]
    SlotNotOnDisk { task: String },
    /// No task of this repository, open or done, has the name.
    #[error("there is no task named {name} in this repository")]
    NoSuchTask { name: String },
    /// Only a done task had the name.
    #[error("task {name} is done ({}); its slot is free for other tasks", ended(*reason))]
    Done {
        name: String,
        reason: Option<EndReason>,
    },
    /// No open task has the name (`resolve_task`'s plainer question).
    #[error("there is no open task named {name}")]
    NoOpenTask { name: String },
    /// The repository has never had a task.
    #[error("git-hand has no tasks in this repository")]
    NoTasksHere,
    /// Nothing was named, and the current worktree is no slot a task holds.
    #[error("this worktree is not a leased slot; name the task")]
    NotASlot,
    /// The credential in the environment cannot be read (`why` says how).
    #[error("{why}; name the task")]
    CredentialUnreadable { why: String },
    /// The credential in the environment names a lease no open task holds.
    #[error("{LEASE_ENV} names lease {lease}, which no task holds; name the task")]
    NoTaskHolds { lease: LeaseId },
    /// The credential in the environment is another worktree's task's. `ending`: the verb ends
    /// a task (`done`), so the way out is to end that one by name, not to go to its slot.
    #[error(
        "the credential in the environment is task {task}'s, whose slot is not this worktree; name the task"
    )]
    CredentialOfAnotherSlot { task: String, ending: bool },
    /// A task row from an older ledger, with no lease id to renew by.
    #[error("task {task} has no lease id (a row from an older ledger)")]
    NoLeaseId { task: String },
    /// The slot lease expired or was released; `now_held_by` is its new holder and token.
    #[error(
        "task {task}'s lease is no longer live (it expired or was released){}",
        held_by(now_held_by)
    )]
    LeaseLost {
        task: String,
        branch: String,
        now_held_by: Option<(String, i64)>,
    },
    /// The issue lease expired or was released: nothing was renewed.
    #[error("task {task}'s issue lease ({issue}) is no longer live; nothing was renewed")]
    IssueLeaseLost { task: String, issue: String },
    /// The task's lease id is one the ledger has no tenure of.
    #[error("task {task} names a lease the ledger does not know")]
    LeaseUnknown { task: String },
    /// `log --task` found no task of the name; `this_repo`: it looked in this repository only.
    #[error(
        "there is no task named {name} in {}",
        if *this_repo { "this repository" } else { "the ledger" }
    )]
    NotInLog { name: String, this_repo: bool },
    /// `--exec` was given no command to run in the spawned task's slot.
    #[error("--exec needs a command after --")]
    ExecNeedsCommand { task: String },
    /// The `--exec` command could not be started (`reason`); the task stays active.
    #[error("cannot run {program}: {reason}")]
    CannotExec {
        task: String,
        program: String,
        reason: String,
    },
    /// Waiting for the `--exec` command failed (`reason`); the task stays active.
    #[error("waiting for the command failed: {reason}")]
    ExecWaitFailed { task: String, reason: String },
    /// `--session`'s value is not a session id.
    #[error(
        "--session {}: not a session id ({}, as Claude Code's CLAUDE_CODE_SESSION_ID)",
        crate::shown::shown(text),
        SessionId::RULE
    )]
    NotASessionId { text: String },
    /// The session has no open task in this repository.
    #[error("session {session} has no open task in this repository")]
    SessionHasNoTask { session: String },
    /// The session has several open tasks (each named with the worktree it asked for) and none
    /// is its own worktree alone: `path` cannot choose.
    #[error(
        "session {session} has {} open tasks (one for each worktree it asked for); name the task",
        tasks.len()
    )]
    SessionHasTasks {
        session: String,
        tasks: Vec<(String, String)>,
    },
}

impl TaskError {
    pub fn kind(&self) -> Kind {
        match self {
            // Bad input: what was named, or presented, names no task here.
            TaskError::NotASlot
            | TaskError::CredentialUnreadable { .. }
            | TaskError::NoTaskHolds { .. }
            | TaskError::CredentialOfAnotherSlot { .. }
            | TaskError::ExecNeedsCommand { .. }
            | TaskError::NotASessionId { .. }
            | TaskError::SessionHasTasks { .. } => Kind::Usage,
            // The task is there, but not in a state this verb can act on.
            TaskError::SlotNotOnDisk { .. }
            | TaskError::Done { .. }
            | TaskError::LeaseLost { .. }
            | TaskError::IssueLeaseLost { .. } => Kind::Precondition,
            TaskError::NoSuchTask { .. }
            | TaskError::NoOpenTask { .. }
            | TaskError::NoTasksHere
            | TaskError::NoLeaseId { .. }
            | TaskError::LeaseUnknown { .. }
            | TaskError::NotInLog { .. }
            | TaskError::CannotExec { .. }
            | TaskError::ExecWaitFailed { .. }
            | TaskError::SessionHasNoTask { .. } => Kind::Failed,
        }
    }
}

fn ended(reason: Option<EndReason>) -> String {
    reason.map_or_else(|| "ended".into(), |r| r.to_string())
}

fn held_by(holder: &Option<(String, i64)>) -> String {
    holder
        .as_ref()
        .map(|(who, token)| format!("; the slot is now held by {who} (token {token})"))
        .unwrap_or_default()
}

/// Why `teardown` stopped: the facts; `cli` says which commands get it going again.
#[derive(Debug, thiserror::Error)]
pub enum TeardownError {
    /// No task of this repository, open or done, has the name.
    #[error("there is no task named {name} in this repository")]
    NoSuchTask { name: String },
    /// The task is `spawning`: its spawn runs, or crashed and is doctor's to settle.
    #[error("task {task} is still spawning (or its spawn crashed)")]
    StillSpawning { task: String },
    /// Another live process (`pid`) is tearing the task down.
    #[error("task {task} is already being torn down by process {pid}; nothing was changed")]
    InProgress { task: String, pid: i64 },
    /// `hand.onTeardown` failed (`reason`): the teardown stopped before it changed anything.
    #[error("{reason}; nothing was discarded and task {task} is still active")]
    OnTeardownFailed { task: String, reason: String },
    /// The connection to the team ledger broke once the slot was pinned: how far the teardown
    /// got, and whether its last step may have been recorded (`fate`).
    #[error(
        "the connection to the team ledger at {at} broke ({reason}) while task {task} was being \
         torn down, {}; the task is left tearing-down{}; its commits stay on {branch}",
        reached.words(branch),
        maybe_recorded(*fate)
    )]
    CutOff {
        task: String,
        branch: String,
        at: String,
        reason: String,
        reached: Reached,
        fate: Fate,
    },
    /// Commits reachable from the slot's detached HEAD alone: teardown would lose them, with
    /// or without `--force`.
    #[error(
        "task {task} has commits on no branch, which teardown would lose:\n{}",
        indent(commits)
    )]
    Branchless {
        task: String,
        slot: PathBuf,
        commits: Vec<String>,
    },
    /// git could not answer whether the slot holds `what`: nothing was changed (fail closed).
    #[error("cannot prove task {task} holds no {what}: {reason}; nothing was changed")]
    CannotProve {
        task: String,
        slot: PathBuf,
        what: &'static str,
        reason: String,
    },
    /// Work that is not landed, without `--force`: the files not committed (as `git status
    /// --porcelain` shows them) and the commits on no remote-tracking branch nor in the base.
    #[error(
        "task {task} has work that is not landed; nothing was changed{}",
        not_landed(dirty, unlanded)
    )]
    NotLanded {
        task: String,
        branch: String,
        slot: PathBuf,
        dirty: Vec<String>,
        unlanded: Vec<String>,
    },
}

impl TeardownError {
    pub fn kind(&self) -> Kind {
        match self {
            TeardownError::NoSuchTask { .. } | TeardownError::OnTeardownFailed { .. } => {
                Kind::Failed
            }
            TeardownError::StillSpawning { .. }
            | TeardownError::InProgress { .. }
            | TeardownError::CutOff { .. }
            | TeardownError::Branchless { .. }
            | TeardownError::CannotProve { .. }
            | TeardownError::NotLanded { .. } => Kind::Precondition,
        }
    }
}

/// How far a teardown got once it pinned the slot's lease, for the error that says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reached {
    /// The task is `tearing-down`; the slot's files are as they were.
    Pinned,
    /// Uncommitted changes were discarded (`--force`); untracked files may be left.
    Discarded,
    /// The slot was detached from the task's branch.
    Detached,
    /// The slot's lease was released; only the task row was left to settle.
    Released,
}

impl Reached {
    fn words(self, branch: &str) -> String {
        match self {
            Reached::Pinned => "before its files were touched".into(),
            Reached::Discarded => "after uncommitted changes were discarded (--force)".into(),
            Reached::Detached => {
                format!("after the slot was detached from {branch} (its files kept)")
            }
            Reached::Released => {
                format!("after the slot was detached from {branch} and its lease released")
            }
        }
    }
}

fn maybe_recorded(fate: Fate) -> &'static str {
    match fate {
        Fate::NothingWritten => "",
        Fate::Unknown => " (its last step may or may not have been recorded)",
    }
}

fn not_landed(dirty: &[String], unlanded: &[String]) -> String {
    let mut text = String::new();
    if !dirty.is_empty() {
        text.push_str(&format!("\nuncommitted or untracked:\n{}", indent(dirty)));
    }
    if !unlanded.is_empty() {
        text.push_str(&format!(
            "\ncommits on no remote-tracking branch and not in the base:\n{}",
            indent(unlanded)
        ));
    }
    text
}

/// Lines indented under a message, at most 20 of them.
fn indent(lines: &[String]) -> String {
    let shown: Vec<String> = lines.iter().take(20).map(|l| format!("  {l}")).collect();
    let more = lines.len().saturating_sub(20);
    if more > 0 {
        format!("{}\n  ... and {more} more", shown.join("\n"))
    } else {
        shown.join("\n")
    }
}
