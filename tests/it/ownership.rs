//! No operation touches a slot it does not own (issue 10, items 1, 2, 5 and 11): a teardown
//! overtaken by another, a slot replaced by a symlink, an orphaned slot whose git link now names
//! another worktree, and a spawn whose git failed halfway.

use std::path::{Path, PathBuf};

use git_hand::ledger::TaskState;
use git_hand::ops::doctor::ProblemKind;
use git_hand::platform::procs::Scan;
use serde_json::Value;

use crate::library::World;
use crate::support::{GitPause, SYSTEM_PATH, TestEnv, finish, path_of, spawn};

fn head_of(env: &TestEnv, dir: &Path) -> String {
    env.git(dir, &["rev-parse", "--abbrev-ref", "HEAD"])
}

fn dirty(env: &TestEnv, dir: &Path) -> String {
    env.git(dir, &["status", "--porcelain", "--untracked-files=all"])
}

#[test]
fn a_second_teardown_while_the_first_runs_is_refused_and_the_next_task_keeps_its_work() {
    for force in [true, false] {
        let env = TestEnv::new();
        let repo = env.repo("app");
        let a = path_of(&spawn(&env, &repo, "a", &[]));
        let (pattern, args): (&str, &[&str]) = if force {
            std::fs::write(a.join("scratch.txt"), "a's scratch\n").unwrap();
            ("reset --hard", &["teardown", "a", "--force"])
        } else {
            ("switch --detach", &["teardown", "a"])
        };
        let pause = GitPause::new(&env, "slow-teardown", pattern);
        let slow = pause.start(&env, &repo, args);
        pause.wait_until_paused();
        let second = env.hand(&repo, &["teardown", "a", "--force"]).code(3);
        assert!(
            second.stderr.contains("already being torn down"),
            "{}",
            second.stderr
        );
        // The slot is still the first teardown's: the next task gets another one.
        let b = path_of(&spawn(&env, &repo, "b", &[]));
        assert_ne!(b, a, "b was given the slot a teardown is working in");
        std::fs::write(b.join("b-work.txt"), "b's uncommitted work\n").unwrap();
        pause.release();
        finish(slow).ok();
        assert_eq!(head_of(&env, &b), "hand/b", "force={force}");
        assert!(b.join("b-work.txt").exists(), "b's work was destroyed");
        let list = env.hand(&repo, &["list", "--all", "--json"]).json();
        assert_eq!(list["tasks"][0]["state"], "done", "{list:#}");
        assert_eq!(list["tasks"][0]["done_reason"], "torn-down");
    }
}

#[test]
fn a_teardown_holds_its_slot_even_when_the_lease_runs_out_meanwhile() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let a = path_of(&spawn(&env, &repo, "a", &["--ttl", "1s"]));
    let pause = GitPause::new(&env, "detach", "switch --detach");
    let teardown = pause.start(&env, &repo, &["teardown", "a"]);
    pause.wait_until_paused();
    // Real time for the 1 s lease to have run out, had teardown not held it open.
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let b = path_of(&spawn(&env, &repo, "b", &[]));
    assert_ne!(b, a, "b took over the slot teardown was working in");
    pause.release();
    finish(teardown).ok();
    assert_eq!(head_of(&env, &b), "hand/b");
}

/// A worktree of the user's own, next to the repository, with uncommitted work in it.
fn users_worktree(env: &TestEnv, repo: &Path) -> PathBuf {
    let mine = env.path("work/mine");
    env.git(
        repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "mine",
            mine.to_str().unwrap(),
        ],
    );
    std::fs::write(mine.join("README"), "the user's own edit\n").unwrap();
    mine.canonicalize().unwrap()
}

fn replace_with_symlink(slot: &Path, target: &Path) {
    std::fs::remove_dir_all(slot).unwrap();
    std::os::unix::fs::symlink(target, slot).unwrap();
}

fn assert_untouched(env: &TestEnv, mine: &Path) {
    assert_eq!(
        head_of(env, mine),
        "mine",
        "the user's worktree was switched"
    );
    assert_eq!(
        std::fs::read_to_string(mine.join("README")).unwrap(),
        "the user's own edit\n",
        "the user's work was reset"
    );
    let admin = env.git(mine, &["rev-parse", "--absolute-git-dir"]);
    assert!(
        !Path::new(&admin).join("git-hand-stamp").exists(),
        "a stamp was written into the user's worktree"
    );
}

#[test]
fn a_free_slot_replaced_by_a_symlink_is_never_taken_and_doctor_removes_only_the_link() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let first = spawn(&env, &repo, "a", &[]);
    let slot = path_of(&first);
    env.hand(&repo, &["teardown", "a"]).ok();
    let mine = users_worktree(&env, &repo);
    replace_with_symlink(&slot, &mine);

    let b = spawn(&env, &repo, "b", &[]);
    assert_ne!(path_of(&b), slot, "spawn took the symlinked slot");
    assert!(
        b["skipped"]
            .to_string()
            .contains("not the slot git-hand made"),
        "{b:#}"
    );
    assert_untouched(&env, &mine);
    let prune = env.hand(&repo, &["prune", "--json"]).json();
    assert!(
        prune["kept"].to_string().contains("doctor --repair"),
        "{prune:#}"
    );

    let doctor = env.hand(&repo, &["doctor", "--json"]).code(3).json();
    assert_eq!(doctor["problems"][0]["kind"], "unproven-slot", "{doctor:#}");
    env.hand(&repo, &["doctor", "--repair"]).ok();
    assert!(
        std::fs::symlink_metadata(&slot).is_err(),
        "the link is still there"
    );
    assert_untouched(&env, &mine);
    env.hand(&repo, &["doctor"]).ok();
    // The slot comes back at its path, its token history continuing.
    let c = spawn(&env, &repo, "c", &[]);
    assert_eq!(path_of(&c), slot);
    assert!(c["token"].as_i64().unwrap() > first["token"].as_i64().unwrap());
    assert_untouched(&env, &mine);
}

#[test]
fn teardown_of_a_slot_replaced_by_a_symlink_touches_nothing() {
    let world = World::new(Scan::native());
    let (env, repo) = (&world.env, &world.repo);
    let slot = world.spawn("a").path;
    let mine = users_worktree(env, repo);
    replace_with_symlink(&slot, &mine);
    let refused = world.try_teardown("a", true).unwrap_err();
    assert!(refused.is_precondition(), "{refused:?}");
    assert!(refused.to_string().contains("symlink"), "{refused}");
    assert_untouched(env, &mine);
    assert_eq!(world.list().tasks[0].task.state, TaskState::Active);
}

#[test]
fn an_orphaned_slot_never_shares_another_slots_git_state() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let first = spawn(&env, &repo, "a", &[]);
    let orphan = path_of(&first);
    env.hand(&repo, &["teardown", "a"]).ok();
    // The slot's admin dir is lost (as when the repository is cloned again in place): the next
    // worktree git makes gets its name, and the orphan's `.git` then resolves to it.
    let admin = env.git(&orphan, &["rev-parse", "--absolute-git-dir"]);
    std::fs::remove_dir_all(&admin).unwrap();
    let c = spawn(&env, &repo, "c", &[]);
    let c_path = path_of(&c);
    assert_ne!(c_path, orphan);
    assert_eq!(
        env.git(&orphan, &["rev-parse", "--absolute-git-dir"]),
        admin,
        "the setup did not reproduce the shared admin dir"
    );

    let d = spawn(&env, &repo, "d", &[]);
    assert_ne!(path_of(&d), orphan, "spawn reused the orphan");
    assert_eq!(head_of(&env, &c_path), "hand/c", "c's HEAD was moved");
    let list = env.hand(&repo, &["list", "--json"]).json();
    let free: Vec<&Value> = list["free_slots"].as_array().unwrap().iter().collect();
    assert!(
        free.iter()
            .all(|s| s["path"] != orphan.to_str().unwrap() || !s["problem"].is_null()),
        "list counts the orphan as a usable free slot: {list:#}"
    );
    let text = env.hand(&repo, &["list"]).ok();
    assert!(text.contains("doctor --repair"), "{text}");

    let doctor = env.hand(&repo, &["doctor", "--json"]).code(3).json();
    assert_eq!(doctor["problems"][0]["kind"], "unproven-slot", "{doctor:#}");
    env.hand(&repo, &["doctor", "--repair"]).ok();
    env.hand(&repo, &["doctor"]).ok();
    let aside = orphan.parent().unwrap().parent().unwrap().join("orphaned");
    let kept: Vec<_> = std::fs::read_dir(&aside).unwrap().collect();
    assert_eq!(kept.len(), 1, "the orphan's files are kept aside");
    assert_eq!(head_of(&env, &c_path), "hand/c");
    let e = spawn(&env, &repo, "e", &[]);
    assert_eq!(
        path_of(&e),
        orphan,
        "the slot number comes back at its path"
    );
    assert!(e["token"].as_i64().unwrap() > first["token"].as_i64().unwrap());
    assert_eq!(head_of(&env, &path_of(&e)), "hand/e");
    assert_eq!(head_of(&env, &c_path), "hand/c");
}

#[test]
fn an_active_task_whose_slot_was_orphaned_is_ended_by_doctor_and_keeps_its_commits() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let a = path_of(&spawn(&env, &repo, "a", &[]));
    let oid = env.commit(&a, "work.txt", "a's work\n");
    let admin = env.git(&a, &["rev-parse", "--absolute-git-dir"]);
    std::fs::remove_dir_all(&admin).unwrap();
    let teardown = env.hand(&repo, &["teardown", "a"]).code(3);
    assert!(teardown.stderr.contains("doctor"), "{}", teardown.stderr);
    env.hand(&repo, &["doctor", "--repair"]).ok();
    let list = env.hand(&repo, &["list", "--all", "--json"]).json();
    assert_eq!(list["tasks"][0]["done_reason"], "slot-unproven", "{list:#}");
    assert_eq!(env.git(&repo, &["rev-parse", "hand/a"]), oid);
}

/// A branch named `hand` makes git refuse to create `hand/<task>` (a ref cannot be both a file
/// and a directory): a real git failure after spawn has claimed its slot.
fn block_task_branches(env: &TestEnv, repo: &Path) {
    env.git(repo, &["branch", "hand"]);
}

#[test]
fn a_spawn_whose_git_fails_leaves_its_slot_free_and_clean() {
    for reuse in [false, true] {
        let env = TestEnv::new();
        let repo = env.repo("app");
        let mut branches = vec![];
        if reuse {
            spawn(&env, &repo, "warm", &[]);
            env.hand(&repo, &["teardown", "warm"]).ok();
            branches.push("hand/warm");
        }
        // `hand/warm` must go too: a branch `hand` cannot sit beside `hand/warm`.
        for b in &branches {
            env.git(&repo, &["branch", "-D", b]);
        }
        block_task_branches(&env, &repo);
        let failed = env.hand(&repo, &["spawn", "x", "--json"]).code(1);
        assert!(
            failed.stderr.contains("clean and free"),
            "{}",
            failed.stderr
        );
        let list = env.hand(&repo, &["list", "--json"]).json();
        let free = list["free_slots"].as_array().unwrap();
        assert_eq!(free.len(), 1, "reuse={reuse}: {list:#}");
        let slot = PathBuf::from(free[0]["path"].as_str().unwrap());
        assert_eq!(
            dirty(&env, &slot),
            "",
            "reuse={reuse}: the slot was left dirty"
        );
        env.hand(&repo, &["doctor"]).ok();
        env.git(&repo, &["branch", "-D", "hand"]);
        let again = spawn(&env, &repo, "x", &[]);
        assert_eq!(
            path_of(&again),
            slot,
            "reuse={reuse}: the slot was not reused"
        );
        assert_eq!(again["slot_source"], "reused");
        assert_eq!(head_of(&env, &slot), "hand/x");
    }
}

#[test]
fn doctor_reports_a_free_slot_no_spawn_will_take() {
    let world = World::new(Scan::native());
    let slot = world.spawn("a").path;
    world.teardown("a");
    std::fs::write(slot.join("stray.txt"), "whose?\n").unwrap();
    let doctor = world.doctor(true);
    assert_eq!(doctor[0].kind, ProblemKind::UnusableSlot, "{doctor:#?}");
    assert!(slot.join("stray.txt").exists(), "doctor threw work away");
    std::fs::remove_file(slot.join("stray.txt")).unwrap();
    world.assert_healthy("with the stray file gone");
}

/// Task `a` in a slot with a commit and an uncommitted change (so teardown --force resets it),
/// and the repository's common dir, where its branch's lock lives.
fn slot_with_uncommitted_work() -> (TestEnv, PathBuf, PathBuf, PathBuf) {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let a = path_of(&spawn(&env, &repo, "a", &[]));
    env.commit(&a, "f", "a's work\n");
    std::fs::write(a.join("f"), "changed, not committed\n").unwrap();
    let common = PathBuf::from(env.git(
        &a,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    ));
    (env, repo, a, common)
}

/// A git killed while `reset --hard` wrote through the slot's HEAD leaves the lock of the branch
/// checked out there in the common dir (a randomized trial found it: every later teardown of the
/// task failed on "cannot lock ref"). Teardown removes it, as the slot's own; another branch's
/// lock is nobody's to remove.
#[test]
fn the_lock_of_the_slots_branch_a_killed_git_left_never_wedges_a_teardown() {
    let (env, repo, a, common) = slot_with_uncommitted_work();
    let other = common.join("refs/heads/other.lock");
    std::fs::write(&other, "").unwrap();
    let lock = common.join("refs/heads/hand/a.lock");
    std::fs::write(&lock, "").unwrap();
    // The killed `reset --hard` held the index too: git names one lock per run.
    let admin = PathBuf::from(env.git(&a, &["rev-parse", "--absolute-git-dir"]));
    std::fs::write(admin.join("index.lock"), "").unwrap();
    env.hand(&repo, &["teardown", "a", "--force"]).ok();
    assert!(
        !lock.exists(),
        "the stale lock of the slot's branch is still there"
    );
    assert!(other.exists(), "another branch's lock was removed");
    assert!(
        env.git(&repo, &["branch", "--list", "hand/a"])
            .contains("hand/a"),
        "the task's branch is gone"
    );
}

/// `git gc --auto` and `git maintenance` expire reflogs from any worktree of the repository,
/// holding a branch's lock for seconds: a lock may be removed only while no other git runs in
/// the repository. Here a process named `git` waits in the main worktree: the lock stays and the
/// teardown fails, naming it; once that git is gone the same teardown ends.
#[test]
fn a_branch_lock_is_left_alone_while_another_git_runs_in_the_repository() {
    struct Killed(std::process::Child);
    impl Drop for Killed {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let (env, repo, _a, common) = slot_with_uncommitted_work();
    let lock = common.join("refs/heads/hand/a.lock");
    std::fs::write(&lock, "").unwrap();
    let bin = env.path("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let sleep = which::which("sleep").unwrap();
    std::fs::copy(&sleep, bin.join("git")).unwrap();
    let gc = Killed(crate::support::spawn_fresh_executable(
        std::process::Command::new(bin.join("git"))
            .arg("600")
            .current_dir(&repo),
    ));
    let held = env.hand(&repo, &["teardown", "a", "--force"]);
    assert_ne!(held.code, 0, "teardown took a lock another git may hold");
    assert!(held.stderr.contains("hand/a.lock"), "{}", held.stderr);
    assert!(lock.exists(), "the lock was removed while another git ran");
    drop(gc);
    env.hand(&repo, &["teardown", "a", "--force"]).ok();
    assert!(
        env.git(&repo, &["branch", "--list", "hand/a"])
            .contains("hand/a"),
        "the task's branch is gone"
    );
}

#[test]
fn a_lock_file_a_killed_git_left_in_a_slot_never_wedges_it() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let a = path_of(&spawn(&env, &repo, "a", &[]));
    let admin = PathBuf::from(env.git(&a, &["rev-parse", "--absolute-git-dir"]));
    // As a git killed mid-command leaves them: nobody holds them any more.
    std::fs::write(admin.join("HEAD.lock"), "").unwrap();
    env.hand(&repo, &["teardown", "a"]).ok();
    std::fs::write(admin.join("index.lock"), "").unwrap();
    let b = spawn(&env, &repo, "b", &[]);
    assert_eq!(
        path_of(&b),
        a,
        "the free slot with a stale lock was not reused"
    );
    assert_eq!(head_of(&env, &a), "hand/b");
}

/// A `git worktree add` killed before it wrote the admin dir's `gitdir` leaves it empty. git
/// then leaves that admin dir out of `git worktree list` and prunes it; git-hand must not stop
/// reading the repository on it (a randomized trial killed a spawn there, and every later
/// `doctor --repair` failed with "cannot read the repository").
#[test]
fn an_admin_dir_a_killed_worktree_add_left_without_its_gitdir_wedges_nothing() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let a = spawn(&env, &repo, "a", &[]);
    env.git(&repo, &["worktree", "add", "-q", "--detach", "../half"]);
    let admin = repo.join(".git/worktrees/half");
    std::fs::write(admin.join("gitdir"), "").unwrap();
    let doctor = env.hand(&repo, &["doctor", "--repair", "--json"]);
    assert!(
        doctor.code == 0 || doctor.code == 3,
        "doctor --repair failed: {}",
        doctor.stderr
    );
    env.hand(&repo, &["list"]).ok();
    env.hand(&repo, &["teardown", "a"]).ok();
    let b = spawn(&env, &repo, "b", &[]);
    assert_eq!(path_of(&b), path_of(&a), "the free slot was not reused");
}

/// A spawn killed inside its `git worktree add` can leave the new admin dir's `commondir` empty,
/// which makes every later `git worktree add` of the repository fail ("failed to read
/// .git/worktrees/<id>/commondir"): a randomized trial saw a parallel spawn fail on it. A spawn
/// that needs a new slot clears such a slot's admin dir (its maker is dead: every spawn registers
/// under the worktree-list lock) and the killed spawn's repair still settles its task; an admin
/// dir that is not a slot's is left alone.
#[test]
fn a_half_written_admin_dir_a_killed_spawn_left_never_fails_the_next_spawn() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let a = path_of(&spawn(&env, &repo, "a", &[]));
    let pool = a.parent().unwrap().parent().unwrap().to_path_buf();
    let common = repo.join(".git");
    let half = |id: &str, gitdir: &Path| {
        let admin = common.join("worktrees").join(id);
        std::fs::create_dir_all(&admin).unwrap();
        std::fs::write(admin.join("locked"), "initializing").unwrap();
        std::fs::write(admin.join("gitdir"), format!("{}\n", gitdir.display())).unwrap();
        std::fs::write(admin.join("commondir"), "").unwrap();
        admin
    };
    let slots = half("app7", &pool.join("7/app/.git"));
    let b = spawn(&env, &repo, "b", &[]);
    assert!(
        !slots.exists(),
        "the slot's half-written admin dir is still there"
    );
    assert_eq!(head_of(&env, &path_of(&b)), "hand/b");

    let theirs = half("elsewhere", &env.path("work/elsewhere/.git"));
    let c = env.hand(&repo, &["spawn", "c"]);
    assert_ne!(
        c.code, 0,
        "git's worktree add cannot pass another's half-written admin dir"
    );
    assert!(
        theirs.join("commondir").exists(),
        "an admin dir not of a slot was touched"
    );
}

/// A new slot whose checkout fails as on a full disk (git's `switch` and the undo's `reset
/// --hard` both fail in it, leaving a partly written file): the undo removes what the spawn
/// made, and the ledger forgets the slot too, so `doctor` finds nothing (it reported
/// `missing-slot` for ever after) and the next spawn makes the slot again (issue 22 item 10).
#[test]
fn a_new_slot_whose_checkout_fails_on_a_full_disk_is_forgotten_with_its_directory() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let dir = env.path("full-disk");
    std::fs::create_dir_all(&dir).unwrap();
    let real = which::which("git").unwrap();
    let pool = env.path("data/git-hand/pools");
    // `git -C <dir> ...`: in a slot under the pool, a checkout writes part of a file and fails.
    let script = format!(
        "#!/bin/sh\n\
         case \"$2\" in '{pool}'/*)\n\
         \x20 case \"$*\" in *' switch '*|*' reset '*)\n\
         \x20   echo partial > \"$2/partial\"\n\
         \x20   echo 'fatal: write error: No space left on device' >&2; exit 128;;\n\
         \x20 esac;;\n\
         esac\n\
         exec '{real}' \"$@\"\n",
        pool = pool.display(),
        real = real.display()
    );
    std::fs::write(dir.join("git"), script).unwrap();
    std::fs::set_permissions(
        dir.join("git"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let path = format!(
        "{}:{}:{SYSTEM_PATH}",
        dir.display(),
        TestEnv::bin_dir().display()
    );
    let failed = env
        .hand_env(&repo, &["spawn", "x"], &[("PATH", &path)])
        .code(1);
    assert!(
        failed.stderr.contains("No space left on device")
            && failed.stderr.contains("the slot it was making is removed"),
        "{}",
        failed.stderr
    );
    let doctor = env.hand(&repo, &["doctor", "--json"]);
    assert_eq!(doctor.code, 0, "{doctor:?}");
    let list = env.hand(&repo, &["list", "--json"]).json();
    assert!(
        list["free_slots"].as_array().unwrap().is_empty(),
        "{list:#}"
    );
    let worktrees = env.git(&repo, &["worktree", "list", "--porcelain"]);
    assert_eq!(worktrees.matches("worktree ").count(), 1, "{worktrees}");
    let again = spawn(&env, &repo, "x", &[]);
    assert_eq!(again["slot_source"], "created", "{again:#}");
    assert_eq!(head_of(&env, &path_of(&again)), "hand/x");
}
