//! `git hand renew`: extend a task's leases (slot and issue), keeping their tokens.

use clap::Args;
use serde::Serialize;

use super::output::{TenureJson, expiry_text};
use super::{Done, Failure};
use crate::clock::{Millis, parse_ttl};
use crate::ops::Context;
use crate::ops::task::tasks;

#[derive(Debug, Args)]
pub struct RenewArgs {
    /// The task [default: the one whose credential is in the environment, else the current worktree's].
    #[arg(value_name = "task")]
    pub task: Option<String>,
    /// New time to live (90s, 30m, 2h, 1d) [default: the TTL it was granted with].
    #[arg(long, value_name = "duration", value_parser = parse_ttl)]
    pub ttl: Option<Millis>,
}

/// `renew --json`: the task's leases after the renewal.
#[derive(Serialize)]
struct RenewJson<'a> {
    task: &'a str,
    lease: TenureJson<'a>,
    /// Null when the task holds no issue lease.
    issue_lease: Option<TenureJson<'a>>,
}

pub fn renew(ctx: &Context, args: RenewArgs, json: bool) -> Result<Done, Failure> {
    // A bad name is a usage error before the ledger is opened (and maybe created).
    if let Some(name) = &args.task {
        crate::ops::repo::names::task_name(name)?;
    }
    let mut ledger = ctx.open_ledger()?;
    let task = match args.task.as_deref() {
        Some(name) => tasks::resolve_task(ctx, &mut ledger, Some(name))?,
        None => tasks::this_task(ctx, &mut ledger)?
            .map_err(|f| super::refusal::not_current(&f, "renew"))?,
    };
    let r = tasks::renew(&mut ledger, &task, args.ttl)?;
    if json {
        let shape = RenewJson {
            task: &r.task.name,
            lease: TenureJson::of(&r.tenure),
            issue_lease: r.issue_tenure.as_ref().map(TenureJson::of),
        };
        return Done::json(&shape, None);
    }
    Ok(Done::ok(format!(
        "renewed task {}: token {}, {}\n",
        r.task.name,
        r.tenure.token,
        expiry_text(r.tenure.expires_at, r.now)
    )))
}
