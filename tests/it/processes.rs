//! What the tests ask about processes they did not start themselves (issue 24, item 4): the
//! children of a pid, whether a pid still runs, which processes work in a directory, which run
//! a given command line, whether a process group still runs. Answered through `sysinfo`, the
//! kept crate git-hand's portable scan uses (`/proc` on Linux, the kernel's `proc_pidinfo` on
//! macOS), so that no test reads `/proc` and the same question is asked on both. The one fact
//! `sysinfo` does not report, a process's group, comes from `ps` with options that procps and
//! BSD `ps` both accept.
//!
//! A zombie (exited, not yet reaped by its parent) runs no more: every question but
//! [`children_of`] leaves zombies out, as the tests' own `/proc` reads did.

use std::ffi::OsStr;
use std::path::Path;

use sysinfo::{Pid, Process, ProcessRefreshKind, ProcessStatus, ProcessesToUpdate, System};

/// A process [`children_of`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Child {
    pub pid: u32,
    /// Its name: on Linux its `comm` (at most 15 bytes), on macOS its executable's name.
    pub name: String,
}

/// Every process (no threads: on Linux `sysinfo` lists each thread as a process of its own
/// unless told not to), with what `what` adds to the pid, parent and state always read.
fn every_process(what: ProcessRefreshKind) -> System {
    let mut system = System::new();
    system.refresh_processes_specifics(ProcessesToUpdate::All, true, what.without_tasks());
    system
}

/// Processes, not threads (a thread's entry would repeat its process's answers).
fn processes(system: &System) -> impl Iterator<Item = &Process> {
    system
        .processes()
        .values()
        .filter(|p| p.thread_kind().is_none())
}

fn is_zombie(process: &Process) -> bool {
    process.status() == ProcessStatus::Zombie
}

/// The processes whose parent is `pid`, zombies included (on Linux: macOS's table lists none).
pub fn children_of(pid: u32) -> Vec<Child> {
    let system = every_process(ProcessRefreshKind::nothing());
    let parent = Pid::from_u32(pid);
    let mut children: Vec<Child> = processes(&system)
        .filter(|p| p.parent() == Some(parent))
        .map(|p| Child {
            pid: p.pid().as_u32(),
            name: p.name().to_string_lossy().into_owned(),
        })
        .collect();
    children.sort_by_key(|c| c.pid);
    children
}

/// Whether process `pid` exists and is not a zombie waiting for its parent.
pub fn running(pid: u32) -> bool {
    let pid = Pid::from_u32(pid);
    let mut system = System::new();
    system.refresh_processes_specifics(
        ProcessesToUpdate::Some(&[pid]),
        true,
        ProcessRefreshKind::nothing().without_tasks(),
    );
    system.process(pid).is_some_and(|p| !is_zombie(p))
}

/// The running processes whose working directory is `dir` or below it. `dir` is compared as
/// given and canonical too: macOS reports `/private/var/...` for a directory made under
/// `/var/...`.
pub fn running_in(dir: &Path) -> Vec<u32> {
    let canonical = std::fs::canonicalize(dir).ok();
    let system = every_process(ProcessRefreshKind::nothing().with_cwd(sysinfo::UpdateKind::Always));
    let mut pids: Vec<u32> = processes(&system)
        .filter(|p| !is_zombie(p))
        .filter(|p| {
            p.cwd().is_some_and(|cwd| {
                cwd.starts_with(dir) || canonical.as_deref().is_some_and(|c| cwd.starts_with(c))
            })
        })
        .map(|p| p.pid().as_u32())
        .collect();
    pids.sort_unstable();
    pids
}

/// The running processes whose command line (program and arguments) is exactly `args`.
pub fn running_with_args(args: &[&OsStr]) -> Vec<u32> {
    let system = every_process(ProcessRefreshKind::nothing().with_cmd(sysinfo::UpdateKind::Always));
    let mut pids: Vec<u32> = processes(&system)
        .filter(|p| {
            !is_zombie(p)
                && p.cmd()
                    .iter()
                    .map(|a| a.as_os_str())
                    .eq(args.iter().copied())
        })
        .map(|p| p.pid().as_u32())
        .collect();
    pids.sort_unstable();
    pids
}

/// Whether any process of group `pgid` still runs (not a zombie). `sysinfo` reports no process
/// group: `ps -A -o pgid= -o stat=`, the same on procps and BSD `ps`.
pub fn group_running(pgid: u32) -> bool {
    let out = std::process::Command::new("ps")
        .args(["-A", "-o", "pgid=", "-o", "stat="])
        .output()
        .unwrap();
    assert!(out.status.success(), "ps failed: {out:?}");
    String::from_utf8_lossy(&out.stdout).lines().any(|line| {
        let mut fields = line.split_whitespace();
        fields.next() == Some(&pgid.to_string())
            && fields.next().is_some_and(|s| !s.starts_with('Z'))
    })
}

/// The questions answered right about a process this test starts (and so, on every platform
/// the suite runs on, the answers the other tests rely on).
mod tests {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    use super::*;

    #[test]
    fn a_sleeping_child_is_found_by_parent_directory_command_line_and_group_until_it_is_reaped() {
        let dir = tempfile::tempdir().unwrap();
        let inner = dir.path().join("inner");
        std::fs::create_dir(&inner).unwrap();
        // A program path of this test's own, so no other process has its command line.
        let sleeper = dir.path().join("probe-sleeper");
        let sleep = ["/bin/sleep", "/usr/bin/sleep"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .unwrap();
        std::os::unix::fs::symlink(sleep, &sleeper).unwrap();
        let mut child = Command::new(&sleeper)
            .arg("120")
            .current_dir(&inner)
            .stdin(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = child.id();
        let args = [sleeper.as_os_str(), "120".as_ref()];

        let children = children_of(std::process::id());
        assert!(children.iter().any(|c| c.pid == pid), "{children:?}");
        assert!(running(pid));
        assert_eq!(running_in(dir.path()), [pid]);
        assert_eq!(running_with_args(&args), [pid]);
        assert!(group_running(pid));

        child.kill().unwrap();
        // Killed, not yet reaped: a zombie, still this process's child, running no more. (The
        // kill lands before `kill(2)` returns; the exit itself is the kernel's, so a poll.)
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        crate::support::wait_until("the killed sleep is a zombie", deadline, || !running(pid));
        // macOS's table lists no zombie (`proc_pidinfo` finds one only when asked with a non-zero
        // argument, which sysinfo does not pass): there it is no child any more.
        if cfg!(target_os = "linux") {
            assert!(children_of(std::process::id()).iter().any(|c| c.pid == pid));
        }
        assert!(running_in(dir.path()).is_empty());
        assert!(running_with_args(&args).is_empty());
        assert!(!group_running(pid));

        child.wait().unwrap();
        assert!(!children_of(std::process::id()).iter().any(|c| c.pid == pid));
    }
}
