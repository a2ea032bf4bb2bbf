//! `git hand prune` (and `prune --branches`) and `git hand doctor`.

use std::io::IsTerminal;
use std::path::Path;

use clap::Args;
use serde::Serialize;

use super::findings;
use super::output::say;
use super::shape::{DeletedJson, KeptBranchJson, KeptJson, each};
use super::{Done, Failure, Kind};
use crate::ledger::recovery::Copied;
use crate::ops::doctor::recover;
use crate::ops::doctor::{Problem, ProblemKind};
use crate::ops::prune::Removing;
use crate::ops::prune::branches::BranchReport;
use crate::ops::{Context, doctor, prune};

#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Really remove (the default is a dry run).
    #[arg(long)]
    pub yes: bool,
    /// Delete done tasks' hand/* branches whose commits all landed, instead of slots.
    #[arg(long)]
    pub branches: bool,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Settle each problem with its safe action.
    #[arg(long)]
    pub repair: bool,
    /// Copy the ledger, with the rows still in its WAL, into a new file at <path> (only that).
    #[arg(long, value_name = "path", conflicts_with = "repair")]
    pub backup: Option<std::path::PathBuf>,
}

/// `prune --json`.
#[derive(Serialize)]
struct PruneJson<'a> {
    dry_run: bool,
    /// The slots removed (or, in a dry run, that would be).
    removed: &'a [String],
    kept: Vec<KeptJson<'a>>,
}

/// `prune --branches --json`.
#[derive(Serialize)]
struct PruneBranchesJson<'a> {
    dry_run: bool,
    /// The branches deleted (or, in a dry run, that would be).
    deleted: Vec<DeletedJson<'a>>,
    kept: Vec<KeptBranchJson<'a>>,
}

/// `doctor --json`: each problem and what was (or would be) done about it.
#[derive(Serialize)]
struct DoctorJson<'a> {
    repair: bool,
    problems: Vec<ProblemJson<'a>>,
    /// On a team ledger: this machine's clock against the server's (positive: ahead).
    #[serde(skip_serializing_if = "Option::is_none")]
    clock_skew_ms: Option<i64>,
}

#[derive(Serialize)]
struct ProblemJson<'a> {
    kind: ProblemKind,
    subject: &'a str,
    detail: String,
    action: String,
    repaired: bool,
    command: Option<String>,
}

impl<'a> ProblemJson<'a> {
    fn of(p: &'a Problem) -> Self {
        Self {
            kind: p.kind,
            subject: &p.subject,
            detail: findings::detail(&p.finding),
            action: findings::action(&p.finding),
            repaired: p.repaired,
            command: findings::command(&p.finding)
                .as_ref()
                .map(super::hint::line),
        }
    }
}

/// `doctor --backup <PATH> --json`: the copy, and the rows of each table in it (null where the
/// table could not be read).
#[derive(Serialize)]
struct BackupJson<'a> {
    backup: &'a Path,
    rows: std::collections::BTreeMap<&'static str, Option<i64>>,
}

pub fn prune(ctx: &Context, args: PruneArgs, json: bool) -> Result<Done, Failure> {
    let mut ledger = ctx.open_ledger()?;
    let run = if args.yes {
        prune::Run::Remove
    } else {
        prune::Run::DryRun
    };
    if args.branches {
        let r = prune::branches::prune_branches(ctx, &mut ledger, run)?;
        return branches_done(&r, json);
    }
    // On a terminal, a line per slot as git removes it; a pipe gets what it always got.
    let on_terminal = std::io::stderr().is_terminal();
    let progress = |slot: Removing<'_>| {
        say([format!(
            "removing slot {} ({} files)...",
            slot.n,
            thousands(slot.files)
        )]);
    };
    let progress: Option<&dyn Fn(Removing<'_>)> = if on_terminal { Some(&progress) } else { None };
    let r = prune::prune(ctx, &mut ledger, run, progress)?;
    if json {
        let shape = PruneJson {
            dry_run: r.dry_run,
            removed: &r.removed,
            kept: each(&r.kept),
        };
        return Done::json(&shape, None);
    }
    let verb = if r.dry_run { "would remove" } else { "removed" };
    let mut out = String::new();
    for p in &r.removed {
        out.push_str(&format!("{verb}: {p}\n"));
    }
    for k in &r.kept {
        out.push_str(&format!("kept: {}: {}\n", k.path, k.why.join("; ")));
        if let Some(hint) = &k.hint {
            out.push_str(&format!("  hint: {}\n", super::hint::line(hint)));
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

/// `prune --branches`: what was (or would be) deleted, with the commit each pointed at, then
/// what was kept and why.
fn branches_done(r: &BranchReport, json: bool) -> Result<Done, Failure> {
    if json {
        let shape = PruneBranchesJson {
            dry_run: r.dry_run,
            deleted: each(&r.deleted),
            kept: each(&r.kept),
        };
        return Done::json(&shape, None);
    }
    let verb = if r.dry_run { "would delete" } else { "deleted" };
    let mut out = String::new();
    for d in &r.deleted {
        let short = crate::ids::short(&d.oid);
        out.push_str(&format!("{verb}: {} (was {short})\n", d.branch));
    }
    for k in &r.kept {
        out.push_str(&format!("kept: {}: {}\n", k.branch, k.why.join("; ")));
        if let Some(hint) = &k.hint {
            out.push_str(&format!("  hint: {hint}\n"));
        }
    }
    if r.deleted.is_empty() && r.kept.is_empty() {
        out.push_str("no branches of done tasks\n");
    }
    if r.dry_run && !r.deleted.is_empty() {
        out.push_str("(dry run: git hand prune --branches --yes deletes them)\n");
    } else if !r.deleted.is_empty() {
        out.push_str("(git branch <branch> <commit> brings one back)\n");
    }
    Ok(Done::ok(out))
}

/// `12345` as `12,345`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub fn doctor(ctx: &Context, args: DoctorArgs, json: bool) -> Result<Done, Failure> {
    // Doctor is the remedy its failures would otherwise point at.
    let in_doctor = |e: crate::ops::Error| Failure::from(e).not_pointing_at("doctor");
    if let Some(to) = &args.backup {
        let copied = recover::backup(ctx, to).map_err(in_doctor)?;
        return backup_done(&copied, json);
    }
    let findings = doctor::doctor(ctx, args.repair).map_err(in_doctor)?;
    let problems = &findings.problems;
    let unsettled = problems.iter().any(|p| !p.repaired);
    // Problems left after the run make the exit status 3, so scripts notice.
    let kind = unsettled.then_some(Kind::Precondition);
    if json {
        let shape = DoctorJson {
            repair: args.repair,
            problems: problems.iter().map(ProblemJson::of).collect(),
            clock_skew_ms: findings.clock_skew_ms,
        };
        return Done::json(&shape, kind);
    }
    let mut out = String::new();
    if let Some(skew) = findings.clock_skew_ms {
        out.push_str(&clock_line(skew));
    }
    if problems.is_empty() {
        out.push_str("no problems found\n");
        return Ok(Done::ok(out));
    }
    for p in problems {
        let state = if p.repaired {
            "repaired"
        } else if args.repair {
            "left"
        } else {
            "found"
        };
        out.push_str(&format!(
            "{state}: {} {}: {}\n  action: {}\n",
            p.kind,
            p.subject,
            findings::detail(&p.finding),
            findings::action(&p.finding)
        ));
        if let Some(cmd) = &findings::command(&p.finding) {
            out.push_str(&format!("  run: {}\n", super::hint::line(cmd)));
        }
    }
    // A problem with a command of its own is one --repair leaves alone (a ledger damaged
    // inside, a slot holding work): offer --repair only for the others.
    if !args.repair
        && problems
            .iter()
            .any(|p| findings::command(&p.finding).is_none())
    {
        out.push_str("git hand doctor --repair settles what it safely can\n");
    }
    Ok(Done::with(out, kind))
}

/// doctor's first line on a team ledger: this machine's clock against the server's.
fn clock_line(skew_ms: i64) -> String {
    let way = if skew_ms >= 0 { "ahead of" } else { "behind" };
    format!(
        "clock: this machine is {:.3} s {way} the team ledger server (lease times are the server's)\n",
        skew_ms.unsigned_abs() as f64 / 1000.0
    )
}

fn backup_done(copied: &Copied, json: bool) -> Result<Done, Failure> {
    if json {
        let rows = copied
            .rows
            .iter()
            .map(|c| (c.table, c.rows.as_ref().ok().copied()))
            .collect();
        let shape = BackupJson {
            backup: &copied.to,
            rows,
        };
        return Done::json(&shape, None);
    }
    let rows: Vec<String> = copied.rows.iter().map(ToString::to_string).collect();
    Ok(Done::ok(format!(
        "copied the ledger, with the rows still in its WAL, to {}\nrows: {}\n",
        copied.to.display(),
        rows.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::thousands;

    #[test]
    fn thousands_are_grouped_by_commas() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(12_345), "12,345");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
