//! The worktree pool: spawn, reuse, teardown, the guards that keep work safe. End to end through
//! the binary, except the decisions that need no process boundary (which slot a spawn takes,
//! what a teardown refuses, what doctor settles), which drive the library (`library.rs`).

use std::path::{Path, PathBuf};

use git_hand::ledger::{TaskState, Tasks};
use git_hand::ops::doctor::ProblemKind;
use git_hand::ops::task::TeardownError;
use git_hand::ops::task::spawn::SlotSource;
use git_hand::ops::task::teardown::TornDown;
use git_hand::ops::{Error, Kind};
use git_hand::platform::procs::Scan;
use serde_json::Value;

use crate::library::{Sleeper, World};
use crate::support::{GitPause, Run, TestEnv, finish, path_of, spawn};

fn teardown(env: &TestEnv, repo: &Path, task: &str, extra: &[&str]) -> Run {
    let mut args = vec!["teardown", task];
    args.extend(extra);
    env.hand(repo, &args)
}

#[test]
fn spawn_gives_a_locked_linked_worktree_on_the_task_branch_and_reuses_it_after_teardown() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let a = spawn(&env, &repo, "t1", &[]);
    let path = path_of(&a);
    assert_eq!(a["token"], 1);
    assert!(git_hand::ids::is_lease_id(a["lease_id"].as_str().unwrap()));
    assert_eq!(a["branch"], "hand/t1");
    assert_eq!(
        env.git(&path, &["symbolic-ref", "--short", "HEAD"]),
        "hand/t1"
    );
    assert!(path.ends_with("1/app"), "{}", path.display());
    assert!(path.starts_with(env.path("data/git-hand/pools").canonicalize().unwrap()));
    let list = env.git(&repo, &["worktree", "list", "--porcelain"]);
    let entry = list
        .split("\n\n")
        .find(|e| e.contains(&format!("worktree {}", path.display())))
        .expect("slot is a linked worktree");
    assert!(entry.contains("locked git-hand slot"), "{entry}");
    assert_eq!(a["env"]["GIT_HAND_LEASE"], a["lease_id"]);
    assert_eq!(a["env"]["GIT_HAND_TOKEN"], "1");
    assert_eq!(a["env"]["GIT_HAND_TASK"], "t1");

    let b = spawn(&env, &repo, "t2", &[]);
    assert_ne!(path_of(&b), path);
    assert_eq!(b["slot"], 2);

    std::fs::create_dir_all(path.join("target")).unwrap();
    std::fs::write(repo.join(".gitignore"), "target/\n").unwrap();
    env.git(&repo, &["add", ".gitignore"]);
    env.git(&repo, &["commit", "-qm", "ignore target"]);
    teardown(&env, &repo, "t1", &[]).ok();
    assert!(path.exists(), "teardown keeps the slot's files");
    let c = spawn(&env, &repo, "t3", &[]);
    assert_eq!(path_of(&c), path, "the freed slot is reused");
    assert_eq!(c["token"], 2);
    assert_eq!(c["slot_source"], "reused");
    assert_ne!(c["lease_id"], a["lease_id"]);
    assert!(
        path.join("target").exists(),
        "ignored build cache survives reuse"
    );
    assert_eq!(
        env.git(&path, &["symbolic-ref", "--short", "HEAD"]),
        "hand/t3"
    );
}

/// Leaves slot 1 (task `t1`) freed but in the state `make_unsafe` puts it in, then spawns:
/// the new task must not get slot 1. On the library: which slot a spawn takes is a decision
/// over the pool's facts, with no process boundary in it.
fn assert_never_reused(make_unsafe: impl FnOnce(&TestEnv, &Path) -> Option<Sleeper>) {
    let world = World::new(Scan::native());
    let a = world.spawn("t1");
    let path = a.path.clone();
    world.teardown("t1");
    let _tenant = make_unsafe(&world.env, &path);
    let b = world.spawn("t2");
    assert_ne!(b.path, path, "an unsafe slot was reused");
    assert_eq!(b.source, SlotSource::Created);
    assert!(
        b.skipped.iter().any(|s| Path::new(&s.path) == path),
        "the skipped slot is named: {:?}",
        b.skipped
    );
    // Spawn claimed the free slot before probing it; finding it unsafe, it let go again: the
    // slot is free, not leased to anyone.
    let listing = world.list();
    let free: Vec<&str> = listing
        .free_slots
        .iter()
        .map(|s| s.info.slot.path.as_str())
        .collect();
    assert_eq!(free, [path.to_str().unwrap()]);
    // The taken-back intent left no task row behind: t2 is one task, in its new slot.
    let all = world.list_of(Tasks::All);
    let t2_rows = all.tasks.iter().filter(|t| t.task.name == "t2").count();
    assert_eq!(t2_rows, 1);
}

#[test]
fn a_dirty_slot_is_never_reused() {
    assert_never_reused(|_, path| {
        std::fs::write(path.join("README"), "changed\n").unwrap();
        None
    });
}

#[test]
fn a_slot_with_untracked_files_is_never_reused() {
    assert_never_reused(|_, path| {
        std::fs::write(path.join("notes.txt"), "mine\n").unwrap();
        None
    });
}

#[test]
fn a_slot_holding_a_commit_on_no_branch_is_never_reused() {
    assert_never_reused(|env, path| {
        env.commit(path, "lost.txt", "only here\n");
        None
    });
}

#[test]
fn a_slot_with_a_live_process_inside_is_never_reused() {
    assert_never_reused(|env, path| Some(Sleeper::in_dir(env, path)));
}

#[test]
fn a_process_inside_that_only_inherited_git_hands_marker_is_still_a_tenant() {
    // A hook's background job started under git-hand's own `git switch` inherits
    // GIT_HAND_INTERNAL=1; it is no git child of a live git-hand, so it keeps the slot. Through
    // the binary: in this process the job would be a child of the spawner itself.
    let env = TestEnv::new();
    let repo = env.repo("app");
    let path = path_of(&spawn(&env, &repo, "t1", &[]));
    teardown(&env, &repo, "t1", &[]).ok();
    let mut child = env
        .command("sleep", &path)
        .arg("30")
        .env("GIT_HAND_INTERNAL", "1")
        .spawn()
        .unwrap();
    let b = spawn(&env, &repo, "t2", &[]);
    assert_ne!(path_of(&b), path, "an unsafe slot was reused");
    let skipped = b["skipped"].to_string();
    assert!(
        skipped.contains(path.to_str().unwrap()),
        "the skipped slot is named: {skipped}"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn teardown_refuses_unlanded_work_and_names_it_and_force_keeps_commits_on_the_branch() {
    let world = World::new(Scan::native());
    let (env, repo) = (&world.env, &world.repo);
    let path = world.spawn("t1").path;
    let oid = env.commit(&path, "feature.txt", "work\n");
    std::fs::write(path.join("scratch.txt"), "wip\n").unwrap();
    let refused = world.try_teardown("t1", false).unwrap_err();
    // The refusal is typed: the facts a caller can act on, beside the message.
    let Error::Teardown(ref why) = refused else {
        panic!("not a teardown refusal: {refused:?}")
    };
    let TeardownError::NotLanded {
        dirty, unlanded, ..
    } = &**why
    else {
        panic!("not refused for unlanded work: {why:?}")
    };
    assert_eq!(dirty, &["?? scratch.txt".to_string()], "{why:?}");
    assert_eq!(unlanded.len(), 1, "the one commit: {why:?}");
    let said = refused.to_string();
    assert!(said.contains("scratch.txt"), "{said}");
    assert!(said.contains("change feature.txt"), "{said}");
    assert!(
        path.join("scratch.txt").exists(),
        "a refused teardown changes nothing"
    );
    assert_eq!(world.list().tasks[0].task.state, TaskState::Active);

    let torn = world.try_teardown("t1", true).unwrap();
    assert!(matches!(torn, TornDown::Freed { .. }), "{torn:?}");
    assert!(
        !path.join("scratch.txt").exists(),
        "--force discards uncommitted files"
    );
    assert_eq!(
        env.git(repo, &["rev-parse", "hand/t1"]),
        oid,
        "commits stay on the task's branch"
    );
    let head = env.git_run(&path, &["symbolic-ref", "-q", "HEAD"]);
    assert_eq!(
        head.code, 1,
        "the slot is detached so the branch can be checked out elsewhere"
    );
    env.git(repo, &["switch", "hand/t1"]);
}

#[test]
fn teardown_of_landed_work_needs_no_force() {
    let world = World::new(Scan::native());
    let env = &world.env;
    let path = world.spawn("t1").path;
    env.commit(&path, "feature.txt", "work\n");
    env.git(&path, &["push", "-q", "origin", "hand/t1"]);
    let torn = world.try_teardown("t1", false).unwrap();
    assert!(matches!(torn, TornDown::Freed { .. }), "{torn:?}");
    let again = world.try_teardown("t1", false).unwrap();
    assert!(
        matches!(again, TornDown::AlreadyDone(_)),
        "teardown is retryable: {again:?}"
    );
}

#[test]
fn spawn_is_idempotent_for_the_same_holder_and_refused_for_another() {
    const HOUR: i64 = 3_600_000;
    let world = World::new(Scan::native());
    let a = world.try_spawn("t1", "alice", Some(HOUR)).unwrap();
    let again = world.try_spawn("t1", "alice", Some(2 * HOUR)).unwrap();
    assert_eq!(again.path, a.path);
    assert_eq!(again.tenure.lease_id, a.tenure.lease_id);
    assert_eq!(again.tenure.token, a.tenure.token);
    assert_eq!(again.source, SlotSource::Existing);
    assert_ne!(
        again.tenure.expires_at, a.tenure.expires_at,
        "the expiry follows the new TTL"
    );
    let refused = world.try_spawn("t1", "bob", None).unwrap_err();
    assert!(refused.is_precondition(), "{refused:?}");
    assert!(refused.to_string().contains("alice"), "{refused}");
    assert_eq!(world.list().tasks.len(), 1);
}

#[test]
fn an_issue_lease_held_before_the_spawn_survives_a_slot_found_unsafe() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let mine = env
        .hand(&repo, &["lease", "acquire", "7", "--json"])
        .code(0)
        .json();
    let a = spawn(&env, &repo, "t1", &[]);
    teardown(&env, &repo, "t1", &[]).ok();
    std::fs::write(path_of(&a).join("wip.txt"), "not landed\n").unwrap();
    // The free slot is claimed, found unsafe and let go; the spawn then creates a slot. The
    // issue lease the holder held before must be the one the task gets, not a new tenure.
    let b = spawn(&env, &repo, "t2", &["--issue", "7"]);
    assert_eq!(b["slot_source"], "created");
    assert_eq!(b["issue"]["lease_id"], mine["lease_id"], "{b:#}");
    assert_eq!(b["issue"]["token"], mine["token"], "{b:#}");
}

#[test]
fn spawn_with_a_held_issue_exits_3_and_creates_nothing() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.hand(&repo, &["lease", "acquire", "42", "--holder", "bob"])
        .ok();
    let run = env
        .hand(
            &repo,
            &["spawn", "t1", "--issue", "42", "--holder", "alice"],
        )
        .code(3);
    assert!(run.stderr.contains("bob"), "{}", run.stderr);
    assert_eq!(
        env.hand(&repo, &["list", "--json"]).json()["tasks"],
        serde_json::json!([])
    );
    assert!(
        env.git_run(&repo, &["rev-parse", "--verify", "-q", "hand/t1"])
            .code
            != 0,
        "no branch was created"
    );
    let pools = env.path("data/git-hand/pools");
    let slots: Vec<_> = walk_slots(&pools);
    assert!(slots.is_empty(), "no slot was created: {slots:?}");
}

fn walk_slots(pools: &Path) -> Vec<PathBuf> {
    let Ok(repos) = std::fs::read_dir(pools) else {
        return vec![];
    };
    repos
        .flatten()
        .flat_map(|r| {
            std::fs::read_dir(r.path())
                .unwrap()
                .flatten()
                .map(|e| e.path())
        })
        .collect()
}

#[test]
fn invalid_task_names_exit_2_and_create_nothing() {
    let world = World::new(Scan::native());
    let long = "a".repeat(65);
    for bad in ["../x", "-x", "", long.as_str(), "a/b", "a b", ".hidden"] {
        let refused = world.try_spawn(bad, "tester", None).unwrap_err();
        assert_eq!(
            refused.typed_kind(),
            Some(Kind::Usage),
            "{bad:?}: {refused}"
        );
    }
    let env = &world.env;
    assert!(!env.ledger().exists() || world.list().tasks.is_empty());
    assert!(walk_slots(&env.path("data/git-hand/pools")).is_empty());
    let branches = env.git(&world.repo, &["branch", "--list", "hand/*"]);
    assert_eq!(branches, "");
}

#[test]
fn eight_concurrent_spawns_get_eight_distinct_slots_and_leases() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.hand(&repo, &["lease", "release", "0"]).ok(); // creates the ledger up front
    let spawns = (0..8)
        .map(|n| {
            let mut c = env.timed(crate::support::BIN, &repo);
            c.args(["spawn", &format!("c{n}"), "--json"]);
            c
        })
        .collect();
    let outputs = env.all_at_once(spawns);
    let mut paths = std::collections::BTreeSet::new();
    let mut leases = std::collections::BTreeSet::new();
    let mut numbers = std::collections::BTreeSet::new();
    for out in outputs {
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        paths.insert(v["path"].as_str().unwrap().to_string());
        leases.insert(v["lease_id"].as_str().unwrap().to_string());
        numbers.insert(v["slot"].as_i64().unwrap());
    }
    assert_eq!((paths.len(), leases.len()), (8, 8));
    // Each intent numbers its new slot inside its own transaction: no gaps, no collisions.
    assert_eq!(numbers, (1..=8).collect());
}

#[test]
fn eight_concurrent_spawns_reuse_eight_free_slots_and_create_none() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let mut slots = std::collections::BTreeSet::new();
    for n in 0..8 {
        slots.insert(path_of(&spawn(&env, &repo, &format!("old{n}"), &[])));
    }
    for n in 0..8 {
        teardown(&env, &repo, &format!("old{n}"), &[]).ok();
    }
    let spawns = (0..8)
        .map(|n| {
            let mut c = env.timed(crate::support::BIN, &repo);
            c.args(["spawn", &format!("new{n}"), "--json"]);
            c
        })
        .collect();
    let outputs: Vec<Value> = env
        .all_at_once(spawns)
        .iter()
        .map(|out| {
            serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
                panic!("spawn failed: {}", String::from_utf8_lossy(&out.stderr))
            })
        })
        .collect();
    // On failure, what every spawn saw (its slot, how it got it, what it skipped and why).
    let all = serde_json::to_string_pretty(&outputs).unwrap();
    let mut reused = std::collections::BTreeSet::new();
    for v in &outputs {
        // Each gets a free slot: none is sent off to create one (a lost claim re-plans).
        assert_eq!(v["slot_source"], "reused", "every spawn:\n{all}");
        reused.insert(path_of(v));
    }
    assert_eq!(reused, slots, "every spawn:\n{all}");
}

/// A spawn that lost a free slot because someone claimed it and took the claim back (a spawn
/// whose probe found the slot unsafe, or whose checkout failed) plans again with the slot as it
/// is now: free, so it takes it, instead of excluding it for good and creating another (the
/// eight-spawn test created slot 9 next to a free slot 2 that way: issue 10, item 10).
#[test]
fn a_spawn_that_lost_a_slot_to_a_claim_taken_back_reuses_it_instead_of_creating_one() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let slot = path_of(&spawn(&env, &repo, "warm", &[]));
    teardown(&env, &repo, "warm", &[]).ok();
    // a has planned the free slot and probes it (paused) while its intent waits for the ledger,
    // which this test holds while someone claims the slot and takes the claim back.
    let pause = GitPause::new(&env, "probe", "status --porcelain");
    let mut ledger = git_hand::ledger::Ledger::open_creating(env.ledger()).unwrap();
    let res =
        git_hand::ledger::Resource::worktree(&git_hand::ledger::WorktreeKey::from_canonical(&slot));
    let a = ledger
        .write(|tx| {
            tx.acquire(&res, "other", None)?;
            tx.release(&res, git_hand::ledger::By::Holder("other"))?;
            let a = pause.start(&env, &repo, &["spawn", "a", "--json"]);
            pause.wait_until_paused();
            Ok(a)
        })
        .unwrap();
    pause.release();
    let a = finish(a);
    let v: Value = serde_json::from_str(&a.stdout).unwrap_or_else(|_| panic!("{}", a.stderr));
    assert_eq!(v["slot_source"], "reused", "{v:#}");
    assert_eq!(path_of(&v), slot);
    assert_eq!(
        v["token"], 3,
        "warm's token, the claim taken back, then a's"
    );
}

#[test]
fn spawning_an_open_task_again_sets_both_its_leases_expiry_not_only_the_slots() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let first = spawn(&env, &repo, "t1", &["--issue", "42", "--ttl", "1s"]);
    let again = spawn(&env, &repo, "t1", &["--issue", "42", "--ttl", "1h"]);
    assert_eq!(again["slot_source"], "existing", "{again}");
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let vars = [
        ("GIT_HAND_LEASE", first["lease_id"].as_str().unwrap()),
        ("GIT_HAND_TOKEN", "1"),
    ];
    let check = env.hand_env(&path_of(&first), &["check"], &vars);
    assert_eq!(check.code, 0, "past the first TTL:\n{}", check.stdout);
}

#[test]
fn exec_keeps_the_issue_lease_alive_too_so_a_push_after_its_ttl_is_still_allowed() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    // Inside the command, past the 1 s TTL both leases were granted with: the push check must
    // still find the task current, not issue-lost.
    let script = "sleep 2.5; git hand check > \"$OUT\" 2>&1; echo \"exit $?\" >> \"$OUT\"";
    let out = env.path("exec.out");
    let run = env.hand_env(
        &repo,
        &[
            "spawn", "t1", "--issue", "42", "--ttl", "1s", "--exec", "--", "sh", "-c", script,
        ],
        &[("OUT", out.to_str().unwrap())],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let seen = std::fs::read_to_string(&out).unwrap();
    assert!(
        seen.ends_with("exit 0\n"),
        "the check inside the command:\n{seen}"
    );
    assert!(!seen.contains("issue-lost"), "{seen}");
}

#[test]
fn exec_passes_the_credential_and_the_exit_status_and_renews_the_lease() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let script = "echo \"$GIT_HAND_LEASE $GIT_HAND_TOKEN $GIT_HAND_TASK $(pwd)\" > \"$OUT\"; sleep 2.5; exit 7";
    let out = env.path("exec.out");
    let run = env.hand_env(
        &repo,
        &[
            "spawn", "t1", "--ttl", "1s", "--exec", "--", "sh", "-c", script,
        ],
        &[("OUT", out.to_str().unwrap())],
    );
    assert_eq!(
        run.code, 7,
        "git-hand exits with the command's status: {}",
        run.stderr
    );
    let seen = std::fs::read_to_string(&out).unwrap();
    let fields: Vec<&str> = seen.split_whitespace().collect();
    let list = env.hand(&repo, &["list", "--json"]).json();
    let task = &list["tasks"][0];
    assert_eq!(fields[0], task["lease"]["lease_id"]);
    assert_eq!(fields[1], "1");
    assert_eq!(fields[2], "t1");
    assert_eq!(fields[3], task["path"]);
    // A 1 s lease outlived a 2.5 s command only because it was renewed meanwhile.
    let log = env.hand(&repo, &["log", "--json", "--limit", "100"]).json();
    let renewals = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "renewed")
        .count();
    assert!(
        renewals >= 2,
        "expected renewals while the command ran, got {renewals}"
    );
    assert_eq!(task["state"], "active", "the lease stays until teardown");
}

#[test]
fn the_base_is_the_default_branch_local_or_origin_whichever_is_ahead() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let local = env.git(&repo, &["rev-parse", "main"]);
    // Someone else pushed to origin/main; we fetched but did not merge.
    let work = env.path("work");
    env.git(
        &work,
        &[
            "clone",
            "-q",
            env.path("work/app-origin.git").to_str().unwrap(),
            "other",
        ],
    );
    let ahead = env.commit(&work.join("other"), "o.txt", "x\n");
    env.git(&work.join("other"), &["push", "-q", "origin", "main"]);
    env.git(&repo, &["fetch", "-q", "origin"]);
    let a = spawn(&env, &repo, "t1", &[]);
    assert_eq!(a["base"], ahead.as_str(), "origin/main is ahead of main");
    // A local commit makes the local branch the one ahead... once origin is merged in.
    env.git(&repo, &["merge", "-q", "--ff-only", "origin/main"]);
    let mine = env.commit(&repo, "l.txt", "x\n");
    let b = spawn(&env, &repo, "t2", &[]);
    assert_eq!(b["base"], mine.as_str());
    let c = spawn(&env, &repo, "t3", &["--base", &local]);
    assert_eq!(c["base"], local.as_str());
    env.hand(&repo, &["spawn", "t4", "--base", "no-such-rev"])
        .code(2);
}

#[test]
fn a_full_pool_exits_3_and_names_each_slot_and_why() {
    let world = World::new(Scan::native());
    world
        .env
        .git(&world.repo, &["config", "hand.maxSlots", "2"]);
    let a = world.spawn("t1").path;
    let b = world.spawn("t2").path;
    world.teardown("t2");
    std::fs::write(b.join("wip.txt"), "x\n").unwrap();
    let refused = world.try_spawn("t3", "tester", None).unwrap_err();
    assert!(refused.is_precondition(), "exit 3: {refused:?}");
    let said = refused.to_string();
    assert!(
        said.contains(&format!("{}: leased to", a.display())),
        "{said}"
    );
    let dirty = format!("{}: 1 uncommitted or untracked file", b.display());
    assert!(said.contains(&dirty), "{said}");
    assert!(said.contains("hand.maxSlots"), "{said}");
    assert_eq!(world.list().tasks.len(), 1, "nothing was created");
}

#[test]
fn an_existing_branch_is_used_only_when_named_and_never_one_checked_out_elsewhere() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.git(&repo, &["branch", "hand/t1"]);
    let run = env.hand(&repo, &["spawn", "t1"]).code(3);
    assert!(run.stderr.contains("--branch hand/t1"), "{}", run.stderr);
    let a = spawn(&env, &repo, "t1", &["--branch", "hand/t1"]);
    assert_eq!(
        env.git(&path_of(&a), &["symbolic-ref", "--short", "HEAD"]),
        "hand/t1"
    );
    let run = env
        .hand(&repo, &["spawn", "t2", "--branch", "main"])
        .code(3);
    assert!(
        run.stderr.contains("checked out in another worktree"),
        "{}",
        run.stderr
    );
    env.hand(&repo, &["spawn", "t3", "--branch", "bad..name"])
        .code(2);
}

#[test]
fn renew_env_and_done_act_on_the_task_of_the_current_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let a = spawn(&env, &repo, "t1", &["--ttl", "10m"]);
    let slot = path_of(&a);
    let exports = env.hand(&slot, &["env"]).ok();
    assert_eq!(
        exports,
        format!(
            "export GIT_HAND_LEASE={}\nexport GIT_HAND_TOKEN=1\nexport GIT_HAND_TASK=t1\n",
            a["lease_id"].as_str().unwrap()
        )
    );
    let renewed = env.hand(&slot, &["renew", "--ttl", "2h", "--json"]).ok();
    let renewed: Value = serde_json::from_str(&renewed).unwrap();
    assert_eq!(renewed["lease"]["lease_id"], a["lease_id"]);
    assert_eq!(renewed["lease"]["token"], 1, "renewal keeps the token");
    assert!(renewed["lease"]["expires_at"].as_str().unwrap() > a["expires_at"].as_str().unwrap());
    env.hand(&repo, &["renew"]).code(2); // the main worktree is no slot: name the task
    env.hand(&repo, &["done", "t1"]).ok();
    env.hand(&repo, &["renew", "t1"]).code(1);
}

#[test]
fn doctor_settles_missing_slots_and_expired_leases_and_reports_strangers() {
    let world = World::new(Scan::native());
    let (env, repo) = (&world.env, &world.repo);
    let a = world.spawn("gone").path;
    world.try_spawn("lapsed", "tester", Some(1_000)).unwrap();
    world.teardown("gone");
    std::fs::remove_dir_all(&a).unwrap();
    let stray = a.parent().unwrap().parent().unwrap().join("9/app");
    std::fs::create_dir_all(&stray).unwrap();
    world.clock.advance(1_200);
    let found = world.doctor(false);
    let kinds: Vec<ProblemKind> = found.iter().map(|p| p.kind).collect();
    for kind in [
        ProblemKind::ExpiredLease,
        ProblemKind::MissingSlot,
        ProblemKind::UnknownSlot,
    ] {
        assert!(kinds.contains(&kind), "{kind:?} not found in {found:#?}");
    }
    let repaired = world.doctor(true);
    for p in &repaired {
        assert_eq!(p.repaired, p.kind != ProblemKind::UnknownSlot, "{p:#?}");
    }
    assert!(stray.exists(), "doctor never deletes what it did not make");
    let all = world.list_of(Tasks::All);
    assert!(
        all.tasks.iter().all(|t| t.task.state == TaskState::Done),
        "{:?}",
        all.tasks.iter().map(|t| &t.task).collect::<Vec<_>>()
    );
    assert!(
        !env.git(repo, &["worktree", "list"])
            .contains(a.to_str().unwrap())
    );
}

/// Rows from older ledgers have no lease id: the collision guard falls back to the path for
/// them, and only for them.
#[test]
fn a_task_row_without_a_lease_id_still_guards_its_slot_by_path() {
    let world = World::new(Scan::native());
    let slot = world.spawn("t1").path;
    world.teardown("t1");
    let conn = rusqlite::Connection::open(world.env.ledger()).unwrap();
    conn.execute(
        "INSERT INTO tasks (repo_id, name, state, slot_path, lease_id, branch, holder, created_at, updated_at)
         SELECT repo_id, 'legacy', 'active', slot_path, NULL, 'old/branch', 'someone', 0, 0 FROM tasks WHERE name = 't1'",
        [],
    )
    .unwrap();
    let next = world.spawn("t2");
    assert_ne!(next.path, slot, "the legacy row's slot was taken");
    assert!(
        next.skipped
            .iter()
            .any(|s| s.why.join(" ").contains("legacy")),
        "{:?}",
        next.skipped
    );
}

#[test]
fn spawn_without_an_origin_takes_the_issue_lease_that_lease_acquire_holds_in_the_repository() {
    // Without hand.issueNamespace or an origin, the namespace is the repository's id in the
    // ledger: spawn's issue lease and `lease acquire`'s must be one lease.
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.git(&repo, &["remote", "remove", "origin"]);
    let mine = env
        .hand(&repo, &["lease", "acquire", "7", "--json"])
        .code(0)
        .json();
    let b = spawn(&env, &repo, "t1", &["--issue", "7"]);
    assert_eq!(b["issue"]["lease_id"], mine["lease_id"], "{b:#}");
    assert!(
        mine["namespace"]
            .as_str()
            .unwrap_or("")
            .starts_with("repo:"),
        "{mine:#}"
    );
}
