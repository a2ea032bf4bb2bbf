//! The harness's own kill timeout (`support::in_group_killed_after`), the one the tests run
//! under where there is no `timeout` or `unshare` (macOS). It is compiled everywhere and run
//! here, on Linux, so the path other platforms take is a tested one.

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{AtTheEnd, in_group_killed_after, wait_until};

/// How long a test waits for a killed process to be gone (far beyond a real kill).
const DEADLINE: Duration = Duration::from_secs(60);

/// Whether a process (or, for `-PGID`, a process group) still exists: `kill -0`, no `unsafe`.
fn exists(target: &str) -> bool {
    Command::new("kill")
        .args(["-0", "--", target])
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .success()
}

/// Runs `script` under the harness's kill timeout; the pid it prints and what it did.
fn run(secs: &str, at_the_end: AtTheEnd, script: &str) -> (String, std::process::Output, u32) {
    let child = in_group_killed_after(Command::new, secs, at_the_end)
        .args(["sh", "-c", script])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let group = child.id();
    let out = child.wait_with_output().unwrap();
    let pid = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    (pid, out, group)
}

#[test]
fn the_watchdog_kills_a_command_past_its_timeout_with_everything_in_its_group() {
    // The background `sleep` keeps no pipe open: only the group kill ends it before 600 s.
    let (sleeper, out, _) = run(
        "1",
        AtTheEnd::LeaveTheRest,
        "sleep 600 >/dev/null 2>&1 & echo $!; exec sleep 600",
    );
    assert_eq!(out.status.signal(), Some(9), "{out:?}");
    assert!(!sleeper.is_empty(), "{out:?}");
    wait_until(
        "the background sleep is killed",
        Instant::now() + DEADLINE,
        || !exists(&sleeper),
    );
}

#[test]
fn a_command_that_ends_in_time_keeps_its_status_and_takes_the_watchdog_with_it() {
    let (said, out, group) = run("600", AtTheEnd::LeaveTheRest, "echo out; exit 3");
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert_eq!(said, "out");
    // The watchdog and its `sleep 600` were the group's last members.
    wait_until("the watchdog is gone", Instant::now() + DEADLINE, || {
        !exists(&format!("-{group}"))
    });
}

#[test]
fn contained_off_linux_kills_what_the_command_left_in_its_group_when_it_ends() {
    let (sleeper, out, _) = run(
        "600",
        AtTheEnd::KillTheRest,
        "sleep 600 >/dev/null 2>&1 & echo $!",
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    wait_until(
        "the leftover sleep is killed",
        Instant::now() + DEADLINE,
        || !exists(&sleeper),
    );
}

#[test]
fn a_command_killed_by_a_signal_is_reported_killed_by_it_as_gnu_timeout_does() {
    let (_, out, _) = run("600", AtTheEnd::KillTheRest, "kill -s TERM $$");
    assert_eq!(out.status.signal(), Some(15), "{out:?}");
    let (_, out, _) = run("600", AtTheEnd::LeaveTheRest, "kill -s KILL $$");
    assert_eq!(out.status.signal(), Some(9), "{out:?}");
}
