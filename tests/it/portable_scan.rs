//! The operations themselves (spawn, teardown, list, doctor) run in this process against each
//! process table this platform has (`Scan::every()`: on Linux the `/proc` fast path and the
//! portable `sysinfo` one, which macOS runs). The binary, and the other library-level tests
//! (`library.rs`'s world with the native table), scan `/proc` on Linux: without these, nothing
//! at operation level ever ran with the portable table (issue 24).
//!
//! Each test is a [`World`] of its own (`library.rs`: a real repository, a real ledger, the
//! library pointed at them through the repository's configuration).

use git_hand::ops::doctor::ProblemKind;
use git_hand::ops::task::sessions::Presence;
use git_hand::ops::task::spawn::SlotSource;
use git_hand::platform::procs::Scan;

use crate::library::{Sleeper, World};

/// A slot whose task was torn down, with nothing inside, is the next spawn's; and the listing
/// and doctor agree that all is well.
#[test]
fn a_torn_down_slot_with_nothing_inside_is_reused() {
    for scan in Scan::every() {
        let world = World::new(scan);
        let first = world.spawn("t1");
        assert_eq!(first.source, SlotSource::Created, "{scan:?}");
        world.teardown("t1");
        let listing = world.list();
        let free: Vec<_> = listing
            .free_slots
            .iter()
            .map(|s| (s.info.slot.path.as_path().to_path_buf(), s.problem.clone()))
            .collect();
        assert_eq!(free, vec![(first.path.clone(), None)], "{scan:?}");
        let second = world.spawn("t2");
        assert_eq!(
            (second.source, &second.path, second.slot_n),
            (SlotSource::Reused, &first.path, first.slot_n),
            "{scan:?}: skipped {:?}",
            second.skipped
        );
        assert!(second.skipped.is_empty(), "{scan:?}: {:?}", second.skipped);
        world.teardown("t2");
        world.assert_healthy("after the reuse");
    }
}

/// A process with its directory in a subdirectory of a free slot keeps that slot from the next
/// spawn, which makes another and says which slot it skipped and why; once the process is gone
/// the slot is reused again.
#[test]
fn a_free_slot_with_a_process_inside_is_skipped() {
    for scan in Scan::every() {
        let world = World::new(scan);
        let first = world.spawn("t1");
        world.teardown("t1");
        let sub = first.path.join("sub");
        std::fs::create_dir(&sub).unwrap();
        let sleeper = Sleeper::in_dir(&world.env, &sub);
        let second = world.spawn("t2");
        assert_eq!(second.source, SlotSource::Created, "{scan:?}");
        assert_ne!(
            second.path, first.path,
            "{scan:?}: the occupied slot was reused"
        );
        let skipped: Vec<_> = second.skipped.iter().map(|s| s.path.as_str()).collect();
        assert_eq!(skipped, [first.path.to_str().unwrap()], "{scan:?}");
        let why = second.skipped[0].why.join("; ");
        assert!(
            why.contains(&sleeper.pid().to_string()),
            "{scan:?}: the reason does not name the sleeper ({}): {why}",
            sleeper.pid()
        );
        drop(sleeper);
        world.teardown("t2");
        let third = world.spawn("t3");
        assert_eq!(third.source, SlotSource::Reused, "{scan:?}");
        assert!(third.skipped.is_empty(), "{scan:?}: {:?}", third.skipped);
        world.teardown("t3");
        world.assert_healthy("after the sleeper left");
    }
}

/// `list` judges with the context's table: a task spawned by this process has its spawning
/// process running, and a Claude Code session's slot shows a process inside it while there is
/// one, and none once it is gone.
#[test]
fn list_sees_the_spawner_and_a_process_in_a_sessions_slot() {
    for scan in Scan::every() {
        let world = World::new(scan);
        let holder = format!("{}:worker", git_hand::ops::claude::HOLDER_PREFIX);
        let spawned = world.spawn_as("s1", &holder);
        let presence = |world: &World| {
            let listing = world.list();
            let [view] = listing.tasks.as_slice() else {
                panic!("{scan:?}: {:?}", listing.tasks);
            };
            assert!(view.session.is_some(), "{scan:?}: {view:?}");
            assert!(view.exec_running, "{scan:?}: this process spawned it");
            view.presence
        };
        assert_eq!(presence(&world), Some(Presence::Gone), "{scan:?}");
        let sleeper = Sleeper::in_dir(&world.env, &spawned.path);
        assert_eq!(presence(&world), Some(Presence::Alive), "{scan:?}");
        drop(sleeper);
        assert_eq!(presence(&world), Some(Presence::Gone), "{scan:?}");
        world.teardown("s1");
        world.assert_healthy("after the session's task ended");
    }
}

/// A spawn whose process died after recording its intent (the binary, stopped at a failpoint)
/// is judged gone by each table, and `doctor --repair` settles it; the slot is then reused.
#[test]
fn doctor_repair_settles_a_spawn_whose_process_is_gone() {
    for scan in Scan::every() {
        let world = World::new(scan);
        let run = world.env.hand_env(
            &world.repo,
            &["spawn", "crashed"],
            &[("GIT_HAND_FAILPOINT", "spawn-after-intent")],
        );
        assert!(
            run.code != 0 && run.stderr.contains("failpoint spawn-after-intent hit"),
            "{scan:?}: the failpoint did not fire: {run:?}"
        );
        let found = world.doctor(false);
        assert!(
            found
                .iter()
                .any(|p| p.kind == ProblemKind::StuckSpawn && !p.repaired),
            "{scan:?}: {found:#?}"
        );
        let repaired = world.doctor(true);
        assert!(
            repaired
                .iter()
                .any(|p| p.kind == ProblemKind::StuckSpawn && p.repaired),
            "{scan:?}: {repaired:#?}"
        );
        world.assert_healthy("after the repair");
        let next = world.spawn("t1");
        assert!(next.skipped.is_empty(), "{scan:?}: {:?}", next.skipped);
        world.teardown("t1");
        world.assert_healthy("after a spawn on the settled ledger");
    }
}
