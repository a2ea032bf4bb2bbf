//! `git hand path`: a task's directory, for `cd "$(git hand path fix-login)"`.

use clap::Args;
use serde::Serialize;

use super::{Done, Failure};
use crate::ops::Context;
use crate::ops::{task::sessions, task::tasks};

#[derive(Debug, Args)]
pub struct PathArgs {
    /// The task [default: the one whose credential is in the environment, else the current worktree's].
    pub task: Option<String>,
    /// The task of this Claude Code session (of several, the session's own worktree's, not its
    /// subagents').
    #[arg(long, value_name = "id", conflicts_with = "task")]
    pub session: Option<String>,
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
        crate::ops::repo::names::task_name(name)?;
    }
    let session = args
        .session
        .as_deref()
        .map(sessions::session_id)
        .transpose()?;
    let mut ledger = ctx.ledger_for_reading()?;
    let task = match (args.task.as_deref(), &session) {
        (_, Some(session)) => sessions::session_task_for_path(ctx, &mut ledger, session)?,
        (Some(name), None) => tasks::named_task(ctx, &mut ledger, name)?,
        (None, None) => tasks::this_task(ctx, &mut ledger)?
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
