//! `git hand list`, `status`, `renew` and `env`.

use clap::Args;
use serde_json::{Value, json};

use super::lease::paint;
use super::output::{Paint, expiry_text, table, tenure_json, time_json};
use super::{Done, Failure, Kind};
use crate::clock::{Millis, parse_ttl, relative};
use crate::ops::Context;
use crate::ops::tasks::{self, TaskView};
use crate::ops::verdict::Finding;

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Include done tasks.
    #[arg(long)]
    pub all: bool,
    /// Print one JSON object (fields: docs/cli.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Print one JSON object (fields: docs/cli.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RenewArgs {
    /// The task [default: the task of the current worktree].
    pub task: Option<String>,
    /// New time to live (90s, 30m, 2h, 1d) [default: the TTL it was granted with].
    #[arg(long, value_name = "DUR", value_parser = parse_ttl)]
    pub ttl: Option<Millis>,
    /// Print one JSON object (fields: docs/cli.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct EnvArgs {
    /// The task [default: the task of the current worktree].
    pub task: Option<String>,
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
    let mut ledger = ctx.open_ledger()?;
    let listing = tasks::list(ctx, &mut ledger, args.all)?;
    if args.json {
        let free: Vec<Value> = listing
            .free_slots
            .iter()
            .map(|s| json!({ "slot": s.slot.n, "path": s.slot.path }))
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
    if !listing.free_slots.is_empty() {
        let free: Vec<String> = listing
            .free_slots
            .iter()
            .map(|s| s.slot.n.to_string())
            .collect();
        out.push_str(&format!("free slots: {}\n", free.join(", ")));
    }
    out
}

pub fn status(ctx: &Context, args: StatusArgs) -> Result<Done, Failure> {
    let here = tasks::here(ctx)?;
    let f = &here.finding;
    if args.json {
        return Ok(Done::json(
            &finding_json(f, here.workdir.as_deref(), &here.ledger),
            None,
        ));
    }
    Ok(Done::ok(render_finding(f, paint(ctx))))
}

pub fn finding_json(
    f: &Finding,
    workdir: Option<&std::path::Path>,
    ledger: &std::path::Path,
) -> Value {
    json!({
        "verdict": f.verdict,
        "allowed": f.verdict.allows(),
        "worktree": workdir,
        "slot": f.slot,
        "task": f.task.as_ref().map(|t| &t.name),
        "credential": f.credential,
        "lease": f.tenure.as_ref().map(tenure_json),
        "newest": f.newest.as_ref().map(tenure_json),
        "issue_lease": f.issue.as_ref().map(tenure_json),
        "ledger": ledger,
    })
}

pub fn render_finding(f: &Finding, p: Paint) -> String {
    let verdict = if f.verdict.allows() {
        p.green(f.verdict.as_str())
    } else {
        p.red(f.verdict.as_str())
    };
    let mut out = format!(
        "verdict: {verdict} (a push from here would be {})\n",
        if f.verdict.allows() {
            "allowed"
        } else {
            "refused"
        }
    );
    if let Some(task) = &f.task {
        out.push_str(&format!(
            "task:    {} on {} ({})\n",
            task.name,
            task.branch,
            task.state.as_str()
        ));
    }
    if let Some(t) = &f.tenure {
        out.push_str(
            &format!(
                "lease:   token {}, {} , held by {}\n",
                t.token,
                expiry_text(t.expires_at, f.now),
                t.holder
            )
            .replace(" ,", ","),
        );
    }
    if let (Some(n), Some(t)) = (&f.newest, &f.tenure)
        && n.token > t.token
    {
        out.push_str(&format!(
            "newer:   token {} held by {} since {}\n",
            n.token,
            n.holder,
            relative(n.acquired_at, f.now)
        ));
    }
    if let Some(c) = &f.credential {
        out.push_str(&format!(
            "from:    {}\n",
            match c.source {
                crate::ops::verdict::CredentialSource::Env => "GIT_HAND_LEASE in the environment",
                crate::ops::verdict::CredentialSource::Stamp => "the worktree's stamp",
            }
        ));
    }
    out
}

pub fn renew(ctx: &Context, args: RenewArgs) -> Result<Done, Failure> {
    let mut ledger = ctx.open_ledger()?;
    let task = tasks::resolve_task(ctx, &mut ledger, args.task.as_deref())?;
    let r = tasks::renew(&mut ledger, &task, args.ttl)?;
    if args.json {
        return Ok(Done::json(
            &json!({
                "task": r.task.name, "lease": tenure_json(&r.tenure), "issue_lease": r.issue_tenure.as_ref().map(tenure_json),
            }),
            None,
        ));
    }
    Ok(Done::ok(format!(
        "renewed task {}: token {}, {}\n",
        r.task.name,
        r.tenure.token,
        expiry_text(r.tenure.expires_at, r.now)
    )))
}

pub fn env(ctx: &Context, args: EnvArgs) -> Result<Done, Failure> {
    let mut ledger = ctx.open_ledger()?;
    let task = tasks::resolve_task(ctx, &mut ledger, args.task.as_deref())?;
    let (tenure, now) = tasks::tenure_of(&mut ledger, &task)?;
    // A dead credential is no credential: handing it out would only earn a refused push later.
    if !tenure.is_live(now) {
        return Err(Failure::new(
            Kind::Precondition,
            format!(
                "task {}'s lease is no longer live; its pushes will be refused",
                task.name
            ),
        )
        .hint(format!(
            "git hand teardown {}   # commits stay on {}",
            task.name, task.branch
        )));
    }
    let vars = tasks::credential_env(&task, &tenure);
    if args.json {
        let map: serde_json::Map<String, Value> = vars
            .into_iter()
            .map(|(k, v)| (k.to_string(), Value::String(v)))
            .collect();
        return Ok(Done::json(&Value::Object(map), None));
    }
    // Values are hex, digits and task names ([A-Za-z0-9._-]): nothing a shell would expand.
    Ok(Done::ok(
        vars.into_iter()
            .map(|(k, v)| format!("export {k}={v}\n"))
            .collect(),
    ))
}
