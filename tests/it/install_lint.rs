//! `install.sh` must run under any POSIX sh, macOS's included, and is never run there: `sh -n`
//! and shellcheck (`--shell=sh`, from `build-support/test-tools`) check it as POSIX sh, and with
//! it `build-support/static-target`, which it runs. Neither may use what only GNU's tools take
//! (macOS has BSD's `install`, `sed`, `readlink`, `stat`, `mktemp`): shellcheck knows nothing of
//! tools' options, so [`GNU_ONLY`] names them. A copy with a bashism proves shellcheck refuses
//! what the check must catch, and a copy with `readlink -f` that the list does.

use std::path::Path;
use std::process::Command;

use crate::support::{Run, TestEnv, test_tool};

/// The script under test.
const INSTALL_SH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/install.sh");

/// What install.sh runs: it prints the static target on Linux with glibc, nothing elsewhere.
const STATIC_TARGET: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/build-support/static-target");

/// The scripts a user's machine runs to install git-hand, whatever its platform.
const INSTALL_SCRIPTS: [&str; 2] = [INSTALL_SH, STATIC_TARGET];

/// Tool options GNU has and macOS's BSD tools lack, each with what works on both.
const GNU_ONLY: &[(&str, &str)] = &[
    (
        "readlink -f",
        "`(cd DIR && pwd -P)`: macOS's readlink had no -f before 12.3",
    ),
    (
        "realpath",
        "`(cd DIR && pwd -P)`: macOS had no realpath before 13",
    ),
    ("install -D", "`mkdir -p` the directory, then install or cp"),
    ("cp -T", "cp SRC DEST/NAME"),
    (
        "cp --",
        "BSD cp takes no long options (--reflink, --parents, ...)",
    ),
    (
        "sed -i",
        "a temporary file and mv: BSD sed -i takes the suffix as its own argument",
    ),
    ("sed -r", "sed -E"),
    (
        "stat -c",
        "BSD stat takes -f with other formats: ls or test instead",
    ),
    (
        "mktemp --",
        "mktemp -d, or a template (BSD mktemp takes no long options)",
    ),
    ("date -d", "BSD date takes -j -f"),
    ("xargs -r", "a loop: BSD xargs has no -r"),
    ("grep -P", "grep -E"),
    ("sort -V", "no version sort on BSD"),
    ("find -printf", "find ... -exec"),
];

/// The GNU-only options (see [`GNU_ONLY`]) on `script`'s lines that are not comments, as
/// `line N: option (what to use)`.
fn gnu_only_uses(script: &str) -> Vec<String> {
    let mut found = vec![];
    for (n, line) in script.lines().enumerate() {
        if line.trim_start().starts_with('#') {
            continue;
        }
        for (option, instead) in GNU_ONLY {
            let used = line.match_indices(option).any(|(at, _)| {
                let before = line[..at].chars().next_back();
                before.is_none_or(|c| !(c.is_alphanumeric() || "-_./".contains(c)))
            });
            if used {
                found.push(format!("line {}: {option} ({instead})", n + 1));
            }
        }
    }
    found
}

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
    for script in INSTALL_SCRIPTS {
        let out = Command::new("sh").arg("-n").arg(script).output().unwrap();
        Run::from(out).ok();
    }
}

#[test]
fn install_sh_passes_shellcheck_as_posix_sh() {
    for script in INSTALL_SCRIPTS {
        let run = shellcheck_as_posix_sh(Path::new(script));
        assert_eq!(
            run.code, 0,
            "shellcheck --shell=sh found problems in {script}:\n{}{}",
            run.stdout, run.stderr
        );
    }
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

#[test]
fn install_sh_uses_no_option_only_gnus_tools_take() {
    for script in INSTALL_SCRIPTS {
        let found = gnu_only_uses(&std::fs::read_to_string(script).unwrap());
        assert!(
            found.is_empty(),
            "{script} uses what macOS's BSD tools lack:\n{}",
            found.join("\n")
        );
    }
}

#[test]
fn the_gnu_only_check_refuses_a_copy_of_install_sh_with_readlink_f() {
    let script = std::fs::read_to_string(INSTALL_SH).unwrap();
    let from = "src_dir=$(cd \"$(dirname \"$0\")\" && pwd -P)";
    assert!(script.contains(from), "install.sh no longer has {from:?}");
    let copy = script.replacen(from, "src_dir=$(dirname \"$(readlink -f \"$0\")\")", 1);
    let found = gnu_only_uses(&copy);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("readlink -f"), "{found:?}");
}

/// Off Linux with glibc, static-target prints nothing (install.sh then builds an ordinary
/// executable): run with a `rustc` first on PATH that reports macOS's hosts (and musl's).
#[test]
fn static_target_prints_nothing_for_a_host_other_than_linux_with_glibc() {
    let env = TestEnv::new();
    for host in [
        "aarch64-apple-darwin",
        "x86_64-apple-darwin",
        "x86_64-unknown-linux-musl",
    ] {
        let bin = env.path(host);
        std::fs::create_dir(&bin).unwrap();
        crate::support::write_hook(
            &bin.join("rustc"),
            &format!("#!/bin/sh\nprintf 'rustc 1.89.0\\nhost: {host}\\n'\n"),
            0o755,
        );
        let out = Command::new(STATIC_TARGET)
            .env_clear()
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .output()
            .unwrap();
        let stdout = Run::from(out).ok();
        assert_eq!(stdout, "", "static-target printed a target for {host}");
    }
}
