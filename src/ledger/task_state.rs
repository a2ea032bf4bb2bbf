//! The words of a task's life: the states a task moves through, the steps recorded inside them
//! (so a crash can be resumed or undone), and why a task ended. Read by the task rows
//! ([`super::tasks`]) and moved by the transactions of [`super::lifecycle`].

use serde::{Deserialize, Serialize};

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TaskState {
    /// Intent recorded; the slot may not be ready yet.
    Spawning,
    Active,
    /// Teardown started; `step` says how far it got.
    TearingDown,
    Done,
}

/// How far a multi-step operation on a task got: what a retry or `doctor` resumes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    /// The leases are taken and nothing on disk was touched yet (spawn: the claimed slot is
    /// not yet proven safe, so undoing must not touch it; teardown: its pin is recorded).
    Intent,
    /// Spawn: the slot is proven safe, and git may be changing it. Undoing resets it to a clean
    /// checkout, which loses nothing: no one was handed the slot yet.
    Preparing,
    /// Spawn: git is making the slot's worktree (a new slot, or one the disk lost). Undoing puts
    /// it back to a clean checkout or, when git cannot read what a killed `worktree add` left,
    /// removes the worktree this spawn made.
    Creating,
    Active,
    /// Teardown: the slot is detached from the task's branch.
    Detached,
    /// Teardown: the slot's lease is released; only the task row is left to settle.
    SlotReleased,
    Done,
}

/// Why a task ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EndReason {
    /// `git hand teardown`: the slot was freed.
    TornDown,
    /// The task's slot lease had already ended (expired and taken over, or settled): only the
    /// row was settled, nothing on disk was touched.
    LeaseEnded,
    /// Spawn failed after taking its leases and undid them.
    SpawnFailed,
    /// `doctor --repair` undid a spawn whose process was gone.
    AbandonedSpawn,
    /// `doctor --repair`: the slot's directory was gone from disk.
    SlotMissing,
    /// `doctor --repair`: the slot on disk was not the worktree git-hand made (an orphan whose
    /// git link names another worktree, or a symlink): it was set aside.
    SlotUnproven,
}

// Each word is spelled once, by serde: JSON and the ledger's rows agree.
crate::word::words!(TaskState: "TaskState", Step: "Step", EndReason: "EndReason");
