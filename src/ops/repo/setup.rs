//! Setup commands: `hand.onCreate` (a new slot), `hand.onReuse` (a reused slot) and
//! `hand.onTeardown`, each run by `sh -c` in the slot with the task's credential in its
//! environment, its output (stdout and stderr, one line at a time) handed to the caller, under
//! a timeout that kills its whole process group. Nothing here prints or reads settings.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The moments a setup command runs at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hook {
    /// A slot just created (or recreated): its files are a fresh checkout.
    OnCreate,
    /// A slot that held another task before: its ignored files (the build cache) are still there.
    OnReuse,
    /// A task being torn down, before anything in its slot is discarded.
    OnTeardown,
}

impl Hook {
    /// Its `hand.*` key.
    pub fn key(self) -> &'static str {
        match self {
            Hook::OnCreate => "hand.onCreate",
            Hook::OnReuse => "hand.onReuse",
            Hook::OnTeardown => "hand.onTeardown",
        }
    }
}

/// A command to run, and whether it came from the committed `.handconfig` (then it runs only
/// once the user trusted the file's content, `ops/repo/trust.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupCommand {
    pub hook: Hook,
    pub command: String,
    pub from_file: bool,
}

/// The commands a spawn runs, read and (for the file's) trusted before anything is leased.
#[derive(Debug, Clone, Default)]
pub(crate) struct Plan {
    pub on_create: Option<SetupCommand>,
    pub on_reuse: Option<SetupCommand>,
    pub timeout: Duration,
}

impl Plan {
    /// The command for a slot just created (`created`) or a reused one.
    pub(crate) fn for_slot(&self, created: bool) -> Option<&SetupCommand> {
        if created {
            self.on_create.as_ref()
        } else {
            self.on_reuse.as_ref()
        }
    }
}

/// What a running setup command did, for the CLI to show.
#[derive(Debug, Clone, Copy)]
pub enum SetupEvent<'a> {
    /// It starts.
    Running(&'a SetupCommand),
    /// One line of its output (stdout or stderr).
    Output(&'a str),
}

/// Where a verb hands its setup command's events; a verb given none runs no setup command
/// (`--no-setup`; `doctor --repair`, which never runs one).
#[derive(Clone, Copy)]
pub struct Shown<'a>(pub &'a dyn Fn(SetupEvent<'_>));

impl std::fmt::Debug for Shown<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Shown(..)")
    }
}

/// Why a setup command failed. Its process group is gone in every case.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("{} could not be started ({source})", .hook.key())]
    Start { hook: Hook, source: std::io::Error },
    #[error("{} ({}) {how}", .hook.key(), crate::shown::shown(.command))]
    Failed {
        hook: Hook,
        command: String,
        /// "exited with status 3", "was killed by signal 9".
        how: String,
    },
    #[error("{} ({}) was still running after {}s, so it was killed", .hook.key(), crate::shown::shown(.command), .after.as_secs())]
    TimedOut {
        hook: Hook,
        command: String,
        after: Duration,
    },
}

/// Variables never handed to a setup command: they would point its git at another repository,
/// or tell git-hand's own hooks that git-hand is the caller (so a commit the command makes would
/// go unfenced).
fn scrubbed() -> impl Iterator<Item = &'static str> {
    crate::git::runner::SCRUBBED
        .iter()
        .copied()
        .chain([crate::git::INTERNAL_ENV])
}

/// What the reader and waiter threads report.
enum Event {
    Line(String),
    Eof,
    Exited(std::io::Result<ExitStatus>),
}

/// Runs `cmd` by `sh -c` in `dir` with `env` added, stdin empty, its output handed line by line
/// to `events`. It runs in a process group of its own, so that on `timeout` the whole group (the
/// shell and everything it started) is killed; when the shell ends, whatever it left running in
/// its group is killed too, so no process stays inside the slot (which would keep the slot from
/// being reused, `ops/pool/safety.rs`).
pub fn run(
    cmd: &SetupCommand,
    dir: &Path,
    env: &[(&str, String)],
    timeout: Duration,
    events: &dyn Fn(SetupEvent<'_>),
) -> Result<(), SetupError> {
    let hook = cmd.hook;
    events(SetupEvent::Running(cmd));
    let (child, reader) =
        start(cmd, dir, env).map_err(|source| SetupError::Start { hook, source })?;
    let group = child.id();
    let (tx, rx) = mpsc::channel();
    let lines = tx.clone();
    std::thread::spawn(move || read_lines(reader, &lines));
    std::thread::spawn(move || {
        let mut child = child;
        let _ = tx.send(Event::Exited(child.wait()));
    });
    let Some(status) = follow(&rx, group, Instant::now() + timeout, events) else {
        return Err(SetupError::TimedOut {
            hook,
            command: cmd.command.clone(),
            after: timeout,
        });
    };
    let status = status.map_err(|source| SetupError::Start { hook, source })?;
    if status.success() {
        return Ok(());
    }
    let how = crate::platform::exit_status::how_it_ended(status);
    Err(SetupError::Failed {
        hook,
        command: cmd.command.clone(),
        how,
    })
}

/// Starts `sh -c <command>` in its own process group, stdout and stderr into one pipe, whose
/// reading end is returned.
fn start(
    cmd: &SetupCommand,
    dir: &Path,
    env: &[(&str, String)],
) -> std::io::Result<(std::process::Child, std::io::PipeReader)> {
    let (reader, writer) = std::io::pipe()?;
    // `sh` (and the pipe's writing ends it holds) is dropped once started: the pipe then ends
    // when the last process of the command closes it.
    let mut sh = Command::new("sh");
    sh.arg("-c")
        .arg(&cmd.command)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(writer.try_clone()?)
        .stderr(writer)
        .process_group(0);
    for var in scrubbed() {
        sh.env_remove(var);
    }
    sh.envs(env.iter().map(|(k, v)| (*k, v.as_str())));
    Ok((sh.spawn()?, reader))
}

/// Sends each line of `reader` (lossy UTF-8, without its line end), then `Eof`.
fn read_lines(reader: std::io::PipeReader, lines: &mpsc::Sender<Event>) {
    let mut reader = BufReader::new(reader);
    let mut line = Vec::new();
    while reader.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
        let text = String::from_utf8_lossy(&line);
        let _ = lines.send(Event::Line(text.trim_end_matches(['\n', '\r']).to_string()));
        line.clear();
    }
    let _ = lines.send(Event::Eof);
}

/// Hands each line to `events` until the shell has exited and its output ended, and returns its
/// exit status; `None` when `deadline` came first: the group was killed and the shell reaped.
fn follow(
    rx: &mpsc::Receiver<Event>,
    group: u32,
    deadline: Instant,
    events: &dyn Fn(SetupEvent<'_>),
) -> Option<std::io::Result<ExitStatus>> {
    let (mut status, mut eof) = (None, false);
    while status.is_none() || !eof {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(Event::Line(line)) => events(SetupEvent::Output(&line)),
            Ok(Event::Eof) => eof = true,
            Ok(Event::Exited(exited)) => {
                // What the shell left running in its group would stay inside the slot.
                kill_group(group);
                status = Some(exited);
            }
            // Past the deadline; or, with the shell exited, a process that left the group
            // (`setsid`) still holds the pipe: its status stands.
            Err(_) => break,
        }
    }
    if status.is_none() {
        kill_group(group);
        // The shell is reaped by its waiter: wait for it, so nothing is left when we return.
        while let Ok(event) = rx.recv() {
            if matches!(event, Event::Exited(_)) {
                break;
            }
        }
    }
    status
}

/// Kills every process of the group `group` (`SIGKILL`), through the shell's `kill`: std has no
/// call for it, and `libc::killpg` would take the unsafe code git-hand forbids. A group that is
/// gone already is no error.
fn kill_group(group: u32) {
    let _ = Command::new("sh")
        .args(["-c", "kill -s KILL -- \"-$1\" 2>/dev/null", "sh"])
        .arg(group.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    fn run_sh(command: &str, timeout: Duration) -> (Result<(), SetupError>, Vec<String>) {
        let seen = RefCell::new(vec![]);
        let cmd = SetupCommand {
            hook: Hook::OnCreate,
            command: command.into(),
            from_file: false,
        };
        let dir = tempfile::tempdir().unwrap();
        let result = run(
            &cmd,
            dir.path(),
            &[("GIT_HAND_TASK", "t".into())],
            timeout,
            &|e| {
                if let SetupEvent::Output(line) = e {
                    seen.borrow_mut().push(line.to_string());
                }
            },
        );
        (result, seen.into_inner())
    }

    #[test]
    fn output_from_both_streams_is_handed_over_line_by_line() {
        let (result, lines) = run_sh(
            "echo out; echo err >&2; echo \"$GIT_HAND_TASK\"",
            Duration::from_secs(60),
        );
        result.unwrap();
        assert_eq!(lines, ["out", "err", "t"]);
    }

    #[test]
    fn a_failing_command_says_its_status() {
        let (result, _) = run_sh("exit 3", Duration::from_secs(60));
        let e = result.unwrap_err();
        assert_eq!(e.to_string(), "hand.onCreate (exit 3) exited with status 3");
    }

    #[test]
    fn a_command_past_its_timeout_is_killed_with_its_group() {
        let (result, lines) = run_sh("echo started; sleep 60 & sleep 60", Duration::from_secs(1));
        assert!(
            matches!(result, Err(SetupError::TimedOut { .. })),
            "{result:?}"
        );
        assert_eq!(lines, ["started"]);
    }
}
