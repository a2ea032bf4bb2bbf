//! `git hand teardown` (alias `done`).

use clap::Args;
use serde::Serialize;

use super::{Done, Failure};
use crate::ledger::{TaskState, WorktreeKey};
use crate::ops::teardown::{self, TeardownOptions, TornDown};
use crate::ops::{Context, tasks};

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
}

/// `teardown --json`'s `outcome`: the word for each [`TornDown`], spelled by serde.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "kebab-case")]
enum OutcomeWord {
    Freed,
    LeaseEnded,
    AlreadyDone,
}

pub fn run(ctx: &Context, args: TeardownArgs, json: bool) -> Result<Done, Failure> {
    // A bad name is a usage error before the ledger is opened (and maybe created).
    if let Some(name) = &args.task {
        crate::ops::names::task_name(name)?;
    }
    let mut ledger = ctx.open_ledger()?;
    let name = match args.task {
        Some(name) => name,
        None => {
            let own = tasks::own_task(ctx, &mut ledger)?;
            // A credential's task that ended already is said so here: by name, teardown would
            // find a newer task of the same name.
            if own.state == TaskState::Done {
                return render(&TornDown::AlreadyDone(own), json);
            }
            own.name
        }
    };
    let show = |event: crate::ops::setup::SetupEvent<'_>| super::setup::show(&name, event);
    let outcome = teardown::teardown(
        ctx,
        &mut ledger,
        &TeardownOptions {
            task: &name,
            force: args.force,
            keep_unpushed: false,
            setup: (!args.no_setup).then_some(crate::ops::setup::Shown(&show)),
        },
    )?;
    render(&outcome, json)
}

/// The outcome as text or as `--json`.
fn render(outcome: &TornDown, json: bool) -> Result<Done, Failure> {
    if json {
        let (word, task, discarded) = match outcome {
            TornDown::Freed {
                task, discarded, ..
            } => (OutcomeWord::Freed, task, discarded.as_slice()),
            TornDown::LeaseEnded { task, .. } => (OutcomeWord::LeaseEnded, task, &[][..]),
            TornDown::AlreadyDone(task) => (OutcomeWord::AlreadyDone, task, &[][..]),
        };
        let shape = TeardownJson {
            outcome: word,
            task: &task.name,
            branch: &task.branch,
            path: task.slot_path.as_ref(),
            discarded,
        };
        return Done::json(&shape, None);
    }
    Ok(Done::ok(text(outcome)))
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
