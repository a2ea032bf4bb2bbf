//! Why a spawn created nothing, or what a failed one left: the facts of each case. The message
//! says what is still true; the exit code is the error's [`kind`](SpawnError::kind), the
//! commands that get the user out of it are `cli`'s (`cli::way_out`).

use std::path::PathBuf;

use crate::hint::say;
use crate::ledger::{Fate, TaskState};
use crate::ops::Kind;
use crate::ops::pool::Skipped;

/// Why two names that differ only in case cannot both be used, for every message here.
const WHY_NOT_CASE_TWINS: &str = "branches whose names differ only in case are one ref file on \
                                  a case-insensitive filesystem (macOS's default), so git-hand \
                                  refuses such a pair on every platform";

/// Another open task, as a refusal names it: its name, and its machine and holder when it is
/// another machine's than this spawn's.
#[derive(Debug, Clone)]
pub struct OtherTask {
    pub name: String,
    /// `(machine, holder)` of a task on another machine; `None` on this one.
    pub elsewhere: Option<(String, String)>,
}

#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// The branch is, but for case, an existing branch (`owner`'s, when an open task has it).
    /// `named`: the user gave the branch with `--branch`.
    #[error(
        "branch {branch} differs only in case from {}: {WHY_NOT_CASE_TWINS}; nothing was created",
        match owner { Some(t) => format!("open task {t}'s branch {twin}"), None => format!("the existing branch {twin}") }
    )]
    BranchCaseTwin {
        task: String,
        branch: String,
        twin: String,
        owner: Option<String>,
        named: bool,
    },
    /// An open task has this task's name but for case.
    #[error(
        "task {task} differs only in case from open task {}{}: {WHY_NOT_CASE_TWINS}; nothing was \
         created",
        other.name,
        on(&other.elsewhere)
    )]
    TaskCaseTwin { task: String, other: OtherTask },
    /// A task of this name, pushed to the same remote, is open on another machine.
    #[error("task {task} is {state} on machine {machine}, held by {holder}; nothing was created")]
    LiveElsewhere {
        task: String,
        state: TaskState,
        machine: String,
        holder: String,
    },
    /// Another open task works on the branch.
    #[error(
        "branch {branch} belongs to open task {}{}; nothing was created",
        other.name,
        on(&other.elsewhere)
    )]
    BranchTaken { branch: String, other: OtherTask },
    /// The issue is held: by `holder` with `token`, on `machine` when it is another one.
    #[error(
        "issue {issue} is held by {holder}{} (token {token}); nothing was created",
        machine.as_ref().map_or_else(String::new, |m| format!(" on machine {m}"))
    )]
    IssueHeld {
        issue: String,
        holder: String,
        token: i64,
        machine: Option<String>,
    },
    /// Every attempt lost its free slot to a concurrent spawn.
    #[error("every free slot was taken by concurrent spawns; nothing was created")]
    SlotsRaced,
    /// No slot can be used and the pool has `max` slots; each skipped slot and why.
    #[error(
        "no slot can be used and the pool is full ({max} slots, hand.maxSlots); nothing was created{}",
        skipped_lines(skipped)
    )]
    PoolFull { max: i64, skipped: Vec<Skipped> },
    /// The branch exists (an earlier task of this name kept it) and was not named.
    #[error("branch {branch} already exists (an earlier task of this name kept it)")]
    BranchExists { task: String, branch: String },
    /// The branch is checked out in another worktree (`dir`).
    #[error("branch {branch} is checked out in another worktree ({})", dir.display())]
    BranchCheckedOut { branch: String, dir: PathBuf },
    /// The directory the slot goes in cannot be made.
    #[error("cannot create {}: {reason}", dir.display())]
    CannotCreateDir { dir: PathBuf, reason: String },
    /// The open task of this name is not active: another git-hand works on it, or one crashed.
    #[error("task {task} is {state} (another git-hand is working on it, or one crashed)")]
    NotActive { task: String, state: TaskState },
    /// The open task of this name is another holder's.
    #[error("task {task} is active and held by {holder} (in {slot}); nothing was created")]
    HeldByAnother {
        task: String,
        holder: String,
        slot: String,
    },
    /// The open task's lease expired or its slot was taken over.
    #[error("task {task}'s lease is no longer live (it expired or its slot was taken over)")]
    LeaseLost { task: String, branch: String },
    /// `doctor --repair` settled the task while this spawn worked on it.
    #[error(
        "{}",
        say(format!("task {task} was settled by someone else ("))
            .hand("doctor --repair")
            .text("?) while it was being spawned; it is not active and holds no lease")
    )]
    SettledMeanwhile { task: String },
    /// The connection to the team ledger broke once the intent was recorded, before git touched
    /// the slot: the task is `spawning` and holds the slot's lease (unless, `fate` unknown, its
    /// last write gave it back).
    #[error(
        "the connection to the team ledger at {at} broke ({reason}) after task {task} was \
         recorded as spawning; it holds the lease of slot {slot}{}, and nothing in the slot was \
         touched",
        match fate { Fate::NothingWritten => "", Fate::Unknown => " (unless its last write, which gave them back, was recorded)" }
    )]
    CutAfterIntent {
        task: String,
        slot: String,
        at: String,
        reason: String,
        fate: Fate,
    },
    /// The connection to the team ledger broke once the slot was ready, before (or while) the
    /// task was made active.
    #[error(
        "the connection to the team ledger at {at} broke ({reason}) after slot {} was made ready \
         for task {task} (branch {branch} checked out, the stamp written, any setup command \
         run); {}",
        slot.display(),
        match fate { Fate::NothingWritten => "the task is still recorded as spawning, holding the slot", Fate::Unknown => "its activation may or may not have been recorded" }
    )]
    CutAfterReady {
        task: String,
        slot: PathBuf,
        branch: String,
        at: String,
        reason: String,
        fate: Fate,
    },
    /// A step after the claim failed (`why`) and the slot could not be put back (`reason`): the
    /// task keeps its leases for doctor.
    #[error(
        "{why}; the slot could not be put back ({reason}), so task {task} keeps its leases until \
         doctor settles it"
    )]
    NotPutBack {
        task: String,
        why: String,
        reason: String,
    },
    /// A step after the claim failed (`why`; `setup`: it was the setup command) and was undone:
    /// the leases released (or not, `released`), the slot left as `left` says.
    #[error("{why}; {}; {}", released_words(*released), left.words(*released))]
    Undone {
        task: String,
        why: String,
        setup: bool,
        released: bool,
        left: Left,
    },
}

/// What a failed spawn left of its slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Left {
    /// Put back to a clean checkout.
    Clean,
    /// The slot it was making is removed (from disk and the ledger).
    Removed,
    /// The slot it was making is gone from disk, but the ledger still names it.
    GoneFromDisk,
}

impl Left {
    fn words(self, released: bool) -> String {
        match self {
            Left::Clean if released => "the slot is left clean and free".into(),
            Left::Clean => "the slot is left clean".into(),
            Left::Removed => "the slot it was making is removed".into(),
            Left::GoneFromDisk => say("the slot it was making is gone from disk: ")
                .hand("doctor --repair")
                .text(" forgets it")
                .into(),
        }
    }
}

fn released_words(released: bool) -> String {
    if released {
        "the task's leases were released (an issue lease held before this spawn is kept) and it \
         is marked done"
            .into()
    } else {
        say("its leases could not be released, so the slot is still leased to the task: ")
            .hand("doctor --repair")
            .text(" settles them")
            .into()
    }
}

fn on(elsewhere: &Option<(String, String)>) -> String {
    elsewhere
        .as_ref()
        .map_or_else(String::new, |(machine, holder)| {
            format!(" on machine {machine}, held by {holder}")
        })
}

fn skipped_lines(skipped: &[Skipped]) -> String {
    skipped
        .iter()
        .map(|s| format!("\n  {}: {}", s.path, s.why.join("; ")))
        .collect()
}

impl SpawnError {
    pub fn kind(&self) -> Kind {
        match self {
            SpawnError::CannotCreateDir { .. }
            | SpawnError::SettledMeanwhile { .. }
            | SpawnError::NotPutBack { .. }
            | SpawnError::Undone { .. } => Kind::Failed,
            SpawnError::BranchCaseTwin { .. }
            | SpawnError::TaskCaseTwin { .. }
            | SpawnError::LiveElsewhere { .. }
            | SpawnError::BranchTaken { .. }
            | SpawnError::IssueHeld { .. }
            | SpawnError::SlotsRaced
            | SpawnError::PoolFull { .. }
            | SpawnError::BranchExists { .. }
            | SpawnError::BranchCheckedOut { .. }
            | SpawnError::NotActive { .. }
            | SpawnError::HeldByAnother { .. }
            | SpawnError::LeaseLost { .. }
            | SpawnError::CutAfterIntent { .. }
            | SpawnError::CutAfterReady { .. } => Kind::Precondition,
        }
    }
}
