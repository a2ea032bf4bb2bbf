//! Who is inside a slot: the processes a [`Scan`] sees there, less git-hand's own gits, each
//! looked at until it holds still. The one place that decides which process is a tenant, over
//! whichever process table it is given (`platform::procs`).
//!
//! Where the table cannot be read, every question that would make a slot look safe answers
//! "cannot prove", and the caller treats the slot as unsafe.

use std::path::{Path, PathBuf};

use crate::platform::procs::{Scan, Sighting};

/// A process whose working directory (or a thread's) is inside a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Occupant {
    pub pid: i64,
    pub command: String,
    pub cwd: PathBuf,
}

/// How many times a process that was changing under the scan (exec'ing or exiting) is looked
/// at, with pauses doubling from 1 ms (255 ms in all), before it counts as a tenant.
const LOOKS: u32 = 9;

/// A git process that git-hand itself runs (its runner marks each with `GIT_HAND_INTERNAL=1`),
/// or a git-hand process about to become one (forked, moved into the slot, not yet exec'd:
/// still git-hand's executable and environment): another spawn's probe of the same free slot,
/// which lost or will lose the claim, is no tenant. `marked` is whether the process's
/// environment, as read once by the caller, holds the marker (see [`look`] for why a read can be
/// torn).
///
/// Only a direct child of a live git-hand process qualifies: the marker is inherited, so a
/// hook's background job started under git-hand's `git switch`, or a git left running by a
/// git-hand that was killed (now a child of init), is a tenant like any other process.
fn is_git_hands_own_git(scan: Scan, pid: i64, exe: Option<&Path>, marked: bool) -> bool {
    let own_exe = scan.own_exe();
    let is_git_hand = |exe: Option<&Path>| exe.is_some() && exe == own_exe.as_deref();
    let parent_is_git_hand = scan
        .parent(pid)
        .is_some_and(|ppid| ppid > 1 && is_git_hand(scan.exe(ppid).as_deref()));
    parent_is_git_hand && (marked || is_git_hand(exe))
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

fn identity(scan: Scan, pid: i64) -> Identity {
    Identity {
        start: scan.start(pid),
        exe: scan.exe(pid),
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
fn look(scan: Scan, sighting: &Sighting, dir: &Path) -> Look {
    let pid = sighting.pid;
    let before = identity(scan, pid);
    // No directory to read: gone, a zombie, or another user's process (which cannot be inside
    // a slot: the pool directory is created 0700).
    let Some(cwd) = scan.cwd(sighting) else {
        return Look::Outside;
    };
    if !scan.is_inside(&cwd, dir) {
        return Look::Outside;
    }
    let marker = format!("{}=1", crate::git::INTERNAL_ENV);
    let environ = scan.environ_has(pid, &marker);
    let own = is_git_hands_own_git(scan, pid, before.exe.as_deref(), environ == Some(true));
    let exiting = scan.exiting(pid);
    let after = identity(scan, pid);
    let settled = before == after && before.exe.is_some() && environ.is_some() && !exiting;
    match (settled, own) {
        (true, true) => Look::Own,
        (true, false) => Look::Tenant(cwd),
        (false, _) => Look::Unsettled(cwd),
    }
}

/// Whether a process whose directory was seen inside `dir` is a tenant: looked at until it
/// holds still (see [`look`]). One that never does, over [`LOOKS`] looks, cannot be proven
/// harmless and is a tenant: a process whose state cannot be proven is never left out.
fn examine(scan: Scan, sighting: &Sighting, dir: &Path) -> Option<PathBuf> {
    let mut pause = std::time::Duration::from_millis(1);
    let mut unsettled = None;
    for n in 0..LOOKS {
        if n > 0 {
            std::thread::sleep(pause);
            pause *= 2;
        }
        match look(scan, sighting, dir) {
            Look::Outside | Look::Own => return None,
            Look::Tenant(cwd) => return Some(cwd),
            Look::Unsettled(cwd) => unsettled = Some(cwd),
        }
    }
    unsettled
}

/// Every process whose current directory (or a thread's) is `dir` or below it, except a live
/// git-hand's own git children (see [`is_git_hands_own_git`]). `Err` when this cannot be proven
/// (no process table): the caller must then treat the directory as occupied.
pub(crate) fn occupants(scan: Scan, dir: &Path) -> std::io::Result<Vec<Occupant>> {
    occupants_of(scan, &[dir])
}

/// [`occupants`] of any of `dirs`, in one walk of the process table.
pub(crate) fn occupants_of(scan: Scan, dirs: &[&Path]) -> std::io::Result<Vec<Occupant>> {
    let mut found = vec![];
    for sighting in scan.inside(dirs)? {
        let Some(dir) = dirs.iter().find(|d| scan.is_inside(&sighting.cwd, d)) else {
            continue;
        };
        if let Some(cwd) = examine(scan, &sighting, dir) {
            found.push(Occupant {
                pid: sighting.pid,
                command: scan.command(sighting.pid),
                cwd,
            });
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::procs::tests::sleeper;

    fn stop(children: &mut [std::process::Child]) {
        for child in children {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }

    fn pids(found: &[Occupant]) -> Vec<i64> {
        let mut pids: Vec<i64> = found.iter().map(|o| o.pid).collect();
        pids.sort_unstable();
        pids
    }

    /// A process table that says what a test scripts, look by look (a look reads the directory
    /// once), for the states the kernel shows only for an instant: a git mid-exec, a process on
    /// its way out, a table that cannot be read.
    struct Scripted {
        /// What the n-th look sees: (directory inside, executable, environment).
        looks: fn(usize) -> Moment,
        readable: bool,
        seen: std::sync::atomic::AtomicUsize,
    }

    /// What a look sees: the directory inside, the executable, the environment's marker.
    type Moment = (bool, Option<&'static str>, Option<bool>);

    const SLOT: &str = "/pool/slot-1";
    const OWN: &str = "/bin/git-hand";
    const GIT: &str = "/usr/bin/git";
    const CHILD: i64 = 100;
    const PARENT: i64 = 50;

    impl Scripted {
        fn scan(looks: fn(usize) -> Moment) -> Scan {
            Self::table(looks, true)
        }

        fn table(looks: fn(usize) -> Moment, readable: bool) -> Scan {
            let table = Box::leak(Box::new(Scripted {
                looks,
                readable,
                seen: std::sync::atomic::AtomicUsize::new(0),
            }));
            Scan::of(table)
        }

        fn now(&self) -> Moment {
            let n = self.seen.load(std::sync::atomic::Ordering::SeqCst);
            (self.looks)(n.saturating_sub(1))
        }
    }

    impl crate::platform::procs::Table for Scripted {
        fn name(&self) -> &'static str {
            "scripted"
        }
        fn inside(&self, _dirs: &[&Path]) -> std::io::Result<Vec<Sighting>> {
            if !self.readable {
                return Err(std::io::Error::other("unreadable"));
            }
            Ok(vec![Sighting {
                pid: CHILD,
                thread: None,
                cwd: PathBuf::from(SLOT),
            }])
        }
        fn cwd(&self, _s: &Sighting) -> Option<PathBuf> {
            self.seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            self.now().0.then(|| PathBuf::from(SLOT).join("src"))
        }
        fn start(&self, _pid: i64) -> Option<i64> {
            Some(7)
        }
        fn exe(&self, pid: i64) -> Option<PathBuf> {
            match pid {
                PARENT => Some(PathBuf::from(OWN)),
                _ => self.now().1.map(PathBuf::from),
            }
        }
        fn own_exe(&self) -> Option<PathBuf> {
            Some(PathBuf::from(OWN))
        }
        fn parent(&self, pid: i64) -> Option<i64> {
            (pid == CHILD).then_some(PARENT)
        }
        fn environ_has(&self, _pid: i64, _var: &str) -> Option<bool> {
            self.now().2
        }
        fn exiting(&self, _pid: i64) -> bool {
            self.now().1.is_none()
        }
        fn command(&self, _pid: i64) -> String {
            "git".into()
        }
        fn me(&self) -> crate::platform::procs::ProcessId {
            crate::platform::procs::ProcessId {
                pid: 1,
                start: None,
                ns: None,
            }
        }
        fn namespace(&self) -> Option<i64> {
            None
        }
        fn judge(&self, _p: crate::platform::procs::ProcessId) -> crate::platform::procs::Seen {
            crate::platform::procs::Seen::Running
        }
        fn sees(&self, _ns: Option<i64>) -> bool {
            true
        }
    }

    fn tenants(scan: Scan) -> std::io::Result<Vec<i64>> {
        occupants(scan, Path::new(SLOT)).map(|o| pids(&o))
    }

    /// A table that cannot be read proves nobody is outside: the slot is occupied.
    #[test]
    fn an_unreadable_table_proves_nothing() {
        assert!(tenants(Scripted::table(|_| (true, Some(GIT), Some(true)), false)).is_err());
    }

    /// Git-hand's own git caught in `execve` (git's executable, no environment yet) is looked at
    /// again, and once its environment shows the marker it is no tenant; one whose environment
    /// never shows is a tenant: its state proves nothing.
    #[test]
    fn an_own_git_caught_mid_exec_is_looked_at_again() {
        let settles = Scripted::scan(|n| (true, Some(GIT), (n >= 2).then_some(true)));
        assert_eq!(tenants(settles).unwrap(), Vec::<i64>::new());
        let never = Scripted::scan(|_| (true, Some(GIT), None));
        assert_eq!(tenants(never).unwrap(), vec![CHILD]);
    }

    /// A git-hand forked into the slot, not yet exec'd (git-hand's executable, git-hand's
    /// environment without the marker), is its own; a process of another executable with no
    /// marker is a tenant.
    #[test]
    fn a_forked_git_hand_is_its_own_and_a_stranger_a_tenant() {
        assert!(
            tenants(Scripted::scan(|_| (true, Some(OWN), Some(false))))
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            tenants(Scripted::scan(|_| (true, Some(GIT), Some(false)))).unwrap(),
            vec![CHILD]
        );
    }

    /// A process on its way out (its executable gone, its directory still there) is looked at
    /// again: once its directory is gone too it is no tenant; one that stays like that is.
    #[test]
    fn a_process_exiting_without_an_executable_is_looked_at_again() {
        let leaves = Scripted::scan(|n| (n < 3, None, None));
        assert!(tenants(leaves).unwrap().is_empty());
        let stays = Scripted::scan(|_| (true, None, None));
        assert_eq!(tenants(stays).unwrap(), vec![CHILD]);
    }

    /// Git-hand's own short-lived gits, started and ended in a directory while it is scanned
    /// (what eight parallel spawns probing the same free slots do): none of them is ever an
    /// occupant, whatever moment of its exec or its exit the scan catches it in, by either
    /// table.
    #[test]
    fn own_gits_starting_and_exiting_inside_a_directory_are_never_occupants() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path().canonicalize().unwrap();
        for scan in Scan::every() {
            let done = std::sync::atomic::AtomicBool::new(false);
            let seen = std::thread::scope(|scope| {
                let scanner = scope.spawn(|| {
                    let mut seen = vec![];
                    while !done.load(std::sync::atomic::Ordering::Relaxed) {
                        seen.extend(occupants(scan, &dir).unwrap());
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
            assert!(
                seen.is_empty(),
                "{scan:?}: own gits counted as occupants: {seen:?}"
            );
        }
    }

    /// The looks that wait out a changing process never hide a real one: a process that sits
    /// inside is a tenant, and so is one whose state never proves anything (no environment to
    /// read a marker from), even as git-hand's own child; by either table.
    #[test]
    fn a_process_inside_is_a_tenant_even_with_an_empty_environment() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path().canonicalize().unwrap();
        for scan in Scan::every() {
            let plain = sleeper(&dir);
            let bare = std::process::Command::new("/usr/bin/env")
                .args(["-i", "sleep", "30"])
                .current_dir(&dir)
                .spawn()
                .unwrap();
            // `env -i` execs sleep with no environment at all; wait until it has.
            let bare_pid = i64::from(bare.id());
            while scan.exe(bare_pid).is_none_or(|exe| exe.ends_with("env")) {
                std::thread::yield_now();
            }
            let found = occupants(scan, &dir).unwrap();
            let want = pids(&[plain.id(), bare.id()].map(|pid| Occupant {
                pid: i64::from(pid),
                command: String::new(),
                cwd: dir.clone(),
            }));
            stop(&mut [plain, bare]);
            assert_eq!(pids(&found), want, "{scan:?}");
        }
    }

    /// A process in a slot and one in a subdirectory of it are occupants, named and placed
    /// alike by both tables; one outside is not.
    #[test]
    fn processes_in_a_slot_and_below_it_are_occupants_by_both_tables() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let slot = root.join("slot");
        let sub = slot.join("src/deep");
        let elsewhere = root.join("elsewhere");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        let mut children = [sleeper(&slot), sleeper(&sub), sleeper(&elsewhere)];
        let inside: Vec<i64> = children[..2].iter().map(|c| i64::from(c.id())).collect();
        let mut seen = vec![];
        for scan in Scan::every() {
            let mut found = occupants(scan, &slot).unwrap();
            found.sort_by_key(|o| o.pid);
            seen.push((scan, found));
        }
        stop(&mut children);
        let (_, first) = &seen[0];
        for (scan, found) in &seen {
            assert_eq!(pids(found), inside, "{scan:?}: {found:?}");
            assert_eq!(found[0].cwd, slot, "{scan:?}");
            assert_eq!(found[1].cwd, sub, "{scan:?}");
            assert!(
                found.iter().all(|o| o.command == "sleep"),
                "{scan:?}: {found:?}"
            );
            assert_eq!(found, first, "{scan:?} and the first table disagree");
        }
    }

    /// A process whose main thread is elsewhere but one of whose threads moved inside
    /// (`unshare(CLONE_FS)`, then `chdir`, done by python through ctypes: git-hand forbids
    /// unsafe code) is an occupant, as its process, with the thread's directory, by both tables.
    /// Linux only: a thread there has a directory of its own.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_process_with_only_a_thread_inside_is_an_occupant() {
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
        let pid = i64::from(child.id());
        let main_cwd = std::fs::read_link(format!("/proc/{pid}/cwd"));
        let found: Vec<_> = Scan::every()
            .into_iter()
            .map(|scan| (scan, occupants(scan, &dir)))
            .collect();
        stop(&mut [child]);
        assert_eq!(line.trim(), "inside");
        assert!(
            !main_cwd.unwrap().starts_with(&dir),
            "the main thread moved too"
        );
        for (scan, found) in found {
            let found = found.unwrap();
            assert_eq!(found.len(), 1, "{scan:?}: {found:?}");
            assert_eq!(found[0].pid, pid, "{scan:?}");
            assert_eq!(found[0].cwd, dir, "{scan:?}");
        }
    }
}
