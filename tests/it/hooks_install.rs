//! `git hand install` / `uninstall`, the shims and the chaining runner: real git in temporary
//! repositories, the real binary for end-to-end stories, the library for the finer cases.

use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use git_hand::git::Git;
use git_hand::hooks::{
    self, Change, FileState, HookError, HookName, NotInForce, Rewrite, install_into, run_chained,
    uninstall_from,
};

use crate::support::{Run, TestEnv, mode, write_hook};

/// A PATH with git but without the binary under test.
const PATH_WITHOUT_HAND: &str = "/usr/local/bin:/usr/bin:/bin";

/// Where git says `dir` runs hooks from, made absolute.
fn git_path_hooks(env: &TestEnv, dir: &Path) -> PathBuf {
    let answer = env.git(dir, &["rev-parse", "--git-path", "hooks"]);
    let path = dir.join(answer);
    fs::canonicalize(&path).unwrap_or(path)
}

/// Every file under `dir` (recursively) with its bytes and mode: "wrote nothing" means this
/// does not change.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>, u32)> {
    let mut out = vec![];
    let Ok(entries) = fs::read_dir(dir) else {
        return out;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(snapshot(&path));
        } else {
            out.push((path.clone(), fs::read(&path).unwrap(), mode(&path)));
        }
    }
    out.sort();
    out
}

/// A foreign hook that records its arguments, stdin and working directory next to itself.
fn recording_hook(out: &Path) -> String {
    format!(
        "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{o}/args'\ncat > '{o}/stdin'\npwd > '{o}/pwd'\n",
        o = out.display()
    )
}

/// Runs git with `PATH` lacking the binary under test.
fn git_without_hand(env: &TestEnv, dir: &Path, args: &[&str]) -> Run {
    let out = env
        .timed("git", dir)
        .env("PATH", PATH_WITHOUT_HAND)
        .args(args)
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn assert_git_hand_not_reachable_without_bin_dir() {
    assert!(
        which::which_in("git-hand", Some(PATH_WITHOUT_HAND), "/").is_err(),
        "this test needs a machine where git-hand is not installed in {PATH_WITHOUT_HAND}"
    );
}

fn changes(run: &Run) -> Vec<(String, String)> {
    run.json()["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["hook"].as_str().unwrap().to_string(),
                h["change"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn pair(hook: &str, change: &str) -> (String, String) {
    (hook.to_string(), change.to_string())
}

#[test]
fn install_writes_both_executable_shims_with_the_marker_into_the_git_path_hooks_dir() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let run = env.hand(&repo, &["install", "--json"]).code(0);
    let hooks_dir = git_path_hooks(&env, &repo);
    assert_eq!(run.json()["hooks_dir"], hooks_dir.to_str().unwrap());
    assert_eq!(run.json()["outcome"], "installed");
    // The main worktree's hooks directory holds pre-push and post-checkout; the
    // reference-transaction shim is in the one of linked worktrees only (issue 25).
    let linked = repo.join(".git/git-hand/hooks");
    for hook in HookName::ALL {
        let dir = match hook {
            HookName::ReferenceTransaction => &linked,
            _ => &hooks_dir,
        };
        let path = dir.join(hook.to_string());
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.contains("# git-hand-managed-hook v"), "{text}");
        assert!(text.contains(&format!("exec git-hand hook {hook} \"$@\"")));
        assert_eq!(text, hooks::shim::content_for(hook, Some(&bin())));
        assert_eq!(mode(&path), 0o755, "{hook}");
        assert!(!dir.join(hook.chained_file_name()).exists());
    }
    assert!(!hooks_dir.join("reference-transaction").exists());
    assert_eq!(
        changes(&run),
        [
            pair("pre-push", "installed"),
            pair("post-checkout", "installed"),
            pair("reference-transaction", "installed"),
        ]
    );
    // No temp file is left behind by the atomic writes.
    let leftovers: Vec<_> = fs::read_dir(&hooks_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn install_from_a_linked_worktree_writes_into_the_shared_hooks_dir() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let wt = env.path("work/wt");
    env.git(&repo, &["worktree", "add", "-q", wt.to_str().unwrap()]);
    let sub = wt.join("sub");
    fs::create_dir(&sub).unwrap();
    assert_eq!(git_path_hooks(&env, &wt), git_path_hooks(&env, &repo));
    env.hand(&sub, &["install"]).ok();
    let shared = git_path_hooks(&env, &repo);
    assert_eq!(shared, repo.join(".git/hooks"));
    // Linked worktrees now run hooks from git-hand's directory for them, which forwards to
    // the shared one and holds the reference-transaction shim (issue 25).
    let linked = git_path_hooks(&env, &wt);
    assert_eq!(linked, repo.join(".git/git-hand/hooks"));
    assert!(
        fs::read_to_string(linked.join("reference-transaction"))
            .unwrap()
            .contains("git-hand-managed-hook")
    );
    for hook in HookName::MAIN {
        assert!(
            fs::read_to_string(shared.join(hook.to_string()))
                .unwrap()
                .contains("git-hand-managed-hook")
        );
    }
}

#[test]
fn installing_twice_reports_unchanged_and_force_rewrites() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    env.hand(&repo, &["install"]).ok();
    let again = env.hand(&repo, &["install", "--json"]).code(0);
    assert_eq!(again.json()["outcome"], "unchanged");
    assert_eq!(
        changes(&again),
        [
            pair("pre-push", "unchanged"),
            pair("post-checkout", "unchanged"),
            pair("reference-transaction", "unchanged"),
        ]
    );
    let text = env.hand(&repo, &["install"]).ok();
    assert!(text.contains("unchanged"), "{text}");
    let forced = env.hand(&repo, &["install", "--force", "--json"]).code(0);
    assert_eq!(
        changes(&forced),
        [
            pair("pre-push", "rewritten"),
            pair("post-checkout", "rewritten"),
            pair("reference-transaction", "rewritten"),
        ]
    );
}

#[test]
fn a_stale_shim_with_the_marker_is_upgraded_in_place_without_chaining_it() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let hooks_dir = git_path_hooks(&env, &repo);
    let old = "#!/bin/sh\n# git-hand-managed-hook v0\nexec git hand hook pre-push \"$@\"\n";
    write_hook(&hooks_dir.join("pre-push"), old, 0o755);
    let run = env.hand(&repo, &["install", "--json"]).code(0);
    assert_eq!(
        changes(&run),
        [
            pair("pre-push", "upgraded"),
            pair("post-checkout", "installed"),
            pair("reference-transaction", "installed"),
        ]
    );
    let now = fs::read_to_string(hooks_dir.join("pre-push")).unwrap();
    assert_eq!(
        now,
        hooks::shim::content_for(HookName::PrePush, Some(&bin()))
    );
    assert!(!hooks_dir.join("pre-push.git-hand-chained").exists());
}

#[test]
fn a_shim_that_lost_its_execute_bit_is_rewritten() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    env.hand(&repo, &["install"]).ok();
    let pre_push = git_path_hooks(&env, &repo).join("pre-push");
    fs::set_permissions(&pre_push, fs::Permissions::from_mode(0o644)).unwrap();
    let run = env.hand(&repo, &["install", "--json"]).code(0);
    assert_eq!(changes(&run)[0], pair("pre-push", "upgraded"));
    assert_eq!(mode(&pre_push), 0o755);
}

#[test]
fn a_foreign_hook_is_chained_keeping_its_bytes_and_mode() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let hooks_dir = git_path_hooks(&env, &repo);
    let foreign = "#!/bin/sh\n# lint before pushing\nexit 0\n";
    write_hook(&hooks_dir.join("pre-push"), foreign, 0o750);
    let run = env.hand(&repo, &["install", "--json"]).code(0);
    assert_eq!(
        changes(&run),
        [
            pair("pre-push", "chained"),
            pair("post-checkout", "installed"),
            pair("reference-transaction", "installed"),
        ]
    );
    let chained = hooks_dir.join("pre-push.git-hand-chained");
    assert_eq!(run.json()["hooks"][0]["chained"], chained.to_str().unwrap());
    assert_eq!(fs::read_to_string(&chained).unwrap(), foreign);
    assert_eq!(mode(&chained), 0o750);
    assert!(
        fs::read_to_string(hooks_dir.join("pre-push"))
            .unwrap()
            .contains("git-hand-managed-hook")
    );
    let text = env.hand(&repo, &["install"]).ok();
    assert!(text.contains("pre-push.git-hand-chained"), "{text}");
}

#[test]
fn install_refuses_a_new_foreign_hook_when_a_chained_one_exists_and_changes_nothing() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let hooks_dir = git_path_hooks(&env, &repo);
    write_hook(&hooks_dir.join("pre-push"), "#!/bin/sh\necho old\n", 0o755);
    env.hand(&repo, &["install"]).ok();
    // Another tool overwrites our shim with its own hook.
    write_hook(&hooks_dir.join("pre-push"), "#!/bin/sh\necho new\n", 0o700);
    fs::remove_file(hooks_dir.join("post-checkout")).unwrap();
    let before = snapshot(&hooks_dir);
    for args in [&["install"][..], &["install", "--force"]] {
        let run = env.hand(&repo, args).code(3);
        assert!(run.stderr.contains("will not choose"), "{}", run.stderr);
        assert!(
            run.stderr.contains("keep both: append what")
                && run.stderr.contains("then run: git hand install"),
            "{}",
            run.stderr
        );
        assert_eq!(
            snapshot(&hooks_dir),
            before,
            "{args:?} changed the hooks dir"
        );
    }
    let json = env.hand(&repo, &["install", "--json"]).code(3).json();
    assert_eq!(json["error"]["kind"], "precondition");
    assert_eq!(
        fs::read_to_string(hooks_dir.join("pre-push.git-hand-chained")).unwrap(),
        "#!/bin/sh\necho old\n"
    );
    assert_eq!(
        fs::read_to_string(hooks_dir.join("pre-push")).unwrap(),
        "#!/bin/sh\necho new\n"
    );
}

#[test]
fn uninstall_restores_the_foreign_hook_byte_for_byte_and_mode_for_mode() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let hooks_dir = git_path_hooks(&env, &repo);
    let foreign = b"#!/bin/sh\n# \xc3\xa9t\xc3\xa9, no trailing newline\nexit 0";
    fs::write(hooks_dir.join("post-checkout"), foreign).unwrap();
    fs::set_permissions(
        hooks_dir.join("post-checkout"),
        fs::Permissions::from_mode(0o711),
    )
    .unwrap();
    let before = snapshot(&hooks_dir);
    env.hand(&repo, &["install"]).ok();
    let run = env.hand(&repo, &["uninstall", "--json"]).code(0);
    assert_eq!(run.json()["outcome"], "uninstalled");
    assert_eq!(
        changes(&run),
        [
            pair("pre-push", "removed"),
            pair("post-checkout", "restored"),
            pair("reference-transaction", "removed"),
        ]
    );
    assert_eq!(snapshot(&hooks_dir), before);
    assert_eq!(fs::read(hooks_dir.join("post-checkout")).unwrap(), foreign);
    assert_eq!(mode(&hooks_dir.join("post-checkout")), 0o711);
}

#[test]
fn uninstall_leaves_nothing_of_ours_behind() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let hooks_dir = git_path_hooks(&env, &repo);
    let before = snapshot(&hooks_dir);
    env.hand(&repo, &["install"]).ok();
    // A temp file a crashed install would have left.
    fs::write(hooks_dir.join(".git-hand-tmp-crashed"), "partial").unwrap();
    let text = env.hand(&repo, &["uninstall"]).ok();
    assert!(text.contains("removed"), "{text}");
    assert_eq!(snapshot(&hooks_dir), before);
}

#[test]
fn uninstall_with_nothing_installed_succeeds_and_says_so() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let text = env.hand(&repo, &["uninstall"]).ok();
    assert!(text.contains("nothing to uninstall"), "{text}");
    let json = env.hand(&repo, &["uninstall", "--json"]).code(0).json();
    assert_eq!(json["outcome"], "nothing-installed");
}

#[test]
fn uninstall_leaves_a_foreign_hook_that_was_never_chained_alone() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let hooks_dir = git_path_hooks(&env, &repo);
    write_hook(&hooks_dir.join("pre-push"), "#!/bin/sh\nexit 0\n", 0o755);
    let before = snapshot(&hooks_dir);
    let run = env.hand(&repo, &["uninstall", "--json"]).code(0);
    assert_eq!(changes(&run)[0], pair("pre-push", "not-ours"));
    assert_eq!(snapshot(&hooks_dir), before);
}

#[test]
fn uninstall_refuses_to_restore_a_chained_hook_over_a_newer_foreign_one() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let hooks_dir = git_path_hooks(&env, &repo);
    write_hook(&hooks_dir.join("pre-push"), "#!/bin/sh\necho old\n", 0o755);
    env.hand(&repo, &["install"]).ok();
    write_hook(&hooks_dir.join("pre-push"), "#!/bin/sh\necho new\n", 0o755);
    let before = snapshot(&hooks_dir);
    let run = env.hand(&repo, &["uninstall"]).code(3);
    assert!(run.stderr.contains("changed nothing"), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("hint: restore the chained hook instead: mv")
    );
    assert_eq!(snapshot(&hooks_dir), before);
}

#[test]
fn core_hooks_path_install_writes_nothing_anywhere_exits_3_and_prints_the_one_recipe_that_applies()
{
    let env = TestEnv::new();
    let repo = env.repo("r");
    env.git(&repo, &["config", "core.hooksPath", ".husky"]);
    let before = snapshot(&repo);
    let run = env.hand(&repo, &["install"]).code(3);
    assert_eq!(snapshot(&repo), before, "install wrote something");
    assert!(!repo.join(".husky").exists());
    let all = format!("{}{}", run.stdout, run.stderr);
    // Plain hook files in .husky (no manager git-hand recognises): the hand-written recipe only.
    for line in [
        ".husky/pre-push:",
        "git-hand hook pre-push \"$@\" || exit $?",
        ".husky/post-checkout:",
        "git-hand hook post-checkout \"$@\"",
    ] {
        assert!(all.contains(line), "missing {line:?} in:\n{all}");
    }
    for other in ["lefthook", "pre-commit", "use_stdin"] {
        assert!(!run.stdout.contains(other), "{other:?} in:\n{}", run.stdout);
    }
    assert!(
        run.stderr
            .contains("git-hand: error: core.hooksPath is set to .husky")
    );
    assert!(run.stderr.contains("git hand install --hooks-path"));
    let json = env.hand(&repo, &["install", "--json"]).code(3).json();
    assert_eq!(json["outcome"], "refused");
    assert_eq!(json["hooks_path"], ".husky");
    assert_eq!(json["manager"], "hand-written");
    assert!(
        json["recipe"]
            .as_str()
            .unwrap()
            .contains(".husky/pre-push:")
    );
    assert_eq!(snapshot(&repo), before);
}

#[test]
fn core_hooks_path_install_with_the_hooks_path_flag_installs_into_that_dir() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    env.git(&repo, &["config", "core.hooksPath", ".husky"]);
    let husky = repo.join(".husky");
    write_hook(&husky.join("pre-push"), "#!/bin/sh\nnpm test\n", 0o755);
    let default_before = snapshot(&repo.join(".git/hooks"));
    let run = env
        .hand(&repo, &["install", "--hooks-path", "--json"])
        .code(0);
    assert_eq!(run.json()["hooks_dir"], husky.to_str().unwrap());
    assert_eq!(
        changes(&run),
        [
            pair("pre-push", "chained"),
            pair("post-checkout", "installed"),
            pair("reference-transaction", "installed"),
        ]
    );
    assert_eq!(
        fs::read_to_string(husky.join("pre-push.git-hand-chained")).unwrap(),
        "#!/bin/sh\nnpm test\n"
    );
    assert_eq!(snapshot(&repo.join(".git/hooks")), default_before);
    // Uninstall finds them there too and puts the chained hook back.
    env.hand(&repo, &["uninstall"]).ok();
    assert_eq!(
        fs::read_to_string(husky.join("pre-push")).unwrap(),
        "#!/bin/sh\nnpm test\n"
    );
    assert!(!husky.join("post-checkout").exists());
}

#[test]
fn install_manual_writes_nothing_and_exits_zero() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let before = snapshot(&repo);
    let plain = env.hand(&repo, &["install", "--manual"]).ok();
    assert_eq!(snapshot(&repo), before);
    let hooks_dir = git_path_hooks(&env, &repo);
    assert!(
        plain.contains(&format!("# {}:\n", hooks_dir.join("pre-push").display())),
        "{plain}"
    );
    assert!(
        plain.contains("git-hand hook pre-push \"$@\" || exit $?"),
        "{plain}"
    );
    env.git(&repo, &["config", "core.hooksPath", ".husky"]);
    let before_husky = snapshot(&repo);
    let husky = env.hand(&repo, &["install", "--manual"]).ok();
    assert!(husky.contains("git-hand hook pre-push \"$@\""), "{husky}");
    let json = env
        .hand(&repo, &["install", "--manual", "--json"])
        .code(0)
        .json();
    assert_eq!(json["outcome"], "manual");
    assert_eq!(json["manager"], "hand-written");
    assert!(
        json["recipe"]
            .as_str()
            .unwrap()
            .contains(".husky/pre-push:")
    );
    assert_eq!(snapshot(&repo), before_husky);
}

/// The binary under test, as the shims it writes record it.
fn bin() -> PathBuf {
    fs::canonicalize(crate::support::BIN).unwrap()
}

/// Installs the hooks with a copy of git-hand that is then deleted: shims recording a git-hand
/// that is gone, as after an uninstalled or moved install.
fn install_with_a_git_hand_that_then_vanishes(env: &TestEnv, repo: &Path) {
    let dir = env.path("vanished");
    fs::create_dir_all(&dir).unwrap();
    let copy = dir.join("git-hand");
    fs::copy(bin(), &copy).unwrap();
    let mut install = env.command(&copy, repo);
    install.args(["install", "--force"]);
    let run = Run::from(crate::support::output_of_fresh_executable(&mut install));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let shim = fs::read_to_string(git_path_hooks(env, repo).join("pre-push")).unwrap();
    assert!(shim.contains(&format!("='{}'", copy.display())), "{shim}");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn install_off_path_records_where_git_hand_is_and_does_not_warn() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    assert_git_hand_not_reachable_without_bin_dir();
    let run = env
        .hand_env(
            &repo,
            &["install", "--json"],
            &[("PATH", PATH_WITHOUT_HAND)],
        )
        .code(0);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    let json = run.json();
    assert_eq!(json["git_hand"], serde_json::Value::Null);
    assert!(json["warnings"].as_array().unwrap().is_empty());
    let shim = fs::read_to_string(git_path_hooks(&env, &repo).join("pre-push")).unwrap();
    assert!(shim.contains(&format!("git_hand_installed='{}'", bin().display())));
}

#[test]
fn a_push_with_a_minimal_path_reaches_the_git_hand_the_shim_recorded() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    assert_git_hand_not_reachable_without_bin_dir();
    env.hand(&repo, &["install"]).ok();
    let a = crate::support::spawn(&env, &repo, "a", &[]);
    let slot = crate::support::path_of(&a);
    env.hand(&repo, &["teardown", "a"]).ok();
    crate::support::spawn(&env, &repo, "b", &[]);
    env.commit(&slot, "late", "late\n");
    // A GUI client or cron: PATH without git-hand, a's old credential. git-hand still judges.
    let zombie = env
        .command("git", &slot)
        .env("PATH", PATH_WITHOUT_HAND)
        .env("GIT_HAND_LEASE", a["lease_id"].as_str().unwrap())
        .env("GIT_HAND_TOKEN", a["token"].to_string())
        .args(["push", "origin", "HEAD:refs/heads/zombie"])
        .output()
        .unwrap();
    let zombie = Run::from(zombie);
    assert_ne!(zombie.code, 0, "{}", zombie.stderr);
    assert!(
        zombie.stderr.contains("git-hand: push refused (stale)"),
        "{}",
        zombie.stderr
    );
    // The main worktree (never leased) pushes as before, with no warning.
    env.commit(&repo, "file", "change\n");
    let push = git_without_hand(&env, &repo, &["push", "-q", "origin", "main"]);
    assert_eq!(push.code, 0, "{}", push.stderr);
    assert!(push.stderr.is_empty(), "{}", push.stderr);
}

#[test]
fn without_any_git_hand_a_worktree_never_leased_pushes_with_a_warning_and_its_chained_hook() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let origin = env.path("work/r-origin.git");
    assert_git_hand_not_reachable_without_bin_dir();
    let out = env.path("out");
    fs::create_dir(&out).unwrap();
    write_hook(
        &git_path_hooks(&env, &repo).join("pre-push"),
        &recording_hook(&out),
        0o755,
    );
    install_with_a_git_hand_that_then_vanishes(&env, &repo);
    let sha = env.commit(&repo, "file", "change\n");
    let push = git_without_hand(&env, &repo, &["push", "-q", "origin", "main"]);
    assert_eq!(
        push.code, 0,
        "a worktree git-hand never leased was blocked:\n{}",
        push.stderr
    );
    assert!(
        push.stderr
            .contains("git-hand: warning: git-hand is not on PATH"),
        "{}",
        push.stderr
    );
    assert_eq!(env.git(&origin, &["rev-parse", "main"]), sha);
    // The chained hook ran with git's arguments and stdin.
    assert!(
        fs::read_to_string(out.join("args"))
            .unwrap()
            .starts_with("origin\n")
    );
    assert!(
        fs::read_to_string(out.join("stdin"))
            .unwrap()
            .contains(&sha)
    );
}

#[test]
fn without_any_git_hand_a_leased_slot_fails_closed() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let origin = env.path("work/r-origin.git");
    assert_git_hand_not_reachable_without_bin_dir();
    let a = crate::support::spawn(&env, &repo, "a", &[]);
    let slot = crate::support::path_of(&a);
    install_with_a_git_hand_that_then_vanishes(&env, &repo);
    env.commit(&slot, "file", "change\n");
    // The stamp alone (no credential in the environment) marks the worktree as leased.
    let push = git_without_hand(&env, &slot, &["push", "origin", "hand/a"]);
    assert_ne!(push.code, 0, "the push went through:\n{}", push.stderr);
    assert!(
        push.stderr.contains(
            "this worktree is leased by git-hand, so its lease cannot be checked: push refused"
        ),
        "{}",
        push.stderr
    );
    assert!(push.stderr.contains("git-hand: fix: install git-hand"));
    assert!(!push.stderr.contains("--no-verify"));
    let remote = env.git_run(&origin, &["rev-parse", "--verify", "-q", "hand/a"]);
    assert_ne!(remote.code, 0, "hand/a reached the remote");
}

#[test]
fn post_checkout_only_warns_when_git_hand_is_nowhere() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    assert_git_hand_not_reachable_without_bin_dir();
    install_with_a_git_hand_that_then_vanishes(&env, &repo);
    let checkout = git_without_hand(&env, &repo, &["checkout", "-q", "-b", "x"]);
    assert_eq!(checkout.code, 0, "{}", checkout.stderr);
    let warnings: Vec<&str> = checkout.stderr.lines().collect();
    assert_eq!(warnings.len(), 1, "{}", checkout.stderr);
    assert!(warnings[0].starts_with("git-hand: warning: git-hand is not on PATH"));
    let switch = git_without_hand(&env, &repo, &["switch", "-q", "main"]);
    assert_eq!(switch.code, 0, "{}", switch.stderr);
}

#[test]
fn post_checkout_without_git_hand_still_runs_the_chained_hook() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    assert_git_hand_not_reachable_without_bin_dir();
    let out = env.path("out");
    fs::create_dir(&out).unwrap();
    let hooks_dir = git_path_hooks(&env, &repo);
    write_hook(
        &hooks_dir.join("post-checkout"),
        &recording_hook(&out),
        0o755,
    );
    install_with_a_git_hand_that_then_vanishes(&env, &repo);
    let head = env.git(&repo, &["rev-parse", "HEAD"]);
    let checkout = git_without_hand(&env, &repo, &["checkout", "-q", "-b", "y"]);
    assert_eq!(checkout.code, 0, "{}", checkout.stderr);
    assert_eq!(
        fs::read_to_string(out.join("args")).unwrap(),
        format!("{head}\n{head}\n1\n")
    );
}

/// Inside a `git-hand hook` of the same operation (`GIT_HAND_IN_HOOK`, the shared re-entry
/// marker), the shims start no git-hand at all: the outer one judges.
#[test]
fn the_shims_start_no_git_hand_inside_a_git_hand_hook_of_the_same_name() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    env.hand(&repo, &["install"]).ok();
    let fake_bin = env.path("fake-bin");
    let started = env.path("started");
    write_hook(
        &fake_bin.join("git-hand"),
        &format!(
            "#!/bin/sh\necho \"$2\" >> '{}'\nexit 1\n",
            started.display()
        ),
        0o755,
    );
    let path = format!("{}:{PATH_WITHOUT_HAND}", fake_bin.display());
    env.commit(&repo, "file", "change\n");
    // The marker as git-hand sets it for its chain: bound to the PATH the hook runs with (git's
    // exec path in front of the caller's).
    let exec_path = env.git(&repo, &["--exec-path"]);
    let hook_path = format!("{exec_path}:{path}");
    let git = |hook: &str, bound: &str, args: &[&str]| {
        Run::from(
            env.command("git", &repo)
                .env("PATH", &path)
                .env("GIT_HAND_IN_HOOK", hook)
                .env("GIT_HAND_IN_HOOK_PATH", bound)
                .args(args)
                .output()
                .unwrap(),
        )
    };
    let push = ["push", "-q", "origin", "main"];
    assert_eq!(git("pre-push", &hook_path, &push).code, 0);
    let checkout = ["checkout", "-q", "-b", "x"];
    assert_eq!(git("post-checkout", &hook_path, &checkout).code, 0);
    assert!(!started.exists(), "a shim started git-hand");
    // Another hook's marker does not stop this one.
    assert_ne!(
        git(
            "post-checkout",
            &hook_path,
            &["push", "-q", "origin", "HEAD:y"]
        )
        .code,
        0
    );
    assert_eq!(fs::read_to_string(&started).unwrap(), "pre-push\n");
    // Nor does a marker bound to another PATH (one a git below the chain, or an agent started
    // there, inherited): that push is judged.
    assert_ne!(
        git("pre-push", &path, &["push", "-q", "origin", "HEAD:z"]).code,
        0
    );
    assert_eq!(
        fs::read_to_string(&started).unwrap(),
        "pre-push\npre-push\n"
    );
}

/// The contract between the shim and the binary, checked with a stand-in `git-hand` first on
/// PATH: it gets `hook pre-push` and git's arguments, git's stdin, and an absolute
/// `GIT_HAND_HOOK_DIR` naming the hooks directory, so it can run the chained hook.
#[test]
fn the_pre_push_shim_hands_git_hand_its_arguments_stdin_and_hook_dir() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let origin = env.path("work/r-origin.git");
    env.hand(&repo, &["install"]).ok();
    let out = env.path("out");
    let fake_bin = env.path("fake-bin");
    fs::create_dir_all(&out).unwrap();
    let fake = format!(
        "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{o}/args'\ncat > '{o}/stdin'\n\
         printf '%s' \"$GIT_HAND_HOOK_DIR\" > '{o}/dir'\nexit 1\n",
        o = out.display()
    );
    write_hook(&fake_bin.join("git-hand"), &fake, 0o755);
    let sha = env.commit(&repo, "file", "change\n");
    let before = env.git(&origin, &["rev-parse", "main"]);
    let path = format!("{}:{PATH_WITHOUT_HAND}", fake_bin.display());
    let push = env
        .timed("git", &repo)
        .env("PATH", path)
        .args(["push", "-q", "origin", "main"])
        .output()
        .unwrap();
    assert!(!push.status.success(), "the stand-in refused, so must git");
    assert_eq!(
        fs::read_to_string(out.join("args")).unwrap(),
        format!("hook\npre-push\norigin\n{}\n", origin.display())
    );
    assert_eq!(
        fs::read_to_string(out.join("stdin")).unwrap(),
        format!("refs/heads/main {sha} refs/heads/main {before}\n")
    );
    assert_eq!(
        PathBuf::from(fs::read_to_string(out.join("dir")).unwrap()),
        git_path_hooks(&env, &repo)
    );
}

#[test]
fn run_chained_gives_the_foreign_hook_the_same_arguments_and_stdin() {
    let env = TestEnv::new();
    let dir = env.path("hooks");
    let out = env.path("out");
    fs::create_dir_all(&out).unwrap();
    write_hook(
        &dir.join("pre-push.git-hand-chained"),
        &recording_hook(&out),
        0o700,
    );
    let args: Vec<OsString> = vec!["origin".into(), "git@example.com:o/r .git".into()];
    let stdin = b"refs/heads/main 1111 refs/heads/main 2222\nrefs/tags/v1 3333 refs/tags/v1 0000\n";
    let status = run_chained(HookName::PrePush, Some(&dir), &args, stdin)
        .unwrap()
        .expect("a chained hook ran");
    assert!(status.success());
    assert_eq!(
        fs::read_to_string(out.join("args")).unwrap(),
        "origin\ngit@example.com:o/r .git\n"
    );
    assert_eq!(fs::read(out.join("stdin")).unwrap(), stdin);
    assert_eq!(
        PathBuf::from(fs::read_to_string(out.join("pwd")).unwrap().trim_end()),
        fs::canonicalize(std::env::current_dir().unwrap()).unwrap()
    );
}

#[test]
fn run_chained_returns_the_foreign_hooks_failure_status() {
    let env = TestEnv::new();
    let dir = env.path("hooks");
    write_hook(
        &dir.join("pre-push.git-hand-chained"),
        "#!/bin/sh\nexit 7\n",
        0o755,
    );
    let status = run_chained(HookName::PrePush, Some(&dir), &[], b"")
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(7));
}

#[test]
fn run_chained_without_an_executable_chained_hook_returns_none() {
    let env = TestEnv::new();
    let dir = env.path("hooks");
    fs::create_dir_all(&dir).unwrap();
    assert!(
        run_chained(HookName::PostCheckout, Some(&dir), &[], b"")
            .unwrap()
            .is_none()
    );
    // git skips a hook without an execute bit, and so does the chain.
    write_hook(
        &dir.join("post-checkout.git-hand-chained"),
        "#!/bin/sh\nexit 3\n",
        0o644,
    );
    assert!(
        run_chained(HookName::PostCheckout, Some(&dir), &[], b"")
            .unwrap()
            .is_none()
    );
}

#[test]
fn run_chained_runs_a_hook_without_a_shebang_through_sh_as_git_does() {
    let env = TestEnv::new();
    let dir = env.path("hooks");
    write_hook(
        &dir.join("post-checkout.git-hand-chained"),
        "exit \"$3\"\n",
        0o755,
    );
    let args: Vec<OsString> = vec!["a".into(), "b".into(), "5".into()];
    let status = run_chained(HookName::PostCheckout, Some(&dir), &args, b"")
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(5));
}

#[test]
fn run_chained_does_not_hang_when_the_hook_ignores_a_large_stdin() {
    let env = TestEnv::new();
    let dir = env.path("hooks");
    write_hook(
        &dir.join("pre-push.git-hand-chained"),
        "#!/bin/sh\nexit 0\n",
        0o755,
    );
    let stdin = vec![b'x'; 4 << 20];
    let status = run_chained(HookName::PrePush, Some(&dir), &[], &stdin)
        .unwrap()
        .unwrap();
    assert!(status.success());
}

#[test]
fn parallel_installs_never_lose_a_foreign_hook() {
    for round in 0..10 {
        let env = TestEnv::new();
        let dir = env.path("hooks");
        let foreign = format!("#!/bin/sh\necho round {round}\n");
        write_hook(&dir.join("pre-push"), &foreign, 0o700);
        let results: Vec<_> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..4)
                .map(|_| s.spawn(|| install_into(&dir, Rewrite::IfStale)))
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        for result in &results {
            assert!(result.is_ok(), "round {round}: {result:?}");
        }
        let chained = results
            .iter()
            .flatten()
            .filter(|changes| changes[0].change == Change::Chained)
            .count();
        assert!(chained >= 1, "round {round}: nobody chained");
        assert_eq!(
            fs::read_to_string(dir.join("pre-push.git-hand-chained")).unwrap(),
            foreign
        );
        assert_eq!(mode(&dir.join("pre-push.git-hand-chained")), 0o700);
        assert_eq!(
            fs::read_to_string(dir.join("pre-push")).unwrap(),
            hooks::shim::content(HookName::PrePush)
        );
    }
}

#[test]
fn an_interrupted_chain_is_finished_by_install_and_undone_by_uninstall() {
    let env = TestEnv::new();
    let dir = env.path("hooks");
    let foreign = "#!/bin/sh\nexit 0\n";
    write_hook(&dir.join("pre-push"), foreign, 0o755);
    // The state between the chain's two steps: the foreign hook under both names.
    fs::hard_link(dir.join("pre-push"), dir.join("pre-push.git-hand-chained")).unwrap();
    let before = snapshot(&dir);
    let removed = uninstall_from(&dir).unwrap();
    assert_eq!(removed[0].change, Change::Restored);
    assert_eq!(fs::read_to_string(dir.join("pre-push")).unwrap(), foreign);
    assert!(!dir.join("pre-push.git-hand-chained").exists());
    fs::hard_link(dir.join("pre-push"), dir.join("pre-push.git-hand-chained")).unwrap();
    assert_eq!(snapshot(&dir).len(), before.len());
    let installed = install_into(&dir, Rewrite::IfStale).unwrap();
    assert_eq!(installed[0].change, Change::Chained);
    assert_eq!(
        fs::read_to_string(dir.join("pre-push.git-hand-chained")).unwrap(),
        foreign
    );
}

#[test]
fn a_hook_path_that_is_a_directory_is_an_error_not_a_write() {
    let env = TestEnv::new();
    let dir = env.path("hooks");
    fs::create_dir_all(dir.join("pre-push")).unwrap();
    let err = install_into(&dir, Rewrite::IfStale).unwrap_err();
    assert!(matches!(err, HookError::NotAFile { .. }), "{err}");
    assert!(!dir.join("post-checkout").exists());
}

/// Pins `core.hooksPath` in the repository's own config, so the library's git (which inherits
/// this process's environment, not TestEnv's) cannot be redirected by the host's global config.
fn pin_hooks_path(env: &TestEnv, repo: &Path, value: &str) {
    env.git(repo, &["config", "core.hooksPath", value]);
}

#[test]
fn ensure_installed_installs_missing_hooks_when_hooks_path_names_the_repos_own_dir() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let own = repo.join(".git/hooks");
    pin_hooks_path(&env, &repo, own.to_str().unwrap());
    let report = hooks::ensure_installed(&Git::new(&repo)).unwrap();
    assert_eq!(report.hooks_dir, own);
    let written: Vec<_> = report.changes.iter().map(|c| (c.hook, c.change)).collect();
    assert_eq!(
        written,
        [
            (HookName::PrePush, Change::Installed),
            (HookName::PostCheckout, Change::Installed),
            (HookName::ReferenceTransaction, Change::Installed),
        ]
    );
    // The shims reach git-hand on PATH, else at the path they record (this executable's).
    let on_path = hooks::shim::reachable().is_some();
    assert_eq!(report.in_force(), on_path);
    assert_eq!(
        matches!(report.problem, Some(NotInForce::NotOnPath)),
        !on_path
    );
    let again = hooks::ensure_installed(&Git::new(&repo)).unwrap();
    assert!(again.changes.is_empty());
    let state = hooks::installed_state(&Git::new(&repo)).unwrap();
    assert!(state.hooks.iter().all(|h| h.file == FileState::Current));
    assert_eq!(state.in_force(), on_path);
}

#[test]
fn ensure_installed_never_writes_into_a_hooks_path_dir_and_says_why() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    pin_hooks_path(&env, &repo, ".husky");
    let before = snapshot(&repo);
    let report = hooks::ensure_installed(&Git::new(&repo)).unwrap();
    assert_eq!(snapshot(&repo), before);
    assert!(!report.in_force());
    let Some(problem @ NotInForce::HooksPath { value, dir }) = &report.problem else {
        panic!("{:?}", report.problem);
    };
    assert_eq!(value, ".husky");
    assert_eq!(dir, &repo.join(".husky"));
    assert!(
        problem.to_string().contains("will NOT be refused"),
        "{problem}"
    );
    assert!(
        problem
            .hints()
            .iter()
            .any(|h| git_hand::cli::hint::line(h).contains("--manual"))
    );
}

#[test]
fn installed_state_tells_current_stale_and_foreign_hooks_apart() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let own = repo.join(".git/hooks");
    pin_hooks_path(&env, &repo, own.to_str().unwrap());
    write_hook(&own.join("pre-push"), "#!/bin/sh\nexit 0\n", 0o755);
    let git = Git::new(&repo);
    let files = |git: &Git| -> Vec<FileState> {
        let state = hooks::installed_state(git).unwrap();
        state.hooks.iter().map(|h| h.file).collect()
    };
    assert_eq!(
        files(&git),
        [FileState::Foreign, FileState::Missing, FileState::Missing]
    );
    let opts = hooks::InstallOptions {
        target: hooks::Target::Default,
        force: false,
    };
    hooks::install(&git, opts).unwrap();
    let state = hooks::installed_state(&git).unwrap();
    assert_eq!(
        state.hooks[0].chained,
        Some(own.join("pre-push.git-hand-chained"))
    );
    write_hook(
        &own.join("post-checkout"),
        "#!/bin/sh\n# git-hand-managed-hook v0\nexec git-hand hook post-checkout \"$@\"\n",
        0o755,
    );
    assert_eq!(
        files(&git),
        [FileState::Current, FileState::Stale, FileState::Current]
    );
    fs::set_permissions(own.join("pre-push"), fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(
        files(&git),
        [
            FileState::NotExecutable,
            FileState::Stale,
            FileState::Current
        ]
    );
    assert!(!hooks::installed_state(&git).unwrap().in_force());
}

#[test]
fn the_library_install_refuses_a_hooks_path_dir_even_with_force() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    pin_hooks_path(&env, &repo, ".husky");
    let err = hooks::install(
        &Git::new(&repo),
        hooks::InstallOptions {
            target: hooks::Target::Default,
            force: true,
        },
    )
    .unwrap_err();
    assert!(matches!(err, HookError::HooksPathSet { .. }), "{err}");
    assert!(err.is_precondition());
    assert!(!repo.join(".husky").exists());
}

#[test]
fn run_chained_never_runs_a_copy_of_our_own_shim_which_would_recurse() {
    let env = TestEnv::new();
    let dir = env.path("hooks");
    write_hook(
        &dir.join("pre-push.git-hand-chained"),
        hooks::shim::content(HookName::PrePush),
        0o755,
    );
    assert!(
        run_chained(HookName::PrePush, Some(&dir), &[], b"")
            .unwrap()
            .is_none()
    );
}
