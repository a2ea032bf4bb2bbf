//! `git hand log` scoped (issue 13): this repository's events unless `--all-repos`, one task's
//! with `--task`, `-n`, no `renewed` row for spawn's own activation, a slot by its number.

use std::path::Path;

use serde_json::Value;

use crate::support::{TestEnv, installed, spawn};

fn events(env: &TestEnv, dir: &Path, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["log", "--json"];
    all.extend(args);
    let log = env.hand(dir, &all).json();
    log["events"].as_array().unwrap().clone()
}

fn kinds(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["kind"].as_str().unwrap()).collect()
}

/// The `task NAME` an event's detail names, if any (`task-spawned`, `task-done`).
fn details(events: &[Value]) -> Vec<&str> {
    events.iter().filter_map(|e| e["detail"].as_str()).collect()
}

#[test]
fn log_shows_this_repositorys_events_and_all_repos_shows_every_one() {
    let (env, app) = installed();
    let other = env.repo("other");
    spawn(&env, &app, "a", &["--issue", "7"]);
    spawn(&env, &other, "b", &["--issue", "7"]);

    let here = events(&env, &app, &[]);
    assert!(!here.is_empty());
    let text = serde_json::to_string(&here).unwrap();
    assert!(text.contains("task a on hand/a"), "{text}");
    assert!(
        !text.contains("task b"),
        "other's task in app's log: {text}"
    );
    assert!(!text.contains("other-origin#7"), "other's issue: {text}");
    assert!(text.contains("app-origin#7"), "app's issue lease: {text}");

    // A worktree made by a plain `git worktree add` is registered by the hook, leased by no one:
    // git lists it for this repository, so its event is this repository's.
    let wt = env.path("work/app-wt");
    env.git(&app, &["worktree", "add", "-q", wt.to_str().unwrap()]);
    let here = events(&env, &app, &["-n", "1"]);
    assert_eq!(kinds(&here), ["worktree-added"], "{here:#?}");
    assert!(
        events(&env, &other, &[])
            .iter()
            .all(|e| e["kind"] != "worktree-added")
    );

    let there = serde_json::to_string(&events(&env, &other, &[])).unwrap();
    assert!(there.contains("task b on hand/b") && !there.contains("task a"));

    let every = serde_json::to_string(&events(&env, &app, &["--all-repos"])).unwrap();
    for word in ["task a on hand/a", "task b on hand/b"] {
        assert!(every.contains(word), "--all-repos lacks {word}: {every}");
    }
}

#[test]
fn log_task_shows_that_tasks_events_only_and_names_a_missing_one() {
    let (env, repo) = installed();
    let a = spawn(&env, &repo, "a", &["--issue", "7"]);
    let b = spawn(&env, &repo, "b", &[]);
    env.hand(&repo, &["renew", "b", "--ttl", "1h"]).ok();
    env.hand(&repo, &["teardown", "a"]).ok();

    let of_a = events(&env, &repo, &["--task", "a"]);
    assert_eq!(
        kinds(&of_a),
        [
            "task-done",
            "released",
            "released",
            "task-spawned",
            "acquired",
            "acquired"
        ],
        "{of_a:#?}"
    );
    let a_leases = [&a["lease_id"], &a["issue"]["lease_id"]];
    for e in &of_a {
        assert!(
            e["lease_id"].is_null() || a_leases.contains(&&e["lease_id"]),
            "an event of another lease under --task a: {e}"
        );
    }
    assert!(details(&of_a).iter().all(|d| !d.contains("task b")));

    let of_b = events(&env, &repo, &["--task", "b"]);
    assert_eq!(kinds(&of_b), ["renewed", "task-spawned", "acquired"]);
    assert!(of_b.iter().all(|e| e["lease_id"] == b["lease_id"]));

    let missing = env.hand(&repo, &["log", "--task", "nosuch"]).code(1);
    assert!(
        missing
            .stderr
            .contains("there is no task named nosuch in this repository"),
        "{}",
        missing.stderr
    );
    assert!(
        missing
            .stderr
            .contains("git hand log --all-repos --task nosuch"),
        "{}",
        missing.stderr
    );
    // Another repository's task is not this one's.
    let other = env.repo("other");
    spawn(&env, &other, "c", &[]);
    env.hand(&repo, &["log", "--task", "c"]).code(1);
    let c = events(&env, &repo, &["--all-repos", "--task", "c"]);
    assert_eq!(kinds(&c), ["task-spawned", "acquired"]);
}

#[test]
fn log_n_limits_the_rows_and_limit_is_the_same_option() {
    let (env, repo) = installed();
    for t in ["a", "b", "c"] {
        spawn(&env, &repo, t, &[]);
    }
    let newest = events(&env, &repo, &[]);
    assert!(newest.len() >= 6);
    let two = events(&env, &repo, &["-n", "2"]);
    assert_eq!(two, newest[..2]);
    assert_eq!(events(&env, &repo, &["--limit", "2"]), two);
    let text = env.hand(&repo, &["log", "-n", "1"]).ok();
    assert_eq!(text.lines().count(), 2, "a header and one row:\n{text}");
}

#[test]
fn spawn_logs_no_renewed_row_and_a_renewal_still_logs_one() {
    let (env, repo) = installed();
    spawn(&env, &repo, "a", &["--ttl", "30m", "--issue", "7"]);
    spawn(&env, &repo, "b", &[]);
    let after_spawn = events(&env, &repo, &[]);
    assert!(
        !kinds(&after_spawn).contains(&"renewed"),
        "{:?}",
        kinds(&after_spawn)
    );
    // The leases did get their TTL.
    let list = env.hand(&repo, &["list", "--json"]).json();
    for lease in ["lease", "issue_lease"] {
        assert!(
            list["tasks"][0][lease]["expires_at"].is_string(),
            "{list:#}"
        );
    }

    env.hand(&repo, &["renew", "a", "--ttl", "1h"]).ok();
    assert_eq!(kinds(&events(&env, &repo, &["-n", "1"])), ["renewed"]);
}

#[test]
fn log_shows_a_slot_by_its_number_and_a_typical_row_fits_100_columns() {
    let (env, repo) = installed();
    let holder = ["--holder", "alice@laptop"];
    let spawned = spawn(
        &env,
        &repo,
        "fix-login",
        &["--ttl", "30m", "--issue", "1234", holder[0], holder[1]],
    );
    env.hand(&repo, &["teardown", "fix-login"]).ok();
    let text = env.hand(&repo, &["log"]).ok();
    assert!(text.contains(" slot 1 "), "{text}");
    assert!(text.contains(" issue 1234 "), "{text}");
    assert!(
        !text.contains("/pools/"),
        "a slot's path in the text:\n{text}"
    );
    for line in text.lines() {
        assert!(
            line.chars().count() <= 100,
            "{} columns: {line}\n{text}",
            line.chars().count()
        );
    }
    // JSON keeps the path and adds the number.
    let first = &events(&env, &repo, &["--task", "fix-login", "-n", "1"])[0];
    assert_eq!(first["kind"], "task-done");
    assert_eq!(first["resource"]["key"], spawned["path"]);
    assert_eq!(first["resource"]["slot"], 1);
    let every = env.hand(&repo, &["log", "--all-repos"]).ok();
    assert!(every.contains(" app slot 1 "), "{every}");
}

#[test]
fn log_outside_a_repository_points_at_all_repos() {
    let (env, repo) = installed();
    spawn(&env, &repo, "a", &[]);
    let outside = env.path("work");
    let refused = env.hand(&outside, &["log"]).code(2);
    assert!(
        refused.stderr.contains("git hand log --all-repos"),
        "{}",
        refused.stderr
    );
    let all = env.hand(&outside, &["log", "--all-repos"]).ok();
    assert!(all.contains("task a on hand/a"), "{all}");
}

#[test]
fn log_in_a_repository_the_ledger_never_saw_is_empty() {
    let (env, repo) = installed();
    spawn(&env, &repo, "a", &[]);
    let other = env.repo("other");
    assert!(events(&env, &other, &[]).is_empty());
}
