//! git-hand beside the hook managers repositories already run: husky 9, lefthook, pre-commit and
//! git-lfs, the real tools, installed by `build-support/test-tools` (see
//! [`crate::support::hook_tools`]).

use std::time::{Duration, Instant};

use crate::support::TestEnv;

#[test]
fn the_hook_managers_are_installed_by_the_projects_own_files() {
    let env = TestEnv::new().with_hook_tools();
    let dir = env.path("work");
    for (tool, args) in [
        ("lefthook", &["version"][..]),
        ("pre-commit", &["--version"]),
        ("git-lfs", &["version"]),
    ] {
        let run = crate::support::Run::from(env.command(tool, &dir).args(args).output().unwrap());
        assert_eq!(
            run.code, 0,
            "{tool} does not run: {}{}",
            run.stdout, run.stderr
        );
    }
    // husky has no version flag: run bare it installs itself into the current repository.
    let husky = crate::support::hook_tools()
        .iter()
        .map(|d| d.join("husky"))
        .find(|p| p.exists());
    assert!(husky.is_some(), "husky is not installed");
}

#[test]
fn a_contained_command_cannot_leave_processes_behind() {
    let env = TestEnv::new();
    let dir = env.path("work");
    // A `sleep` under a name of this test's own (its temporary directory is unique), so the
    // look afterwards sees only what this test started, never another program's `sleep 300`.
    let sleeper = env.path("orphan-sleeper");
    let sleep = ["/bin/sleep", "/usr/bin/sleep"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .unwrap();
    std::os::unix::fs::symlink(sleep, &sleeper).unwrap();
    // A child that would outlive its parent: killed with the namespace (off Linux, with the
    // harness's process group) when the parent exits. It keeps no pipe of the test's open, so
    // the run returns when the parent ends, not when the sleep does.
    let run = crate::support::Run::from(
        env.contained("sh", &dir)
            .args([
                "-c",
                &format!("'{}' 300 </dev/null >/dev/null 2>&1 &", sleeper.display()),
            ])
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    // The kill may still be landing (off Linux it is a SIGTERM sent as the group's leader
    // exits): a bounded wait, far beyond a kill, and a survivor of it is a failure.
    let deadline = Instant::now() + Duration::from_secs(60);
    let sleeping = || crate::processes::running_with_args(&[sleeper.as_os_str(), "300".as_ref()]);
    let mut survivors = sleeping();
    while !survivors.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        survivors = sleeping();
    }
    for pid in &survivors {
        let _ = std::process::Command::new("kill")
            .args(["-s", "KILL", &pid.to_string()])
            .status();
    }
    assert!(
        survivors.is_empty(),
        "a contained process outlived its namespace: {survivors:?}"
    );
}
