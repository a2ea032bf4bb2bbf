//! The process table, read behind one seam (issue 24): which processes have their current
//! directory, or one of their threads' directories, inside some directories; who a process is
//! (pid, start time, executable, parent, environment); whether a recorded process still runs;
//! and which PID namespace the table shows.
//!
//! An operation is given a [`Scan`] (see `ops::context::Context::scan`), never a free function,
//! so that a test can hold the one it runs against. Two tables answer:
//! - [`linux`], the fast path: `/proc` read directly, one `readlink` per process (and per thread
//!   of a process with more than one), with PID namespaces;
//! - [`portable`], the kept crate `sysinfo` (it reads `/proc` on Linux and asks the kernel,
//!   `proc_pidinfo`, on macOS): what every other platform runs. On Linux it is measured too slow
//!   to be the only scan (with 1,000 more threads alive, ~12 ms more a spawn against ~4 ms for
//!   the fast path: bench/run's `scan`), so Linux keeps the fast path, and the Linux test suite
//!   runs every test of a scan against both (`Scan::every`). The cargo feature `portable-scan`
//!   makes it the scan on Linux too, for the bench's before and after.
//!
//! The tables only report what they see. What git-hand makes of it (which process is a tenant,
//! which is git-hand's own git, a process caught mid-exec looked at again) is decided in
//! `ops/pool/procs.rs`, once, over whichever table it is given.
//!
//! A process's start time is stored in ledger rows and only ever compared for equality on the
//! machine that recorded it (slots are keyed by machine): on Linux, by both tables, clock ticks
//! since boot (field 22 of `/proc/<pid>/stat`, as git-hand always recorded it, so rows written
//! before are read right); elsewhere seconds since the Unix epoch, the finest `sysinfo` gives.

use std::path::{Path, PathBuf};

#[cfg(target_os = "linux")]
pub mod linux;
pub mod portable;

/// A process as recorded in the ledger: pid and start time (see the module's note on its unit),
/// and the PID namespace whose numbering the pid is in (that of the table it was read from).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessId {
    pub pid: i64,
    pub start: Option<i64>,
    /// `None` in rows from before schema version 7, off Linux, and where it could not be
    /// learnt: such a pid is judged in the table's own numbering, as it always was.
    pub ns: Option<i64>,
}

/// What the table can tell of a recorded process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    Running,
    Gone,
    /// It was recorded in a PID namespace this table does not show (one above or beside it):
    /// that it cannot be seen proves nothing.
    Unseen,
}

/// A process seen with its directory, or one of its threads' directories, inside a scanned
/// directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sighting {
    /// The process (thread group), also when it was one of its threads that was inside.
    pub pid: i64,
    /// The thread that was inside, when it was not the process's main thread.
    pub thread: Option<i64>,
    /// The directory it was in, as the kernel reports it (canonical).
    pub cwd: PathBuf,
}

/// `pid:[4026531836]`, as the kernel spells a namespace.
pub(crate) fn ns_name(ns: i64) -> String {
    format!("pid:[{ns}]")
}

/// What a table of processes answers. Each question reads the table afresh: a process may have
/// changed, or gone, between two of them. Every answer that would make a slot look safe is
/// "cannot tell" where the table cannot be read (see each method).
pub trait Table: Sync {
    /// The table's name, for tests' messages.
    fn name(&self) -> &'static str;

    /// Every process whose current directory, or one of whose threads' directories, is one of
    /// `dirs` or below it, once each (its main thread's directory first, if that is inside).
    /// `dirs` are compared as given: canonical, as the kernel reports directories. `Err` when
    /// the table cannot be read: the caller must then treat the directories as occupied.
    fn inside(&self, dirs: &[&Path]) -> std::io::Result<Vec<Sighting>>;

    /// Whether directory `cwd`, as this table reports directories, is `dir` or below it.
    /// Exact, unless the platform's default filesystem ignores case (see
    /// [`portable::starts_with_ignoring_case`]).
    fn is_inside(&self, cwd: &Path, dir: &Path) -> bool {
        cwd.starts_with(dir)
    }

    /// The directory of what was sighted (its thread's, for a thread) as it is now.
    fn cwd(&self, sighting: &Sighting) -> Option<PathBuf>;

    /// When process `pid` started (see the module's note on the unit).
    fn start(&self, pid: i64) -> Option<i64>;

    /// Process `pid`'s executable; `None` also while it is exiting (it has let go of it).
    fn exe(&self, pid: i64) -> Option<PathBuf>;

    /// This process's own executable, as [`Table::exe`] would report it.
    fn own_exe(&self) -> Option<PathBuf>;

    /// Process `pid`'s parent.
    fn parent(&self, pid: i64) -> Option<i64>;

    /// Whether process `pid`'s environment holds exactly `var` (`NAME=value`); `None` when no
    /// environment could be read or it was empty, which a process shows mid-exec: that proves
    /// nothing.
    fn environ_has(&self, pid: i64, var: &str) -> Option<bool>;

    /// Whether process `pid` is exiting, a zombie or gone (and so when it cannot be told). The
    /// `/proc` table also sees a process still in `exit()` (`PF_EXITING`); the portable one only
    /// what `sysinfo` reports (zombie, dead, or no longer listed): there a process on its way
    /// out shows as one that has let go of its executable (see `ops/pool/procs.rs`'s looks).
    fn exiting(&self, pid: i64) -> bool;

    /// Process `pid`'s name (on Linux its `comm`, at most 15 bytes).
    fn command(&self, pid: i64) -> String;

    /// This process, as the table numbers it.
    fn me(&self) -> ProcessId;

    /// The PID namespace whose processes the table shows; `None` where it cannot be learnt or
    /// the platform has none.
    fn namespace(&self) -> Option<i64>;

    /// Whether a recorded process still runs (see [`Seen`]).
    fn judge(&self, p: ProcessId) -> Seen;

    /// Whether a scan of this table sees every process of PID namespace `ns` (`None`: a record
    /// from before namespaces were recorded, or off Linux, judged as it always was).
    fn sees(&self, ns: Option<i64>) -> bool;

    /// This process's ancestors (parent, its parent, ...), by pid.
    fn ancestors(&self) -> Vec<i64> {
        let mut out = vec![];
        let mut pid = self.me().pid;
        while let Some(parent) = self.parent(pid).filter(|&p| p > 1 && !out.contains(&p)) {
            out.push(parent);
            pid = parent;
        }
        out
    }
}

/// The process table an operation is given: cheap to copy, the same table for the whole run.
#[derive(Clone, Copy)]
pub struct Scan(&'static dyn Table);

impl Scan {
    /// The table this build scans by: on Linux the `/proc` fast path (unless built with the
    /// feature `portable-scan`), elsewhere the portable one.
    pub fn native() -> Self {
        #[cfg(all(target_os = "linux", not(feature = "portable-scan")))]
        {
            Self(&linux::Proc)
        }
        #[cfg(not(all(target_os = "linux", not(feature = "portable-scan"))))]
        {
            Self::portable()
        }
    }

    /// A scan of any table, such as one a test scripts.
    pub fn of(table: &'static dyn Table) -> Self {
        Self(table)
    }

    /// The portable table (`sysinfo`), on any platform.
    pub fn portable() -> Self {
        Self(&portable::Sysinfo)
    }

    /// Every table this platform has, for tests that hold each to the same claim.
    pub fn every() -> Vec<Self> {
        #[cfg(target_os = "linux")]
        {
            vec![Self(&linux::Proc), Self::portable()]
        }
        #[cfg(not(target_os = "linux"))]
        {
            vec![Self::portable()]
        }
    }
}

impl std::ops::Deref for Scan {
    type Target = dyn Table;

    fn deref(&self) -> &Self::Target {
        self.0
    }
}

impl std::fmt::Debug for Scan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Scan").field(&self.0.name()).finish()
    }
}

/// This process's effective user id, which owns what it creates.
#[cfg(target_os = "linux")]
pub(crate) fn effective_uid() -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    // /proc/self belongs to the process's effective user.
    std::fs::metadata("/proc/self").ok().map(|m| m.uid())
}

/// This process's effective user id, which owns what it creates.
#[cfg(not(target_os = "linux"))]
pub(crate) fn effective_uid() -> Option<u32> {
    portable::effective_uid()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `sleep 30` with its directory in `dir`, for a test to find there.
    pub(crate) fn sleeper(dir: &Path) -> std::process::Child {
        std::process::Command::new("sleep")
            .arg("30")
            .current_dir(dir)
            .spawn()
            .unwrap()
    }

    /// Both tables see the same process inside a directory and report the same of it: where
    /// it is, when it started (the ledger's unit), its executable, parent, name and environment.
    #[cfg(target_os = "linux")]
    #[test]
    fn both_tables_report_a_process_alike() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path().canonicalize().unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .current_dir(&dir)
            .env("GIT_HAND_PROBE", "1")
            .spawn()
            .unwrap();
        let pid = i64::from(child.id());
        // Until sleep has exec'd: its executable is no longer this test's, and its new
        // environment is in place (mid-`execve` the kernel shows the new executable first).
        let own = Scan::native().own_exe();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while Scan::native().exe(pid).is_none_or(|exe| Some(exe) == own)
            || Scan::native().environ_has(pid, "GIT_HAND_PROBE=1") != Some(true)
        {
            assert!(std::time::Instant::now() < deadline, "sleep never exec'd");
            std::thread::yield_now();
        }
        let report = |scan: Scan| {
            let inside = scan.inside(&[&dir]).unwrap();
            (
                inside.clone(),
                inside.first().and_then(|s| scan.cwd(s)),
                scan.start(pid),
                scan.exe(pid),
                scan.parent(pid),
                scan.command(pid),
                scan.environ_has(pid, "GIT_HAND_PROBE=1"),
                scan.environ_has(pid, "GIT_HAND_PROBE=2"),
                scan.exiting(pid),
                scan.own_exe(),
            )
        };
        let [linux, portable] = [Scan(&linux::Proc), Scan::portable()].map(report);
        child.kill().unwrap();
        child.wait().unwrap();
        let want = vec![Sighting {
            pid,
            thread: None,
            cwd: dir.clone(),
        }];
        assert_eq!(linux.0, want);
        assert_eq!(linux.1, Some(dir.clone()));
        assert!(linux.2.is_some());
        assert_eq!(linux.4, Some(i64::from(std::process::id())));
        assert_eq!(linux.5, "sleep");
        assert_eq!(
            (linux.6, linux.7, linux.8),
            (Some(true), Some(false), false)
        );
        assert_eq!(portable, linux);
    }

    /// This process as recorded is this process as judged by each table; another start time
    /// is another process. The fast path also knows the namespace `/proc` shows.
    #[test]
    fn this_process_is_running_where_it_is_recorded() {
        for scan in Scan::every() {
            let me = scan.me();
            assert_eq!(me.ns, scan.namespace(), "{scan:?}");
            assert_eq!(scan.judge(me), Seen::Running, "{scan:?}");
            assert!(scan.sees(me.ns), "{scan:?}");
            let other = ProcessId {
                start: me.start.map(|s| s + 1),
                ..me
            };
            assert_eq!(scan.judge(other), Seen::Gone, "{scan:?}");
        }
        #[cfg(target_os = "linux")]
        assert!(
            Scan(&linux::Proc).me().ns.is_some(),
            "no namespace learnt from /proc"
        );
    }

    /// A process that has exited but that its parent has not reaped yet (a zombie) keeps its
    /// pid and start time, and will never finish what it started: `doctor` must be able to
    /// settle its half-done spawn or teardown. Each table judges it gone.
    #[test]
    fn a_zombie_is_not_running() {
        for scan in Scan::every() {
            let mut child = std::process::Command::new("true").spawn().unwrap();
            let pid = i64::from(child.id());
            let id = ProcessId {
                pid,
                start: scan.start(pid),
                ns: scan.namespace(),
            };
            // `true` exits at once, and stays a zombie until the wait below: a table that took a
            // zombie for a running process would never say gone (`exiting` turns true earlier,
            // while the kernel is still in `exit()`).
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
            let mut seen = scan.judge(id);
            while seen != Seen::Gone && std::time::Instant::now() < deadline {
                std::thread::yield_now();
                seen = scan.judge(id);
            }
            let exiting = scan.exiting(pid);
            child.wait().unwrap();
            assert_eq!(seen, Seen::Gone, "{scan:?}: a zombie counted as running");
            assert!(exiting, "{scan:?}: a zombie is not exiting");
            assert_eq!(scan.judge(scan.me()), Seen::Running, "{scan:?}");
        }
    }

    /// A process started in a directory and ended is, after its parent reaped it, nowhere.
    #[test]
    fn a_reaped_process_is_inside_nothing_and_gone() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path().canonicalize().unwrap();
        for scan in Scan::every() {
            let mut child = sleeper(&dir);
            let pid = i64::from(child.id());
            let id = ProcessId {
                pid,
                start: scan.start(pid),
                ns: scan.namespace(),
            };
            child.kill().unwrap();
            child.wait().unwrap();
            assert_eq!(scan.inside(&[&dir]).unwrap(), vec![], "{scan:?}");
            assert_eq!(scan.judge(id), Seen::Gone, "{scan:?}");
            assert!(scan.exiting(pid), "{scan:?}");
        }
    }

    /// The start time off Linux (seconds since the epoch) of a process just started is now, give
    /// or take the second it was rounded to and the time this test took.
    #[test]
    fn the_start_time_in_epoch_seconds_is_when_the_process_started() {
        use crate::clock::Clock;
        let before = crate::clock::SystemClock.now_ms() / 1000;
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let started = portable::started_epoch_secs(i64::from(child.id()));
        let after = crate::clock::SystemClock.now_ms() / 1000;
        child.kill().unwrap();
        child.wait().unwrap();
        let started = started.unwrap();
        assert!(
            before - 1 <= started && started <= after + 1,
            "{before} {started} {after}"
        );
    }

    /// Off Linux a directory is inside a slot whatever the case of its names (see
    /// [`portable::starts_with_ignoring_case`]); a sibling whose name only begins alike is not.
    #[test]
    fn a_directory_in_another_case_is_inside_ignoring_case() {
        let inside = |cwd: &str, dir: &str| {
            portable::starts_with_ignoring_case(Path::new(cwd), Path::new(dir))
        };
        assert!(inside("/Users/me/Pool/Slot-1/src", "/users/me/pool/slot-1"));
        assert!(inside("/Users/me/pool/slot-1", "/Users/me/pool/slot-1"));
        assert!(inside("/Users/Émile/x", "/Users/émile"));
        assert!(!inside("/Users/me/pool/slot-10", "/Users/me/pool/slot-1"));
        assert!(!inside("/Users/me", "/Users/me/pool"));
        assert!(!inside("/elsewhere/pool/slot-1", "/Users/me/pool/slot-1"));
    }

    /// Both ways of asking for this process's effective user id agree (off Linux only the
    /// portable one is used).
    #[cfg(target_os = "linux")]
    #[test]
    fn the_effective_uid_is_the_one_proc_self_shows() {
        assert!(effective_uid().is_some());
        assert_eq!(portable::effective_uid(), effective_uid());
    }
}
