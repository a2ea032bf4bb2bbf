//! Processes, read from `/proc`: who we are (pid and start time, to tell a reused pid apart),
//! whether a recorded process still runs, and which processes sit inside a directory.
//!
//! Where `/proc` cannot be read, every question that would make a slot look safe answers
//! "cannot prove", and the caller treats the slot as unsafe.

use std::path::{Path, PathBuf};

/// A process as recorded in the ledger: pid and kernel start time (clock ticks since boot), and
/// the PID namespace whose numbering the pid is in (that of the `/proc` it was read from).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessId {
    pub pid: i64,
    pub start: Option<i64>,
    /// See [`proc_ns`]; `None` in rows from before schema version 7, and where it could not be
    /// learnt: such a pid is judged in this `/proc`'s numbering, as it always was.
    pub ns: Option<i64>,
}

/// The inode of the kernel's first PID namespace (`PROC_PID_INIT_INO`): every other namespace
/// is below it, so a scan of a `/proc` of this namespace sees every process there is.
pub const ROOT_PID_NS: i64 = 0xEFFF_FFFC;

/// This process, as the mounted `/proc` numbers it. That is not always `getpid()`: under
/// `unshare -fp` without `--mount-proc` the process is pid 1 of its own namespace while `/proc`
/// shows the outer one, where it has another number (and `/proc/1` is someone else).
pub fn me() -> ProcessId {
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

/// The PID namespace whose processes the mounted `/proc` shows, by the inode of its `ns/pid`
/// link (`pid:[4026531836]`). Not this process's own namespace (`/proc/self/ns/pid`): under
/// `unshare -fp` without `--mount-proc` this process is in a namespace below the one `/proc`
/// shows. The first of this process and its ancestors whose `NSpid` has one entry is a member
/// of `/proc`'s own namespace (`NSpid` lists a pid for each namespace from `/proc`'s down to the
/// process's own); failing that, `/proc/1` is that namespace's first process.
pub fn proc_ns() -> Option<i64> {
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

/// `pid:[4026531836]`, as the kernel spells a namespace.
pub fn ns_name(ns: i64) -> String {
    format!("pid:[{ns}]")
}

/// The `NSpid` line of a process: its pid in each namespace from `/proc`'s down to its own.
fn ns_pids(dir: &Path) -> Option<Vec<i64>> {
    let status = std::fs::read_to_string(dir.join("status")).ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("NSpid:"))?;
    line.split_whitespace().map(|p| p.parse().ok()).collect()
}

/// What this `/proc` can tell of a recorded process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    Running,
    Gone,
    /// It was recorded in a PID namespace this `/proc` does not show (one above or beside it):
    /// that it cannot be seen proves nothing.
    Unseen,
}

/// Whether a recorded process still runs, as far as this `/proc` can tell (see [`Seen`]). A
/// pid recorded in this `/proc`'s own namespace is looked up directly ([`is_running`]); one
/// recorded in a namespace below it is found through the `NSpid` of the processes in it; a
/// namespace this `/proc` shows no process of is either gone (and its processes with it) or one
/// it cannot see into, which only the first namespace can tell apart (it sees them all).
pub fn judge(p: ProcessId) -> Seen {
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

/// Whether a scan of this `/proc` sees every process of PID namespace `ns` (`None`: a record
/// from before namespaces were recorded, judged as it always was): `ns` is `/proc`'s own
/// namespace, a live one below it, or any at all when `/proc` is the first namespace's.
pub fn sees(ns: Option<i64>) -> bool {
    let Some(ns) = ns else { return true };
    let here = proc_ns();
    here == Some(ns) || here == Some(ROOT_PID_NS) || depth_of(ns).is_some()
}

/// Field 22 of `/proc/<pid>/stat`: when the process started.
pub fn start_time(pid: i64) -> Option<i64> {
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
/// trials). Without `/proc` we cannot tell, and say it runs (the safe answer for "may I settle
/// its half-done work?").
pub fn is_running(p: ProcessId) -> bool {
    if !Path::new("/proc/self").exists() {
        return true;
    }
    if stat_text(p.pid, 3).is_some_and(|state| state == "Z" || state == "X") {
        return false;
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

/// How many times a process that was changing under the scan (exec'ing or exiting) is looked
/// at, with pauses doubling from 1 ms (255 ms in all), before it counts as a tenant.
const LOOKS: u32 = 9;

/// `PF_EXITING` in the flags word of `/proc/<pid>/stat` (field 9): the process is in `exit()`.
const PF_EXITING: i64 = 0x4;

/// A git process that git-hand itself runs (its runner marks each with `GIT_HAND_INTERNAL=1`),
/// or a git-hand process about to become one (forked, moved into the slot, not yet exec'd:
/// still git-hand's executable and environment): another spawn's probe of the same free slot,
/// which lost or will lose the claim, is no tenant. `environ` is the process's environment as
/// read once by the caller (see [`look`] for why a read can be torn).
///
/// Only a direct child of a live git-hand process qualifies: the marker is inherited, so a
/// hook's background job started under git-hand's `git switch`, or a git left running by a
/// git-hand that was killed (now a child of init), is a tenant like any other process.
fn is_git_hands_own_git(pid: i64, proc_dir: &Path, environ: Option<&[u8]>) -> bool {
    let own_exe = std::fs::read_link("/proc/self/exe").ok();
    let is_git_hand = |dir: &Path| {
        std::fs::read_link(dir.join("exe")).is_ok_and(|exe| Some(&exe) == own_exe.as_ref())
    };
    let marker = format!("{}=1", crate::git::INTERNAL_ENV);
    let marked =
        environ.is_some_and(|env| env.split(|b| *b == 0).any(|var| var == marker.as_bytes()));
    let parent_is_git_hand = stat_field(pid, 4)
        .is_some_and(|ppid| ppid > 1 && is_git_hand(&Path::new("/proc").join(ppid.to_string())));
    parent_is_git_hand && (marked || is_git_hand(proc_dir))
}

/// What one look at a process found.
enum Look {
    /// Not inside the directory (any more), gone, or a zombie (which has no directory).
    Outside,
    /// Inside, and one of git-hand's own gits.
    Own,
    /// Inside, and not git-hand's: a tenant.
    Tenant(PathBuf),
    /// Inside, and caught changing: exec'ing or exiting. Look again.
    Unsettled(PathBuf),
}

/// Who a process is at one instant: its start time (a reused pid is another process) and its
/// executable.
#[derive(PartialEq, Eq)]
struct Identity {
    start: Option<i64>,
    exe: Option<PathBuf>,
}

fn identity(pid: i64, proc_dir: &Path) -> Identity {
    Identity {
        start: start_time(pid),
        exe: std::fs::read_link(proc_dir.join("exe")).ok(),
    }
}

/// One look at a process: its directory, and whether it is git-hand's own git, read between two
/// readings of its identity.
///
/// A look is trusted only when the process held still and showed a complete state: the same
/// start time and executable before and after, an executable and a non-empty environment, and
/// not exiting. The kernel shows torn states, measured with eight parallel spawns on a loaded
/// machine (issue 10, item 10): a git in `execve` already shows git's executable but an empty
/// environment (its new one is not in place yet), so its marker cannot be seen; a git in
/// `exit()` has lost its executable and environment but not yet its directory. Both once made a
/// spawn withdraw from a free slot ("process N (git) is inside it"). Such a look is taken again.
fn look(pid: i64, proc_dir: &Path, dir: &Path) -> Look {
    let before = identity(pid, proc_dir);
    // No directory to read: gone, a zombie, or another user's process (which cannot be inside
    // a slot: the pool directory is created 0700).
    let Ok(cwd) = std::fs::read_link(proc_dir.join("cwd")) else {
        return Look::Outside;
    };
    if !cwd.starts_with(dir) {
        return Look::Outside;
    }
    let environ = std::fs::read(proc_dir.join("environ")).ok();
    let own = is_git_hands_own_git(pid, proc_dir, environ.as_deref());
    let exiting = stat_field(pid, 9).is_none_or(|flags| flags & PF_EXITING != 0);
    let after = identity(pid, proc_dir);
    let settled = before == after
        && before.exe.is_some()
        && environ.is_some_and(|env| !env.is_empty())
        && !exiting;
    match (settled, own) {
        (true, true) => Look::Own,
        (true, false) => Look::Tenant(cwd),
        (false, _) => Look::Unsettled(cwd),
    }
}

/// Whether a process whose directory was seen inside `dir` is a tenant: looked at until it
/// holds still (see [`look`]). One that never does, over [`LOOKS`] looks, cannot be proven
/// harmless and is a tenant: a process whose state cannot be proven is never left out.
fn examine(pid: i64, proc_dir: &Path, dir: &Path) -> Option<PathBuf> {
    let mut pause = std::time::Duration::from_millis(1);
    let mut unsettled = None;
    for n in 0..LOOKS {
        if n > 0 {
            std::thread::sleep(pause);
            pause *= 2;
        }
        match look(pid, proc_dir, dir) {
            Look::Outside | Look::Own => return None,
            Look::Tenant(cwd) => return Some(cwd),
            Look::Unsettled(cwd) => unsettled = Some(cwd),
        }
    }
    unsettled
}

/// This process's ancestors (parent, its parent, ...), by pid: `git hand` waits in a `git`
/// process while git-hand runs, which is no other git at work.
pub fn ancestors() -> Vec<i64> {
    let mut out = vec![];
    let mut pid = me().pid;
    while let Some(parent) = stat_field(pid, 4).filter(|&p| p > 1 && !out.contains(&p)) {
        out.push(parent);
        pid = parent;
    }
    out
}

/// Every process whose current directory is `dir` or below it, except a live git-hand's own git
/// children (see [`is_git_hands_own_git`]). `Err` when this cannot be proven (no `/proc`): the
/// caller must then treat the directory as occupied.
pub fn occupants(dir: &Path) -> std::io::Result<Vec<Occupant>> {
    occupants_of(&[dir])
}

/// [`occupants`] of any of `dirs`, in one walk of `/proc`.
pub fn occupants_of(dirs: &[&Path]) -> std::io::Result<Vec<Occupant>> {
    let mut found = vec![];
    for (pid, entry) in processes()? {
        // Most processes are elsewhere: one readlink tells. The cwd of another user's process
        // cannot be read; such a process cannot be inside a slot either (the pool directory is
        // created 0700).
        let Ok(cwd) = std::fs::read_link(entry.path().join("cwd")) else {
            continue;
        };
        let Some(dir) = dirs.iter().find(|d| cwd.starts_with(d)) else {
            continue;
        };
        if let Some(cwd) = examine(pid, &entry.path(), dir) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Git-hand's own short-lived gits, started and ended in a directory while it is scanned
    /// (what eight parallel spawns probing the same free slots do): none of them is ever an
    /// occupant, whatever moment of its exec or its exit the scan catches it in.
    #[test]
    fn own_gits_starting_and_exiting_inside_a_directory_are_never_occupants() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path().canonicalize().unwrap();
        let done = std::sync::atomic::AtomicBool::new(false);
        let seen = std::thread::scope(|scope| {
            let scanner = scope.spawn(|| {
                let mut seen = vec![];
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    seen.extend(occupants(&dir).unwrap());
                }
                seen
            });
            for _ in 0..400 {
                std::process::Command::new("true")
                    .current_dir(&dir)
                    .env(crate::git::INTERNAL_ENV, "1")
                    .status()
                    .unwrap();
            }
            done.store(true, std::sync::atomic::Ordering::Relaxed);
            scanner.join().unwrap()
        });
        assert!(seen.is_empty(), "own gits counted as occupants: {seen:?}");
    }

    /// The looks that wait out a changing process never hide a real one: a process that sits
    /// inside is a tenant, and so is one whose state never proves anything (no environment to
    /// read a marker from), even as git-hand's own child.
    #[test]
    fn a_process_inside_is_a_tenant_even_with_an_empty_environment() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path().canonicalize().unwrap();
        let mut plain = std::process::Command::new("sleep")
            .arg("30")
            .current_dir(&dir)
            .spawn()
            .unwrap();
        let mut bare = std::process::Command::new("/usr/bin/env")
            .args(["-i", "sleep", "30"])
            .current_dir(&dir)
            .spawn()
            .unwrap();
        // `env -i` execs sleep with no environment at all; wait until it has.
        let bare_pid = i64::from(bare.id());
        while std::fs::read_link(format!("/proc/{bare_pid}/exe"))
            .is_ok_and(|exe| exe.ends_with("env"))
        {
            std::thread::yield_now();
        }
        let mut found: Vec<i64> = occupants(&dir).unwrap().iter().map(|o| o.pid).collect();
        plain.kill().unwrap();
        bare.kill().unwrap();
        plain.wait().unwrap();
        bare.wait().unwrap();
        found.sort_unstable();
        let mut want = vec![i64::from(plain.id()), bare_pid];
        want.sort_unstable();
        assert_eq!(found, want);
    }

    /// This process as recorded is this process as judged, in the numbering and namespace of
    /// the mounted `/proc`.
    #[test]
    fn this_process_is_running_where_it_is_recorded() {
        let me = me();
        assert_eq!(me.ns, proc_ns());
        assert!(me.ns.is_some(), "no namespace learnt from /proc");
        assert_eq!(judge(me), Seen::Running);
        assert!(sees(me.ns));
        assert_eq!(
            judge(ProcessId {
                start: me.start.map(|s| s + 1),
                ..me
            }),
            Seen::Gone
        );
    }

    /// A process that has exited but that its parent has not reaped yet (a zombie) still has
    /// its /proc entry and start time, and will never finish what it started: `doctor` must be
    /// able to settle its half-done spawn or teardown.
    #[test]
    fn a_zombie_is_not_running() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let id = ProcessId {
            pid: i64::from(child.id()),
            start: start_time(i64::from(child.id())),
            ns: None,
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while !std::fs::read_to_string(format!("/proc/{}/stat", id.pid))
            .unwrap()
            .contains(") Z ")
        {
            assert!(std::time::Instant::now() < deadline, "true never exited");
            std::thread::yield_now();
        }
        let running = is_running(id);
        child.wait().unwrap();
        assert!(!running, "a zombie counted as running");
        assert!(is_running(me()), "this process runs");
    }
}
