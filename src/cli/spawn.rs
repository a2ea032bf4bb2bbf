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
use crate::ops::Context;
use crate::ops::exec::{self, RenewalTrouble};
use crate::ops::pool::Skipped;
use crate::ops::spawn::{self, HooksNotInForce, Progress, SlotSource, SpawnOptions, Spawned};

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
    /// Run no setup command (hand.onCreate, hand.onReuse).
    #[arg(long)]
    pub no_setup: bool,
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
        no_setup: args.no_setup,
    };
    let on_terminal = std::io::stderr().is_terminal();
    let progress = |busy: Progress<'_>| match busy {
        Progress::Setup(event) => super::setup::show(&args.task, event),
        _ if on_terminal => say([progress_line(busy)]),
        _ => {}
    };
    // Every usage error is found before the ledger is opened (and maybe created).
    let checked = spawn::check(ctx, &opts, &progress)?;
    let mut ledger = ctx.open_ledger()?;
    let s = spawn::spawn(ctx, &mut ledger, &opts, checked, &progress)?;
    let env = crate::ops::credential::env_vars(&s.task, &s.tenure);
    let hooks = s.hooks_problem.as_ref().map(HooksWords::of);
    if let Some(HooksWords { problem, hints }) = &hooks {
        // Loud on purpose: without the hooks a zombie's push goes through.
        say([format!("WARNING: this lease is NOT enforced: {problem}")]);
        say(hints.iter().map(|hint| format!("  fix: {hint}")));
    }
    if args.exec {
        let warn = |trouble: RenewalTrouble| say([trouble_line(trouble)]);
        let status = exec::run(&s, &args.command, &env, ledger.path(), &warn)?;
        return Ok(Done {
            stdout: String::new(),
            code: ExitCode::from(exec::exit_code(status)),
        });
    }
    if json {
        return Done::json(&SpawnJson::of(&s, &env, hooks.as_ref()), None);
    }
    if !args.print_path {
        say_spawned(ctx, &s);
    }
    Ok(Done {
        stdout: format!("{}\n", s.path.display()),
        code: ExitCode::SUCCESS,
    })
}

/// What spawn is busy with, on a terminal, while it waits on git.
fn progress_line(busy: Progress<'_>) -> String {
    match busy {
        Progress::FetchingOrigin => "fetching origin...".to_string(),
        Progress::CreatingSlot(path) => format!("creating slot {}...", path.display()),
        // Shown whatever stderr is, by `super::setup::show`.
        Progress::Setup(_) => String::new(),
    }
}

/// What `--exec`'s renewer says when a renewal goes wrong.
fn trouble_line(trouble: RenewalTrouble) -> String {
    match trouble {
        RenewalTrouble::LeaseLost => {
            "the task's lease is no longer live; pushes from it will be refused (stopped renewing)"
                .to_string()
        }
        RenewalTrouble::IssueLeaseLost => {
            "the task's issue lease is no longer live; pushes from it \
                                           will be refused (stopped renewing)"
                .to_string()
        }
        RenewalTrouble::Failed(e) => format!("could not renew the lease: {e}"),
    }
}

/// The spawn, for a human on stderr: the task, its slot and lease, the slots passed over, and
/// how to take the credential.
fn say_spawned(ctx: &Context, s: &Spawned) {
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

/// Why the hooks will not enforce the lease, in words, with the commands that fix it.
struct HooksWords {
    problem: String,
    hints: Vec<String>,
}

impl HooksWords {
    fn of(lapse: &HooksNotInForce) -> Self {
        match lapse {
            HooksNotInForce::OptedOut(lapse) => Self {
                problem: format!(
                    "hand.installHooks is false, so git-hand installed no hooks, and {}",
                    lapse.message
                ),
                hints: std::iter::once(
                    "git hand install   # installs git-hand's hooks and opts back in".to_string(),
                )
                .chain(lapse.hints.iter().cloned())
                .collect(),
            },
            HooksNotInForce::Lapsed { problem, hints } => Self {
                problem: problem.clone(),
                hints: hints.clone(),
            },
        }
    }
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
    fn of(
        s: &'a Spawned,
        env: &'a [(&'static str, String)],
        hooks: Option<&'a HooksWords>,
    ) -> Self {
        let issue = |t: &'a Tenure| IssueJson {
            issue: s.task.issue.as_deref(),
            key: &t.resource.key,
            lease_id: &t.lease_id,
            token: t.token,
            expires_at: Time::of(t.expires_at),
        };
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
                in_force: hooks.is_none(),
                problem: hooks.map(|h| h.problem.as_str()),
                hints: hooks.map(|h| h.hints.as_slice()),
            },
        }
    }
}
