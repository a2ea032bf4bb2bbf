//! The operations themselves (spawn, teardown, list, doctor) run in this process against each
//! process table this platform has (`Scan::every()`: on Linux the `/proc` fast path and the
//! portable `sysinfo` one, which macOS runs). Every other integration test goes through the
//! binary, which on Linux scans `/proc`: without these, nothing at operation level ever ran with
//! the portable table (issue 24).
//!
//! Each test is a real repository made with real git in a [`TestEnv`]; the library is pointed at
//! that world through the repository's git configuration (`hand.ledger`, `hand.root`), never by
//! changing this process's environment. [`World::context`] refuses to go on when the ledger it
//! would use is not the world's (a `GIT_HAND_LEDGER` in the environment wins over
//! `hand.ledger`), so a test can never write to the user's own ledger. `hand.installHooks=false`
//! keeps spawn from installing hooks: the git that spawn runs here reads this process's `HOME`,
//! and a global `core.hooksPath` there must not be written to.

use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use git_hand::ledger::Place;
use git_hand::ops::Context;
use git_hand::ops::doctor::{self, ProblemKind};
use git_hand::ops::task::sessions::Presence;
use git_hand::ops::task::spawn::{self, SlotSource, SpawnOptions, Spawned};
use git_hand::ops::task::tasks::{self, Reach};
use git_hand::ops::task::teardown::{self, TeardownOptions, TornDown};
use git_hand::platform::procs::Scan;

use crate::support::{TestEnv, wait_until};

/// How long a test waits for a process it started to have exec'd (far beyond a real exec).
const DEADLINE: Duration = Duration::from_secs(60);

/// A repository in a world of its own, and the process table the operations ask.
struct World {
    env: TestEnv,
    repo: PathBuf,
    scan: Scan,
}

impl World {
    fn new(scan: Scan) -> Self {
        let env = TestEnv::new();
        let repo = env.repo("app");
        let ledger = env.ledger();
        let root = env.path("data/git-hand/pools");
        env.git(&repo, &["config", "hand.ledger", ledger.to_str().unwrap()]);
        env.git(&repo, &["config", "hand.root", root.to_str().unwrap()]);
        env.git(&repo, &["config", "hand.installHooks", "false"]);
        Self { env, repo, scan }
    }

    /// The repository's context with this world's table, once it is proven to use this world's
    /// ledger (and no other: see the module's note).
    fn context(&self) -> Context {
        let ctx = Context::new(self.repo.clone()).with_scan(self.scan);
        let location = ctx.ledger_location().unwrap();
        assert_eq!(
            location.place,
            Place::File(self.env.ledger()),
            "the library would use the ledger from {}, not this test's: unset GIT_HAND_LEDGER",
            location.source
        );
        ctx
    }

    fn spawn_as(&self, task: &str, holder: &str) -> Spawned {
        let ctx = self.context();
        let opts = SpawnOptions {
            task,
            base: None,
            branch: None,
            issue: None,
            holder,
            ttl: None,
            fetch: false,
            no_setup: true,
            offer_no_setup: false,
        };
        let checked = spawn::check(&ctx, &opts, &|_| {}).unwrap();
        let mut ledger = ctx.open_ledger().unwrap();
        spawn::spawn(&ctx, &mut ledger, &opts, checked, &|_| {}).unwrap()
    }

    fn spawn(&self, task: &str) -> Spawned {
        self.spawn_as(task, "tester")
    }

    #[track_caller]
    fn teardown(&self, task: &str) {
        let ctx = self.context();
        let mut ledger = ctx.open_ledger().unwrap();
        let opts = TeardownOptions {
            task,
            force: false,
            keep_unpushed: false,
            setup: None,
        };
        let torn = teardown::teardown(&ctx, &mut ledger, &opts).unwrap();
        assert!(
            matches!(torn, TornDown::Freed { .. }),
            "{:?}: {task} was not freed: {torn:?}",
            self.scan
        );
    }

    fn list(&self) -> tasks::Listing {
        let ctx = self.context();
        let mut ledger = ctx.ledger_for_reading().unwrap();
        tasks::list(
            &ctx,
            &mut ledger,
            git_hand::ledger::Tasks::Open,
            Reach::Here,
        )
        .unwrap()
    }

    /// What `doctor` finds (and with `repair`, settles).
    fn doctor(&self, repair: bool) -> Vec<doctor::Problem> {
        doctor::doctor(&self.context(), repair).unwrap().problems
    }

    #[track_caller]
    fn assert_healthy(&self, when: &str) {
        let problems = self.doctor(false);
        assert!(
            problems.is_empty(),
            "{:?}, {when}: doctor found {problems:#?}",
            self.scan
        );
    }
}

/// `sleep`, started by the test with its directory in `dir`, killed and reaped when dropped
/// (also when the test panics).
struct Sleeper(Child);

impl Sleeper {
    /// Returns once it has exec'd: until then it is a fork of this test's binary, which the
    /// scan may take for git-hand's own process.
    fn in_dir(env: &TestEnv, dir: &Path) -> Self {
        let child = env.command("sleep", dir).arg("600").spawn().unwrap();
        let sleeper = Self(child);
        let pid = sleeper.pid();
        let native = Scan::native();
        let own = native.own_exe();
        wait_until("the sleeper exec'd", Instant::now() + DEADLINE, || {
            native.exe(pid).is_some_and(|exe| Some(exe) != own)
        });
        sleeper
    }

    fn pid(&self) -> i64 {
        i64::from(self.0.id())
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

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
