//! `git hand prune` and `git hand doctor`.

use clap::Args;
use serde_json::json;

use super::{Done, Failure, Kind};
use crate::ops::{Context, doctor, prune};

#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Really remove (the default is a dry run).
    #[arg(long)]
    pub yes: bool,
    /// Print one JSON object (fields: docs/cli.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Settle each problem with its safe action.
    #[arg(long)]
    pub repair: bool,
    /// Print one JSON object (fields: docs/cli.md).
    #[arg(long)]
    pub json: bool,
}

pub fn prune(ctx: &Context, args: PruneArgs) -> Result<Done, Failure> {
    let mut ledger = ctx.open_ledger()?;
    let r = prune::prune(ctx, &mut ledger, args.yes)?;
    if args.json {
        let kept: Vec<_> = r
            .kept
            .iter()
            .map(|k| json!({ "path": k.path, "why": k.why, "hint": k.hint }))
            .collect();
        return Ok(Done::json(
            &json!({ "dry_run": r.dry_run, "removed": r.removed, "kept": kept }),
            None,
        ));
    }
    let verb = if r.dry_run { "would remove" } else { "removed" };
    let mut out = String::new();
    for p in &r.removed {
        out.push_str(&format!("{verb}: {p}\n"));
    }
    for k in &r.kept {
        out.push_str(&format!("kept: {}: {}\n", k.path, k.why.join("; ")));
        if let Some(hint) = &k.hint {
            out.push_str(&format!("  hint: {hint}\n"));
        }
    }
    if r.removed.is_empty() && r.kept.is_empty() {
        out.push_str("no slots\n");
    }
    if r.dry_run && !r.removed.is_empty() {
        out.push_str("(dry run: git hand prune --yes removes them)\n");
    }
    Ok(Done::ok(out))
}

pub fn doctor(ctx: &Context, args: DoctorArgs) -> Result<Done, Failure> {
    let mut ledger = ctx.open_ledger()?;
    let problems = doctor::doctor(ctx, &mut ledger, args.repair)?;
    let unsettled = problems.iter().any(|p| !p.repaired);
    // Problems left after the run make the exit status 3, so scripts notice.
    let kind = unsettled.then_some(Kind::Precondition);
    if args.json {
        let list: Vec<_> = problems
            .iter()
            .map(|p| {
                json!({
                    "kind": p.kind, "subject": p.subject, "detail": p.detail, "action": p.action,
                    "repaired": p.repaired, "command": p.command,
                })
            })
            .collect();
        return Ok(Done::json(
            &json!({ "repair": args.repair, "problems": list }),
            kind,
        ));
    }
    if problems.is_empty() {
        return Ok(Done::ok("no problems found\n".into()));
    }
    let mut out = String::new();
    for p in &problems {
        let state = if p.repaired {
            "repaired"
        } else if args.repair {
            "left"
        } else {
            "found"
        };
        out.push_str(&format!(
            "{state}: {} {}: {}\n  action: {}\n",
            p.kind, p.subject, p.detail, p.action
        ));
        if let Some(cmd) = &p.command {
            out.push_str(&format!("  run: {cmd}\n"));
        }
    }
    if !args.repair && unsettled {
        out.push_str("git hand doctor --repair settles what it safely can\n");
    }
    Ok(Done::with(out, kind))
}
