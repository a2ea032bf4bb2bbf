//! `git hand spawn`.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Args;
use serde_json::{Value, json};

use super::output::{expiry_text, paint, say, time_json};
use super::{Done, Failure};
use crate::clock::{Millis, parse_ttl};
use crate::ops::spawn::{self, SlotSource, SpawnOptions, Spawned};
use crate::ops::{Context, exec};

#[derive(Debug, Args)]
pub struct SpawnArgs {
    /// Task name: 1 to 64 of A-Z a-z 0-9 . _ - (not starting with '-' or '.')
    pub task: String,
    /// Commit to start from [default: the default branch, local or origin, whichever is ahead].
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// Branch for the task [default: hand/<TASK>]; an existing branch only when named here.
    #[arg(long, value_name = "NAME")]
    pub branch: Option<String>,
    /// Also lease this issue; if it is held, nothing is created.
    #[arg(long, value_name = "ID")]
    pub issue: Option<String>,
    /// Who holds the lease [default: $GIT_HAND_HOLDER, else user@host].
    #[arg(long, value_name = "H")]
    pub holder: Option<String>,
    /// Lease time to live (90s, 30m, 2h, 1d) [default: open-ended].
    #[arg(long, value_name = "DUR", value_parser = parse_ttl)]
    pub ttl: Option<Millis>,
    /// `git fetch origin` before choosing the base (otherwise no network).
    #[arg(long)]
    pub fetch: bool,
    /// Print one JSON object (fields: docs/cli.md).
    #[arg(long, conflicts_with = "print_path")]
    pub json: bool,
    /// Print only the slot path.
    #[arg(long)]
    pub print_path: bool,
    /// Run the command after `--` in the slot with the task's credential; renew a TTL lease
    /// while it runs; exit with its status.
    #[arg(long, requires = "command")]
    pub exec: bool,
    /// The command `--exec` runs, after `--`.
    #[arg(last = true, value_name = "CMD", requires = "exec")]
    pub command: Vec<OsString>,
}

pub fn run(ctx: &Context, args: SpawnArgs) -> Result<Done, Failure> {
    let holder = ctx.holder(args.holder.as_deref())?;
    let opts = SpawnOptions {
        task: &args.task,
        base: args.base.as_deref(),
        branch: args.branch.as_deref(),
        issue: args.issue.as_deref(),
        holder: &holder,
        ttl: args.ttl,
        fetch: args.fetch,
    };
    let on_terminal = std::io::stderr().is_terminal();
    let progress = |msg: &str| {
        if on_terminal {
            say([format!("{msg}...")]);
        }
    };
    // Every usage error is found before the ledger is opened (and maybe created).
    let checked = spawn::check(ctx, &opts, &progress)?;
    let mut ledger = ctx.open_ledger()?;
    let s = spawn::spawn(ctx, &mut ledger, &opts, checked, &progress)?;
    let env = crate::ops::credential::env_vars(&s.task, &s.tenure);
    if let Some((problem, hints)) = &s.hooks_problem {
        // Loud on purpose: without the hooks a zombie's push goes through.
        say([format!("WARNING: this lease is NOT enforced: {problem}")]);
        say(hints.iter().map(|hint| format!("  fix: {hint}")));
    }
    if args.exec {
        let warn = |msg: &str| say([msg]);
        let status = exec::run(&s, &args.command, &env, ledger.path(), &warn)?;
        return Ok(Done {
            stdout: String::new(),
            code: ExitCode::from(exec::exit_code(status)),
        });
    }
    if args.json {
        return Ok(Done::json(&spawned_json(&s, &env), None));
    }
    if !args.print_path {
        let p = paint(ctx);
        let how = match s.source {
            SlotSource::Created => "new slot",
            SlotSource::Reused => "reused slot",
            SlotSource::Existing => "already active in slot",
        };
        say([format!(
            "task {} on {} ({how} {}, token {}, {})",
            p.bold(&s.task.name),
            s.task.branch,
            s.slot_n,
            s.tenure.token,
            expiry_text(
                s.tenure.expires_at,
                s.tenure.renewed_at.unwrap_or(s.tenure.acquired_at)
            )
        )]);
        say(s
            .skipped
            .iter()
            .map(|k| format!("skipped {}: {}", k.path, k.why.join("; "))));
        say([format!(
            "credential: eval \"$(git hand env {})\"",
            s.task.name
        )]);
    }
    Ok(Done {
        stdout: format!("{}\n", s.path.display()),
        code: ExitCode::SUCCESS,
    })
}

/// The JSON of a spawn (docs/cli.md, "spawn").
fn spawned_json(s: &Spawned, env: &[(&str, String)]) -> Value {
    let env: serde_json::Map<String, Value> = env
        .iter()
        .map(|(k, v)| (k.to_string(), Value::String(v.clone())))
        .collect();
    json!({
        "task": s.task.name,
        "path": s.path,
        "slot": s.slot_n,
        "slot_source": match s.source { SlotSource::Created => "created", SlotSource::Reused => "reused", SlotSource::Existing => "existing" },
        "branch": s.task.branch,
        "base": s.task.base_oid,
        "lease_id": s.tenure.lease_id,
        "token": s.tenure.token,
        "holder": s.tenure.holder,
        "expires_at": time_json(s.tenure.expires_at),
        "issue": s.issue_tenure.as_ref().map(|t| json!({
            "issue": s.task.issue, "key": t.resource.key, "lease_id": t.lease_id, "token": t.token,
            "expires_at": time_json(t.expires_at),
        })),
        "skipped": s.skipped.iter().map(|k| json!({ "path": k.path, "why": k.why })).collect::<Vec<_>>(),
        "env": env,
        "hooks": {
            "in_force": s.hooks_problem.is_none(),
            "problem": s.hooks_problem.as_ref().map(|(p, _)| p),
            "hints": s.hooks_problem.as_ref().map(|(_, h)| h),
        },
    })
}
