//! `git hand teardown` (alias `done`).

use clap::Args;
use serde::Serialize;

use super::error::ErrorBody;
use super::{Done, Failure};
use crate::ledger::{Task, TaskState, WorktreeKey};
use crate::ops::claude::SessionId;
use crate::ops::task::teardown::{self, TeardownOptions, TornDown};
use crate::ops::{Context, task::sessions, task::tasks};

#[derive(Debug, Args)]
pub struct TeardownArgs {
    /// The task to end [default: the one whose credential is in the environment, else the current worktree's].
    #[arg(value_name = "task")]
    pub task: Option<String>,
    /// Discard uncommitted changes; commits stay on the task's branch.
    #[arg(long)]
    pub force: bool,
    /// Run no hand.onTeardown command.
    #[arg(long)]
    pub no_setup: bool,
    /// End every open task of this Claude Code session (one per worktree it asked for).
    #[arg(long, value_name = "id", conflicts_with = "task")]
    pub session: Option<String>,
}

/// `teardown --json`.
#[derive(Serialize)]
struct TeardownJson<'a> {
    outcome: OutcomeWord,
    task: &'a str,
    branch: &'a str,
    path: Option<&'a WorktreeKey>,
    /// The uncommitted files `--force` discarded.
    discarded: &'a [String],
    /// `teardown --session`: why this task was not ended (`outcome` is `refused`).
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorBody<'a>>,
}

/// `teardown --session --json`: each task of the session, as `teardown <task> --json` says it.
#[derive(Serialize)]
struct SessionJson<'a> {
    session: &'a str,
    tasks: Vec<TeardownJson<'a>>,
}

/// `teardown --json`'s `outcome`: the word for each [`TornDown`], spelled by serde.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "kebab-case")]
enum OutcomeWord {
    Freed,
    LeaseEnded,
    AlreadyDone,
    /// `teardown --session`: this task was refused (or failed) and is as it was.
    Refused,
}

pub fn run(ctx: &Context, args: TeardownArgs, json: bool) -> Result<Done, Failure> {
    // A bad name is a usage error before the ledger is opened (and maybe created).
    if let Some(name) = &args.task {
        crate::ops::repo::names::task_name(name)?;
    }
    if let Some(session) = &args.session {
        let session = sessions::session_id(session)?;
        return of_session(ctx, &session, &args, json);
    }
    let mut ledger = ctx.open_ledger()?;
    let name = match args.task {
        Some(name) => name,
        None => {
            let own = tasks::own_task(ctx, &mut ledger)?
                .map_err(|f| super::refusal::not_current(&f, "teardown"))?;
            // A credential's task that ended already is said so here: by name, teardown would
            // find a newer task of the same name.
            if own.state == TaskState::Done {
                return render(&TornDown::AlreadyDone(own), json);
            }
            own.name
        }
    };
    let show = |event: crate::ops::repo::setup::SetupEvent<'_>| super::setup::show(&name, event);
    let outcome = teardown::teardown(
        ctx,
        &mut ledger,
        &TeardownOptions {
            task: &name,
            force: args.force,
            keep_unpushed: false,
            setup: (!args.no_setup).then_some(crate::ops::repo::setup::Shown(&show)),
        },
    )?;
    render(&outcome, json)
}

/// `teardown --session`: every open task of the session, each ended or refused as by name; a
/// refusal is said on stderr as `teardown <task>` says it, and the exit status is the first
/// refusal's.
fn of_session(
    ctx: &Context,
    session: &SessionId,
    args: &TeardownArgs,
    json: bool,
) -> Result<Done, Failure> {
    let mut ledger = ctx.open_ledger()?;
    let show: sessions::ShowSetup<'_> = &super::setup::show;
    let ended = sessions::teardown_session(
        ctx,
        &mut ledger,
        session,
        args.force,
        (!args.no_setup).then_some(show),
    )?;
    let outcomes: Vec<(Task, Result<TornDown, Failure>)> = ended
        .into_iter()
        .map(|e| (e.task, e.outcome.map_err(Failure::from)))
        .collect();
    let kind = outcomes
        .iter()
        .find_map(|(_, o)| o.as_ref().err().map(|f| f.kind));
    for (_, failure) in &outcomes {
        if let Err(failure) = failure {
            super::report(failure, false);
        }
    }
    if json {
        let shape = SessionJson {
            session: session.as_str(),
            tasks: outcomes
                .iter()
                .map(|(task, o)| match o {
                    Ok(outcome) => shape_of(outcome),
                    Err(failure) => TeardownJson {
                        error: Some(ErrorBody {
                            kind: failure.kind,
                            message: &failure.message,
                            hints: super::hint::lines(&failure.hints),
                        }),
                        ..shape_with(task, OutcomeWord::Refused, &[])
                    },
                })
                .collect(),
        };
        return Done::json(&shape, kind);
    }
    let said: String = outcomes
        .iter()
        .filter_map(|(_, o)| o.as_ref().ok().map(text))
        .collect();
    Ok(Done::with(said, kind))
}

/// The outcome as text or as `--json`.
fn render(outcome: &TornDown, json: bool) -> Result<Done, Failure> {
    if json {
        return Done::json(&shape_of(outcome), None);
    }
    Ok(Done::ok(text(outcome)))
}

/// `teardown --json`'s object for an outcome.
fn shape_of(outcome: &TornDown) -> TeardownJson<'_> {
    match outcome {
        TornDown::Freed {
            task, discarded, ..
        } => shape_with(task, OutcomeWord::Freed, discarded),
        TornDown::LeaseEnded { task, .. } => shape_with(task, OutcomeWord::LeaseEnded, &[]),
        TornDown::AlreadyDone(task) => shape_with(task, OutcomeWord::AlreadyDone, &[]),
    }
}

fn shape_with<'a>(
    task: &'a Task,
    outcome: OutcomeWord,
    discarded: &'a [String],
) -> TeardownJson<'a> {
    TeardownJson {
        outcome,
        task: &task.name,
        branch: &task.branch,
        path: task.slot_path.as_ref(),
        discarded,
        error: None,
    }
}

/// The teardown, in a line.
fn text(outcome: &TornDown) -> String {
    match outcome {
        TornDown::Freed {
            task,
            slot,
            discarded,
        } => {
            let lost = if discarded.is_empty() {
                String::new()
            } else {
                format!(", discarded {} uncommitted file(s)", discarded.len())
            };
            format!(
                "task {} done: slot {slot} is free (files kept), branch {} kept{lost}\n",
                task.name, task.branch
            )
        }
        TornDown::LeaseEnded { task, successor } => {
            let who = successor
                .as_ref()
                .map(|t| {
                    format!(
                        "; the slot now belongs to {} (token {}) and was not touched",
                        t.holder, t.token
                    )
                })
                .unwrap_or_default();
            format!(
                "task {} marked done: its lease had already ended{who}\n",
                task.name
            )
        }
        TornDown::AlreadyDone(task) => format!("task {} was already done\n", task.name),
    }
}
