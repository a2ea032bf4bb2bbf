//! Shared test helpers: a hermetic environment (jj's `TestEnv`), real git repositories in a
//! temporary directory, and the freshly built binary first on `PATH` so hooks reach it.

#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_git-hand");

/// How long one command of a test may run before it is killed ([`killed_after`]): far beyond
/// any real run on a loaded machine, short enough that a hang fails the test.
pub const COMMAND_TIMEOUT: &str = "120";

/// How long a test waits for a background process to reach a named step.
const PAUSE_DEADLINE: Duration = Duration::from_secs(120);

/// The program (built by `command_for`, then given its first arguments) that runs the program a
/// caller appends after them, killed with every process it started in its group after `secs`
/// seconds. Linux: GNU `timeout -s KILL`, as always. Elsewhere (macOS has no `timeout`): the
/// harness's own, [`in_group_killed_after`].
#[cfg(target_os = "linux")]
pub fn killed_after(command_for: impl FnOnce(&'static str) -> Command, secs: &str) -> Command {
    let mut cmd = command_for("timeout");
    cmd.args(["-s", "KILL", secs]);
    cmd
}

/// See the Linux [`killed_after`].
#[cfg(not(target_os = "linux"))]
pub fn killed_after(command_for: impl FnOnce(&'static str) -> Command, secs: &str) -> Command {
    in_group_killed_after(command_for, secs, AtTheEnd::LeaveTheRest)
}

/// What [`in_group_killed_after`] does to the processes the command leaves in its group when it
/// ends before its time.
#[derive(Clone, Copy, Debug)]
pub enum AtTheEnd {
    /// Nothing, as GNU `timeout` does (a server that daemonized has left the group anyway).
    LeaveTheRest,
    /// SIGTERM to every one, as `unshare --kill-child` kills a PID namespace's processes.
    KillTheRest,
}

/// The harness's own kill timeout, for platforms without `timeout` and `unshare`: `sh` runs the
/// command a caller appends in a process group of its own (`process_group(0)`: the `sh` leads
/// it) beside a watchdog that sends SIGKILL to the whole group after `secs` seconds. No
/// `unsafe`: the kill is the shell's `kill -s KILL -- -PGID`. Compiled on every platform and
/// used off Linux only; tests/it/harness.rs runs it on Linux, so the macOS path is the tested
/// one. A process that makes a session of its own (PostgreSQL's `pg_ctl start` does) leaves the
/// group: it needs its own cleanup, as tests/it/pg.rs has.
#[must_use]
pub fn in_group_killed_after(
    command_for: impl FnOnce(&'static str) -> Command,
    secs: &str,
    at_the_end: AtTheEnd,
) -> Command {
    use std::os::unix::process::CommandExt;
    let end = match at_the_end {
        AtTheEnd::LeaveTheRest => "kill \"$dog\" 2>/dev/null",
        AtTheEnd::KillTheRest => "trap '' TERM; kill -s TERM -- \"-$group\" 2>/dev/null",
    };
    // $0 is the timeout, "$@" the command. The watchdog keeps no pipe of the test's open (its
    // fds are /dev/null) and, stopped early, takes its `sleep` with it. A command killed by a
    // signal (HUP, INT, QUIT, ABRT, KILL, SEGV, TERM: the same numbers on Linux and macOS) kills
    // the `sh` with it, so the caller sees the signal, as GNU `timeout` reports it.
    let script = format!(
        r#"group=$$
(
  sleep "$0" & nap=$!
  trap 'kill "$nap" 2>/dev/null; exit 0' TERM
  wait "$nap" && kill -s KILL -- "-$group"
) </dev/null >/dev/null 2>&1 &
dog=$!
"$@"
status=$?
{end}
case $status in
129 | 130 | 131 | 134 | 137 | 139 | 143)
  trap - TERM
  kill -"$((status - 128))" "$$"
  ;;
esac
exit "$status""#
    );
    let mut cmd = command_for("sh");
    cmd.arg("-c").arg(script).arg(secs).process_group(0);
    cmd
}

/// A temporary world: its own HOME, XDG dirs, ledger and git configuration.
pub struct TestEnv {
    pub root: tempfile::TempDir,
    /// Extra variables for every command this env runs.
    pub vars: Vec<(String, String)>,
    /// The directory [`TestEnv::path`] spells every path of this world through: the root
    /// itself, or a symlink to the directory holding it ([`TestEnv::through_a_symlink`]).
    base: PathBuf,
    /// Under `build-support/count-tests` only: the test that made this world, told to every
    /// command it runs (`COUNTED_TEST`) so the binary's stand-in there can say which tests
    /// start the binary.
    counted_test: Option<String>,
}

/// Set by `build-support/count-tests` for the run that counts the tests starting the binary.
pub const COUNT_TESTS: &str = "GIT_HAND_COUNT_TESTS";

/// What a command did.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn from(out: Output) -> Self {
        Self {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
    /// Asserts success and returns stdout.
    #[track_caller]
    pub fn ok(self) -> String {
        assert_eq!(
            self.code, 0,
            "expected success\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self.stdout
    }
    #[track_caller]
    pub fn code(self, want: i32) -> Self {
        assert_eq!(
            self.code, want,
            "unexpected exit status\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", self.stdout))
    }
}

/// The system's own directories, last on every test command's `PATH`. On macOS Homebrew's
/// (Apple silicon: `/opt/homebrew/bin`; Intel: `/usr/local/bin`) come first, where the test tools
/// it installs and a current git are, before Apple's `/usr/bin`.
pub const SYSTEM_PATH: &str = if cfg!(target_os = "macos") {
    "/opt/homebrew/bin:/usr/local/bin:/usr/bin:/bin"
} else {
    "/usr/local/bin:/usr/bin:/bin"
};

impl TestEnv {
    pub fn new() -> Self {
        let root = Self::temp_root();
        let base = root.path().to_path_buf();
        Self::made_in(root, base)
    }

    /// A world whose every path (HOME, the XDG dirs, the ledger, `TMPDIR`, the repositories of
    /// [`TestEnv::path`]) is spelled through a symlink, `<root>/link -> <root>/real`, as macOS
    /// reaches its temporary directory (`/var/folders/...`, where `/var` is a symlink to
    /// `/private/var`): git, the kernel's idea of a process's cwd and `canonicalize` answer
    /// with `real`, the user's shell and the environment with `link`.
    pub fn through_a_symlink() -> Self {
        let root = Self::temp_root();
        std::fs::create_dir(root.path().join("real")).unwrap();
        let link = root.path().join("link");
        std::os::unix::fs::symlink("real", &link).unwrap();
        let mut env = Self::made_in(root, link);
        std::fs::create_dir(env.path("tmp")).unwrap();
        env.vars
            .push(("TMPDIR".into(), env.path("tmp").display().to_string()));
        env
    }

    fn temp_root() -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix("git-hand-test")
            .tempdir()
            .unwrap()
    }

    fn made_in(root: tempfile::TempDir, base: PathBuf) -> Self {
        for dir in ["home", "state", "data", "config", "cache", "work"] {
            std::fs::create_dir_all(base.join(dir)).unwrap();
        }
        std::fs::write(base.join("gitconfig-global"), "").unwrap();
        // libtest runs each test on a thread named for it; a world is made on that thread.
        let counted_test = std::env::var_os(COUNT_TESTS).map(|_| {
            std::thread::current()
                .name()
                .unwrap_or("<unnamed thread>")
                .to_string()
        });
        Self {
            root,
            vars: vec![],
            base,
            counted_test,
        }
    }

    /// A world whose every command uses the team ledger at `url` (`GIT_HAND_LEDGER`) instead
    /// of a SQLite file: a "machine" of its own (HOME, XDG dirs, git config) on a shared server.
    pub fn on_team_ledger(url: &str) -> Self {
        let mut env = Self::new();
        env.vars.push(("GIT_HAND_LEDGER".into(), url.into()));
        env
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.base.join(rel)
    }

    /// The ledger every command of this env uses.
    pub fn ledger(&self) -> PathBuf {
        self.path("state/git-hand/ledger.sqlite")
    }

    /// The directory holding the binary under test (first on PATH).
    pub fn bin_dir() -> PathBuf {
        Path::new(BIN).parent().unwrap().to_path_buf()
    }

    /// A command with a cleared environment and only what the test world sets.
    pub fn command(&self, program: impl AsRef<OsStr>, dir: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(dir).env_clear().stdin(Stdio::null());
        let path = format!("{}:{SYSTEM_PATH}", Self::bin_dir().display());
        let home = self.path("home");
        cmd.env("PATH", path)
            .env("HOME", &home)
            .env("USER", "tester")
            .env("XDG_STATE_HOME", self.path("state"))
            .env("XDG_DATA_HOME", self.path("data"))
            .env("XDG_CONFIG_HOME", self.path("config"))
            .env("XDG_CACHE_HOME", self.path("cache"))
            .env("GIT_HAND_LEDGER", self.ledger())
            // An empty file of the test's own, not /dev/null: a tool that writes the global
            // config (`git lfs install` without --local) would otherwise replace the machine's
            // /dev/null with a regular file (git writes a lock file and renames it over).
            .env("GIT_CONFIG_GLOBAL", self.path("gitconfig-global"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Test Author")
            .env("GIT_AUTHOR_EMAIL", "author@example.com")
            .env("GIT_COMMITTER_NAME", "Test Committer")
            .env("GIT_COMMITTER_EMAIL", "committer@example.com")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("TZ", "UTC")
            .env("LC_ALL", "C")
            .env("RUST_BACKTRACE", "0");
        for (k, v) in &self.vars {
            cmd.env(k, v);
        }
        if let Some(test) = &self.counted_test {
            cmd.env("COUNTED_TEST", test);
        }
        cmd
    }

    /// [`TestEnv::command`] for `program`, killed (with every process it started) after
    /// [`COMMAND_TIMEOUT`]: every command a test runs to its end goes through here or
    /// [`TestEnv::hand`], so a hang fails the test instead of stalling the run.
    pub fn timed(&self, program: impl AsRef<OsStr>, dir: &Path) -> Command {
        let mut cmd = killed_after(|p| self.command(p, dir), COMMAND_TIMEOUT);
        cmd.arg(program);
        cmd
    }

    /// `sh -c COMMAND` in `dir` with a terminal for its stdin, stdout and stderr (`script`, its
    /// typescript thrown away; stdout is the terminal's output), exiting with the command's
    /// status, under [`TestEnv::timed`]'s kill timeout. `script` has two dialects:
    /// util-linux's (`-qec COMMAND FILE`) on Linux, BSD's (`-q FILE COMMAND...`, which always
    /// exits with the command's status) elsewhere, written from macOS's script(1).
    pub fn in_a_terminal(&self, command: &str, dir: &Path) -> Command {
        let mut cmd = self.timed("script", dir);
        if cfg!(target_os = "linux") {
            cmd.args(["-qec", command, "/dev/null"]);
        } else {
            cmd.args(["-q", "/dev/null", "sh", "-c", command]);
        }
        cmd
    }

    /// Runs the binary under test in `dir`, killed after [`COMMAND_TIMEOUT`] so a hang fails
    /// the test instead of stalling the run.
    #[must_use]
    pub fn hand(&self, dir: &Path, args: &[&str]) -> Run {
        let mut cmd = killed_after(|p| self.command(p, dir), COMMAND_TIMEOUT);
        cmd.arg(BIN).args(args);
        Run::from(cmd.output().unwrap())
    }

    /// Runs the binary with extra environment variables (killed after [`COMMAND_TIMEOUT`]).
    #[must_use]
    pub fn hand_env(&self, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = killed_after(|p| self.command(p, dir), COMMAND_TIMEOUT);
        cmd.arg(BIN).args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        Run::from(cmd.output().unwrap())
    }

    /// Starts every command at once, waits for all, asserts each succeeded and returns their
    /// outputs in order (the concurrency tests). Build them with [`TestEnv::timed`].
    #[track_caller]
    pub fn all_at_once(&self, commands: Vec<Command>) -> Vec<Output> {
        let children: Vec<_> = commands
            .into_iter()
            .map(|mut c| {
                c.stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        children
            .into_iter()
            .map(|child| {
                let out = child.wait_with_output().unwrap();
                assert!(
                    out.status.success(),
                    "a concurrent command failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                out
            })
            .collect()
    }

    /// Runs git in `dir`.
    #[must_use]
    pub fn git_run(&self, dir: &Path, args: &[&str]) -> Run {
        Run::from(self.timed("git", dir).args(args).output().unwrap())
    }

    /// Runs git in `dir`, asserts success, returns trimmed stdout.
    #[track_caller]
    pub fn git(&self, dir: &Path, args: &[&str]) -> String {
        self.git_run(dir, args).ok().trim_end().to_string()
    }

    /// A repository `work/<name>` on `main` with one commit, and a bare `work/<name>-origin.git`
    /// it has pushed to (`origin`).
    pub fn repo(&self, name: &str) -> PathBuf {
        let work = self.path("work");
        let origin = work.join(format!("{name}-origin.git"));
        let repo = work.join(name);
        self.git(
            &work,
            &[
                "init",
                "-q",
                "--bare",
                "-b",
                "main",
                origin.to_str().unwrap(),
            ],
        );
        self.git(&work, &["init", "-q", "-b", "main", repo.to_str().unwrap()]);
        std::fs::write(repo.join("README"), "hello\n").unwrap();
        self.git(&repo, &["add", "README"]);
        self.git(&repo, &["commit", "-q", "-m", "initial"]);
        self.git(
            &repo,
            &["remote", "add", "origin", origin.to_str().unwrap()],
        );
        self.git(&repo, &["push", "-q", "-u", "origin", "main"]);
        std::fs::canonicalize(repo).unwrap()
    }

    /// Writes `file` in `dir` and commits it.
    pub fn commit(&self, dir: &Path, file: &str, content: &str) -> String {
        std::fs::write(dir.join(file), content).unwrap();
        self.git(dir, &["add", file]);
        self.git(dir, &["commit", "-q", "-m", &format!("change {file}")]);
        self.git(dir, &["rev-parse", "HEAD"])
    }
}

/// A `git` first on `PATH` that stops when its arguments contain a pattern, until the test
/// releases it: a git-hand process held at a named step while another command runs. The race
/// is then exercised every time, whatever the machine's speed (no sleep assumes one).
///
/// The paused git waits outside the worktree (`cd /`), as a git-hand process between two steps
/// would, so the "process inside the slot" check does not hide the race.
pub struct GitPause {
    dir: PathBuf,
    paused: PathBuf,
    released: PathBuf,
}

impl GitPause {
    /// A wrapper for `env` that pauses every git whose arguments contain `pattern`.
    pub fn new(env: &TestEnv, name: &str, pattern: &str) -> Self {
        let dir = env.path(&format!("pause-{name}"));
        std::fs::create_dir_all(&dir).unwrap();
        let paused = dir.join("paused");
        let released = dir.join("released");
        let real = which::which("git").unwrap();
        let script = format!(
            "#!/bin/sh\n\
             case \"$*\" in *'{pattern}'*)\n\
             \x20 if [ ! -e '{released}' ]; then\n\
             \x20   here=$PWD; cd /; : > '{paused}'\n\
             \x20   while [ ! -e '{released}' ]; do sleep 0.01; done\n\
             \x20   cd \"$here\"\n\
             \x20 fi;;\n\
             esac\n\
             exec '{real}' \"$@\"\n",
            released = released.display(),
            paused = paused.display(),
            real = real.display()
        );
        let git = dir.join("git");
        std::fs::write(&git, script).unwrap();
        std::fs::set_permissions(&git, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        Self {
            dir,
            paused,
            released,
        }
    }

    /// Starts the binary under test in the background with this git first on `PATH`.
    pub fn start(&self, env: &TestEnv, dir: &Path, args: &[&str]) -> std::process::Child {
        let mut cmd = killed_after(|p| env.command(p, dir), COMMAND_TIMEOUT);
        let path = format!(
            "{}:{}:{SYSTEM_PATH}",
            self.dir.display(),
            TestEnv::bin_dir().display()
        );
        cmd.arg(BIN)
            .args(args)
            .env("PATH", path)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd.spawn().unwrap()
    }

    /// Blocks until a git has reached the pattern and stopped there.
    #[track_caller]
    pub fn wait_until_paused(&self) {
        let deadline = Instant::now() + PAUSE_DEADLINE;
        while !self.paused.exists() {
            assert!(
                Instant::now() < deadline,
                "no git reached the pause point ({})",
                self.dir.display()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Whether a git has reached the pattern (and is waiting there).
    pub fn is_paused(&self) -> bool {
        self.paused.exists()
    }

    /// Lets every paused git (and every later one) go on.
    pub fn release(&self) {
        std::fs::write(&self.released, "").unwrap();
    }
}

/// Waits for a background command and returns what it did.
#[must_use]
pub fn finish(child: std::process::Child) -> Run {
    Run::from(child.wait_with_output().unwrap())
}

/// The directories of the real hook managers the tests drive (husky, lefthook, pre-commit,
/// git-lfs), installed once per machine by `build-support/test-tools` under `target/tmp`. A tool
/// that cannot be installed fails the test with the command that fixes it: never a skip.
pub fn hook_tools() -> &'static [PathBuf] {
    static TOOLS: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    TOOLS.get_or_init(|| {
        run_test_tools("the hook managers the tests need")
            .lines()
            .map(PathBuf::from)
            .collect()
    })
}

/// Runs `build-support/test-tools` (it installs what is missing, once per machine, under
/// `target/tmp/test-tools`) and returns what it prints; a failure fails the test with the
/// script's words and the command to run, never a skip. `what` names what the caller needs.
pub fn run_test_tools(what: &str) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("build-support/test-tools");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("test-tools");
    let out = killed_after(Command::new, "900")
        .arg(&script)
        .arg(&dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{what} could not be installed:\n{}\nrun: {} {}",
        String::from_utf8_lossy(&out.stderr),
        script.display(),
        dir.display()
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `git-hand hook claude <event>` in `dir`, `input` on its stdin, `vars` in its environment.
pub fn claude_hook(
    env: &TestEnv,
    dir: &Path,
    event: &str,
    input: &str,
    vars: &[(&str, &str)],
) -> Run {
    let mut cmd = env.timed(BIN, dir);
    cmd.args(["hook", "claude", event])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // A hook that refuses its input may exit before reading all of it.
    let _ = std::io::Write::write_all(&mut stdin, input.as_bytes());
    drop(stdin);
    Run::from(child.wait_with_output().unwrap())
}

/// A program the test tools installed: in one of the directories they print, else (a system
/// package, such as Debian's shellcheck) on this process's `PATH`. Missing after they ran, it
/// fails the test with the command to run.
pub fn test_tool(name: &str) -> PathBuf {
    hook_tools()
        .iter()
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
        .or_else(|| which::which(name).ok())
        .unwrap_or_else(|| {
            panic!(
                "{name} is not installed after build-support/test-tools ran\nrun: {} {}",
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("build-support/test-tools")
                    .display(),
                Path::new(env!("CARGO_TARGET_TMPDIR"))
                    .join("test-tools")
                    .display()
            )
        })
}

/// git's own bash completion: Debian's package's place, else Homebrew's git (Apple silicon,
/// then Intel), else the one Apple's command line tools ship (macOS places from their packages,
/// not yet run there).
pub fn git_bash_completion() -> Option<PathBuf> {
    [
        "/usr/share/bash-completion/completions/git",
        "/opt/homebrew/etc/bash_completion.d/git-completion.bash",
        "/usr/local/etc/bash_completion.d/git-completion.bash",
        "/Library/Developer/CommandLineTools/usr/share/git-core/git-completion.bash",
    ]
    .into_iter()
    .map(PathBuf::from)
    .find(|p| p.is_file())
}

impl TestEnv {
    /// A command that runs contained: in its own PID namespace under a kill timeout, so a hook
    /// that recursed or forked without bound is killed with everything it started, and can
    /// never leave processes behind (`timeout -s KILL 120 unshare -fp --kill-child`). For
    /// anything that might recurse, fork or hang: pushes through chained hook managers above
    /// all. Its `/proc` stays the test's: the namespace is below the test's, so a spawn there
    /// and one on the host see each other's processes and reuse each other's slots (a spawn
    /// with its own `/proc` could not, see `tests/it/namespaces.rs`). Off Linux, where there are
    /// no PID namespaces, the harness's own process group and kill timeout
    /// ([`in_group_killed_after`]), which kills what the command left in its group when it ends.
    #[cfg(target_os = "linux")]
    pub fn contained(&self, program: impl AsRef<OsStr>, dir: &Path) -> Command {
        let mut cmd = self.command("timeout", dir);
        cmd.args([
            "-s",
            "KILL",
            COMMAND_TIMEOUT,
            "unshare",
            "-fp",
            "--kill-child",
        ])
        .arg(program);
        cmd
    }

    /// See the Linux [`TestEnv::contained`].
    #[cfg(not(target_os = "linux"))]
    pub fn contained(&self, program: impl AsRef<OsStr>, dir: &Path) -> Command {
        let mut cmd = in_group_killed_after(
            |p| self.command(p, dir),
            COMMAND_TIMEOUT,
            AtTheEnd::KillTheRest,
        );
        cmd.arg(program);
        cmd
    }

    /// [`TestEnv::contained`], with the namespace's own `/proc` (`-m --mount-proc`): for a test
    /// that lists the processes left in the namespace. Linux only: it is about PID namespaces.
    #[cfg(target_os = "linux")]
    pub fn contained_with_own_proc(&self, program: impl AsRef<OsStr>, dir: &Path) -> Command {
        let mut cmd = self.command("timeout", dir);
        cmd.args([
            "-s",
            "KILL",
            COMMAND_TIMEOUT,
            "unshare",
            "-fpm",
            "--kill-child",
            "--mount-proc",
        ])
        .arg(program);
        cmd
    }

    /// Puts the real hook managers on `PATH` for every command of this env (after the binary
    /// under test, so hooks still reach it first).
    pub fn with_hook_tools(mut self) -> Self {
        let mut path = vec![Self::bin_dir()];
        path.extend(hook_tools().iter().cloned());
        path.extend(std::env::split_paths(SYSTEM_PATH));
        let joined = std::env::join_paths(path).unwrap();
        self.vars
            .push(("PATH".into(), joined.to_string_lossy().into_owned()));
        self
    }
}

/// The invariants the ledger and the disk keep whatever was killed and when, checked by SQL on
/// the ledger and git on disk once `doctor --repair` (and a teardown retry) ran and no git-hand
/// is at work: the crash tests and the black-box trials share them.
///
/// - no live slot tenure without an active task naming it;
/// - every open task's lease is held (not ended), is a tenure of its own slot, and its slot is
///   on disk; an active task's slot is checked out on the task's branch;
/// - no resource has two held tenures, no slot two open tasks;
/// - no token was issued twice for a resource, tokens rise strictly in the order the event log
///   recorded their acquisitions, and each resource's last token is the largest one issued.
#[track_caller]
pub fn assert_consistent(env: &TestEnv, context: &str) {
    let conn = rusqlite::Connection::open(env.ledger()).unwrap();
    let strings = |sql: &str| -> Vec<String> {
        conn.prepare(sql)
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let now: i64 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let orphans: Vec<String> = conn
        .prepare(
            "SELECT t.lease_id FROM tenures t JOIN resources r ON r.id = t.resource_id
             WHERE r.kind = 'worktree' AND t.ended_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > ?1)
             AND NOT EXISTS (SELECT 1 FROM tasks k WHERE k.lease_id = t.lease_id AND k.state = 'active')",
        )
        .unwrap()
        .query_map([now], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(
        orphans.is_empty(),
        "{context}: live tenures no active task names: {orphans:?}"
    );
    struct OpenTask {
        name: String,
        state: String,
        slot: String,
        branch: String,
        ended: Option<i64>,
        key: Option<String>,
    }
    let open: Vec<OpenTask> = conn
        .prepare(
            "SELECT k.name, k.state, k.slot_path, k.branch, t.ended_at, r.key FROM tasks k
             LEFT JOIN tenures t ON t.lease_id = k.lease_id
             LEFT JOIN resources r ON r.id = t.resource_id
             WHERE k.state <> 'done'",
        )
        .unwrap()
        .query_map([], |r| {
            Ok(OpenTask {
                name: r.get(0)?,
                state: r.get(1)?,
                slot: r.get(2)?,
                branch: r.get(3)?,
                ended: r.get(4)?,
                key: r.get(5)?,
            })
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for OpenTask {
        name,
        state,
        slot,
        branch,
        ended,
        key,
    } in open
    {
        assert!(
            ended.is_none(),
            "{context}: open task {name} ({state}) has an ended lease"
        );
        assert_eq!(
            key.as_deref(),
            Some(slot.as_str()),
            "{context}: open task {name}'s lease is not a tenure of its slot"
        );
        assert!(
            Path::new(&slot).join(".git").is_file(),
            "{context}: open task {name} ({state}) has no slot on disk"
        );
        if state == "active" {
            let head = env.git_run(Path::new(&slot), &["symbolic-ref", "-q", "HEAD"]);
            assert_eq!(
                head.stdout.trim(),
                format!("refs/heads/{branch}"),
                "{context}: active task {name}'s slot {slot} is not on its branch"
            );
        }
    }
    let held_twice = strings(
        "SELECT r.key FROM tenures t JOIN resources r ON r.id = t.resource_id
         WHERE t.ended_at IS NULL GROUP BY t.resource_id HAVING count(*) > 1",
    );
    assert!(
        held_twice.is_empty(),
        "{context}: held by two tenures: {held_twice:?}"
    );
    let shared = strings(
        "SELECT slot_path FROM tasks WHERE state <> 'done' AND slot_path IS NOT NULL
         GROUP BY slot_path HAVING count(*) > 1",
    );
    assert!(
        shared.is_empty(),
        "{context}: slots with two open tasks: {shared:?}"
    );
    let dupes: i64 = conn
        .query_row(
            "SELECT count(*) FROM (SELECT resource_id, token FROM tenures GROUP BY 1, 2 HAVING count(*) > 1)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(dupes, 0, "{context}: a token was issued twice");
    let fell = strings(
        "SELECT resource_key || ' token ' || token FROM (
           SELECT resource_kind, resource_key, token,
                  lag(token) OVER (PARTITION BY resource_kind, resource_key ORDER BY id) AS before
           FROM events WHERE kind = 'acquired')
         WHERE before IS NOT NULL AND token <= before",
    );
    assert!(
        fell.is_empty(),
        "{context}: a token did not rise over the one acquired before it: {fell:?}"
    );
    let behind = strings(
        "SELECT r.key FROM resources r JOIN tenures t ON t.resource_id = r.id
         GROUP BY r.id HAVING max(t.token) <> r.last_token",
    );
    assert!(
        behind.is_empty(),
        "{context}: last_token is not the largest token issued: {behind:?}"
    );
}

/// Asserts that every commit in `commits` is still reachable from some ref of `repo` (branches,
/// remote-tracking branches, tags): no crash and no repair lost one.
#[track_caller]
pub fn assert_reachable(env: &TestEnv, repo: &Path, commits: &[String], context: &str) {
    for oid in commits {
        let refs = env.git(
            repo,
            &["for-each-ref", "--contains", oid, "--format=%(refname)"],
        );
        assert!(
            !refs.is_empty(),
            "{context}: commit {oid} is on no ref any more"
        );
    }
}

/// A task spawned with `--json` in `repo` (plus `extra` arguments): its JSON, asserting success.
pub fn spawn(env: &TestEnv, repo: &Path, task: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["spawn", task, "--json"];
    args.extend(extra);
    let run = env.hand(repo, &args);
    assert_eq!(
        run.code, 0,
        "spawn {task} failed\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    run.json()
}

/// The slot a spawn's JSON names.
pub fn path_of(v: &serde_json::Value) -> PathBuf {
    PathBuf::from(v["path"].as_str().unwrap())
}

/// The credential a spawn printed, as environment pairs (`GIT_HAND_LEASE`, `GIT_HAND_TOKEN`).
pub fn cred(v: &serde_json::Value) -> Vec<(String, String)> {
    vec![
        (
            "GIT_HAND_LEASE".into(),
            v["lease_id"].as_str().unwrap().into(),
        ),
        ("GIT_HAND_TOKEN".into(), v["token"].to_string()),
    ]
}

/// `git ARGS` in `dir`, contained (see [`TestEnv::contained`]), with `vars` in its environment
/// (a credential from [`cred`], or nothing).
#[must_use]
pub fn git_with(env: &TestEnv, dir: &Path, vars: &[(String, String)], args: &[&str]) -> Run {
    let mut cmd = env.contained("git", dir);
    cmd.args(args);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    Run::from(cmd.output().unwrap())
}

/// Writes `file` in `dir`, stages it and commits it with `vars` in git's environment (a
/// holder's credential, or nothing): the commit's run.
#[must_use]
pub fn commit_file_with(env: &TestEnv, dir: &Path, vars: &[(String, String)], file: &str) -> Run {
    std::fs::write(dir.join(file), format!("{file}\n")).unwrap();
    env.git(dir, &["add", file]);
    git_with(
        env,
        dir,
        vars,
        &["commit", "-q", "-m", &format!("add {file}")],
    )
}

/// A zombie (`zombie` is its spawn's JSON: its lease ended, its slot leased again) commits
/// `file` in `slot` with its credential: refused as stale by git-hand's reference-transaction
/// hook, and HEAD did not move. The file stays staged.
#[track_caller]
pub fn assert_zombie_commit_refused(
    env: &TestEnv,
    slot: &Path,
    zombie: &serde_json::Value,
    file: &str,
) {
    let before = env.git(slot, &["rev-parse", "HEAD"]);
    let run = commit_file_with(env, slot, &cred(zombie), file);
    assert_ne!(
        run.code, 0,
        "the zombie's commit went through:\n{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("git-hand: ref update refused (stale)"),
        "{}",
        run.stderr
    );
    assert_eq!(env.git(slot, &["rev-parse", "HEAD"]), before, "HEAD moved");
}

/// The tip of `refs/heads/<branch>` in the repository at `git_dir` (a bare origin), if any.
pub fn remote_oid(env: &TestEnv, git_dir: &Path, branch: &str) -> Option<String> {
    let run = env.git_run(
        git_dir,
        &[
            "rev-parse",
            "--verify",
            "-q",
            &format!("refs/heads/{branch}"),
        ],
    );
    (run.code == 0).then(|| run.stdout.trim().to_string())
}

/// A stale holder and the current one of the same slot: task `a` spawned and torn down, task `b`
/// spawned into the slot `a` had. Returns (the slot, a's spawn JSON, b's spawn JSON).
pub fn leased_again(
    env: &TestEnv,
    repo: &Path,
    a: &str,
    b: &str,
) -> (PathBuf, serde_json::Value, serde_json::Value) {
    let first = spawn(env, repo, a, &[]);
    env.hand(repo, &["teardown", a, "--force"]).ok();
    let second = spawn(env, repo, b, &[]);
    assert_eq!(path_of(&first), path_of(&second), "{b} got {a}'s slot");
    (path_of(&second), first, second)
}

/// A repository `app` with its bare origin ([`TestEnv::repo`]) and git-hand's hooks installed.
pub fn installed() -> (TestEnv, PathBuf) {
    installed_in(TestEnv::new())
}

/// The same on the team ledger at `url` (`TestEnv::on_team_ledger`).
pub fn installed_on(url: &str) -> (TestEnv, PathBuf) {
    installed_in(TestEnv::on_team_ledger(url))
}

fn installed_in(env: TestEnv) -> (TestEnv, PathBuf) {
    let repo = env.repo("app");
    env.hand(&repo, &["install"]).ok();
    (env, repo)
}

/// `git push <args>` in `dir`, contained, with `cred` in its environment: a hook that recursed
/// is killed with everything it started.
#[must_use]
pub fn push(env: &TestEnv, dir: &Path, cred: &[(String, String)], args: &[&str]) -> Run {
    let mut cmd = env.contained("git", dir);
    cmd.arg("push").args(args);
    for (k, v) in cred {
        cmd.env(k, v);
    }
    Run::from(cmd.output().unwrap())
}

/// A command run through the env (`lefthook install`, `git lfs ...`), contained.
#[must_use]
pub fn tool(env: &TestEnv, dir: &Path, program: &str, args: &[&str]) -> Run {
    let mut cmd = env.contained(program, dir);
    cmd.args(args).env("NO_COLOR", "1");
    Run::from(cmd.output().unwrap())
}

/// The hooks directory of a repository's main worktree.
pub fn hooks_dir(repo: &Path) -> PathBuf {
    repo.join(".git/hooks")
}

/// A file's bytes and mode.
pub type FileSnap = (Vec<u8>, u32);

/// Every file in a hooks directory except git's samples: what "byte-identical" compares.
pub fn hooks_snapshot(dir: &Path) -> std::collections::BTreeMap<String, FileSnap> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| !e.file_name().to_string_lossy().ends_with(".sample"))
        .map(|e| {
            let meta = e.metadata().unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                (
                    std::fs::read(e.path()).unwrap(),
                    std::os::unix::fs::PermissionsExt::mode(&meta.permissions()),
                ),
            )
        })
        .collect()
}

/// Every file under `dir`: relative path → (mode, bytes); a symlink's bytes are its target.
/// Missing dir: empty.
pub fn tree(dir: &Path) -> std::collections::BTreeMap<PathBuf, (u32, Vec<u8>)> {
    use std::collections::BTreeMap;
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, (u32, Vec<u8>)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                walk(root, &path, out);
            } else {
                let bytes = match meta.file_type().is_symlink() {
                    true => std::fs::read_link(&path)
                        .unwrap()
                        .into_os_string()
                        .into_encoded_bytes(),
                    false => std::fs::read(&path).unwrap(),
                };
                let rel = path.strip_prefix(root).unwrap().to_path_buf();
                let mode = std::os::unix::fs::PermissionsExt::mode(&meta.permissions());
                out.insert(rel, (mode, bytes));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// A file's permission bits (`0o7777`), of the link itself for a symlink.
pub fn mode(path: &Path) -> u32 {
    let permissions = std::fs::symlink_metadata(path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::mode(&permissions) & 0o7777
}

/// Writes a hook (or any file) with `content` and `mode`, creating its directory.
pub fn write_hook(path: &Path, content: &str, mode: u32) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(mode)).unwrap();
}

/// A well-formed lease id no ledger granted (a test presents it; [`normalize`] names it).
pub const NEVER_GRANTED: &str = "0123456789abcdef0123456789abcdef";

/// How a command's output is shown in a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// stdout and stderr as printed.
    Text,
    /// stdout parsed as JSON and printed again with its keys sorted (`serde_json::Value`), so a
    /// change of key order is no change; stderr as printed.
    Json,
    /// Only the lines git-hand's hooks printed (`git-hand: ...`) in a git command's stderr: the
    /// rest is git's wording, which changes with git's version.
    Hook,
}

/// One command's run for a snapshot: `$ <label>`, `[exit status: N]`, its stdout and stderr as
/// `shown`, all through [`normalize`].
pub fn shot(env: &TestEnv, label: &str, run: &Run, shown: Shown) -> String {
    let stdout = match shown {
        Shown::Json if run.stdout.trim().is_empty() => String::new(),
        Shown::Json => format!("{:#}\n", run.json()),
        Shown::Text => run.stdout.clone(),
        Shown::Hook => String::new(),
    };
    let stderr = match shown {
        Shown::Hook => run
            .stderr
            .lines()
            .filter(|l| l.starts_with("git-hand"))
            .map(|l| format!("{l}\n"))
            .collect(),
        _ => run.stderr.clone(),
    };
    let mut out = format!("$ {label}\n[exit status: {}]\n", run.code);
    if !stdout.is_empty() {
        out.push_str("--- stdout\n");
        out.push_str(&stdout);
    }
    if !stderr.is_empty() {
        out.push_str("--- stderr\n");
        out.push_str(&stderr);
    }
    normalize(env, &out)
}

/// What varies between two runs of one story, replaced by a stable name, so that a snapshot is
/// the same on every machine, however loaded (the one place that knows what varies):
///
/// - the test's temporary directory → `[ROOT]`, the binary's directory → `[BIN]`, this
///   machine's host name in a holder (`tester@host`) → `tester@[host]`;
/// - [`NEVER_GRANTED`] → `[never-granted]`, lease ids → `[lease-N]` (`[lease-N:10]` shortened), numbered in the order the ledger
///   issued them, and repository ids → `[repo-N]` (`[repo-N:6]` in a pool directory's name), so
///   a snapshot still says which lease a message names;
/// - commit ids (40 hex) → `[oid]`, shortened ones (10 hex) → `[oid:10]`;
/// - RFC 3339 times → `[time]`, "in 29m" / "3s ago" → `in [dur]` / `[dur] ago`, pids in JSON →
///   `[pid]`;
/// - a run of spaces (a table's padding, whose width follows the values above) → two spaces,
///   and no trailing spaces.
///
/// Fencing tokens, slot numbers, task names and every word stay as printed: they are the point.
pub fn normalize(env: &TestEnv, text: &str) -> String {
    let mut text = text.to_string();
    let mut literal = |from: &str, to: &str| {
        if !from.is_empty() {
            text = text.replace(from, to);
        }
    };
    let root = env.root.path();
    if let Ok(real) = std::fs::canonicalize(root) {
        literal(&real.to_string_lossy(), "[ROOT]");
    }
    literal(&root.to_string_lossy(), "[ROOT]");
    literal(&TestEnv::bin_dir().to_string_lossy(), "[BIN]");
    let host = git_hand::platform::machine::hostname();
    literal(&format!("@{host}"), "@[host]");
    literal(NEVER_GRANTED, "[never-granted]");
    literal(&NEVER_GRANTED[..10], "[never-granted:10]");
    let (leases, repos) = issued_ids(env);
    for (n, id) in leases.iter().enumerate() {
        literal(id, &format!("[lease-{}]", n + 1));
    }
    for (n, id) in leases.iter().enumerate() {
        literal(&id[..10.min(id.len())], &format!("[lease-{}:10]", n + 1));
    }
    for (n, id) in repos.iter().enumerate() {
        literal(id, &format!("[repo-{}]", n + 1));
    }
    for (n, id) in repos.iter().enumerate() {
        literal(
            &format!("-{}/", &id[..6.min(id.len())]),
            &format!("-[repo-{}:6]/", n + 1),
        );
    }
    let words = normalize_words(&text);
    words
        .lines()
        .map(|line| {
            let body = line.trim_start_matches(' ');
            let mut out = line[..line.len() - body.len()].to_string();
            for (i, part) in body.trim_end().split("  ").enumerate() {
                if i == 0 {
                    out.push_str(part);
                } else if !part.is_empty() {
                    out.push_str("  ");
                    out.push_str(part.trim_start());
                }
            }
            out + "\n"
        })
        .collect()
}

/// The lease ids and repository ids of the env's ledger, in the order they were issued (none
/// when there is no ledger).
fn issued_ids(env: &TestEnv) -> (Vec<String>, Vec<String>) {
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
    let Ok(conn) = rusqlite::Connection::open_with_flags(env.ledger(), flags) else {
        return (vec![], vec![]);
    };
    let column = |sql: &str| -> Vec<String> {
        let Ok(mut stmt) = conn.prepare(sql) else {
            return vec![];
        };
        stmt.query_map([], |r| r.get(0))
            .map(|rows| rows.filter_map(Result::ok).collect())
            .unwrap_or_default()
    };
    (
        column("SELECT lease_id FROM tenures ORDER BY rowid"),
        column("SELECT id FROM repos ORDER BY rowid"),
    )
}

/// The word-level part of [`normalize`]: commit ids, times, durations and pids.
fn normalize_words(text: &str) -> String {
    const TIME_SHAPE: &str = "NNNN-NN-NNTNN:NN:NN.NNNZ";
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let before = |out: &str, s: &str| out.ends_with(s);
    while i < chars.len() {
        let shape: String = chars[i..(i + TIME_SHAPE.len()).min(chars.len())]
            .iter()
            .map(|c| if c.is_ascii_digit() { 'N' } else { *c })
            .collect();
        if shape == TIME_SHAPE {
            out.push_str("[time]");
            i += TIME_SHAPE.len();
            continue;
        }
        if !chars[i].is_ascii_alphanumeric() {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && chars[i].is_ascii_alphanumeric() {
            i += 1;
        }
        let word: String = chars[start..i].iter().collect();
        let rest: String = chars[i..(i + 4).min(chars.len())].iter().collect();
        let hex = word
            .chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c));
        let digits = word.chars().all(|c| c.is_ascii_digit());
        let duration = word.len() > 1
            && word[..word.len() - 1].chars().all(|c| c.is_ascii_digit())
            && word.ends_with(['s', 'm', 'h', 'd']);
        let replacement = if hex && word.len() == 40 {
            "[oid]"
        } else if hex && word.len() == 10 {
            "[oid:10]"
        } else if duration && (before(&out, "in ") || rest == " ago") {
            "[dur]"
        } else if digits && (before(&out, "\"pid\": ") || before(&out, "\"pid_start\": ")) {
            "[pid]"
        } else {
            &word
        };
        out.push_str(replacement);
    }
    out
}

/// `git hand <args>` in `dir` (with `vars` in its environment) for a snapshot: the command line
/// as the label, text (JSON when `--json` is among `args`) through [`shot`], then a pid in the
/// text (`by process 1234`) and a short commit id ([`short_oid_free`]) named too.
pub fn said(env: &TestEnv, dir: &Path, args: &[&str], vars: &[(String, String)]) -> String {
    let pairs: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let run = env.hand_env(dir, args, &pairs);
    let label = args
        .iter()
        .map(|a| match a.contains(' ') || a.is_empty() {
            true => format!("{a:?}"),
            false => a.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ");
    let label = format!("git hand {label}").trim_end().to_string();
    let shown = match args.contains(&"--json") {
        true => Shown::Json,
        false => Shown::Text,
    };
    short_oid_free(&pid_free(&shot(env, &label, &run, shown)))
}

/// A commit id as git abbreviates it in a list of commits (`c4cbc98 change a.txt`), 7 to 12
/// hex characters with both digits and letters in them, or any with a commit subject after
/// them (`6897624 change a.txt`) → `[oid:short]`.
pub fn short_oid_free(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if c.is_ascii_alphanumeric() {
            word.push(c);
            if chars.peek().is_some_and(|(_, n)| n.is_ascii_alphanumeric()) {
                continue;
            }
            let hex = word
                .chars()
                .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c));
            let digit = word.chars().any(|c| c.is_ascii_digit());
            let letter = word.chars().any(|c| c.is_ascii_alphabetic());
            let subject = text[at + 1..].starts_with(" change ");
            if hex && (7..=12).contains(&word.len()) && ((letter && digit) || subject) {
                out.push_str("[oid:short]");
            } else {
                out.push_str(&word);
            }
            word.clear();
        } else {
            out.push(c);
        }
    }
    out
}

/// [`said`] for each of `commands` in `dir`, no credential.
pub fn said_each(env: &TestEnv, dir: &Path, commands: &[&[&str]]) -> String {
    commands
        .iter()
        .map(|args| said(env, dir, args, &[]))
        .collect()
}

/// "process 1234" → "process [pid]".
pub fn pid_free(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("process ") {
        let (head, tail) = rest.split_at(at + "process ".len());
        out.push_str(head);
        let digits = tail.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 {
            out.push_str("[pid]");
        }
        rest = &tail[digits..];
    }
    out + rest
}

/// A ledger at `path` whose rows (2000 issue leases) fill many pages, the schema's few first,
/// all checkpointed into the main file: one to damage a page of.
pub fn a_ledger_of_many_pages(path: &Path) {
    let mut ledger = git_hand::ledger::Ledger::open_creating(path).unwrap();
    ledger
        .write(|tx| {
            for i in 0..2000 {
                let res = git_hand::ledger::Resource::issue("ns", &i.to_string());
                tx.acquire(&res, "alice", None)?;
            }
            Ok(())
        })
        .unwrap();
    drop(ledger);
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.pragma_update(None, "wal_checkpoint", "TRUNCATE")
        .unwrap();
}

/// Starts `cmd`, whose program was just written (a copy of a binary): another test thread
/// forking while the copy was open for writing keeps it "busy" (ETXTBSY) for a moment, so it is
/// tried again until that child has exec'd.
pub fn spawn_fresh_executable(cmd: &mut Command) -> std::process::Child {
    loop {
        match cmd.spawn() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            child => return child.unwrap(),
        }
    }
}

/// Runs `cmd` as [`spawn_fresh_executable`] starts it, to its end.
pub fn output_of_fresh_executable(cmd: &mut Command) -> Output {
    // As `Command::output` runs it: nothing on stdin, both outputs captured.
    let piped = cmd.stdin(Stdio::null()).stdout(Stdio::piped());
    let child = spawn_fresh_executable(piped.stderr(Stdio::piped()));
    child.wait_with_output().unwrap()
}

/// Waits (a bounded poll: nothing signals these) until `done`.
pub fn wait_until(what: &str, deadline: Instant, done: impl Fn() -> bool) {
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}
