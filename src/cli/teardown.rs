//! `git hand teardown` (alias `done`).

use clap::Args;
use serde_json::json;

use super::{Done, Failure};
use crate::ops::Context;
use crate::ops::teardown::{self, TeardownOptions, TornDown};

#[derive(Debug, Args)]
pub struct TeardownArgs {
    /// The task to end.
    pub task: String,
    /// Discard uncommitted changes; commits stay on the task's branch.
    #[arg(long)]
    pub force: bool,
    /// Print one JSON object (fields: docs/cli.md).
    #[arg(long)]
    pub json: bool,
}

pub fn run(ctx: &Context, args: TeardownArgs) -> Result<Done, Failure> {
    // A bad name is a usage error before the ledger is opened (and maybe created).
    crate::ops::names::task_name(&args.task)?;
    let mut ledger = ctx.open_ledger()?;
    let outcome = teardown::teardown(
        ctx,
        &mut ledger,
        &TeardownOptions {
            task: &args.task,
            force: args.force,
            keep_unpushed: false,
        },
    )?;
    let (word, task, text) = match &outcome {
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
            (
                "freed",
                task,
                format!(
                    "task {} done: slot {slot} is free (files kept), branch {} kept{lost}\n",
                    task.name, task.branch
                ),
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
            (
                "lease-ended",
                task,
                format!(
                    "task {} marked done: its lease had already ended{who}\n",
                    task.name
                ),
            )
        }
        TornDown::AlreadyDone(task) => (
            "already-done",
            task,
            format!("task {} was already done\n", task.name),
        ),
    };
    if args.json {
        let discarded = match &outcome {
            TornDown::Freed { discarded, .. } => discarded.clone(),
            _ => vec![],
        };
        return Ok(Done::json(
            &json!({
                "outcome": word, "task": task.name, "branch": task.branch, "path": task.slot_path, "discarded": discarded,
            }),
            None,
        ));
    }
    Ok(Done::ok(text))
}
