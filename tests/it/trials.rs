//! Black-box trials: spawns and teardowns killed with SIGKILL at random moments, alone and racing
//! each other, then `git hand doctor --repair` and a teardown retry, then the invariants checked
//! by SQL on the ledger and git on disk ([`assert_consistent`], [`assert_reachable`]): no slot
//! held twice, no two open tasks on one slot, every active task's slot on its branch, no token
//! issued twice or out of order, no commit lost, no live tenure without an active task.
//!
//! Everything random comes from one seed (a small xorshift, std only), printed with the round and
//! what the round did when a trial fails: `GIT_HAND_TRIALS_SEED=<seed>` replays its choices (the
//! moments a kill lands still depend on the machine). The round count is small enough for every
//! `cargo test`; `GIT_HAND_TRIALS=<n>` runs more by hand, and `GIT_HAND_TRIALS_VERBOSE=1` prints
//! what every round did (with `--nocapture`).
//!
//! A kill lands either at a random moment (a random delay after the start), or at a named git
//! command ([`GitPause`]: the process is killed while its git waits there), which reaches the
//! moments inside the git work every time. It kills either the whole process group (a power cut:
//! git-hand and its git die together) or git-hand alone (its git runs on, orphaned, and the
//! trial waits for it to end before repairing). What a git killed mid-command leaves behind (a
//! lock file in a slot's admin dir, a half-made worktree admin dir) is git-hand's to clear: these
//! trials first found both, and now fail if a command or a repair stumbles on one.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::support::{GitPause, Run, TestEnv, assert_consistent, assert_reachable, wait_until};

/// Rounds per trial in an ordinary `cargo test` (`GIT_HAND_TRIALS` overrides).
const DEFAULT_ROUNDS: u64 = 3;

/// Steps (a spawn or a teardown, perhaps killed) in one round of the sequential trial.
const STEPS: u64 = 8;

/// How often the concurrent trial tears one task down twice at once. (These trials found that
/// two teardowns of one task both passed the claim and the slower one detached the next task's
/// slot; teardown now refuses the second while the first runs: exit 3.)
const DOUBLE_TEARDOWN_PERCENT: u64 = 50;

/// How long a trial waits for a killed command's orphaned git to end, or for a command to
/// finish, before it gives up (far beyond any real run).
const DEADLINE: Duration = Duration::from_secs(120);

/// The git commands a kill can wait for, by operation (a command that never runs one simply
/// finishes).
const SPAWN_PAUSES: &[&str] = &["status --porcelain", "worktree add", "switch"];
const TEARDOWN_PAUSES: &[&str] = &["status --porcelain", "reset --hard", "clean", "switch"];

/// xorshift64*: enough randomness for choosing steps, from std alone.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        // splitmix64 of the seed: nearby seeds give unrelated streams, and the state is never 0.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Self((z ^ (z >> 31)) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

fn seed() -> u64 {
    match std::env::var("GIT_HAND_TRIALS_SEED") {
        Ok(s) => s
            .parse()
            .unwrap_or_else(|_| panic!("GIT_HAND_TRIALS_SEED={s} is not a number")),
        Err(_) => {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap();
            t.as_nanos() as u64 ^ u64::from(std::process::id())
        }
    }
}

fn rounds() -> u64 {
    match std::env::var("GIT_HAND_TRIALS") {
        Ok(n) => n
            .parse()
            .unwrap_or_else(|_| panic!("GIT_HAND_TRIALS={n} is not a number")),
        Err(_) => DEFAULT_ROUNDS,
    }
}

/// How a kill lands.
#[derive(Debug, Clone, Copy)]
enum Kill {
    /// `kill -9` on the process group: git-hand and the git it runs die together.
    Group,
    /// `kill -9` on git-hand alone: its git runs on, orphaned.
    Hand,
}

/// When a kill lands.
#[derive(Debug, Clone)]
enum Moment {
    /// This many milliseconds after the start (if the command still runs).
    After(u64),
    /// While a git whose arguments contain this waits.
    AtGit(&'static str),
}

/// One round's world: a repository with a bare origin, the commits its tasks made, what each
/// task left that makes its teardown need `--force`, and a journal of what the round did,
/// printed with the seed if the round fails.
struct World {
    env: TestEnv,
    repo: PathBuf,
    rng: Rng,
    trial: &'static str,
    seed: u64,
    round: u64,
    commits: Vec<String>,
    needs_force: BTreeSet<String>,
    next_task: u64,
    next_pause: u64,
    journal: Vec<String>,
}

impl Drop for World {
    fn drop(&mut self) {
        if std::env::var_os("GIT_HAND_TRIALS_VERBOSE").is_some() && !std::thread::panicking() {
            eprintln!(
                "trial {} round {} of seed {}:\n  {}",
                self.trial,
                self.round,
                self.seed,
                self.journal.join("\n  ")
            );
        }
        if std::thread::panicking() {
            eprintln!(
                "trial {} failed in round {} of seed {}; replay its choices with \
                 GIT_HAND_TRIALS_SEED={} GIT_HAND_TRIALS={} cargo test --locked trials::{}\n\
                 what the round did:\n  {}",
                self.trial,
                self.round,
                self.seed,
                self.seed,
                self.round + 1,
                self.trial,
                self.journal.join("\n  ")
            );
        }
    }
}

/// An open task as the ledger has it.
#[derive(Debug, Clone)]
struct Open {
    name: String,
    state: String,
    slot: PathBuf,
    branch: String,
}

/// A git-hand command running in the background, leading its own process group (`timeout`
/// makes one; off Linux the harness's `sh` does), so that it can be killed like a power cut.
struct Running {
    child: Child,
    what: String,
    pause: Option<GitPause>,
    moment: Option<(Moment, Kill)>,
}

/// What a background command came to.
struct Ended {
    what: String,
    /// Whether a kill landed (the command was still running when it came).
    killed: bool,
    run: Run,
}

impl World {
    /// A round's world, its pool limited to one of `max_slots` (chosen by the seed).
    fn new(trial: &'static str, seed: u64, round: u64, max_slots: &[u64]) -> Self {
        let env = TestEnv::new();
        let repo = env.repo("app");
        env.hand(&repo, &["lease", "release", "0"]).ok(); // creates the ledger up front
        let mut rng = Rng::new(seed ^ round.wrapping_mul(0xA24B_AED4_963E_E407));
        let max = *rng.pick(max_slots);
        env.git(&repo, &["config", "hand.maxSlots", &max.to_string()]);
        Self {
            env,
            repo,
            rng,
            trial,
            seed,
            round,
            commits: vec![],
            needs_force: BTreeSet::new(),
            next_task: 0,
            next_pause: 0,
            journal: vec![format!("hand.maxSlots {max}")],
        }
    }

    fn context(&self) -> String {
        format!(
            "trial {} seed {} round {} after {:?}",
            self.trial,
            self.seed,
            self.round,
            self.journal.last()
        )
    }

    fn note(&mut self, line: String) {
        self.journal.push(line);
    }

    fn open_tasks(&self) -> Vec<Open> {
        let conn = rusqlite::Connection::open(self.env.ledger()).unwrap();
        conn.prepare(
            "SELECT name, state, slot_path, branch FROM tasks WHERE state <> 'done' ORDER BY id",
        )
        .unwrap()
        .query_map([], |r| {
            Ok(Open {
                name: r.get(0)?,
                state: r.get(1)?,
                slot: PathBuf::from(r.get::<_, String>(2)?),
                branch: r.get(3)?,
            })
        })
        .unwrap()
        .map(Result::unwrap)
        .collect()
    }

    fn active_tasks(&self) -> Vec<Open> {
        self.open_tasks()
            .into_iter()
            .filter(|t| t.state == "active")
            .collect()
    }

    fn new_task_name(&mut self) -> String {
        self.next_task += 1;
        format!("t{}", self.next_task)
    }

    /// A kill for the next command, or none (about a third of the commands run undisturbed).
    fn choose_kill(&mut self, pauses: &[&'static str], max_delay: u64) -> Option<(Moment, Kill)> {
        if self.rng.chance(35) {
            return None;
        }
        let moment = if self.rng.chance(50) {
            Moment::AtGit(pauses[self.rng.below(pauses.len() as u64) as usize])
        } else {
            Moment::After(self.rng.below(max_delay))
        };
        let kill = if self.rng.chance(50) {
            Kill::Group
        } else {
            Kill::Hand
        };
        Some((moment, kill))
    }

    /// Starts `git hand ARGS` in the repository, armed with `kill` if any.
    fn start(&mut self, args: &[&str], kill: Option<(Moment, Kill)>) -> Running {
        let what = format!("git hand {} (kill: {kill:?})", args.join(" "));
        self.note(what.clone());
        let pause = match &kill {
            Some((Moment::AtGit(pattern), _)) => {
                self.next_pause += 1;
                Some(GitPause::new(
                    &self.env,
                    &format!("trial{}", self.next_pause),
                    pattern,
                ))
            }
            _ => None,
        };
        let child = match &pause {
            Some(p) => p.start(&self.env, &self.repo, args),
            None => self
                .env
                .timed(crate::support::BIN, &self.repo)
                .args(args)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        };
        Running {
            child,
            what,
            pause,
            moment: kill,
        }
    }

    /// Runs one command to its end or its kill.
    fn run(&mut self, args: &[&str], kill: Option<(Moment, Kill)>) -> Ended {
        let running = self.start(args, kill);
        let ended = finish_or_kill(running, Instant::now());
        self.note(format!("  -> {}", summary(&ended)));
        ended
    }

    /// Commits in a task's slot, sometimes pushes, sometimes leaves an untracked file.
    fn work_in(&mut self, task: &Open) {
        if self.rng.chance(60) {
            let n = self.commits.len();
            let oid = self.env.commit(
                &task.slot,
                &format!("{}-{n}.txt", task.name),
                &format!("work {n}\n"),
            );
            self.commits.push(oid);
            if self.rng.chance(50) {
                self.env
                    .git(&task.slot, &["push", "-q", "origin", &task.branch]);
                self.note(format!("committed and pushed in {}", task.name));
            } else {
                self.needs_force.insert(task.name.clone());
                self.note(format!("committed in {}", task.name));
            }
        }
        if self.rng.chance(25) {
            std::fs::write(task.slot.join("scratch.txt"), "uncommitted\n").unwrap();
            self.needs_force.insert(task.name.clone());
            self.note(format!("left an untracked file in {}", task.name));
        }
    }

    /// `git hand ARGS`, undisturbed.
    fn hand(&mut self, args: &[&str]) -> Run {
        self.env.hand(&self.repo, args)
    }

    fn teardown_args(&self, name: &str) -> Vec<String> {
        let mut args = vec!["teardown".to_string(), name.to_string()];
        if self.needs_force.contains(name) {
            args.push("--force".into());
        }
        args
    }

    /// `doctor --repair`, then a retry of every teardown a kill interrupted: what a user does
    /// after a crash. Doctor may leave only a teardown that needs `--force` (it never discards
    /// work); the retry must then succeed.
    fn repair(&mut self) {
        // Sometimes the repair is killed too (doctor finishes teardowns, with git): the next
        // one must settle what both crashes left.
        if self.rng.chance(25) {
            let kill = self
                .choose_kill(TEARDOWN_PAUSES, 60)
                .unwrap_or((Moment::After(0), Kill::Group));
            self.run(&["doctor", "--repair"], Some(kill));
        }
        let doctor = self.env.hand(&self.repo, &["doctor", "--repair", "--json"]);
        let context = self.context();
        assert!(
            doctor.code == 0 || doctor.code == 3,
            "{context}: doctor --repair failed\n{}\n{}",
            doctor.stdout,
            doctor.stderr
        );
        let report = doctor.json();
        let repaired: Vec<String> = report["problems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                format!(
                    "{} {} (repaired: {})",
                    p["kind"], p["subject"], p["repaired"]
                )
            })
            .collect();
        self.note(format!("doctor --repair: {repaired:?}"));
        for problem in report["problems"].as_array().unwrap() {
            assert!(
                problem["repaired"] == true || problem["kind"] == "stuck-teardown",
                "{context}: doctor --repair left a problem it should settle: {problem:#}"
            );
        }
        for task in self.open_tasks() {
            if task.state == "active" {
                continue;
            }
            let args = self.teardown_args(&task.name);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let retry = self.hand(&args);
            self.note(format!("retry {args:?}: exit {}", retry.code));
            assert_eq!(
                retry.code, 0,
                "{context}: retrying the teardown of {} ({}) failed\n{}",
                task.name, task.state, retry.stderr
            );
            self.needs_force.remove(&task.name);
        }
    }

    fn check(&self) {
        let context = self.context();
        assert_consistent(&self.env, &context);
        assert_reachable(&self.env, &self.repo, &self.commits, &context);
    }

    /// Tears every open task down, undisturbed, and checks that nothing is left to repair.
    fn wind_down(&mut self) {
        for task in self.open_tasks() {
            let args = self.teardown_args(&task.name);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let run = self.hand(&args);
            let context = self.context();
            assert_eq!(
                run.code, 0,
                "{context}: winding down {}: {}",
                task.name, run.stderr
            );
        }
        self.note("wound down".into());
        self.check();
        let doctor = self.env.hand(&self.repo, &["doctor", "--json"]);
        let context = self.context();
        assert_eq!(
            doctor.code, 0,
            "{context}: doctor still finds problems after every task was torn down:\n{}",
            doctor.stdout
        );
    }
}

fn summary(ended: &Ended) -> String {
    let first = ended.run.stderr.lines().next().unwrap_or("");
    format!(
        "{} exit {}{} {first}",
        ended.what,
        ended.run.code,
        if ended.killed { " (killed)" } else { "" }
    )
}

/// Waits for a command, killing it at its moment; returns once it and every process of its
/// group have ended.
fn finish_or_kill(running: Running, started: Instant) -> Ended {
    finish_all(vec![running], started).pop().unwrap()
}

/// Waits for every command of a batch at once, killing each at its moment (measured from
/// `started`), and returns once all of them and every process of their groups have ended. One
/// loop serves them all: a command may wait for another (a lock its git holds while paused),
/// so none may be waited for alone.
fn finish_all(mut batch: Vec<Running>, started: Instant) -> Vec<Ended> {
    let deadline = started + DEADLINE;
    let mut killed = vec![false; batch.len()];
    let mut exited = vec![false; batch.len()];
    while exited.contains(&false) {
        for (i, running) in batch.iter_mut().enumerate() {
            if exited[i] {
                continue;
            }
            if running.child.try_wait().unwrap().is_some() {
                exited[i] = true;
                // A command that finished before its pause lets every later git pass.
                if let Some(pause) = &running.pause {
                    pause.release();
                }
                continue;
            }
            let due = match &running.moment {
                Some((Moment::After(ms), kill)) => {
                    (started.elapsed() >= Duration::from_millis(*ms)).then_some(*kill)
                }
                Some((Moment::AtGit(_), kill)) => running
                    .pause
                    .as_ref()
                    .is_some_and(GitPause::is_paused)
                    .then_some(*kill),
                None => None,
            };
            if let Some(kill) = due {
                let pgid = running.child.id();
                match kill {
                    Kill::Group => kill_9(&format!("-{pgid}")),
                    Kill::Hand => {
                        if let Some(hand) = child_of(pgid) {
                            kill_9(&hand.to_string());
                        }
                    }
                }
                killed[i] = true;
                running.moment = None;
                // The git paused for a kill of git-hand alone goes on now, orphaned, as it
                // would after a real kill.
                if let Some(pause) = &running.pause {
                    pause.release();
                }
            }
        }
        assert!(
            Instant::now() < deadline,
            "commands neither finished nor were killed: {:?}",
            batch
                .iter()
                .zip(&exited)
                .filter(|(_, e)| !**e)
                .map(|(r, _)| &r.what)
                .collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    for running in &batch {
        while group_alive(running.child.id()) {
            assert!(
                Instant::now() < deadline,
                "{}: its orphaned git never ended",
                running.what
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    batch
        .into_iter()
        .zip(killed)
        .map(|(running, kill_sent)| {
            let run = Run::from(running.child.wait_with_output().unwrap());
            // The kill landed unless the command had ended on its own just before: `timeout`
            // dies of a kill of the group (no code) and says 137 when its git-hand was killed.
            let killed = kill_sent && (run.code == -1 || run.code == 137);
            Ended {
                what: running.what,
                killed,
                run,
            }
        })
        .collect()
}

/// `kill -9` on a pid, or on a process group (`-<pgid>`).
fn kill_9(target: &str) {
    // The target may be gone already: that is fine, the kill came too late.
    let _ = std::process::Command::new("kill")
        .args(["-s", "KILL", "--", target])
        .stderr(Stdio::null())
        .status();
}

/// The git-hand that the kill timeout (pid `parent`, `timeout` or the harness's `sh`, beside
/// its watchdog) runs, once it has exec'd: a kill of git-hand alone must reach no other process.
fn child_of(parent: u32) -> Option<u32> {
    crate::processes::children_of(parent)
        .into_iter()
        .find(|c| c.name == "git-hand")
        .map(|c| c.pid)
}

/// Whether any process of the group is still running (a zombie no longer does anything).
fn group_alive(pgid: u32) -> bool {
    crate::processes::group_running(pgid)
}

/// A kill of git-hand alone reaches git-hand itself, not the kill timeout it runs under (GNU
/// `timeout`, or the harness's `sh` beside its watchdog), and its group runs on while its
/// orphaned git does: the two facts the trials' kills and their waits stand on.
#[test]
fn a_kill_of_git_hand_alone_reaches_it_and_its_orphaned_git_keeps_the_group_running() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let pause = GitPause::new(&env, "alone", "worktree add");
    let child = pause.start(&env, &repo, &["spawn", "a"]);
    pause.wait_until_paused();
    let pgid = child.id();
    let hand = child_of(pgid).expect("no git-hand under the kill timeout");
    kill_9(&hand.to_string());
    let deadline = Instant::now() + DEADLINE;
    wait_until("the killed git-hand is gone", deadline, || {
        !crate::processes::running(hand)
    });
    assert!(group_alive(pgid), "the paused git ended with git-hand");
    pause.release();
    let run = Run::from(child.wait_with_output().unwrap());
    // `timeout` says 137 for its killed command; the harness's `sh` dies of the same signal.
    assert!(run.code == 137 || run.code == -1, "{run:?}");
    wait_until("the orphaned git ends", deadline, || !group_alive(pgid));
}

/// One spawn or teardown at a time, each perhaps killed at a random moment or at a git
/// command, then repaired and checked.
#[test]
fn spawns_and_teardowns_killed_at_random_moments_leave_the_pool_consistent_after_repair() {
    let seed = seed();
    for round in 0..rounds() {
        let mut w = World::new("spawns_and_teardowns_killed", seed, round, &[2, 3, 16]);
        for _ in 0..STEPS {
            let active = w.active_tasks();
            let spawn = active.is_empty() || (active.len() < 3 && w.rng.chance(60));
            let ended = if spawn {
                let name = w.new_task_name();
                let kill = w.choose_kill(SPAWN_PAUSES, 60);
                let ended = w.run(&["spawn", &name, "--json"], kill);
                if !ended.killed {
                    let context = w.context();
                    assert!(
                        ended.run.code == 0 || ended.run.code == 3,
                        "{context}: spawn {name} failed: {}",
                        ended.run.stderr
                    );
                }
                if let Some(task) = w.active_tasks().into_iter().find(|t| t.name == name) {
                    w.work_in(&task);
                }
                ended
            } else {
                let task = w.rng.pick(&active).clone();
                let kill = w.choose_kill(TEARDOWN_PAUSES, 60);
                let args = w.teardown_args(&task.name);
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let ended = w.run(&args, kill);
                if !ended.killed {
                    let code = ended.run.code;
                    let context = w.context();
                    assert_eq!(
                        code, 0,
                        "{context}: teardown {} failed: {}",
                        task.name, ended.run.stderr
                    );
                    w.needs_force.remove(&task.name);
                }
                ended
            };
            if ended.killed {
                w.repair();
            }
            w.check();
        }
        w.wind_down();
    }
}

/// Spawns and teardowns started all at once, some of them killed, then repaired and checked:
/// the races between parallel processes and the crashes among them together.
#[test]
fn concurrent_spawns_and_teardowns_some_killed_leave_the_pool_consistent_after_repair() {
    let seed = seed();
    for round in 0..rounds() {
        let mut w = World::new("concurrent_spawns_and_teardowns", seed, round, &[3, 5, 16]);
        // Some tasks, some of them torn down again: free slots to race for, leased ones to
        // tear down while the spawns run.
        for _ in 0..2 + w.rng.below(3) {
            let name = w.new_task_name();
            let run = w.env.hand(&w.repo, &["spawn", &name]);
            w.note(format!("spawn {name}: exit {}", run.code));
            if let Some(task) = w.active_tasks().into_iter().find(|t| t.name == name) {
                w.work_in(&task);
            }
        }
        for task in w.active_tasks() {
            if w.rng.chance(50) {
                let args = w.teardown_args(&task.name);
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let run = w.env.hand(&w.repo, &args);
                w.note(format!("{args:?}: exit {}", run.code));
                let context = w.context();
                assert_eq!(run.code, 0, "{context}: {}", run.stderr);
                w.needs_force.remove(&task.name);
            }
        }
        let mut batch = vec![];
        for task in w.active_tasks() {
            if w.rng.chance(70) {
                let args = w.teardown_args(&task.name);
                if w.rng.chance(DOUBLE_TEARDOWN_PERCENT) {
                    batch.push((args.clone(), TEARDOWN_PAUSES));
                }
                batch.push((args, TEARDOWN_PAUSES));
            }
        }
        for _ in 0..2 + w.rng.below(4) {
            let name = w.new_task_name();
            let args = vec!["spawn".to_string(), name, "--json".into()];
            // Sometimes one task is spawned twice at once: one wins, the other gets it back
            // (same holder) or is told it is still spawning.
            if w.rng.chance(20) {
                batch.push((args.clone(), SPAWN_PAUSES));
            }
            batch.push((args, SPAWN_PAUSES));
        }
        let started = Instant::now();
        let running: Vec<Running> = batch
            .into_iter()
            .map(|(args, pauses)| {
                // At most a few of them are killed: the rest must succeed despite the races.
                let kill = if w.rng.chance(40) {
                    w.choose_kill(pauses, 200)
                } else {
                    None
                };
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                w.start(&args, kill)
            })
            .collect();
        let ended = finish_all(running, started);
        for e in &ended {
            w.note(format!("  -> {}", summary(e)));
        }
        let context = w.context();
        let repair = ended.iter().any(|e| e.killed);
        for e in ended.iter().filter(|e| !e.killed) {
            let ok = if e.what.starts_with("git hand spawn") {
                // A full pool refuses (3); nothing else may go wrong.
                e.run.code == 0 || e.run.code == 3
            } else {
                // The second of two teardowns of one task at once is refused while the first
                // runs (3); nothing else may go wrong.
                e.run.code == 0
                    || (e.run.code == 3 && e.run.stderr.contains("already being torn down"))
            };
            assert!(
                ok,
                "{context}: {} failed (exit {}): {}",
                e.what, e.run.code, e.run.stderr
            );
            if e.what.starts_with("git hand teardown") && e.run.code == 0 {
                let name = e.what.split_whitespace().nth(3).unwrap_or_default();
                w.needs_force.remove(name);
            }
        }
        if repair {
            w.repair();
        }
        w.check();
        w.wind_down();
    }
}
