//! `git hand list`: active tasks (and done ones with `--all`) and free slots.

use clap::Args;
use serde::Serialize;

use super::output::{Paint, TenureJson, Time, expiry_text, paint, table};
use super::{Done, Failure};
use crate::ledger::{EndReason, TaskState, Tasks, WorktreeKey};
use crate::ops::Context;
use crate::ops::tasks::{self, FreeSlot, TaskView};

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Include done tasks.
    #[arg(long)]
    pub all: bool,
}

/// `list --json`.
#[derive(Serialize)]
struct ListJson<'a> {
    tasks: Vec<TaskJson<'a>>,
    free_slots: Vec<FreeSlotJson<'a>>,
}

#[derive(Serialize)]
struct TaskJson<'a> {
    task: &'a str,
    state: TaskState,
    path: Option<&'a WorktreeKey>,
    slot: Option<i64>,
    branch: &'a str,
    base: Option<&'a str>,
    holder: &'a str,
    lease: Option<TenureJson<'a>>,
    issue: Option<&'a str>,
    issue_lease: Option<TenureJson<'a>>,
    created_at: Time,
    done_at: Option<Time>,
    done_reason: Option<EndReason>,
}

impl<'a> TaskJson<'a> {
    fn of(v: &'a TaskView) -> Self {
        Self {
            task: &v.task.name,
            state: v.task.state,
            path: v.task.slot_path.as_ref(),
            slot: v.slot_n,
            branch: &v.task.branch,
            base: v.task.base_oid.as_deref(),
            holder: &v.task.holder,
            lease: v.tenure.as_ref().map(TenureJson::of),
            issue: v.task.issue.as_deref(),
            issue_lease: v.issue_tenure.as_ref().map(TenureJson::of),
            created_at: Time(v.task.created_at),
            done_at: Time::of(v.task.done_at),
            done_reason: v.task.done_reason,
        }
    }
}

/// A free slot; `problem` says why no spawn will take it (null when one will).
#[derive(Serialize)]
struct FreeSlotJson<'a> {
    slot: i64,
    path: &'a WorktreeKey,
    problem: Option<&'a str>,
}

impl<'a> FreeSlotJson<'a> {
    fn of(s: &'a FreeSlot) -> Self {
        Self {
            slot: s.info.slot.n,
            path: &s.info.slot.path,
            problem: s.problem.as_deref(),
        }
    }
}

pub fn list(ctx: &Context, args: ListArgs, json: bool) -> Result<Done, Failure> {
    let mut ledger = ctx.ledger_for_reading()?;
    let which = if args.all { Tasks::All } else { Tasks::Open };
    let listing = tasks::list(ctx, &mut ledger, which)?;
    if json {
        let shape = ListJson {
            tasks: listing.tasks.iter().map(TaskJson::of).collect(),
            free_slots: listing.free_slots.iter().map(FreeSlotJson::of).collect(),
        };
        return Done::json(&shape, None);
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
