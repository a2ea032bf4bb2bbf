//! The admin dirs a `git worktree add` killed before it wrote their `gitdir` leaves behind:
//! `.git/worktrees/<id>/` holding only `locked` (written first) and maybe an empty `gitdir`.
//! git lists no worktree for one and `git worktree prune` keeps it while it is locked, so
//! nothing ever removed it; doctor reports it, and `--repair` removes it when it is certainly a
//! killed add's (locked as git's "initializing" or git-hand's "git-hand slot").

use std::path::{Path, PathBuf};

use git_hand::ops::doctor::ProblemKind;
use git_hand::platform::procs::Scan;

use crate::library::World;
use crate::support::{TestEnv, spawn};

/// `.git/worktrees/<id>/` as a `git worktree add` killed before its `gitdir` leaves it:
/// `locked` holding `reason` (with git's newline), and `gitdir` empty when `empty_gitdir`.
pub fn half_added(repo: &Path, id: &str, reason: &str, empty_gitdir: bool) -> PathBuf {
    let admin = repo.join(".git/worktrees").join(id);
    std::fs::create_dir_all(&admin).unwrap();
    std::fs::write(admin.join("locked"), format!("{reason}\n")).unwrap();
    if empty_gitdir {
        std::fs::write(admin.join("gitdir"), "").unwrap();
    }
    std::fs::canonicalize(admin).unwrap()
}

#[test]
fn doctor_repair_removes_the_admin_dir_a_killed_worktree_add_left_and_the_pool_works() {
    let world = World::new(Scan::native());
    let (env, repo) = (&world.env, &world.repo);
    let a = world.spawn("a").path;
    let slot = half_added(repo, "app1", "git-hand slot", false);
    let plain = half_added(repo, "elsewhere", "initializing", true);

    let found = world.doctor(false);
    for admin in [&slot, &plain] {
        assert!(
            found
                .iter()
                .any(|p| p.kind == ProblemKind::HalfAddedWorktree
                    && Path::new(&p.subject) == admin.as_path()),
            "{} not found in {found:#?}",
            admin.display()
        );
    }

    // The slot's pushes are unchecked here (the world installs no hooks): doctor says so, and
    // that is not what this test is about.
    let half_added = |problems: Vec<git_hand::ops::doctor::Problem>| {
        problems
            .into_iter()
            .filter(|p| p.kind == ProblemKind::HalfAddedWorktree)
            .collect::<Vec<_>>()
    };
    let repaired = half_added(world.doctor(true));
    assert_eq!(repaired.len(), 2, "{repaired:#?}");
    assert!(repaired.iter().all(|p| p.repaired), "{repaired:#?}");
    assert!(
        !slot.exists(),
        "a killed slot add's admin dir is still there"
    );
    assert!(!plain.exists(), "a killed add's admin dir is still there");
    let again = half_added(world.doctor(false));
    assert!(again.is_empty(), "{again:#?}");

    world.teardown("a");
    let b = world.spawn("b").path;
    assert_eq!(b, a, "the free slot was not reused");
    let c = world.spawn("c").path;
    let listed = env.git(repo, &["worktree", "list", "--porcelain"]);
    assert!(listed.contains(&c.display().to_string()), "{listed}");
}

#[test]
fn doctor_repair_keeps_an_admin_dir_without_gitdir_that_someone_else_locked() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    spawn(&env, &repo, "a", &[]);
    let theirs = half_added(&repo, "backup", "on the backup disk", true);
    let unlocked = repo.join(".git/worktrees/unlocked");
    std::fs::create_dir_all(&unlocked).unwrap();
    let unlocked = std::fs::canonicalize(unlocked).unwrap();

    let left = env.hand(&repo, &["doctor", "--repair"]).code(3);
    let line = format!("left: half-added-worktree {}", theirs.display());
    assert!(left.stdout.contains(&line), "{line}\n{}", left.stdout);
    assert!(
        left.stdout.contains("\"on the backup disk\""),
        "{}",
        left.stdout
    );
    let rm = format!("run: rm -r {}", theirs.display());
    assert!(left.stdout.contains(&rm), "{rm}\n{}", left.stdout);
    assert!(
        theirs.join("locked").exists(),
        "an admin dir someone else locked was removed"
    );
    let line = format!("left: half-added-worktree {}", unlocked.display());
    assert!(left.stdout.contains(&line), "{line}\n{}", left.stdout);
    assert!(
        left.stdout.contains("run: git worktree prune"),
        "{}",
        left.stdout
    );
    assert!(
        unlocked.exists(),
        "doctor removed an admin dir git would judge"
    );
}
