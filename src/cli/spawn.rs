//! `git hand spawn`.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Args;
use serde::Serialize;

use super::output::{Time, Vars, expiry_text, paint, say};
use super::{Done, Failure};
use crate::clock::{Millis, parse_ttl};
use crate::ledger::{LeaseId, Tenure};
use crate::ops::pool::Skipped;
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
    /// Print only the slot path.
    // It conflicts with the global `--json`, which `super::command` says.
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

pub fn run(ctx: &Context, args: SpawnArgs, json: bool) -> Result<Done, Failure> {
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
    if json {
        return Done::json(&SpawnJson::of(&s, &env), None);
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
#[derive(Serialize)]
struct SpawnJson<'a> {
    task: &'a str,
    path: &'a std::path::Path,
    slot: i64,
    slot_source: SlotSource,
    branch: &'a str,
    base: Option<&'a str>,
    lease_id: &'a LeaseId,
    token: i64,
    holder: &'a str,
    expires_at: Option<Time>,
    issue: Option<IssueJson<'a>>,
    skipped: &'a [Skipped],
    env: Vars<'a>,
    hooks: HooksJson<'a>,
}

/// The issue lease a spawn took with `--issue`.
#[derive(Serialize)]
struct IssueJson<'a> {
    issue: Option<&'a str>,
    key: &'a str,
    lease_id: &'a LeaseId,
    token: i64,
    expires_at: Option<Time>,
}

/// Whether the hooks enforce this lease: `problem` and `hints` are null when they do.
#[derive(Serialize)]
struct HooksJson<'a> {
    in_force: bool,
    problem: Option<&'a str>,
    hints: Option<&'a [String]>,
}

impl<'a> SpawnJson<'a> {
    fn of(s: &'a Spawned, env: &'a [(&'static str, String)]) -> Self {
        let issue = |t: &'a Tenure| IssueJson {
            issue: s.task.issue.as_deref(),
            key: &t.resource.key,
            lease_id: &t.lease_id,
            token: t.token,
            expires_at: Time::of(t.expires_at),
        };
        let problem = s.hooks_problem.as_ref();
        Self {
            task: &s.task.name,
            path: &s.path,
            slot: s.slot_n,
            slot_source: s.source,
            branch: &s.task.branch,
            base: s.task.base_oid.as_deref(),
            lease_id: &s.tenure.lease_id,
            token: s.tenure.token,
            holder: &s.tenure.holder,
            expires_at: Time::of(s.tenure.expires_at),
            issue: s.issue_tenure.as_ref().map(issue),
            skipped: &s.skipped,
            env: Vars(env),
            hooks: HooksJson {
                in_force: problem.is_none(),
                problem: problem.map(|(p, _)| p.as_str()),
                hints: problem.map(|(_, h)| h.as_slice()),
            },
        }
    }
}
