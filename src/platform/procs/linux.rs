//! The Linux fast path: the process table read from the mounted `/proc`, one `readlink` per
//! process to tell most of them are elsewhere, with the PID namespaces `/proc` shows.
//!
//! Where `/proc` cannot be read, every question that would make a slot look safe answers
//! "cannot tell": [`Proc::inside`] fails, a recorded process is running.

use std::path::{Path, PathBuf};

use super::{ProcessId, Seen, Sighting, Table};

/// The inode of the kernel's first PID namespace (`PROC_PID_INIT_INO`): every other namespace
/// is below it, so a scan of a `/proc` of this namespace sees every process there is.
pub(crate) const ROOT_PID_NS: i64 = 0xEFFF_FFFC;

/// `PF_EXITING` in the flags word of `/proc/<pid>/stat` (field 9): the process is in `exit()`.
const PF_EXITING: i64 = 0x4;

/// The mounted `/proc`.
pub struct Proc;

impl Table for Proc {
    fn name(&self) -> &'static str {
        "/proc"
    }

    fn inside(&self, dirs: &[&Path]) -> std::io::Result<Vec<Sighting>> {
        let inside = |cwd: &Path| dirs.iter().any(|d| cwd.starts_with(d));
        let mut found = vec![];
        for (pid, entry) in processes()? {
            // Most processes are elsewhere: one readlink tells. The cwd of another user's
            // process cannot be read; such a process cannot be inside a slot either (the pool
            // directory is created 0700).
            let dir = entry.path();
            match std::fs::read_link(dir.join("cwd")) {
                Ok(cwd) if inside(&cwd) => {
                    found.push(Sighting {
                        pid,
                        thread: None,
                        cwd,
                    });
                    continue;
                }
                // Nor can its threads' be read.
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => continue,
                _ => {}
            }
            // A thread may have a directory of its own (`unshare(CLONE_FS)`, then `chdir`): its
            // process is inside too. Only a process with more than one thread has one to read.
            if let Some(thread) = thread_inside(pid, &dir, &inside) {
                found.push(thread);
            }
        }
        Ok(found)
    }

    fn cwd(&self, sighting: &Sighting) -> Option<PathBuf> {
        let path = match sighting.thread {
            Some(tid) => format!("/proc/{}/task/{tid}/cwd", sighting.pid),
            None => format!("/proc/{}/cwd", sighting.pid),
        };
        std::fs::read_link(path).ok()
    }

    fn start(&self, pid: i64) -> Option<i64> {
        start_time(pid)
    }

    fn exe(&self, pid: i64) -> Option<PathBuf> {
        std::fs::read_link(format!("/proc/{pid}/exe")).ok()
    }

    fn own_exe(&self) -> Option<PathBuf> {
        std::fs::read_link("/proc/self/exe").ok()
    }

    fn parent(&self, pid: i64) -> Option<i64> {
        stat_field(pid, 4)
    }

    fn environ_has(&self, pid: i64, var: &str) -> Option<bool> {
        let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
        (!env.is_empty()).then(|| env.split(|b| *b == 0).any(|v| v == var.as_bytes()))
    }

    /// `PF_EXITING` is set when `exit()` begins and stays on the zombie, so one read of the
    /// flags tells both.
    fn exiting(&self, pid: i64) -> bool {
        stat_field(pid, 9).is_none_or(|flags| flags & PF_EXITING != 0)
    }

    fn command(&self, pid: i64) -> String {
        let command = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        command.trim().to_string()
    }

    /// This process, as the mounted `/proc` numbers it. That is not always `getpid()`: under
    /// `unshare -fp` without `--mount-proc` the process is pid 1 of its own namespace while
    /// `/proc` shows the outer one, where it has another number (and `/proc/1` is someone else).
    fn me(&self) -> ProcessId {
        let seen = std::fs::read_link("/proc/self")
            .ok()
            .and_then(|p| p.to_str()?.parse::<i64>().ok());
        let pid = seen.unwrap_or_else(|| i64::from(std::process::id()));
        ProcessId {
            pid,
            start: start_time(pid),
            // A process the mounted /proc does not show has no number there to record.
            ns: seen.and_then(|_| proc_ns()),
        }
    }

    fn namespace(&self) -> Option<i64> {
        proc_ns()
    }

    /// A pid recorded in this `/proc`'s own namespace is looked up directly ([`is_running`]);
    /// one recorded in a namespace below it is found through the `NSpid` of the processes in
    /// it; a namespace this `/proc` shows no process of is either gone (and its processes with
    /// it) or one it cannot see into, which only the first namespace can tell apart (it sees
    /// them all). Without `/proc` a process runs (the safe answer for "may I settle its
    /// half-done work?").
    fn judge(&self, p: ProcessId) -> Seen {
        if !Path::new("/proc/self").exists() {
            return Seen::Running;
        }
        let here = proc_ns();
        let Some(ns) = p.ns.filter(|ns| Some(*ns) != here) else {
            return if is_running(p) {
                Seen::Running
            } else {
                Seen::Gone
            };
        };
        let Some(depth) = depth_of(ns) else {
            return if here == Some(ROOT_PID_NS) {
                Seen::Gone
            } else {
                Seen::Unseen
            };
        };
        let Ok(processes) = processes() else {
            return Seen::Unseen;
        };
        for (pid, entry) in processes {
            // A process of a namespace beside `ns` at the same depth may have the same number
            // there: its start time tells it apart.
            let same = ns_pids(&entry.path()).is_some_and(|ids| ids.get(depth) == Some(&p.pid));
            if same && is_running(ProcessId { pid, ..p }) {
                return Seen::Running;
            }
        }
        Seen::Gone
    }

    /// `ns` is `/proc`'s own namespace, a live one below it, or any at all when `/proc` is the
    /// first namespace's.
    fn sees(&self, ns: Option<i64>) -> bool {
        let Some(ns) = ns else { return true };
        let here = proc_ns();
        here == Some(ns) || here == Some(ROOT_PID_NS) || depth_of(ns).is_some()
    }
}

/// The first thread of process `pid` (its `/proc` directory `dir`) other than the main one
/// whose directory is inside. Its `task` directory's link count is 2 plus its number of threads
/// (`proc_task_getattr`): one `stat` tells a single-threaded process, most of them, apart.
fn thread_inside(pid: i64, dir: &Path, inside: &dyn Fn(&Path) -> bool) -> Option<Sighting> {
    use std::os::unix::fs::MetadataExt;
    let task = dir.join("task");
    if std::fs::metadata(&task).ok()?.nlink() <= 3 {
        return None;
    }
    let threads = std::fs::read_dir(task).ok()?;
    let main = pid.to_string();
    threads.flatten().find_map(|task| {
        let name = task.file_name();
        let tid = name.to_str().filter(|t| *t != main)?.parse().ok()?;
        let cwd = std::fs::read_link(task.path().join("cwd")).ok()?;
        inside(&cwd).then_some(Sighting {
            pid,
            thread: Some(tid),
            cwd,
        })
    })
}

/// The PID namespace whose processes the mounted `/proc` shows, by the inode of its `ns/pid`
/// link (`pid:[4026531836]`). Not this process's own namespace (`/proc/self/ns/pid`): under
/// `unshare -fp` without `--mount-proc` this process is in a namespace below the one `/proc`
/// shows. The first of this process and its ancestors whose `NSpid` has one entry is a member
/// of `/proc`'s own namespace (`NSpid` lists a pid for each namespace from `/proc`'s down to the
/// process's own); failing that, `/proc/1` is that namespace's first process.
fn proc_ns() -> Option<i64> {
    let mut pid = "self".to_string();
    for _ in 0..64 {
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            break;
        };
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .map(|rest| rest.split_whitespace().collect::<Vec<_>>())
        };
        // A kernel older than 4.1 has no NSpid, and no namespaces below `/proc`'s to tell.
        if field("NSpid:").is_none_or(|ids| ids.len() == 1) {
            return ns_of(&pid);
        }
        match field("PPid:").and_then(|ids| ids.first().map(|p| p.to_string())) {
            Some(ppid) if ppid != "0" => pid = ppid,
            _ => break,
        }
    }
    ns_of("1")
}

/// The PID namespace of process `pid` (a number, or `self`), by its inode.
fn ns_of(pid: &str) -> Option<i64> {
    let link = std::fs::read_link(format!("/proc/{pid}/ns/pid")).ok()?;
    let text = link.to_str()?;
    text.strip_prefix("pid:[")?.strip_suffix(']')?.parse().ok()
}

/// The `NSpid` line of a process: its pid in each namespace from `/proc`'s down to its own.
fn ns_pids(dir: &Path) -> Option<Vec<i64>> {
    let status = std::fs::read_to_string(dir.join("status")).ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("NSpid:"))?;
    line.split_whitespace().map(|p| p.parse().ok()).collect()
}

/// Every process the mounted `/proc` shows: its pid and its directory's entry (the other
/// entries, `self`, `sys`, ..., are not numbers).
fn processes() -> std::io::Result<impl Iterator<Item = (i64, std::fs::DirEntry)>> {
    let entries = std::fs::read_dir("/proc")?;
    Ok(entries.flatten().filter_map(|entry| {
        let pid = entry.file_name().to_str()?.parse::<i64>().ok()?;
        Some((pid, entry))
    }))
}

/// The index in `NSpid` of namespace `ns`, found through its first process (pid 1 there), when
/// this `/proc` shows a process of it.
fn depth_of(ns: i64) -> Option<usize> {
    for (pid, entry) in processes().ok()? {
        let Some(ids) = ns_pids(&entry.path()) else {
            continue;
        };
        if ids.last() == Some(&1) && ids.len() > 1 && ns_of(&pid.to_string()) == Some(ns) {
            return Some(ids.len() - 1);
        }
    }
    None
}

/// Field 22 of `/proc/<pid>/stat`: when the process started, in clock ticks since boot.
pub(crate) fn start_time(pid: i64) -> Option<i64> {
    stat_field(pid, 22)
}

/// Field `n` (1-based, as in proc(5)) of `/proc/<pid>/stat`, from field 3 on, as text.
fn stat_text(pid: i64, n: usize) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: split after its last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    Some(rest.split_whitespace().nth(n.checked_sub(3)?)?.to_string())
}

/// Field `n` (1-based, as in proc(5)) of `/proc/<pid>/stat`, from field 4 on (the numbers).
fn stat_field(pid: i64, n: usize) -> Option<i64> {
    stat_text(pid, n)?.parse().ok()
}

/// Whether the recorded process still runs. A pid whose start time differs is another process
/// that reused the number. A zombie (exited, not yet reaped by its parent: field 3 `Z`, or `X`
/// while it is being reaped) keeps its pid and start time but will never finish its work: a
/// git-hand killed under a parent that does not wait for it (an agent's harness) stayed one,
/// and `doctor --repair` took its crashed spawn for one still at work (found by the black-box
/// trials).
fn is_running(p: ProcessId) -> bool {
    if stat_text(p.pid, 3).is_some_and(|state| state == "Z" || state == "X") {
        return false;
    }
    match (start_time(p.pid), p.start) {
        (None, _) => false,
        (Some(now), Some(then)) => now == then,
        (Some(_), None) => true,
    }
}
