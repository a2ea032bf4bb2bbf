//! `spawn --exec -- CMD`: run a command in the slot with the task's credential in its
//! environment, renewing its TTL leases (the slot's and the issue's) at a third of the TTL while
//! the command runs.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, ExitStatus};
use std::sync::mpsc;
use std::time::Duration;

use crate::ledger::{Ledger, Mode, Place, Task};
use crate::ops::task::TaskError;
use crate::ops::task::spawn::Spawned;
use crate::ops::task::tasks::{Lost, renew_both};
use crate::ops::{Error, Result};

/// What went wrong while the renewer kept a lease alive; the CLI says it as a warning.
#[derive(Debug)]
pub enum RenewalTrouble {
    /// The lease is no longer live: the renewer stopped, and pushes from the task are refused.
    LeaseLost,
    /// The task's issue lease is no longer live: the renewer stopped, and pushes from the task
    /// are refused (`issue-lost`).
    IssueLeaseLost,
    /// One renewal failed (a busy ledger, say); the next period tries again.
    Failed(Error),
}

/// Runs `cmd` in `dir` with `env` and returns its exit status. While it runs, a renewer thread
/// keeps the task's leases alive (when they have a TTL) through its own ledger connection, and reports a
/// lost lease through `warn` once.
pub fn run(
    spawned: &Spawned,
    cmd: &[OsString],
    env: &[(String, String)],
    ledger: &Place,
    warn: &(dyn Fn(RenewalTrouble) + Sync),
) -> Result<ExitStatus> {
    let (dir, tenure, task) = (&spawned.path, &spawned.tenure, &spawned.task.name);
    let (program, args) = cmd
        .split_first()
        .ok_or_else(|| TaskError::ExecNeedsCommand { task: task.clone() })?;
    // `PWD` names the slot too: inherited, it named the directory spawn ran in (the main
    // worktree, as the user's shell spelled it). A shell mends a `PWD` that is not its cwd, but
    // a program that reads the variable as it is would work in the main worktree.
    let mut child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("PWD", dir)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .spawn()
        .map_err(|e| TaskError::CannotExec {
            task: task.clone(),
            program: program.to_string_lossy().into_owned(),
            reason: e.to_string(),
        })?;
    let (stop, stopped) = mpsc::channel::<()>();
    let status = std::thread::scope(|scope| {
        if let Some(ttl) = tenure.ttl_ms {
            let period = Duration::from_millis(u64::try_from(ttl / 3).unwrap_or(1000).max(100));
            let task = &spawned.task;
            scope.spawn(move || renew_until_stopped(&stopped, period, ledger, task, warn));
        }
        let status = child.wait();
        drop(stop);
        status
    });
    status.map_err(|e| {
        TaskError::ExecWaitFailed {
            task: task.clone(),
            reason: e.to_string(),
        }
        .into()
    })
}

/// Renews the task's leases (its slot's and, with `--issue`, its issue's: both, as `git hand
/// renew` does, or a push would be refused as `issue-lost` once the issue's TTL ran out) every
/// `period` until the command ends or a lease is lost.
fn renew_until_stopped(
    stopped: &mpsc::Receiver<()>,
    period: Duration,
    ledger: &Place,
    task: &Task,
    warn: &(dyn Fn(RenewalTrouble) + Sync),
) {
    let Some(lease) = task.lease_id.as_ref() else {
        return;
    };
    while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(period) {
        // Never `Mode::Create`: a ledger that vanished must not be created again by a renewal.
        // As this machine, as every verb opens a team ledger (the task's machine is this
        // one's id, `Context::machine`): renewing by lease id needs none, but opened as no
        // machine, any read of "this machine's" rows or of a worktree resource would be
        // another machine's, or nothing.
        let outcome = Ledger::open(ledger, Mode::Write)
            .map_err(Error::from)
            .and_then(|l| l.ok_or_else(|| Error::from(gone(ledger))))
            .map(|l| l.on_machine(&task.machine))
            .and_then(|mut l| renew_both(&mut l, task, lease, None));
        match outcome {
            Ok(Ok(_)) => {}
            Ok(Err(Lost::Slot)) => {
                warn(RenewalTrouble::LeaseLost);
                return;
            }
            Ok(Err(Lost::Issue)) => {
                warn(RenewalTrouble::IssueLeaseLost);
                return;
            }
            // A busy ledger is retried at the next period; the TTL leaves two more chances.
            Err(e) => warn(RenewalTrouble::Failed(e)),
        }
    }
}

fn gone(ledger: &Place) -> crate::ledger::LedgerError {
    crate::ledger::LedgerError::Open {
        path: ledger.file().unwrap_or(Path::new("")).to_path_buf(),
        source: std::io::Error::from(std::io::ErrorKind::NotFound),
    }
}
