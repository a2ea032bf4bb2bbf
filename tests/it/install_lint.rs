//! `install.sh` must run under any POSIX sh, macOS's included, and is never run there: `sh -n`
//! and shellcheck (`--shell=sh`, from `build-support/test-tools`) check it as POSIX sh. A copy
//! with a bashism proves shellcheck refuses what the check must catch.

use std::path::Path;
use std::process::Command;

use crate::support::{Run, TestEnv, test_tool};

/// The script under test.
const INSTALL_SH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/install.sh");

fn shellcheck_as_posix_sh(script: &Path) -> Run {
    let out = Command::new(test_tool("shellcheck"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .args(["--shell=sh", "--color=never"])
        .arg(script)
        .output()
        .unwrap();
    Run::from(out)
}

#[test]
fn install_sh_parses_as_sh() {
    let out = Command::new("sh")
        .arg("-n")
        .arg(INSTALL_SH)
        .output()
        .unwrap();
    Run::from(out).ok();
}

#[test]
fn install_sh_passes_shellcheck_as_posix_sh() {
    let run = shellcheck_as_posix_sh(Path::new(INSTALL_SH));
    assert_eq!(
        run.code, 0,
        "shellcheck --shell=sh found problems in install.sh:\n{}{}",
        run.stdout, run.stderr
    );
}

#[test]
fn shellcheck_refuses_a_copy_of_install_sh_with_a_bashism() {
    let script = std::fs::read_to_string(INSTALL_SH).unwrap();
    let from = r#"if [ "$mode" = uninstall ]"#;
    assert!(script.contains(from), "install.sh no longer has {from:?}");
    let env = TestEnv::new();
    let copy = env.path("install.sh");
    std::fs::write(
        &copy,
        script.replacen(from, r#"if [[ "$mode" == uninstall ]]"#, 1),
    )
    .unwrap();
    let run = shellcheck_as_posix_sh(&copy);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("SC3010"),
        "shellcheck did not name the bashism:\n{}",
        run.stdout
    );
}

/// `build-support/test-tools` runs on every machine the tests run on (bash, Debian's or
/// Homebrew's tools): shellcheck checks it as the bash script it is.
#[test]
fn test_tools_passes_shellcheck_as_bash() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/build-support/test-tools");
    let out = Command::new(test_tool("shellcheck"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .args(["--shell=bash", "--color=never", script])
        .output()
        .unwrap();
    let run = Run::from(out);
    assert_eq!(
        run.code, 0,
        "shellcheck found problems in build-support/test-tools:\n{}{}",
        run.stdout, run.stderr
    );
}
