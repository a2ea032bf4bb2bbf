//! The CI workflow, `.github/workflows/ci.yml`, is the project's contract for the platforms
//! git-hand is not developed on, and it cannot run here: actionlint checks it instead (its
//! syntax, expressions, runner labels, the inputs and versions of the actions it uses, and,
//! through shellcheck, the scripts of its `run:` steps). Both come from `build-support/test-tools`.
//! Broken copies prove the check can fail.

use std::path::Path;
use std::process::Command;

use crate::support::{Run, TestEnv, test_tool};

/// The workflow under test.
const WORKFLOW: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/.github/workflows/ci.yml");

/// actionlint on one workflow file, with shellcheck for the `run:` steps (pyflakes is off: the
/// workflow has no Python steps), in an emptied environment.
fn actionlint(workflow: &Path) -> Run {
    let shellcheck = test_tool("shellcheck");
    let out = Command::new(test_tool("actionlint"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .arg("-no-color")
        .arg("-oneline")
        .arg(format!("-shellcheck={}", shellcheck.display()))
        .arg("-pyflakes=")
        .arg(workflow)
        .current_dir(workflow.parent().unwrap())
        .output()
        .unwrap();
    Run::from(out)
}

/// actionlint on a copy of the workflow with `from` (which must be in it) replaced by `to`.
fn actionlint_on_a_copy(from: &str, to: &str) -> Run {
    let workflow = std::fs::read_to_string(WORKFLOW).unwrap();
    assert!(
        workflow.contains(from),
        "the workflow no longer has {from:?}"
    );
    let env = TestEnv::new();
    let copy = env.path("ci.yml");
    std::fs::write(&copy, workflow.replace(from, to)).unwrap();
    actionlint(&copy)
}

#[test]
fn the_ci_workflow_passes_actionlint() {
    let run = actionlint(Path::new(WORKFLOW));
    assert_eq!(
        run.code, 0,
        "actionlint found errors in .github/workflows/ci.yml:\n{}{}",
        run.stdout, run.stderr
    );
}

#[test]
fn actionlint_refuses_a_copy_of_the_workflow_with_an_unknown_runner_label() {
    let run = actionlint_on_a_copy("macos-15-intel]", "macos-15-intle]");
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("macos-15-intle"),
        "actionlint did not name the label:\n{}",
        run.stdout
    );
}

#[test]
fn actionlint_refuses_a_copy_of_the_workflow_whose_run_step_shellcheck_refuses() {
    let run = actionlint_on_a_copy(
        "run: bash .ci/run",
        "run: cd $HOME/git hand && bash .ci/run",
    );
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("shellcheck"),
        "actionlint did not pass the run step to shellcheck:\n{}",
        run.stdout
    );
}

#[test]
fn actionlint_refuses_a_copy_of_the_workflow_naming_a_step_that_is_not_there() {
    let run = actionlint_on_a_copy("steps.toolchain.outputs", "steps.toolchian.outputs");
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("toolchian"),
        "actionlint did not name the step:\n{}",
        run.stdout
    );
}

#[test]
fn the_ci_workflow_runs_ci_run_on_both_architectures_of_linux_and_macos() {
    let workflow = std::fs::read_to_string(WORKFLOW).unwrap();
    let matrix = workflow
        .lines()
        .find(|line| line.trim_start().starts_with("runner: ["))
        .expect("the workflow has a one-line runner matrix");
    // As README.md's CI section names them: x86_64 and arm64 Linux, arm64 and x86_64 macOS.
    for runner in [
        "ubuntu-latest",
        "ubuntu-24.04-arm",
        "macos-latest",
        "macos-15-intel",
    ] {
        assert!(matrix.contains(runner), "{runner} is not in {matrix:?}");
    }
    for platform in ["Linux", "macOS"] {
        let step = format!("- name: .ci/run ({platform})");
        let at = workflow
            .find(&step)
            .unwrap_or_else(|| panic!("the workflow has no {step:?}"));
        let run = workflow[at..]
            .lines()
            .find(|line| line.trim_start().starts_with("run:"))
            .unwrap();
        assert!(run.ends_with("bash .ci/run"), "{platform} runs {run:?}");
    }
}
