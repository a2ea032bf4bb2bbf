//! git-hand beside the hook managers repositories already run: husky 9, lefthook, pre-commit and
//! git-lfs, the real tools, installed by `build-support/test-tools` (see
//! [`crate::support::hook_tools`]).

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
    let marker = env.path("orphan-pid");
    // A child that would outlive its parent: killed with the namespace when the parent exits.
    let run = crate::support::Run::from(
        env.contained("sh", &dir)
            .args(["-c", &format!("sleep 300 & echo $! > {}", marker.display())])
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let survivors = std::process::Command::new("pgrep")
        .args(["-f", "^sleep 300$"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&survivors.stdout).trim().is_empty(),
        "a contained process outlived its namespace"
    );
}
