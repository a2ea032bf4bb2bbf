//! Pinned output (issue 12): what git-hand prints, as snapshots with the exit status, so a change
//! of a user-visible word is a reviewed diff. The refusal of every verdict as the pre-push hook,
//! the reference-transaction hook, `check` and `status` print it; the text of `git hand`, `list`,
//! `status` and `log`; every `--json` shape (parsed, so key order is no change).
//!
//! The snapshots are the files in `tests/it/snapshots/`. What varies between runs (temporary
//! paths, lease ids, commit ids, times, durations, pids) is replaced by `support::normalize`.
//! A snapshot that differs, or is missing, fails `cargo test` (insta writes the new output
//! beside it as `.snap.new` locally, and nothing under `CI=true`). To accept a change of wording
//! after reading the diff:
//!
//! ```sh
//! INSTA_UPDATE=always cargo test --locked pinned::   # rewrites the .snap files; review `git diff`
//! cargo insta review                                 # the same, one snapshot at a time (cargo-insta)
//! ```

use std::path::Path;

use crate::support::{
    NEVER_GRANTED, Shown, TestEnv, cred, git_with, installed, leased_again, path_of, shot, spawn,
};

/// The environment pairs of a credential, for `hand_env`.
fn pairs(vars: &[(String, String)]) -> Vec<(&str, &str)> {
    vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

/// A credential of our own making: `GIT_HAND_LEASE=lease`, `GIT_HAND_TOKEN=token`.
fn credential(lease: &str, token: &str) -> Vec<(String, String)> {
    vec![
        ("GIT_HAND_LEASE".into(), lease.into()),
        ("GIT_HAND_TOKEN".into(), token.into()),
    ]
}

/// The pre-push hook's refusal in `slot` for a holder presenting `vars` (`who` names them in the
/// label): `git push origin HEAD:refs/heads/<branch>`.
fn pre_push(
    env: &TestEnv,
    slot: &Path,
    vars: &[(String, String)],
    who: &str,
    branch: &str,
) -> String {
    let target = format!("HEAD:refs/heads/{branch}");
    let run = git_with(env, slot, vars, &["push", "origin", &target]);
    shot(
        env,
        &format!("git push origin {target}   # {who}"),
        &run,
        Shown::Hook,
    )
}

/// The reference-transaction hook's refusal: an empty commit in `slot` presenting `vars`.
fn ref_update(env: &TestEnv, slot: &Path, vars: &[(String, String)], who: &str) -> String {
    let run = git_with(
        env,
        slot,
        vars,
        &["commit", "-q", "--allow-empty", "-m", "late work"],
    );
    shot(
        env,
        &format!("git commit --allow-empty   # {who}"),
        &run,
        Shown::Hook,
    )
}

/// `git hand check` and `git hand status`, text and `--json`, in `dir` presenting `vars`.
fn check_and_status(env: &TestEnv, dir: &Path, vars: &[(String, String)], who: &str) -> String {
    let mut out = String::new();
    for (verb, shown) in [
        ("check", Shown::Text),
        ("check --json", Shown::Json),
        ("status", Shown::Text),
        ("status --json", Shown::Json),
    ] {
        let args: Vec<&str> = verb.split(' ').collect();
        let run = env.hand_env(dir, &args, &pairs(vars));
        out += &shot(env, &format!("git hand {verb}   # {who}"), &run, shown);
    }
    out
}

/// Every surface that prints a verdict's refusal, in `slot`, for a holder presenting `vars`.
fn every_surface(
    env: &TestEnv,
    slot: &Path,
    vars: &[(String, String)],
    who: &str,
    branch: &str,
) -> String {
    pre_push(env, slot, vars, who, branch)
        + &ref_update(env, slot, vars, who)
        + &check_and_status(env, slot, vars, who)
}

#[test]
fn stale_refusal_on_every_surface() {
    let (env, repo) = installed();
    let (slot, a, b) = leased_again(&env, &repo, "a", "b");
    env.commit(&slot, "b.txt", "b's work\n");
    let text = every_surface(&env, &slot, &cred(&a), "a's credential", "hand/b")
        + &check_and_status(&env, &slot, &cred(&b), "b's credential");
    insta::assert_snapshot!("refusal_stale", text);
}

#[test]
fn expired_refusal_on_every_surface() {
    let (env, repo) = installed();
    let a = spawn(&env, &repo, "a", &["--ttl", "1s"]);
    let slot = path_of(&a);
    env.commit(&slot, "a.txt", "a's work\n");
    // Real time passing for a 1 s lease to expire.
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let text = every_surface(&env, &slot, &cred(&a), "a's credential", "hand/a");
    insta::assert_snapshot!("refusal_expired", text);
}

#[test]
fn released_refusal_on_every_surface_with_and_without_a_credential() {
    let (env, repo) = installed();
    let a = spawn(&env, &repo, "a", &[]);
    let slot = path_of(&a);
    env.commit(&slot, "a.txt", "a's work\n");
    env.hand(&repo, &["teardown", "a", "--force"]).ok();
    let text = every_surface(&env, &slot, &cred(&a), "a's credential", "hand/a")
        + &pre_push(&env, &slot, &[], "no credential", "hand/a")
        + &check_and_status(&env, &slot, &[], "no credential");
    insta::assert_snapshot!("refusal_released", text);
}

#[test]
fn unknown_lease_refusal_on_every_surface_for_each_reason() {
    let (env, repo) = installed();
    let a = spawn(&env, &repo, "a", &[]);
    let c = spawn(&env, &repo, "c", &[]);
    let slot = path_of(&a);
    env.commit(&slot, "a.txt", "a's work\n");
    let never = credential(NEVER_GRANTED, "1");
    let wrong_token = credential(a["lease_id"].as_str().unwrap(), "7");
    let unparsable = credential("not-a-lease", "1");
    let text = every_surface(&env, &slot, &never, "a lease never granted", "hand/a")
        + &pre_push(
            &env,
            &slot,
            &wrong_token,
            "a's lease with token 7",
            "hand/a",
        )
        + &env_check(&env, &slot, &wrong_token, "a's lease with token 7")
        + &pre_push(
            &env,
            &slot,
            &unparsable,
            "a lease id that does not parse",
            "hand/a",
        )
        + &ref_update(&env, &slot, &unparsable, "a lease id that does not parse")
        + &env_check(&env, &slot, &unparsable, "a lease id that does not parse")
        + &pre_push(
            &env,
            &slot,
            &cred(&c),
            "c's credential (another slot)",
            "hand/a",
        )
        + &env_check(&env, &slot, &cred(&c), "c's credential (another slot)");
    // A leased slot whose stamp is gone, and no credential: nothing to judge but the lease.
    let admin = env.git(&slot, &["rev-parse", "--absolute-git-dir"]);
    std::fs::remove_file(Path::new(&admin).join("git-hand-stamp")).unwrap();
    let text = text
        + &pre_push(&env, &slot, &[], "no credential, no stamp", "hand/a")
        + &env_check(&env, &slot, &[], "no credential, no stamp");
    insta::assert_snapshot!("refusal_unknown_lease", text);
}

/// `git hand check` alone, text.
fn env_check(env: &TestEnv, dir: &Path, vars: &[(String, String)], who: &str) -> String {
    let run = env.hand_env(dir, &["check"], &pairs(vars));
    shot(env, &format!("git hand check   # {who}"), &run, Shown::Text)
}

#[test]
fn no_credential_refusal_on_every_surface_under_require_credential() {
    let (env, repo) = installed();
    let a = spawn(&env, &repo, "a", &[]);
    let slot = path_of(&a);
    env.commit(&slot, "a.txt", "a's work\n");
    env.git(&repo, &["config", "hand.requireCredential", "true"]);
    // install keeps the slots' marker in step with the setting, so the shim judges ref updates.
    env.hand(&repo, &["install"]).ok();
    let text = every_surface(&env, &slot, &[], "no credential", "hand/a");
    insta::assert_snapshot!("refusal_no_credential", text);
}

#[test]
fn issue_lost_refusal_on_every_surface() {
    let (env, repo) = installed();
    let a = spawn(&env, &repo, "a", &["--issue", "42", "--holder", "alice"]);
    let slot = path_of(&a);
    env.commit(&slot, "a.txt", "a's work\n");
    // Someone releases alice's issue lease by hand and bob takes the issue; her slot lease lives.
    env.hand(&repo, &["lease", "release", "42", "--holder", "alice"])
        .ok();
    env.hand(&repo, &["lease", "acquire", "42", "--holder", "bob"])
        .ok();
    let text = every_surface(&env, &slot, &cred(&a), "a's credential", "hand/a");
    insta::assert_snapshot!("refusal_issue_lost", text);
}

#[test]
fn branch_fenced_refusal_on_every_surface() {
    let (env, repo) = installed();
    let x = spawn(&env, &repo, "x", &[]);
    let y = spawn(&env, &repo, "y", &[]);
    let y_slot = path_of(&y);
    env.commit(&y_slot, "y.txt", "y's work\n");
    git_with(
        &env,
        &y_slot,
        &cred(&y),
        &["push", "-q", "-u", "origin", "hand/y"],
    )
    .ok();
    // The main worktree (unmanaged) on a branch whose upstream is the live task's branch.
    env.git(&repo, &["fetch", "-q", "origin"]);
    env.git(
        &repo,
        &["switch", "-q", "-c", "mine", "--track", "origin/hand/y"],
    );
    env.commit(&repo, "mine.txt", "mine\n");
    // x's holder moves y's branch from x's slot.
    let moved = git_with(
        &env,
        &path_of(&x),
        &cred(&x),
        &["update-ref", "refs/heads/hand/y", "HEAD"],
    );
    let text = pre_push(&env, &repo, &[], "no credential", "hand/y")
        + &shot(
            &env,
            "git update-ref refs/heads/hand/y HEAD   # x's credential, in x's slot",
            &moved,
            Shown::Hook,
        )
        + &check_and_status(&env, &repo, &[], "no credential");
    insta::assert_snapshot!("refusal_branch", text);
}

/// Runs `git hand <command>` for each command in `dir`, in order (arguments split on spaces);
/// `--json` ones shown as JSON, the others as text.
fn transcript(env: &TestEnv, dir: &Path, commands: &[&str]) -> String {
    let mut out = String::new();
    for command in commands {
        let args: Vec<&str> = command.split(' ').filter(|a| !a.is_empty()).collect();
        let shown = if args.contains(&"--json") {
            Shown::Json
        } else {
            Shown::Text
        };
        out += &shot(
            env,
            &format!("git hand {command}"),
            &env.hand(dir, &args),
            shown,
        );
    }
    out
}

#[test]
fn the_text_of_git_hand_list_status_and_log() {
    let (env, repo) = installed();
    let a = spawn(&env, &repo, "a", &["--ttl", "30m"]);
    spawn(&env, &repo, "b", &["--issue", "7"]);
    spawn(&env, &repo, "c", &[]);
    env.hand(&repo, &["teardown", "c"]).ok();
    let slot = path_of(&a);
    let text = transcript(
        &env,
        &repo,
        &[
            "",
            "list",
            "list --all",
            "list --long --paths",
            "status",
            "log",
            "log -n 3",
            "log --task b",
            "log --all-repos -n 2",
        ],
    ) + &transcript(&env, &slot, &["", "status", "check"]);
    insta::assert_snapshot!("text_list_status_log", text);
}

#[test]
fn the_text_and_json_of_path_and_of_done_inside_a_slot() {
    let (env, repo) = installed();
    let a = spawn(&env, &repo, "a", &[]);
    spawn(&env, &repo, "b", &[]);
    spawn(&env, &repo, "c", &[]);
    env.hand(&repo, &["teardown", "c"]).ok();
    let text = transcript(
        &env,
        &repo,
        &[
            "path a",
            "path a --json",
            "path nosuch",
            "path nosuch --json",
            "path c",
            "path c --json",
            "path",
            "done",
            "done --json",
        ],
    ) + &transcript(&env, &path_of(&a), &["path", "done"])
        + &transcript(&env, &repo, &["path b"]);
    let b = env.hand(&repo, &["path", "b"]).ok();
    let text = text + &transcript(&env, Path::new(b.trim_end()), &["done --json"]);
    insta::assert_snapshot!("path_and_done", text);
}

#[test]
fn the_text_and_json_of_spawn_renew_env_teardown_list_status_and_log() {
    let (env, repo) = installed();
    let text = transcript(
        &env,
        &repo,
        &[
            "spawn a --json",
            "spawn a --json",
            "spawn b --issue 7 --ttl 30m --json",
            "spawn b --holder someone-else --json",
            "teardown a --json",
            "teardown a --json",
            "spawn c --json",
            "renew c --ttl 2h --json",
            "renew c --ttl 2h",
            "env c --json",
            "env c",
            "list --json",
            "list --all --json",
            "status --json",
            "teardown c",
            "spawn d",
            "spawn e --print-path",
            "log --json",
        ],
    );
    insta::assert_snapshot!("json_tasks", text);
}

#[test]
fn the_text_and_json_of_issue_leases() {
    let (env, repo) = installed();
    let text = transcript(
        &env,
        &repo,
        &[
            "lease acquire 7 --holder alice --ttl 30m --json",
            "lease acquire 7 --holder alice --ttl 30m",
            "lease acquire 7 --holder bob --json",
            "lease acquire 7 --holder bob",
            "lease renew 7 --holder alice --ttl 1h --json",
            "lease renew 7 --holder bob --json",
            "lease current 7 --json",
            "lease current 7",
            "lease list --json",
            "lease list",
            "lease list --all --json",
            "lease release 7 --holder alice --json",
            "lease release 7 --holder alice",
            "lease current 7 --json",
        ],
    );
    insta::assert_snapshot!("json_leases", text);
}

#[test]
fn the_text_and_json_of_prune_doctor_install_and_uninstall() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let backup = env.path("backup.sqlite");
    let backup = format!("doctor --backup {} --json", backup.display());
    let text = transcript(
        &env,
        &repo,
        &[
            "install --json",
            "install --json",
            "install --manual --json",
            "install --manual",
        ],
    );
    // A free slot for prune, and a task whose slot vanished for doctor to find and settle.
    spawn(&env, &repo, "a", &[]);
    let b = spawn(&env, &repo, "b", &[]);
    env.hand(&repo, &["teardown", "a"]).ok();
    std::fs::remove_dir_all(path_of(&b)).unwrap();
    let text = text
        + &transcript(&env, &repo, &["doctor --json", "doctor"])
        + &transcript(
            &env,
            &repo,
            &[
                "prune --json",
                "prune",
                "doctor --json",
                "doctor",
                "doctor --repair --json",
                &backup,
                "prune --yes --json",
                "uninstall --json",
                "uninstall --json",
                "install",
                "uninstall",
            ],
        );
    insta::assert_snapshot!("json_maintenance", text);
}

#[test]
fn the_json_error_object_of_each_kind_of_failure() {
    let (env, repo) = installed();
    spawn(&env, &repo, "a", &["--holder", "alice"]);
    let text = transcript(
        &env,
        &repo,
        &[
            "spawn -bad --json",
            "spawn b --ttl forever --json",
            "spawn a --holder bob --json",
            "spawn a --holder bob",
            "teardown nosuch --json",
            "lease renew 9 --holder alice --json",
        ],
    );
    let outside = env.path("work");
    let text = text + &transcript(&env, &outside, &["list --json", "status"]);
    insta::assert_snapshot!("json_errors", text);
}

/// The tasks of Claude Code sessions (issue 23, item 6): `list`'s `CLAUDE` (and `--long`'s
/// `SESSION` and `WORKTREE`) and its JSON `claude`, `path --session` and `teardown --session`,
/// with a process sitting in one session's slot.
#[test]
fn the_text_and_json_of_list_path_and_teardown_for_claude_sessions() {
    let (env, repo) = installed();
    let sid = "0b6c2f1e-5a4d-4c3b-9e8f-123456789abc";
    let own = spawn(
        &env,
        &repo,
        "feat1",
        &["--holder", &format!("claude:{sid}:feat1")],
    );
    spawn(
        &env,
        &repo,
        "agent-a1",
        &["--holder", &format!("claude:{sid}:agent-a1")],
    );
    spawn(&env, &repo, "by-name", &["--holder", "claude::by-name"]);
    spawn(&env, &repo, "plain", &[]);
    let mut sitter = std::process::Command::new("sleep")
        .arg(crate::support::COMMAND_TIMEOUT)
        .current_dir(path_of(&own))
        .spawn()
        .unwrap();
    let listed = transcript(&env, &repo, &["list", "list --long", "list --json"]);
    sitter.kill().unwrap();
    sitter.wait().unwrap();
    let path = format!("path --session {sid}");
    let teardown = format!("teardown --session {sid}");
    let text = listed
        + &transcript(
            &env,
            &repo,
            &[
                &path,
                &format!("{path} --json"),
                "path --session no:such",
                "path --session 11111111-2222-4333-8444-555555555555",
            ],
        );
    spawn(
        &env,
        &repo,
        "feat2",
        &["--holder", &format!("claude:{sid}:feat2")],
    );
    std::fs::write(path_of(&own).join("scratch.txt"), "work").unwrap();
    let text = text
        + &transcript(
            &env,
            &repo,
            &[&path, &teardown, &format!("{teardown} --json"), "list"],
        );
    insta::assert_snapshot!("claude_sessions", text);
}
