//! `git hand list`: active tasks (and done ones with `--all`) and free slots.

use clap::Args;
use serde_json::{Value, json};

use super::output::{Paint, expiry_text, paint, table, tenure_json, time_json};
use super::{Done, Failure};
use crate::ledger::Tasks;
use crate::ops::Context;
use crate::ops::tasks::{self, TaskView};

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Include done tasks.
    #[arg(long)]
    pub all: bool,
    /// Print one JSON object (fields: docs/cli.md).
    #[arg(long)]
    pub json: bool,
}

fn task_json(v: &TaskView) -> Value {
    json!({
        "task": v.task.name,
        "state": v.task.state,
        "path": v.task.slot_path,
        "slot": v.slot_n,
        "branch": v.task.branch,
        "base": v.task.base_oid,
        "holder": v.task.holder,
        "lease": v.tenure.as_ref().map(tenure_json),
        "issue": v.task.issue,
        "issue_lease": v.issue_tenure.as_ref().map(tenure_json),
        "created_at": time_json(Some(v.task.created_at)),
        "done_at": time_json(v.task.done_at),
        "done_reason": v.task.done_reason,
    })
}

pub fn list(ctx: &Context, args: ListArgs) -> Result<Done, Failure> {
    let mut ledger = ctx.ledger_for_reading()?;
    let which = if args.all { Tasks::All } else { Tasks::Open };
    let listing = tasks::list(ctx, &mut ledger, which)?;
    if args.json {
        let free: Vec<Value> = listing
            .free_slots
            .iter()
            .map(|s| json!({ "slot": s.info.slot.n, "path": s.info.slot.path, "problem": s.problem }))
            .collect();
        let tasks: Vec<Value> = listing.tasks.iter().map(task_json).collect();
        return Ok(Done::json(
            &json!({ "tasks": tasks, "free_slots": free }),
            None,
        ));
    }
    Ok(Done::ok(render_list(&listing, paint(ctx))))
}

pub fn render_list(listing: &tasks::Listing, p: Paint) -> String {
    let now = listing.now;
    let mut out = String::new();
    if listing.tasks.is_empty() {
        out.push_str("no tasks\n");
    } else {
        let rows: Vec<Vec<String>> = listing
            .tasks
            .iter()
            .map(|v| {
                let lease = match &v.tenure {
                    Some(t) if t.is_live(now) => expiry_text(t.expires_at, now),
                    Some(t) if t.ended_at.is_none() => p.yellow(&expiry_text(t.expires_at, now)),
                    Some(t) => p.dim(t.end_reason.as_deref().unwrap_or("ended")),
                    None => "-".into(),
                };
                vec![
                    v.task.name.clone(),
                    v.task.state.as_str().to_string(),
                    v.slot_n.map_or("-".into(), |n| n.to_string()),
                    v.task.branch.clone(),
                    v.tenure
                        .as_ref()
                        .map_or("-".into(), |t| t.token.to_string()),
                    v.task.holder.clone(),
                    lease,
                    v.task.issue.clone().unwrap_or_else(|| "-".into()),
                ]
            })
            .collect();
        out.push_str(&table(
            &[
                "TASK", "STATE", "SLOT", "BRANCH", "TOKEN", "HOLDER", "LEASE", "ISSUE",
            ],
            &rows,
            p,
        ));
    }
    let (usable, unusable): (Vec<_>, Vec<_>) =
        listing.free_slots.iter().partition(|s| s.problem.is_none());
    if !usable.is_empty() {
        let free: Vec<String> = usable.iter().map(|s| s.info.slot.n.to_string()).collect();
        out.push_str(&format!("free slots: {}\n", free.join(", ")));
    }
    for s in unusable {
        out.push_str(&p.yellow(&format!(
            "slot {} is unusable: {} (git hand doctor --repair sets it aside)",
            s.info.slot.n,
            s.problem.as_deref().unwrap_or_default()
        )));
        out.push('\n');
    }
    out
}
