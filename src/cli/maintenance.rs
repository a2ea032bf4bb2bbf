//! `git hand prune` and `git hand doctor`.

use clap::Args;
use serde_json::json;

use super::{Done, Failure, Kind};
use crate::ledger::recovery::Copied;
use crate::ops::{Context, doctor, prune, recover};

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
    /// Copy the ledger, with the rows still in its WAL, into a new file at PATH (only that).
    #[arg(long, value_name = "PATH", conflicts_with = "repair")]
    pub backup: Option<std::path::PathBuf>,
    /// Print one JSON object (fields: docs/cli.md).
    #[arg(long)]
    pub json: bool,
}

pub fn prune(ctx: &Context, args: PruneArgs) -> Result<Done, Failure> {
    let mut ledger = ctx.open_ledger()?;
    let run = if args.yes {
        prune::Run::Remove
    } else {
        prune::Run::DryRun
    };
    let r = prune::prune(ctx, &mut ledger, run)?;
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
    // Doctor is the remedy its failures would otherwise point at.
    let in_doctor = |e: crate::ops::Error| Failure::from(e).not_pointing_at("git hand doctor");
    if let Some(to) = &args.backup {
        let copied = recover::backup(ctx, to).map_err(in_doctor)?;
        return Ok(backup_done(&copied, args.json));
    }
    let problems = doctor::doctor(ctx, args.repair).map_err(in_doctor)?;
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
    // A problem with a command of its own is one --repair leaves alone (a ledger damaged
    // inside, a slot holding work): offer --repair only for the others.
    if !args.repair && problems.iter().any(|p| p.command.is_none()) {
        out.push_str("git hand doctor --repair settles what it safely can\n");
    }
    Ok(Done::with(out, kind))
}

fn backup_done(copied: &Copied, json: bool) -> Done {
    if json {
        let rows: serde_json::Map<String, serde_json::Value> = copied
            .rows
            .iter()
            .map(|c| (c.table.to_string(), c.rows.as_ref().ok().copied().into()))
            .collect();
        return Done::json(&json!({ "backup": copied.to, "rows": rows }), None);
    }
    let rows: Vec<String> = copied.rows.iter().map(ToString::to_string).collect();
    Done::ok(format!(
        "copied the ledger, with the rows still in its WAL, to {}\nrows: {}\n",
        copied.to.display(),
        rows.join(", ")
    ))
}
