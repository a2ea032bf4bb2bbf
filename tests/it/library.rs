//! Operations run in this process, on the library, against a real repository made with real
//! git in a [`TestEnv`] and a real SQLite ledger: the tests of a decision that needs no process
//! boundary (which slot a spawn takes, what a teardown refuses, what doctor settles) drive the
//! operation itself, as `verdicts.rs` drives the fence's verdict.
//!
//! The library is pointed at that world through the repository's git configuration
//! (`hand.ledger`, `hand.root`) and a context whose environment is a fixed set
//! ([`Env::of`]: `HOME` only) and whose clock the test moves ([`World::clock`]), never by
//! changing this process's environment. [`World::context`]
//! refuses to go on when the ledger it would use is not the world's, so a test can never write
//! to the user's own ledger. `hand.installHooks=false` keeps spawn from installing hooks: the
//! gits that spawn runs here read this process's `HOME`, and a global `core.hooksPath` there must
//! not be written to.

use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use git_hand::clock::{Clock, ManualClock, SystemClock};
use git_hand::ledger::{Place, Tasks};
use git_hand::ops::context::Env;
use git_hand::ops::doctor;
use git_hand::ops::task::spawn::{self, SpawnOptions, Spawned};
use git_hand::ops::task::tasks::{self, Reach};
use git_hand::ops::task::teardown::{self, TeardownOptions, TornDown};
use git_hand::ops::{Context, Result};
use git_hand::platform::procs::Scan;

use crate::support::{TestEnv, wait_until};

/// How long a test waits for a process it started to have exec'd (far beyond a real exec).
pub const DEADLINE: Duration = Duration::from_secs(60);

/// A repository in a world of its own, and the process table the operations ask.
pub struct World {
    pub env: TestEnv,
    pub repo: PathBuf,
    pub scan: Scan,
    /// The time every ledger the operations open reads: it stands still until a test moves it
    /// (`world.clock.advance(..)`), so a lease runs out when the test says and not before.
    pub clock: ManualClock,
}

impl World {
    pub fn new(scan: Scan) -> Self {
        let env = TestEnv::new();
        let repo = env.repo("app");
        let ledger = env.ledger();
        let root = env.path("data/git-hand/pools");
        env.git(&repo, &["config", "hand.ledger", ledger.to_str().unwrap()]);
        env.git(&repo, &["config", "hand.root", root.to_str().unwrap()]);
        env.git(&repo, &["config", "hand.installHooks", "false"]);
        let clock = ManualClock::new(SystemClock.now_ms());
        Self {
            env,
            repo,
            scan,
            clock,
        }
    }

    /// The repository's context with this world's table, once it is proven to use this world's
    /// ledger (and no other: see the module's note).
    pub fn context(&self) -> Context {
        let home = self.env.path("home");
        let ctx = Context::new(self.repo.clone())
            .with_scan(self.scan)
            .with_env(Env::of([("HOME", home.as_os_str())]))
            .with_clock(self.clock.clone());
        let location = ctx.ledger_location().unwrap();
        assert_eq!(
            location.place,
            Place::File(self.env.ledger()),
            "the library would use the ledger from {}, not this test's: unset GIT_HAND_LEDGER",
            location.source
        );
        ctx
    }

    pub fn spawn_as(&self, task: &str, holder: &str) -> Spawned {
        self.try_spawn(task, holder, None).unwrap()
    }

    /// Spawns `task` for `holder` (with a lease of `ttl_ms`, or the default), as `git hand
    /// spawn --no-setup` does: the check, then the spawn.
    pub fn try_spawn(&self, task: &str, holder: &str, ttl_ms: Option<i64>) -> Result<Spawned> {
        let ctx = self.context();
        let opts = SpawnOptions {
            task,
            base: None,
            branch: None,
            issue: None,
            holder,
            ttl: ttl_ms,
            fetch: false,
            no_setup: true,
            offer_no_setup: false,
        };
        let checked = spawn::check(&ctx, &opts, &|_| {})?;
        let mut ledger = ctx.open_ledger()?;
        spawn::spawn(&ctx, &mut ledger, &opts, checked, &|_| {})
    }

    pub fn spawn(&self, task: &str) -> Spawned {
        self.spawn_as(task, "tester")
    }

    #[track_caller]
    pub fn teardown(&self, task: &str) {
        let torn = self.try_teardown(task, false).unwrap();
        assert!(
            matches!(torn, TornDown::Freed { .. }),
            "{:?}: {task} was not freed: {torn:?}",
            self.scan
        );
    }

    /// Tears `task` down as `git hand teardown [--force] --no-setup` does.
    pub fn try_teardown(&self, task: &str, force: bool) -> Result<TornDown> {
        let ctx = self.context();
        let mut ledger = ctx.open_ledger()?;
        let opts = TeardownOptions {
            task,
            force,
            keep_unpushed: false,
            setup: None,
        };
        teardown::teardown(&ctx, &mut ledger, &opts)
    }

    pub fn list(&self) -> tasks::Listing {
        self.list_of(Tasks::Open)
    }

    /// The listing of `which` tasks (`list`, `list --all`).
    pub fn list_of(&self, which: Tasks) -> tasks::Listing {
        let ctx = self.context();
        let mut ledger = ctx.ledger_for_reading().unwrap();
        tasks::list(&ctx, &mut ledger, which, Reach::Here).unwrap()
    }

    /// What `doctor` finds (and with `repair`, settles).
    pub fn doctor(&self, repair: bool) -> Vec<doctor::Problem> {
        doctor::doctor(&self.context(), repair).unwrap().problems
    }

    #[track_caller]
    pub fn assert_healthy(&self, when: &str) {
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
pub struct Sleeper(Child);

impl Sleeper {
    /// Returns once it has exec'd: until then it is a fork of this test's binary, which the
    /// scan may take for git-hand's own process.
    pub fn in_dir(env: &TestEnv, dir: &Path) -> Self {
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

    pub fn pid(&self) -> i64 {
        i64::from(self.0.id())
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
