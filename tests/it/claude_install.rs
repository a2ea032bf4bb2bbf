//! `git hand install --claude` / `uninstall --claude`: git-hand's WorktreeCreate, WorktreeRemove
//! and SessionStart entries in a Claude Code settings file, written beside everything else in it
//! and taken out leaving the file as it was; and `status`/`doctor` saying when they lapse. Real
//! git in temporary repositories, the real binary.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{TestEnv, mode};

const EVENTS: [(&str, &str); 3] = [
    ("WorktreeCreate", "worktree-create"),
    ("WorktreeRemove", "worktree-remove"),
    ("SessionStart", "session-start"),
];

fn local(repo: &Path) -> PathBuf {
    repo.join(".claude/settings.local.json")
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

/// git-hand's handlers in `event` of the settings at `path`.
fn ours(doc: &Value, event: &str) -> Vec<Value> {
    doc["hooks"][event]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["hooks"].as_array().cloned().unwrap_or_default())
        .filter(|h| {
            h["command"]
                .as_str()
                .is_some_and(|c| c.contains("git-hand hook claude "))
        })
        .collect()
}

/// Settings the way a person (or an older Claude Code) formats them: tabs, odd spacing, keys in
/// no order, another tool's hooks in git-hand's events and others.
const ODD: &str = "{\n\t\"permissions\" :{\"allow\":[ \"Bash(npm test)\" ]},\n  \"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"notify-send done\"}]}],\n \"SessionStart\":[ {\"matcher\": \"startup\", \"hooks\": [{\"type\": \"command\", \"command\": \"echo hi\"}]}]},\n\"model\": \"opus\", \"apiKeyHelper\": null, \"z\": 1.50}";

#[test]
fn install_claude_writes_the_three_hooks_and_the_git_hooks_and_a_second_install_changes_nothing() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let first = env.hand(&repo, &["install", "--claude", "--json"]).json();
    assert_eq!(first["outcome"], "installed");
    assert_eq!(first["claude"]["outcome"], "installed");
    assert_eq!(first["claude"]["file"], local(&repo).to_str().unwrap());
    // The lease is enforced by the git hooks: --claude installs them too.
    assert!(repo.join(".git/hooks/pre-push").is_file());
    let doc = read_json(&local(&repo));
    for (event, verb) in EVENTS {
        let h = ours(&doc, event);
        assert_eq!(h.len(), 1, "{event}: {doc}");
        assert_eq!(h[0]["type"], "command");
        let command = h[0]["command"].as_str().unwrap();
        assert!(
            command.contains(&format!("exec git-hand hook claude {verb}")),
            "{command}"
        );
        // hand.setupTimeout's default (10m) and a margin for git.
        assert!(h[0]["timeout"].as_u64().unwrap() > 600, "{}", h[0]);
    }
    let bytes = fs::read(local(&repo)).unwrap();
    let second = env.hand(&repo, &["install", "--claude", "--json"]).json();
    assert_eq!(second["outcome"], "unchanged");
    assert_eq!(second["claude"]["outcome"], "unchanged");
    assert_eq!(fs::read(local(&repo)).unwrap(), bytes);

    let text = env.hand(&repo, &["uninstall", "--claude"]).ok();
    assert!(text.contains("removed"), "{text}");
    // A file and a directory install made are gone again; the git hooks stay.
    assert!(!repo.join(".claude").exists());
    assert!(repo.join(".git/hooks/pre-push").is_file());
    let again = env.hand(&repo, &["uninstall", "--claude", "--json"]).json();
    assert_eq!(again["outcome"], "nothing-installed");
}

#[test]
fn install_then_uninstall_leaves_an_oddly_formatted_file_byte_identical_and_its_mode() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::create_dir(repo.join(".claude")).unwrap();
    fs::write(repo.join(".claude/agents.md"), "mine\n").unwrap();
    fs::write(local(&repo), ODD).unwrap();
    fs::set_permissions(local(&repo), fs::Permissions::from_mode(0o600)).unwrap();
    env.hand(&repo, &["install", "--claude"]).ok();
    assert_eq!(mode(&local(&repo)) & 0o777, 0o600);
    let doc = read_json(&local(&repo));
    let before: Value = serde_json::from_str(ODD).unwrap();
    // Every other key in its place (serde_json's Value sorts them: look at the text), every
    // other entry kept (SessionStart's own first).
    let text = fs::read_to_string(local(&repo)).unwrap();
    let at = |key: &str| text.find(&format!("\"{key}\":")).unwrap();
    let keys = ["permissions", "hooks", "model", "apiKeyHelper", "z"];
    assert!(keys.windows(2).all(|w| at(w[0]) < at(w[1])), "{text}");
    assert!(at("Stop") < at("SessionStart") && at("SessionStart") < at("WorktreeCreate"));
    for key in ["permissions", "model", "apiKeyHelper", "z"] {
        assert_eq!(doc[key], before[key], "{key}");
    }
    assert_eq!(doc["hooks"]["Stop"], before["hooks"]["Stop"]);
    assert_eq!(
        doc["hooks"]["SessionStart"][0],
        before["hooks"]["SessionStart"][0]
    );
    assert_eq!(ours(&doc, "SessionStart").len(), 1);

    env.hand(&repo, &["uninstall", "--claude"]).ok();
    assert_eq!(fs::read_to_string(local(&repo)).unwrap(), ODD);
    assert_eq!(mode(&local(&repo)) & 0o777, 0o600);
    assert_eq!(
        fs::read_to_string(repo.join(".claude/agents.md")).unwrap(),
        "mine\n"
    );
    assert!(
        !repo.join(".git/git-hand-claude.json").exists(),
        "the record goes with the last install"
    );
}

#[test]
fn uninstall_after_claude_code_rewrote_the_file_removes_only_git_hands_entries() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::create_dir(repo.join(".claude")).unwrap();
    fs::write(local(&repo), ODD).unwrap();
    env.hand(&repo, &["install", "--claude"]).ok();
    // Claude Code grants a permission "always": it rewrites the file, ours inside.
    let mut doc = read_json(&local(&repo));
    doc["permissions"]["allow"]
        .as_array_mut()
        .unwrap()
        .push("Bash(git status)".into());
    fs::write(
        local(&repo),
        serde_json::to_string_pretty(&doc).unwrap() + "\n",
    )
    .unwrap();
    let out = env.hand(&repo, &["uninstall", "--claude", "--json"]).json();
    assert_eq!(out["outcome"], "uninstalled");
    let after = read_json(&local(&repo));
    let mut want: Value = serde_json::from_str(ODD).unwrap();
    want["permissions"]["allow"]
        .as_array_mut()
        .unwrap()
        .push("Bash(git status)".into());
    assert_eq!(after, want);
    assert!(
        !fs::read_to_string(local(&repo))
            .unwrap()
            .contains("git-hand")
    );
}

#[test]
fn a_settings_file_that_is_not_settings_json_or_is_a_symlink_is_refused_by_name_and_nothing_is_written()
 {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::create_dir(repo.join(".claude")).unwrap();
    let elsewhere = env.path("work/elsewhere.json");
    fs::write(&elsewhere, "{}").unwrap();
    // `None`: a symlink to a settings file elsewhere.
    for (what, content) in [
        ("is not JSON", Some("{\"hooks\": ")),
        ("top level is not an object", Some("[1]")),
        ("\"hooks\" is not an object", Some("{\"hooks\": []}")),
        ("symbolic link", None),
    ] {
        let file = local(&repo);
        let _ = fs::remove_file(&file);
        match content {
            Some(text) => fs::write(&file, text).unwrap(),
            None => std::os::unix::fs::symlink(&elsewhere, &file).unwrap(),
        }
        let before = fs::symlink_metadata(&file).map(|m| m.len()).unwrap();
        let run = env.hand(&repo, &["install", "--claude"]).code(3);
        assert!(
            run.stderr.contains(what) && run.stderr.contains("settings.local.json"),
            "{what}: {}",
            run.stderr
        );
        assert!(run.stderr.contains("nothing was written"), "{}", run.stderr);
        assert_eq!(fs::symlink_metadata(&file).unwrap().len(), before);
        // Refused before anything was written: not even the git hooks.
        assert!(!repo.join(".git/hooks/pre-push").exists(), "{what}");
        env.hand(&repo, &["uninstall", "--claude"]).code(3);
    }
    assert_eq!(fs::read_to_string(&elsewhere).unwrap(), "{}");
}

#[test]
fn claude_settings_names_another_file_for_install_and_uninstall_even_from_a_linked_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let user = env.path("home/.claude/settings.json");
    fs::create_dir_all(user.parent().unwrap()).unwrap();
    fs::write(&user, "{\"theme\": \"dark\"}\n").unwrap();
    let file = user.to_str().unwrap();
    let out = env
        .hand(&repo, &["install", "--claude-settings", file, "--json"])
        .json();
    assert_eq!(out["claude"]["outcome"], "installed");
    assert!(!repo.join(".claude").exists(), "only the file named");
    let doc = read_json(&user);
    assert_eq!(doc["theme"], "dark");
    assert_eq!(ours(&doc, "WorktreeCreate").len(), 1);
    env.hand(&repo, &["uninstall", "--claude-settings", file])
        .ok();
    assert_eq!(
        fs::read_to_string(&user).unwrap(),
        "{\"theme\": \"dark\"}\n"
    );

    // From a linked worktree, --claude still means the main worktree's file.
    let linked = env.path("work/app-linked");
    env.git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "side",
            linked.to_str().unwrap(),
        ],
    );
    env.hand(&linked, &["install", "--claude"]).ok();
    assert!(local(&repo).is_file());
    assert!(!linked.join(".claude").exists());
}

#[test]
fn claude_shared_writes_the_committed_file_and_says_every_teammate_then_needs_git_hand() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let run = env.hand(&repo, &["install", "--claude-shared"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("every teammate") && run.stderr.contains("settings.json"),
        "{}",
        run.stderr
    );
    let shared = repo.join(".claude/settings.json");
    assert_eq!(ours(&read_json(&shared), "SessionStart").len(), 1);
    assert!(!local(&repo).exists());
    env.hand(&repo, &["uninstall", "--claude-shared"]).ok();
    assert!(!shared.exists());
}

#[test]
fn plain_uninstall_keeps_the_claude_hooks_and_uninstall_claude_keeps_the_git_hooks() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.hand(&repo, &["install", "--claude"]).ok();
    env.hand(&repo, &["uninstall"]).ok();
    assert!(!repo.join(".git/hooks/pre-push").exists());
    assert_eq!(ours(&read_json(&local(&repo)), "WorktreeCreate").len(), 1);
    env.hand(&repo, &["install"]).ok();
    env.hand(&repo, &["uninstall", "--claude"]).ok();
    assert!(repo.join(".git/hooks/pre-push").is_file());
    assert!(!local(&repo).exists());
}

#[test]
fn a_hook_command_falls_back_to_the_git_hand_that_installed_it_and_without_one_says_why_and_fails()
{
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.hand(&repo, &["install", "--claude"]).ok();
    let doc = read_json(&local(&repo));
    let command = ours(&doc, "WorktreeCreate")[0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    let installed = crate::support::BIN;
    assert!(
        command.contains(installed),
        "records the git-hand that wrote it"
    );
    // Not on PATH (a desktop app's minimal PATH): the git-hand that installed it answers.
    let mut child = env
        .timed("sh", &repo)
        .args(["-c", &command])
        .env("PATH", "/usr/bin:/bin")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let input = format!(
        r#"{{"session_id": "0b6c2f1e-5a4d-4c3b-9e8f-123456789abc", "cwd": "{}", "hook_event_name": "WorktreeCreate", "name": "feat1"}}"#,
        repo.display()
    );
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), input.as_bytes()).unwrap();
    drop(child.stdin.take());
    let run = crate::support::Run::from(child.wait_with_output().unwrap());
    assert_eq!(run.code, 0, "{run:?}");
    let slot = PathBuf::from(run.stdout.lines().last().unwrap());
    assert!(slot.is_dir() && slot != repo, "{run:?}");
    // Neither on PATH nor where install recorded it (a desktop app's minimal PATH, a moved
    // binary): the worktree's creation fails, saying why.
    let gone = command.replace(installed, "/nonexistent/git-hand");
    let run = crate::support::Run::from(
        env.timed("sh", &repo)
            .args(["-c", &gone])
            .env("PATH", "/usr/bin:/bin")
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .starts_with("git-hand: git-hand is not on PATH (nor at /nonexistent/git-hand)"),
        "{}",
        run.stderr
    );
    assert!(
        run.stdout.is_empty(),
        "no path for Claude Code: {}",
        run.stdout
    );
}

#[test]
fn status_and_doctor_say_when_the_claude_hooks_lapse_and_repair_mends_them() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let status = env.hand(&repo, &["status", "--json"]).json();
    assert_eq!(status["claude_hooks"], Value::Null, "never installed");
    env.hand(&repo, &["install", "--claude"]).ok();
    let status = env.hand(&repo, &["status", "--json"]).json();
    assert_eq!(status["claude_hooks"]["in_force"], true, "{status}");
    assert_eq!(status["claude_hooks"]["lapses"], serde_json::json!([]));
    let text = env.hand(&repo, &["status"]).ok();
    assert!(!text.contains("claude:"), "{text}");

    // The SessionStart entry edited away: status names it, with the fix.
    let mut doc = read_json(&local(&repo));
    doc["hooks"].as_object_mut().unwrap().remove("SessionStart");
    fs::write(local(&repo), serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let text = env.hand(&repo, &["status"]).ok();
    assert!(
        text.contains("claude:  NOT in force:")
            && text.contains("no git-hand SessionStart hook")
            && text.contains("  fix:   git hand install --claude\n"),
        "{text}"
    );
    let status = env.hand(&repo, &["status", "--json"]).json();
    assert_eq!(status["claude_hooks"]["in_force"], false);
    assert_eq!(status["claude_hooks"]["lapses"][0]["kind"], "missing");
    assert_eq!(status["claude_hooks"]["lapses"][0]["event"], "SessionStart");

    // A longer hand.setupTimeout than the entries allow for.
    env.git(&repo, &["config", "hand.setupTimeout", "1h"]);
    let status = env.hand(&repo, &["status", "--json"]).json();
    let kinds: Vec<&str> = status["claude_hooks"]["lapses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["timeout", "timeout", "missing"], "{status}");

    let doctor = env.hand(&repo, &["doctor", "--json"]).code(3).json();
    let problems: Vec<&Value> = doctor["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["kind"] == "claude-hooks-lapsed")
        .collect();
    assert_eq!(problems.len(), 3, "{doctor}");
    env.hand(&repo, &["doctor", "--repair"]).ok();
    let status = env.hand(&repo, &["status", "--json"]).json();
    assert_eq!(status["claude_hooks"]["in_force"], true, "{status}");
    let doc = read_json(&local(&repo));
    assert!(ours(&doc, "WorktreeCreate")[0]["timeout"].as_u64().unwrap() >= 3600);

    // A file gone is a lapse too, which --repair mends; one that cannot be read is left to you.
    fs::remove_file(local(&repo)).unwrap();
    let status = env.hand(&repo, &["status", "--json"]).json();
    assert_eq!(status["claude_hooks"]["lapses"][0]["kind"], "missing");
    assert_eq!(status["claude_hooks"]["lapses"][0]["event"], Value::Null);
    env.hand(&repo, &["doctor", "--repair"]).ok();
    assert_eq!(ours(&read_json(&local(&repo)), "SessionStart").len(), 1);
    fs::write(local(&repo), "not json").unwrap();
    let status = env.hand(&repo, &["status", "--json"]).json();
    assert_eq!(status["claude_hooks"]["lapses"][0]["kind"], "unreadable");
    env.hand(&repo, &["doctor", "--repair"]).code(3);
}

#[test]
fn a_hook_manager_in_charge_of_core_hooks_path_gets_its_recipe_and_claude_code_its_hooks_all_the_same()
 {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.git(&repo, &["config", "core.hooksPath", ".githooks"]);
    let run = env.hand(&repo, &["install", "--claude", "--json"]).code(3);
    let out = run.json();
    assert_eq!(out["outcome"], "refused");
    assert_eq!(out["claude"]["outcome"], "installed");
    assert_eq!(ours(&read_json(&local(&repo)), "WorktreeCreate").len(), 1);
}

#[test]
fn entries_written_by_hand_are_adopted_by_install_and_taken_out_by_uninstall_with_what_they_emptied()
 {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.hand(&repo, &["install", "--claude"]).ok();
    // As if the record were lost: the same entries, copied by hand beside a key of the user's.
    fs::remove_file(repo.join(".git/git-hand-claude.json")).unwrap();
    let mut doc = read_json(&local(&repo));
    doc["model"] = "opus".into();
    fs::write(local(&repo), serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let out = env.hand(&repo, &["install", "--claude", "--json"]).json();
    assert_eq!(out["claude"]["outcome"], "unchanged");
    let status = env.hand(&repo, &["status", "--json"]).json();
    assert_eq!(status["claude_hooks"]["in_force"], true, "{status}");
    env.hand(&repo, &["uninstall", "--claude"]).ok();
    assert_eq!(
        read_json(&local(&repo)),
        serde_json::json!({"model": "opus"})
    );
}
