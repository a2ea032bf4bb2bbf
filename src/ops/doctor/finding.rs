//! What doctor found, as facts: each shape of problem with what makes it one, and what a repair
//! came to. The words a user reads (the detail, the action, the command that settles it by
//! hand) are `cli`'s (`cli/findings.rs`), from these facts alone.

use std::path::PathBuf;

use crate::hint::Hint;
use crate::ledger::{Step, TaskState};
use crate::ops::pool::slot::NotTheSlot;

#[derive(Debug, Clone)]
pub enum Finding {
    /// No ledger file, though the disk says there was one (`traces`, summed up).
    LedgerMissing { traces: String, rebuild: Rebuild },
    /// A file that is no ledger SQLite can use (`found`); a rebuild moves it `aside` first.
    LedgerUnusable {
        found: String,
        aside: PathBuf,
        rebuild: Rebuild,
    },
    /// A ledger SQLite's check finds damaged (`report`; the tables still `readable`): never
    /// repaired in place, since rows may still be in its WAL. `backup`: where a copy could go.
    LedgerDamaged {
        report: Vec<String>,
        readable: String,
        backup: PathBuf,
    },
    /// A spawn whose process is gone, stopped at `step`; `puts_back`: undoing it puts its slot
    /// back to a clean checkout; `undo`: what `--repair` came to.
    StuckSpawn {
        step: Option<Step>,
        puts_back: bool,
        undo: Option<SpawnUndo>,
    },
    /// A teardown of `task` whose process is gone, stopped at `step`; `cannot_finish`: why
    /// `--repair` could not finish it.
    StuckTeardown {
        task: String,
        step: Option<Step>,
        cannot_finish: Option<String>,
    },
    /// A spawn (`spawn`) or teardown at `step` by process `pid` of PID namespace `ns`, which
    /// this process table (`here`) cannot see into: it may still be at work.
    Unseen {
        spawn: bool,
        step: Option<Step>,
        pid: i64,
        ns: String,
        here: String,
    },
    /// The lease of slot `n` (`holder`'s, `token`) expired and was never taken over; `work`:
    /// what the slot holds that a repair would lose (then it is left to `task`).
    ExpiredLease {
        task: String,
        n: i64,
        holder: String,
        token: i64,
        work: Vec<String>,
    },
    /// Slot `n` is gone from disk; `task`: the active task that held it, and its branch.
    MissingSlot {
        n: i64,
        task: Option<(String, String)>,
    },
    /// A directory `key` in the pool the ledger does not know; `worktree`: it is a worktree of
    /// this repository (adopted by a repair), else git-hand never deletes it.
    UnknownSlot { key: String, worktree: bool },
    /// Free slot `n` was last used from a PID namespace this process table cannot see (`why`).
    UnusableUnseen { n: i64, why: String },
    /// Free slot `n` at `path` holds uncommitted or untracked `files` nobody owns.
    UnusableDirty {
        n: i64,
        path: String,
        files: Vec<String>,
    },
    /// Slot `n` is not the worktree git-hand made (`why`); `task`: the task that holds it, and
    /// its branch; `set_aside`: what `--repair` came to.
    UnprovenSlot {
        n: i64,
        why: NotTheSlot,
        task: Option<(String, String)>,
        set_aside: Option<SetAside>,
    },
    /// git lists the worktree at `path` but its directory is gone.
    PrunableWorktree { path: String, locked: bool },
    /// An admin dir (`admin`) whose `gitdir` is `gitdir`: a killed `git worktree add`'s, or
    /// not certainly (`reason`: its lock's; `others`: files a killed add writes only later).
    HalfAdded {
        admin: PathBuf,
        gitdir: String,
        reason: Option<String>,
        others: Vec<String>,
        removable: bool,
    },
    /// git-hand's Claude Code hooks lapsed in a settings file (`message`, `kind`); `fix`: the
    /// command that writes them again; `cannot_write`: why `--repair` could not; `by_hand`:
    /// the fix is the user's to run.
    ClaudeHooksLapsed {
        message: String,
        kind: crate::ops::claude::settings::LapseKind,
        fix: crate::hint::Words,
        cannot_write: Option<String>,
        by_hand: bool,
    },
    /// Whether the hooks are in force cannot be told (`why`; `fix`: the hooks' own way out).
    HooksUnknown { why: String, fix: Option<Hint> },
    /// A slot lacked the repository's generated hooks directory `dir`: a repair copied it.
    SlotGotHooks { dir: PathBuf },
    /// A slot could not be given the repository's hooks (`why`).
    SlotHooksFailed { why: String },
    /// One lapse of a worktree's hooks (`message`, `kind`). `repairable`: git-hand may fix it;
    /// `opted_out`: the user set `hand.installHooks=false`; `fix`: the hooks' own way out;
    /// `reinstall`: what `--repair`'s reinstall came to.
    HooksLapsed {
        message: String,
        kind: crate::hooks::LapseKind,
        repairable: bool,
        opted_out: bool,
        fix: Option<Hint>,
        reinstall: Option<Reinstall>,
    },
    /// This machine's clock is `skew_ms` from the team ledger server's (positive: ahead).
    ClockSkew { skew_ms: i64 },
    /// A served repository (`common`) names no `hand.remoteUrl`.
    UnfencedRemote { common: PathBuf },
}

/// A ledger rebuild: planned from `traces` worktrees the disk has, or done (the record it
/// logged in the new ledger).
#[derive(Debug, Clone)]
pub enum Rebuild {
    Planned { traces: usize },
    Done(String),
}

/// What undoing a crashed spawn came to.
#[derive(Debug, Clone)]
pub enum SpawnUndo {
    Abandoned,
    /// Nothing: the task changed while doctor waited for the slot (its state now, `None`:
    /// gone).
    Changed(Option<TaskState>),
    /// The slot at `slot` could not be put back (`why`).
    Failed {
        slot: String,
        why: String,
    },
}

/// What setting an unproven slot aside came to.
#[derive(Debug, Clone)]
pub enum SetAside {
    /// Its files went where this says.
    Kept(String),
    /// It was leased meanwhile, and left alone.
    LeasedMeanwhile,
}

/// What `--repair`'s reinstall of a hooks directory came to for one lapse.
#[derive(Debug, Clone)]
pub enum Reinstall {
    /// In force now.
    Mended,
    /// Mended, and what the directory the slots now use lacks (`now`) is its own lapse.
    MendedNow(Option<String>),
    /// Reinstalled, still not in force (`why`).
    DidNotHelp(String),
    /// The reinstall failed (`why`; `fix`: its way out).
    Failed { why: String, fix: Option<Hint> },
}
