//! The portable process table, read through the kept crate `sysinfo`, which reads `/proc` on
//! Linux and asks the kernel (`proc_pidinfo`) on macOS. What every platform but Linux scans by,
//! and what the Linux test suite holds to the same claims as the fast path (see the parent
//! module).
//!
//! Threads: on Linux `sysinfo` lists each thread (`/proc/<pid>/task/<tid>`) as a process of its
//! own with its own directory, so a thread that moved elsewhere is seen, and reported as its
//! process. On macOS `sysinfo` reports the process's directory only: a thread's own
//! (`pthread_chdir_np`) is there to ask (`proc_pidinfo(PROC_PIDTHREADPATHINFO)`), but no kept
//! crate wraps that call and git-hand forbids the unsafe code it would take, so a process whose
//! only thread inside a slot is not its main one is not seen there.
//!
//! Cost on macOS is not measured and does not follow from Linux's: there `sysinfo` asks the
//! kernel for each process's arguments and environment (`KERN_PROCARGS2`) in every listing, and
//! a look at one process (`with`) lists every pid again.
//!
//! No PID namespaces: a pid is judged in the table's own numbering, as rows from before schema
//! version 7 always were. (On Linux under `unshare -fp` without its own `/proc` this table
//! would number this process wrongly; only the fast path, Linux's own scan, is run there.)
//!
//! Cost, measured by hand (release build, 2 CPUs, a quiet machine of about 105 processes and 134
//! threads): one scan 0.77 ms, against 0.11 ms for the `/proc` fast path; it grows by about
//! 10 us per thread (1,087 threads: 10.7 ms, the fast path 0.13 ms), since `sysinfo` reads each
//! thread's `stat` as well as its directory. In a spawn (bench/run's `scan`): within a
//! millisecond or two of the fast path on a quiet machine, ~12 ms more with 1,000 more threads
//! alive (~60 ms before it kept no files open).

use std::path::{Path, PathBuf};

use sysinfo::{Pid, Process, ProcessRefreshKind, ProcessStatus, ProcessesToUpdate, System};
use sysinfo::{UpdateKind::Always, UpdateKind::OnlyIfNotSet};

use super::{ProcessId, Seen, Sighting, Table};

/// The process table as `sysinfo` reads it.
pub(crate) struct Sysinfo;

impl Table for Sysinfo {
    fn name(&self) -> &'static str {
        "sysinfo"
    }

    fn is_inside(&self, cwd: &Path, dir: &Path) -> bool {
        if cfg!(target_os = "macos") {
            starts_with_ignoring_case(cwd, dir)
        } else {
            cwd.starts_with(dir)
        }
    }

    fn inside(&self, dirs: &[&Path]) -> std::io::Result<Vec<Sighting>> {
        // On Linux `sysinfo` keeps each `/proc/<pid>/task/<tid>/stat` it reads open for a next
        // refresh that never comes (one scan, one `System`): ~1,100 descriptors with 1,000
        // threads alive, whose table growth made a spawn wait ~45 ms (bench/run's `scan`). Keep
        // none. (A no-op elsewhere.)
        sysinfo::set_open_files_limit(0);
        let mut system = System::new();
        let seen = system.refresh_processes_specifics(
            ProcessesToUpdate::All,
            true,
            // Threads are listed by default even from `nothing()`; said here because the
            // thread case depends on it.
            ProcessRefreshKind::nothing().with_cwd(Always).with_tasks(),
        );
        if !sysinfo::IS_SUPPORTED_SYSTEM || seen == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "no process could be listed",
            ));
        }
        if !sees_the_whole_machine() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                "this process sees only part of the machine's processes (a sandbox)",
            ));
        }
        let processes = system.processes();
        let mut found: Vec<Sighting> = vec![];
        for process in processes.values() {
            let Some(cwd) = process
                .cwd()
                .filter(|c| dirs.iter().any(|d| self.is_inside(c, d)))
            else {
                continue;
            };
            // A thread is reported as its process (its thread group).
            let (pid, thread) = match process.thread_kind() {
                Some(_) => (
                    process.parent().unwrap_or(process.pid()),
                    Some(number(process.pid())),
                ),
                None => (process.pid(), None),
            };
            found.push(Sighting {
                pid: number(pid),
                thread,
                cwd: cwd.to_path_buf(),
            });
        }
        // Once per process: its main thread's sighting where there is one.
        found.sort_by_key(|s| (s.pid, s.thread.is_some(), s.thread));
        found.dedup_by_key(|s| s.pid);
        Ok(found)
    }

    fn cwd(&self, sighting: &Sighting) -> Option<PathBuf> {
        let pid = sighting.thread.unwrap_or(sighting.pid);
        with(pid, ProcessRefreshKind::nothing().with_cwd(Always), |p| {
            p.cwd().map(Path::to_path_buf)
        })?
    }

    fn start(&self, pid: i64) -> Option<i64> {
        start_of(pid)
    }

    /// Resolved, as [`Table::own_exe`] is: on macOS `sysinfo` gives the path the process was
    /// started by (`KERN_PROCARGS2`), which for a git-hand installed through a link (Homebrew's
    /// `bin/`) is the link, and git-hand would not know its own gits.
    fn exe(&self, pid: i64) -> Option<PathBuf> {
        let exe = with(pid, ProcessRefreshKind::nothing().with_exe(Always), |p| {
            p.exe().map(Path::to_path_buf)
        })??;
        Some(exe.canonicalize().unwrap_or(exe))
    }

    fn own_exe(&self) -> Option<PathBuf> {
        // As the kernel reports executables: resolved (macOS's own call may give the path it
        // was started by).
        let exe = std::env::current_exe().ok()?;
        Some(exe.canonicalize().unwrap_or(exe))
    }

    fn parent(&self, pid: i64) -> Option<i64> {
        with(pid, ProcessRefreshKind::nothing(), |p| {
            p.parent().map(number)
        })?
    }

    fn environ_has(&self, pid: i64, var: &str) -> Option<bool> {
        with(
            pid,
            ProcessRefreshKind::nothing().with_environ(Always),
            |p| {
                let env = p.environ();
                (!env.is_empty()).then(|| env.iter().any(|v| v == var))
            },
        )?
    }

    fn exiting(&self, pid: i64) -> bool {
        with(pid, ProcessRefreshKind::nothing(), |p| {
            matches!(p.status(), ProcessStatus::Zombie | ProcessStatus::Dead)
        })
        .unwrap_or(true)
    }

    fn command(&self, pid: i64) -> String {
        with(pid, ProcessRefreshKind::nothing(), |p| {
            p.name().to_string_lossy().into_owned()
        })
        .unwrap_or_default()
    }

    fn me(&self) -> ProcessId {
        let pid = i64::from(std::process::id());
        ProcessId {
            pid,
            start: start_of(pid),
            ns: None,
        }
    }

    fn namespace(&self) -> Option<i64> {
        None
    }

    /// In the table's own numbering (see the module's note). Where the platform shows no
    /// processes at all, a process runs (the safe answer for "may I settle its half-done
    /// work?"); where it shows only part of them, one it does not show is unseen.
    fn judge(&self, p: ProcessId) -> Seen {
        if !sysinfo::IS_SUPPORTED_SYSTEM {
            return Seen::Running;
        }
        let alive = with(p.pid, ProcessRefreshKind::nothing(), |process| {
            !matches!(
                process.status(),
                ProcessStatus::Zombie | ProcessStatus::Dead
            )
        });
        let same = match (start_of(p.pid), p.start) {
            (Some(now), Some(then)) => now == then,
            (now, None) => now.is_some(),
            (None, Some(_)) => false,
        };
        if alive == Some(true) && same {
            Seen::Running
        } else if alive.is_none() && !sees_the_whole_machine() {
            Seen::Unseen
        } else {
            Seen::Gone
        }
    }

    /// Only what has no namespace recorded, and only when this process sees the whole machine:
    /// this table cannot see into a namespace, nor out of a sandbox.
    fn sees(&self, ns: Option<i64>) -> bool {
        ns.is_none() && sees_the_whole_machine()
    }
}

/// Whether `cwd` is `dir` or below it, each name compared ignoring case. macOS's default
/// filesystem (APFS, case-insensitive) has one directory for `Repo` and `repo`, and the kernel
/// may report a process's directory in the case it was entered by while `canonicalize` gives the
/// case on disk: an exact comparison would then miss a process in a slot. Ignoring case can only
/// make a directory look occupied (on a case-sensitive volume, by a process in a directory whose
/// name differs in case alone), never hide one.
pub(crate) fn starts_with_ignoring_case(cwd: &Path, dir: &Path) -> bool {
    let fold = |c: std::path::Component<'_>| {
        let name = c.as_os_str();
        name.to_str().map_or_else(
            || name.as_encoded_bytes().to_vec(),
            |s| s.to_lowercase().into_bytes(),
        )
    };
    let mut cwd = cwd.components();
    dir.components()
        .all(|d| cwd.next().is_some_and(|c| fold(c) == fold(d)))
}

/// Whether this process can read the machine's first process (launchd on macOS, init on
/// Linux), which always runs: a sandbox that shows a process only the processes of its own
/// sandbox (macOS's `(allow process-info* (target same-sandbox))`, which agents' sandboxes use)
/// hides it, and then an empty slot proves nothing, as a scan from a PID namespace below the one
/// a process ran in proves nothing on Linux. A zombie or a process gone between listing and
/// reading, which `sysinfo` drops too, does not hide it.
fn sees_the_whole_machine() -> bool {
    with(1, ProcessRefreshKind::nothing(), |_| ()).is_some()
}

/// `f` of process `pid` as one fresh read of `kind` finds it; `None` when it is not there.
fn with<T>(pid: i64, kind: ProcessRefreshKind, f: impl FnOnce(&Process) -> T) -> Option<T> {
    let pid = Pid::from_u32(u32::try_from(pid).ok()?);
    let mut system = System::new();
    system.refresh_processes_specifics(ProcessesToUpdate::Some(&[pid]), true, kind);
    system.process(pid).map(f)
}

fn number(pid: Pid) -> i64 {
    i64::from(pid.as_u32())
}

/// When process `pid` started, in the ledger's unit for this platform: on Linux clock ticks
/// since boot (field 22 of `/proc/<pid>/stat`, which `sysinfo` reads but rounds to seconds since
/// the epoch), so that both tables record the same number.
#[cfg(target_os = "linux")]
fn start_of(pid: i64) -> Option<i64> {
    super::linux::start_time(pid)
}

/// When process `pid` started, in seconds since the Unix epoch.
#[cfg(not(target_os = "linux"))]
fn start_of(pid: i64) -> Option<i64> {
    started_epoch_secs(pid)
}

/// When process `pid` started, in seconds since the Unix epoch, as `sysinfo` gives it on every
/// platform (the ledger's unit off Linux; compiled and tested on Linux too).
pub fn started_epoch_secs(pid: i64) -> Option<i64> {
    let start = with(pid, ProcessRefreshKind::nothing(), Process::start_time)?;
    i64::try_from(start).ok().filter(|s| *s > 0)
}

/// This process's effective user id.
pub fn effective_uid() -> Option<u32> {
    let pid = Pid::from_u32(std::process::id());
    let mut system = System::new();
    let kind = ProcessRefreshKind::nothing().with_user(OnlyIfNotSet);
    system.refresh_processes_specifics(ProcessesToUpdate::Some(&[pid]), true, kind);
    let uid = system.process(pid)?.effective_user_id()?;
    Some(**uid)
}
