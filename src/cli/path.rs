//! `git hand path`: a task's directory, for `cd "$(git hand path fix-login)"`.

use clap::Args;
use serde::Serialize;

use super::{Done, Failure};
use crate::ops::Context;
use crate::ops::tasks;

#[derive(Debug, Args)]
pub struct PathArgs {
    /// The task [default: the one whose credential is in the environment, else the current worktree's].
    pub task: Option<String>,
}

/// `path --json`.
#[derive(Serialize)]
struct PathJson<'a> {
    task: &'a str,
    path: &'a std::path::Path,
    slot: Option<i64>,
}

pub fn path(ctx: &Context, args: PathArgs, json: bool) -> Result<Done, Failure> {
    // A bad name is a usage error before the ledger is opened (and maybe created).
    if let Some(name) = &args.task {
        crate::ops::names::task_name(name)?;
    }
    let mut ledger = ctx.ledger_for_reading()?;
    let task = match args.task.as_deref() {
        Some(name) => tasks::named_task(ctx, &mut ledger, name)?,
        None => tasks::this_task(ctx, &mut ledger)?
            .map_err(|f| super::refusal::not_current(&f, "path"))?,
    };
    let (task, dir, slot) = tasks::task_dir(&mut ledger, task)?;
    if json {
        let shape = PathJson {
            task: &task.name,
            path: &dir,
            slot,
        };
        return Done::json(&shape, None);
    }
    // The path alone on its line: what `cd "$(...)"` takes.
    Ok(Done::ok(format!("{}\n", dir.display())))
}
