//! The portable process scan (issue 24, items 1 and 2): which processes have their current
//! directory, or one of their threads' directories, inside some directories, read through the
//! kept crate `sysinfo`, which reads `/proc` on Linux and asks the kernel (`proc_pidinfo`) on
//! macOS.
//!
//! Not used by any operation yet: spawn, teardown, doctor and sessions still ask
//! `ops/procs.rs`, whose [`crate::ops::procs::occupants_of`] this mirrors so that switching is
//! a drop-in. This scan only reports what it sees; the hard cases that `ops/procs.rs` decides
//! (git-hand's own gits, a process caught mid-exec or mid-exit, looked at again) stay for the
//! caller of a scan to decide, in `ops/`.
//!
//! Threads: on Linux `sysinfo` lists each thread (`/proc/<pid>/task/<tid>`) as a process of its
//! own with its own directory, so a thread that moved elsewhere (`unshare(CLONE_FS)` then
//! `chdir`) is seen, and reported as its process. macOS has no per-thread directory that
//! `sysinfo` reads. (`ops/procs.rs` reads only `/proc/<pid>/cwd`, the main thread's, and so
//! misses such a process.)
//!
//! Cost, measured by hand (release build, 2 CPUs, a quiet machine of about 105 processes and 134
//! threads): one scan 0.77 ms, against 0.11 ms for `ops/procs.rs`'s walk; 0.47 ms of it without
//! the threads. It grows by about 10 us per thread (1,087 threads: 10.7 ms, the `/proc` walk
//! 0.13 ms), since `sysinfo` reads each thread's `stat` as well as its directory.

use std::path::{Path, PathBuf};

use sysinfo::{ProcessRefreshKind, ProcessesToUpdate, System, UpdateKind};

/// A process whose working directory (or a thread's) is inside one of the scanned directories:
/// the fields of [`crate::ops::procs::Occupant`], and when it started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occupant {
    /// The process (thread group), also when it was one of its threads that was inside.
    pub pid: i64,
    /// The process's name: on Linux its `comm` (at most 15 bytes), as `ops/procs.rs` reports.
    pub command: String,
    /// The directory found inside (canonical: `sysinfo` resolves it).
    pub cwd: PathBuf,
    /// When the process started, in seconds since the Unix epoch, as `sysinfo` gives it on every
    /// platform. Whole seconds: not fine enough to tell a reused pid apart by itself.
    pub started_epoch_secs: u64,
    /// When the process started in the unit the ledger stores (clock ticks since boot, field 22
    /// of `/proc/<pid>/stat`, what [`crate::ops::procs::start_time`] reads); `None` off Linux,
    /// where there is no such number, and where the process left before it was read.
    pub started_ticks: Option<i64>,
}

/// A scan of the machine's processes: the object an operation is given (the test seam), where
/// `ops/procs.rs` offers free functions. Each question walks the process table afresh.
#[derive(Debug, Default, Clone, Copy)]
pub struct Scan;

impl Scan {
    pub fn new() -> Self {
        Self
    }

    /// Every process whose current directory, or one of whose threads' directories, is one of
    /// `dirs` or below it, once each, in one walk of the process table. `dirs` are compared as
    /// given: canonicalize them first (the scan reports canonical directories: macOS shows
    /// `/private/var/...` for `/var/...`). `Err` when the platform shows no processes at all:
    /// the caller must then treat the directories as occupied.
    pub fn occupants_of(&self, dirs: &[&Path]) -> std::io::Result<Vec<Occupant>> {
        let mut system = System::new();
        let seen = system.refresh_processes_specifics(
            ProcessesToUpdate::All,
            true,
            // Threads are listed by default even from `nothing()`; said here because the thread
            // case depends on it.
            ProcessRefreshKind::nothing()
                .with_cwd(UpdateKind::Always)
                .with_tasks(),
        );
        if !sysinfo::IS_SUPPORTED_SYSTEM || seen == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "no process could be listed",
            ));
        }
        let processes = system.processes();
        let mut found: Vec<Occupant> = vec![];
        for process in processes.values() {
            let Some(cwd) = process
                .cwd()
                .filter(|c| dirs.iter().any(|d| c.starts_with(d)))
            else {
                continue;
            };
            // A thread is reported as its process (its thread group).
            let owner = match process.thread_kind() {
                Some(_) => process.parent().and_then(|p| processes.get(&p)),
                None => Some(process),
            }
            .unwrap_or(process);
            let pid = i64::from(owner.pid().as_u32());
            if found.iter().any(|o| o.pid == pid) {
                continue;
            }
            found.push(Occupant {
                pid,
                command: owner.name().to_string_lossy().into_owned(),
                cwd: cwd.to_path_buf(),
                started_epoch_secs: owner.start_time(),
                started_ticks: start_ticks(pid),
            });
        }
        found.sort_by_key(|o| o.pid);
        Ok(found)
    }

    /// [`Self::occupants_of`] one directory.
    pub fn occupants(&self, dir: &Path) -> std::io::Result<Vec<Occupant>> {
        self.occupants_of(&[dir])
    }
}

/// Field 22 of `/proc/<pid>/stat`: the ledger's unit for a start time.
#[cfg(target_os = "linux")]
fn start_ticks(pid: i64) -> Option<i64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: split after its last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(22 - 3)?.parse().ok()
}

#[cfg(not(target_os = "linux"))]
fn start_ticks(_pid: i64) -> Option<i64> {
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::ops::procs;

    fn sleeper(dir: &Path) -> std::io::Result<std::process::Child> {
        std::process::Command::new("sleep")
            .arg("30")
            .current_dir(dir)
            .spawn()
    }

    /// A process in a slot, one in a subdirectory of it, and one outside: both scans find the
    /// two inside, with the same pids, directories, names and start time, and neither finds the
    /// one outside.
    #[test]
    fn both_scans_find_the_processes_inside_a_directory_and_agree() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let slot = root.join("slot");
        let sub = slot.join("src/deep");
        let elsewhere = root.join("elsewhere");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        let mut children = [
            sleeper(&slot).unwrap(),
            sleeper(&sub).unwrap(),
            sleeper(&elsewhere).unwrap(),
        ];
        let inside: Vec<i64> = children[..2].iter().map(|c| i64::from(c.id())).collect();

        let portable = Scan::new().occupants(&slot);
        let linux = procs::occupants(&slot);
        for child in &mut children {
            child.kill().unwrap();
            child.wait().unwrap();
        }
        let portable = portable.unwrap();
        let mut linux = linux.unwrap();
        linux.sort_by_key(|o| o.pid);

        let pids: Vec<i64> = portable.iter().map(|o| o.pid).collect();
        assert_eq!(pids, inside, "portable scan: {portable:?}");
        let as_linux: Vec<procs::Occupant> = portable
            .iter()
            .map(|o| procs::Occupant {
                pid: o.pid,
                command: o.command.clone(),
                cwd: o.cwd.clone(),
            })
            .collect();
        assert_eq!(as_linux, linux);
        assert_eq!(portable[0].cwd, slot);
        assert_eq!(portable[1].cwd, sub);
        for o in &portable {
            assert_eq!(o.command, "sleep");
            assert!(o.started_ticks.is_some(), "no start time for {o:?}");
            assert!(o.started_epoch_secs > 0, "no start time for {o:?}");
        }
    }

    /// Its start time in the ledger's unit is the one `ops/procs.rs` records for a process.
    #[test]
    fn the_start_time_is_the_one_the_ledger_records() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path().canonicalize().unwrap();
        let mut child = sleeper(&dir).unwrap();
        let found = Scan::new().occupants(&dir).unwrap();
        let recorded = procs::start_time(i64::from(child.id()));
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].started_ticks, recorded);
    }

    /// A process whose main thread is elsewhere but one of whose threads moved inside
    /// (`unshare(CLONE_FS)`, then `chdir`, done by python through ctypes: git-hand forbids
    /// unsafe code) is found, as its process, with the thread's directory.
    #[test]
    fn a_process_with_only_a_thread_inside_is_found() {
        use std::io::BufRead;
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path().canonicalize().unwrap();
        let script = r#"
import ctypes, os, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
def inside():
    if libc.unshare(0x200) != 0:  # CLONE_FS
        sys.exit("unshare: %d" % ctypes.get_errno())
    os.chdir(sys.argv[1])
    print("inside", flush=True)
    time.sleep(30)
threading.Thread(target=inside, daemon=True).start()
time.sleep(30)
"#;
        let mut child = std::process::Command::new("python3")
            .args(["-c", script])
            .arg(&dir)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let main_cwd = std::fs::read_link(format!("/proc/{}/cwd", child.id()));
        let found = Scan::new().occupants(&dir);
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(line.trim(), "inside");
        assert!(
            !main_cwd.unwrap().starts_with(&dir),
            "the main thread moved too"
        );
        let found = found.unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].pid, i64::from(child.id()));
        assert_eq!(found[0].cwd, dir);
    }
}
