//! Machines on a team ledger (issue 14, item 4): a slot is identified by its machine and path,
//! repositories, slots, tasks and worktree resources are each machine's, and a task name, its
//! branch and an issue are the team's: spawning one live on another machine is refused, naming
//! holder and machine. `list` names each task's machine; `list --here` keeps this machine's.
//!
//! Two machines whose slots have the same path are proved at the library level: two ledger
//! connections acting for two machine ids register the same common dir and the same slot path.
//! The ledger knows no git and no disk, so nothing collides on disk; through the binary the pool
//! directory carries the repository's random id, so two machines' slot paths only meet when
//! their repository rows are shared, which the first test shows they never are. The verbs are
//! then driven through the binary with two HOMEs, each with its own `hand.machine`.

use std::path::{Path, PathBuf};

use git_hand::ledger::server::ServerUrl;
use git_hand::ledger::{Acquire, Ledger, WorktreeKey};

use crate::pg;
use crate::support::{Shown, TestEnv, shot, spawn};

fn on(url: &str, machine: &str) -> Ledger {
    Ledger::open_creating(ServerUrl::parse(url).unwrap())
        .unwrap()
        .on_machine(machine)
}

#[test]
fn two_machines_with_the_same_paths_never_share_a_repository_slot_or_token() {
    let db = pg::database();
    let common = Path::new("/home/u/app/.git");
    let slot = WorktreeKey::from_canonical(Path::new("/home/u/.local/share/git-hand/pools/app/1"));
    let mut seen = vec![];
    for machine in ["laptop", "runner"] {
        let mut ledger = on(&db.url(), machine);
        let (repo, slot_row, token) = ledger
            .write(|tx| {
                let repo = tx.ensure_repo(common)?;
                let slot_row = tx.ensure_slot(&repo.id, 1, &slot)?;
                let token = match tx.acquire(&slot_row.resource(), "tester@host", None)? {
                    Acquire::Acquired { tenure, .. } => tenure.token,
                    Acquire::Held(t) => panic!("{machine}: the slot is held by {}", t.holder),
                };
                Ok((repo, slot_row, token))
            })
            .unwrap();
        assert_eq!(slot_row.machine, machine);
        assert_eq!(token, 1, "{machine}: its own slot's first token");
        let (found_repo, found_slot) = ledger
            .read(|v| Ok((v.repo_by_dir(common)?, v.slot_by_path(&slot)?)))
            .unwrap();
        assert_eq!(
            found_repo.as_ref(),
            Some(&repo),
            "{machine} reads its own repository"
        );
        assert_eq!(found_slot.as_ref(), Some(&slot_row));
        seen.push((repo.id, slot_row.resource().key));
    }
    assert_ne!(seen[0].0, seen[1].0, "one repository row per machine");
    assert_ne!(seen[0].1, seen[1].1, "one worktree resource per machine");
    assert_eq!(
        db.psql("SELECT machine || ' ' || path FROM slots ORDER BY machine"),
        format!("laptop {slot}\nrunner {slot}")
    );
    assert_eq!(
        db.psql("SELECT key || ' ' || last_token FROM resources ORDER BY key"),
        format!("laptop:{slot} 1\nrunner:{slot} 1")
    );
}

/// Two machines on the team ledger at `url`: `app` (and its origin) on the laptop, a clone of
/// that origin on the runner (another HOME), each with its own `hand.machine`.
pub(crate) struct Machines {
    pub laptop: TestEnv,
    pub repo: PathBuf,
    pub runner: TestEnv,
    pub clone: PathBuf,
    /// The origin both clone (a bare repository on the laptop's side).
    pub origin: PathBuf,
}

pub(crate) fn two_machines(url: &str) -> Machines {
    let laptop = TestEnv::on_team_ledger(url);
    let repo = laptop.repo("app");
    let runner = TestEnv::on_team_ledger(url);
    let origin = laptop.path("work/app-origin.git");
    let work = runner.path("work");
    runner.git(&work, &["clone", "-q", origin.to_str().unwrap(), "app"]);
    let clone = work.join("app");
    for (env, dir, name) in [(&laptop, &repo, "laptop"), (&runner, &clone, "runner")] {
        env.git(dir, &["config", "--global", "hand.machine", name]);
        env.hand(dir, &["install"]).ok();
    }
    Machines {
        laptop,
        repo,
        runner,
        clone,
        origin,
    }
}

#[test]
fn a_task_name_branch_or_issue_live_on_another_machine_is_refused_naming_holder_and_machine() {
    let db = pg::database();
    let m = two_machines(&db.tcp_url());
    let laptop_env = [("GIT_HAND_HOLDER", "alice")];
    let spawned = m.laptop.hand_env(
        &m.repo,
        &["spawn", "fix-login", "--issue", "42"],
        &laptop_env,
    );
    assert_eq!(spawned.code, 0, "{}", spawned.stderr);

    let mut text = String::new();
    for (label, args) in [
        ("git hand spawn fix-login", &["spawn", "fix-login"][..]),
        (
            "git hand spawn other --branch hand/fix-login",
            &["spawn", "other", "--branch", "hand/fix-login"],
        ),
        (
            "git hand spawn other --issue 42",
            &["spawn", "other", "--issue", "42"],
        ),
    ] {
        let run = m.runner.hand(&m.clone, args);
        assert_eq!(run.code, 3, "{label}: {}{}", run.stdout, run.stderr);
        text.push_str(&shot(&m.runner, label, &run, Shown::Text));
    }
    insta::assert_snapshot!("team_machines_refusals", text);
    let json = m
        .runner
        .hand(&m.clone, &["spawn", "fix-login", "--json"])
        .code(3)
        .json();
    assert_eq!(json["error"]["kind"], "precondition");
    assert_eq!(
        db.psql("SELECT count(*) FROM tasks WHERE machine = 'runner'"),
        "0",
        "nothing was recorded for the runner"
    );

    // Once the laptop's task is done, the name is free for the runner.
    m.laptop.hand(&m.repo, &["teardown", "fix-login"]).ok();
    spawn(&m.runner, &m.clone, "fix-login", &[]);
}

#[test]
fn list_names_every_machines_tasks_and_here_keeps_this_ones() {
    let db = pg::database();
    let m = two_machines(&db.tcp_url());
    spawn(&m.laptop, &m.repo, "on-laptop", &[]);
    spawn(&m.runner, &m.clone, "on-runner", &[]);

    let all = m.runner.hand(&m.clone, &["list", "--json"]).json();
    let tasks: Vec<(String, String)> = all["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["task"].as_str().unwrap().to_string(),
                t["machine"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        tasks,
        [
            ("on-laptop".to_string(), "laptop".to_string()),
            ("on-runner".to_string(), "runner".to_string())
        ]
    );
    // Another machine's worktree is not looked into here.
    assert!(all["tasks"][0]["worktree"].is_null(), "{all:#}");
    assert!(all["tasks"][0]["slot"].is_null(), "{all:#}");
    assert!(!all["tasks"][1]["worktree"].is_null(), "{all:#}");

    let here = m
        .runner
        .hand(&m.clone, &["list", "--here", "--json"])
        .json();
    let names: Vec<&str> = here["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["task"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["on-runner"]);

    let mut text = String::new();
    for (label, args) in [
        ("git hand list", &["list"][..]),
        ("git hand list --here", &["list", "--here"]),
    ] {
        let run = m.runner.hand(&m.clone, args);
        text.push_str(&shot(&m.runner, label, &run, Shown::Text));
    }
    insta::assert_snapshot!("team_machines_list", text);
}

/// The lease verbs write through the retrying path (`Ledger::write_with` and `Retry::Once`): it acts for
/// this machine too. In a repository whose issue namespace is its own registration (no origin),
/// `lease acquire` registers the repository as this machine's, so `lease current` (a read, as
/// this machine) finds the lease, and the ledger holds one registration of it.
#[test]
fn a_lease_verb_registers_the_repository_as_this_machines() {
    let db = pg::database();
    let env = TestEnv::on_team_ledger(&db.tcp_url());
    let repo = env.repo("app");
    env.git(&repo, &["config", "--global", "hand.machine", "laptop"]);
    env.git(&repo, &["remote", "remove", "origin"]);
    env.hand(&repo, &["lease", "acquire", "42", "--holder", "alice"])
        .ok();
    let current = env
        .hand(&repo, &["lease", "current", "42", "--json"])
        .code(0)
        .json();
    assert_eq!(current["holder"], "alice", "{current}");
    assert_eq!(
        db.psql("SELECT string_agg(machine, ',') FROM repos"),
        "laptop"
    );
}
