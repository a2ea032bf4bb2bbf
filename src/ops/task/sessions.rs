//! The tasks of Claude Code sessions (issue 23, item 6): which tasks are a session's (their
//! holder, see [`SessionHolder`]), whether a process still sits in each one's slot, and a
//! session's open tasks, which `path --session` and `teardown --session` act on.
//!
//! Nothing here is a schema of its own: a session's task is an ordinary task whose holder names
//! the session. Whether its session is alive is read from `/proc` (a process whose directory is
//! inside the slot), never recorded: the hook that leased the slot has long exited, and Claude
//! Code's own process is not git-hand's to record.

use std::path::Path;

use crate::ledger::{Ledger, Task, Tasks};
use crate::ops::claude::{SessionHolder, SessionId};
use crate::ops::pool::procs;
use crate::ops::repo::setup::{SetupEvent, Shown};
use crate::ops::task::TaskError;
use crate::ops::task::teardown::{self, TeardownOptions, TornDown};
use crate::ops::{Context, Result};
use crate::platform::procs::Scan;

/// Whether a process sits in a session's slot, as far as this `/proc` can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Presence {
    /// A process's current directory is inside the slot (the session, a subagent, a shell
    /// someone opened there: `/proc` does not say whose).
    Alive,
    /// No process is inside, and this `/proc` sees every process of the namespace the slot was
    /// leased from.
    Gone,
    /// No process is seen inside, but that proves nothing: the slot was leased from a PID
    /// namespace this `/proc` cannot see into, or `/proc` cannot be read.
    Unknown,
}

/// A slot to look into: its directory and the PID namespace it was leased from (the task's
/// recorded one, `None` in rows from before schema version 7).
pub struct SessionSlot<'a> {
    pub dir: &'a Path,
    pub pid_ns: Option<i64>,
}

/// [`Presence`] of each slot, in one walk of `/proc` for all of them (so `list` pays for one
/// walk however many sessions it shows). This process and the `git` it runs under (`git hand`)
/// are not a session: `git hand list` run inside a slot would otherwise find itself there.
/// The shell it was typed in does count, like any other process inside.
pub fn presence(scan: Scan, slots: &[SessionSlot<'_>]) -> Vec<Presence> {
    if slots.is_empty() {
        return vec![];
    }
    let dirs: Vec<&Path> = slots.iter().map(|s| s.dir).collect();
    let Ok(found) = procs::occupants_of(scan, &dirs) else {
        return vec![Presence::Unknown; slots.len()];
    };
    let me = scan.me().pid;
    let callers = scan.ancestors();
    let found: Vec<_> = found
        .into_iter()
        .filter(|o| o.pid != me && !(o.command == "git" && callers.contains(&o.pid)))
        .collect();
    // `sees` may walk `/proc` again (a namespace other than `/proc`'s own): asked once per
    // namespace, and only for a slot nobody was seen in.
    let mut seen_ns: Vec<(Option<i64>, bool)> = vec![];
    let mut sees = |ns: Option<i64>| match seen_ns.iter().find(|(n, _)| *n == ns) {
        Some((_, sees)) => *sees,
        None => {
            let sees = scan.sees(ns);
            seen_ns.push((ns, sees));
            sees
        }
    };
    slots
        .iter()
        .map(|slot| {
            if found.iter().any(|o| scan.is_inside(&o.cwd, slot.dir)) {
                Presence::Alive
            } else if sees(slot.pid_ns) {
                Presence::Gone
            } else {
                Presence::Unknown
            }
        })
        .collect()
}

/// `--session`'s value: a usage error unless it is a session id (checked before the ledger is
/// opened, and maybe created).
pub fn session_id(text: &str) -> Result<SessionId> {
    SessionId::parse(text).ok_or_else(|| {
        TaskError::NotASessionId {
            text: text.to_string(),
        }
        .into()
    })
}

/// The open tasks of this repository (on this machine) whose holder names `session`, oldest
/// first: one for each worktree name the session asked for (its own, its subagents').
pub(crate) fn session_tasks(
    ctx: &Context,
    ledger: &mut Ledger,
    session: &SessionId,
) -> Result<Vec<Task>> {
    let Some(repo_id) = ctx.repo_id(ledger)? else {
        return Ok(vec![]);
    };
    let open = ledger.read(|v| v.tasks(&repo_id, Tasks::Open))?;
    Ok(open
        .into_iter()
        .filter(|t| {
            SessionHolder::parse(&t.holder).is_some_and(|h| h.session.as_ref() == Some(session))
        })
        .collect())
}

/// [`session_tasks`], refusing a session with none (exit 1, as for a task name never used).
fn open_session_tasks(
    ctx: &Context,
    ledger: &mut Ledger,
    session: &SessionId,
) -> Result<Vec<Task>> {
    let found = session_tasks(ctx, ledger, session)?;
    if found.is_empty() {
        return Err(TaskError::SessionHasNoTask {
            session: session.to_string(),
        }
        .into());
    }
    Ok(found)
}

/// The worktree name a subagent with `isolation: worktree` asks for: `agent-<id>`.
const SUBAGENT_PREFIX: &str = "agent-";

/// The task `git hand path --session` prints: the session's only open task; of several, the one
/// the session asked for itself when all the others are its subagents' (`agent-<id>`), so
/// `cd "$(git hand path --session "$CLAUDE_CODE_SESSION_ID")"` finds the session's worktree
/// however many subagents it started. Else a usage error naming each task's `git hand path`.
pub(crate) fn session_task_for_path(
    ctx: &Context,
    ledger: &mut Ledger,
    session: &SessionId,
) -> Result<Task> {
    let mut found = open_session_tasks(ctx, ledger, session)?;
    let asked: Vec<(&str, String)> = found
        .iter()
        .map(|t| {
            let name = SessionHolder::parse(&t.holder).map(|h| h.name);
            (t.name.as_str(), name.unwrap_or_default())
        })
        .collect();
    let i = pick_for_path(session, &asked)?;
    Ok(found.swap_remove(i))
}

/// Which of a session's tasks (each as its name and the worktree name it asked for) `path`
/// prints, by index.
fn pick_for_path(session: &SessionId, tasks: &[(&str, String)]) -> Result<usize> {
    let own: Vec<usize> = (0..tasks.len())
        .filter(|&i| !tasks[i].1.starts_with(SUBAGENT_PREFIX))
        .collect();
    match (tasks.len(), own.as_slice()) {
        (1, _) => Ok(0),
        (_, [only]) => Ok(*only),
        _ => Err(TaskError::SessionHasTasks {
            session: session.to_string(),
            tasks: tasks
                .iter()
                .map(|(task, asked)| (task.to_string(), asked.clone()))
                .collect(),
        }
        .into()),
    }
}

/// Where `teardown --session` hands each setup command's events, with the task's name.
pub(crate) type ShowSetup<'a> = &'a dyn Fn(&str, SetupEvent<'_>);

/// One task of a session as `teardown --session` left it.
pub struct Ended {
    pub task: Task,
    /// What `git hand teardown <task>` would have done or refused.
    pub outcome: Result<TornDown>,
}

/// Ends every open task of `session`, each as `git hand teardown <task>` would (the same
/// refusals: a slot holding work that is not landed is kept unless `force`), going on past a
/// refusal so that each task's fate is reported. `show` gets each setup command's events, with
/// the task's name; `None` runs no `hand.onTeardown`.
pub(crate) fn teardown_session(
    ctx: &Context,
    ledger: &mut Ledger,
    session: &SessionId,
    force: bool,
    show: Option<ShowSetup<'_>>,
) -> Result<Vec<Ended>> {
    let found = open_session_tasks(ctx, ledger, session)?;
    Ok(found
        .into_iter()
        .map(|task| {
            let shown = |event: SetupEvent<'_>| {
                if let Some(show) = show {
                    show(&task.name, event);
                }
            };
            let outcome = teardown::teardown(
                ctx,
                ledger,
                &TeardownOptions {
                    task: &task.name,
                    force,
                    keep_unpushed: false,
                    setup: show.is_some().then_some(Shown(&shown)),
                },
            );
            Ended { task, outcome }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hint::Hint;
    use crate::ops::Error;

    const SID: &str = "0b6c2f1e-5a4d-4c3b-9e8f-123456789abc";

    /// The task `path` picks of these (task name, worktree name asked for), or the hints of
    /// its refusal (each task named, as the command line prints them).
    fn picked(tasks: &[(&str, &str)]) -> std::result::Result<String, Vec<Hint>> {
        let sid = SessionId::parse(SID).unwrap();
        let tasks: Vec<(&str, String)> = tasks.iter().map(|(t, a)| (*t, a.to_string())).collect();
        match pick_for_path(&sid, &tasks) {
            Ok(i) => Ok(tasks[i].0.to_string()),
            Err(Error::Task(e)) if e.kind() == crate::ops::Kind::Usage => {
                Err(crate::cli::Failure::from(*e).hints)
            }
            Err(e) => panic!("not a usage error: {e}"),
        }
    }

    #[test]
    fn path_takes_the_sessions_own_worktree_over_its_subagents_and_refuses_a_choice_of_two() {
        assert_eq!(picked(&[("agent-a1", "agent-a1")]), Ok("agent-a1".into()));
        assert_eq!(
            picked(&[
                ("agent-a1", "agent-a1"),
                ("feat1", "feat1"),
                ("agent-b2", "agent-b2")
            ]),
            Ok("feat1".into())
        );
        assert_eq!(
            picked(&[("feat1", "feat1"), ("feat2-2", "feat2")]),
            Err(vec![
                Hint::hand("path feat1").why("worktree feat1"),
                Hint::hand("path feat2-2").why("worktree feat2"),
            ])
        );
        assert_eq!(
            picked(&[("agent-a1", "agent-a1"), ("agent-b2", "agent-b2")]).map_err(|h| h.len()),
            Err(2)
        );
    }

    #[test]
    fn a_slot_with_a_process_inside_is_alive_and_an_empty_one_gone() {
        let busy = tempfile::tempdir().unwrap();
        let busy = busy.path().canonicalize().unwrap();
        let empty = tempfile::tempdir().unwrap();
        let empty = empty.path().canonicalize().unwrap();
        let mut sitter = std::process::Command::new("sleep")
            .arg("120")
            .current_dir(&busy)
            .spawn()
            .unwrap();
        let seen: Vec<_> = Scan::every()
            .into_iter()
            .map(|scan| {
                let here = scan.namespace();
                let slots = [(&busy, here), (&empty, here)]
                    .map(|(dir, pid_ns)| SessionSlot { dir, pid_ns });
                (scan, presence(scan, &slots))
            })
            .collect();
        sitter.kill().unwrap();
        sitter.wait().unwrap();
        for (scan, seen) in seen {
            assert_eq!(seen, vec![Presence::Alive, Presence::Gone], "{scan:?}");
        }
    }
}
