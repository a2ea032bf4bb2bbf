//! Processes, read from `/proc`: who we are (pid and start time, to tell a reused pid apart),
//! whether a recorded process still runs, and which processes sit inside a directory.
//!
//! Where `/proc` cannot be read, every question that would make a slot look safe answers
//! "cannot prove", and the caller treats the slot as unsafe.

use std::path::{Path, PathBuf};

/// A process as recorded in the ledger: pid and kernel start time (clock ticks since boot).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessId {
    pub pid: i64,
    pub start: Option<i64>,
}

/// This process.
pub fn me() -> ProcessId {
    let pid = i64::from(std::process::id());
    ProcessId {
        pid,
        start: start_time(pid),
    }
}

/// Field 22 of `/proc/<pid>/stat`: when the process started.
pub fn start_time(pid: i64) -> Option<i64> {
    stat_field(pid, 22)
}

/// Field `n` (1-based, as in proc(5)) of `/proc/<pid>/stat`, from field 3 on.
fn stat_field(pid: i64, n: usize) -> Option<i64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: split after its last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(n.checked_sub(3)?)?.parse().ok()
}

/// Whether the recorded process still runs. A pid whose start time differs is another process
/// that reused the number. Without `/proc` we cannot tell, and say it runs (the safe answer for
/// "may I settle its half-done work?").
pub fn is_running(p: ProcessId) -> bool {
    if !Path::new("/proc/self").exists() {
        return true;
    }
    match (start_time(p.pid), p.start) {
        (None, _) => false,
        (Some(now), Some(then)) => now == then,
        (Some(_), None) => true,
    }
}

/// A process whose working directory is inside a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occupant {
    pub pid: i64,
    pub command: String,
    pub cwd: PathBuf,
}

/// A git process that git-hand itself runs (its runner marks each with `GIT_HAND_INTERNAL=1`),
/// or a git-hand process about to become one (forked, moved into the slot, not yet exec'd:
/// still git-hand's executable and environment): another spawn's probe of the same free slot,
/// which lost or will lose the claim, is no tenant. Anything whose environment and executable
/// cannot be read counts as a tenant.
///
/// Only a direct child of a live git-hand process qualifies: the marker is inherited, so a
/// hook's background job started under git-hand's `git switch`, or a git left running by a
/// git-hand that was killed (now a child of init), is a tenant like any other process.
fn is_git_hands_own_git(pid: i64, proc_dir: &Path) -> bool {
    let own_exe = std::fs::read_link("/proc/self/exe").ok();
    let is_git_hand = |dir: &Path| {
        std::fs::read_link(dir.join("exe")).is_ok_and(|exe| Some(&exe) == own_exe.as_ref())
    };
    let marker = format!("{}=1", crate::git::INTERNAL_ENV);
    let marked = std::fs::read(proc_dir.join("environ"))
        .is_ok_and(|env| env.split(|b| *b == 0).any(|var| var == marker.as_bytes()));
    let parent_is_git_hand = stat_field(pid, 4)
        .is_some_and(|ppid| ppid > 1 && is_git_hand(&Path::new("/proc").join(ppid.to_string())));
    parent_is_git_hand && (marked || is_git_hand(proc_dir))
}

/// Every process whose current directory is `dir` or below it, except a live git-hand's own git
/// children (see [`is_git_hands_own_git`]). `Err` when this cannot be proven (no `/proc`): the
/// caller must then treat the directory as occupied.
pub fn occupants(dir: &Path) -> std::io::Result<Vec<Occupant>> {
    let mut found = vec![];
    for entry in std::fs::read_dir("/proc")? {
        let Ok(entry) = entry else { continue };
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i64>().ok())
        else {
            continue;
        };
        // The cwd of another user's process cannot be read. Such a process cannot be inside a
        // slot either: the pool directory is created 0700.
        let Ok(cwd) = std::fs::read_link(entry.path().join("cwd")) else {
            continue;
        };
        if cwd.starts_with(dir) && !is_git_hands_own_git(pid, &entry.path()) {
            let command = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
            found.push(Occupant {
                pid,
                command: command.trim().to_string(),
                cwd,
            });
        }
    }
    Ok(found)
}
