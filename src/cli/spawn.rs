//! `git hand spawn`.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::process::{ExitCode, ExitStatus};

use clap::Args;
use serde::Serialize;

use super::output::{Time, Vars, expiry_text, paint, say};
use super::shape::{CopiedJson, NotCopiedJson, SkippedJson, each};
use super::{Done, Failure};
use crate::clock::{Millis, parse_ttl};
use crate::hint::Hint;
use crate::ledger::{LeaseId, Tenure};
use crate::ops::repo::include::{Copying, How, Included, NotCopied, Reason};
use crate::ops::task::exec::{self, RenewalTrouble};
use crate::ops::task::spawn::{self, HooksNotInForce, Progress, SlotSource, SpawnOptions, Spawned};
use crate::ops::{Context, fence::credential_push};
use crate::platform::exit_status;

#[derive(Debug, Args)]
pub struct SpawnArgs {
    /// Task name: 1 to 64 of A-Z a-z 0-9 . _ - (not starting with '-' or '.')
    #[arg(value_name = "task")]
    pub task: String,
    /// Commit to start from [default: the default branch, local or origin, whichever is ahead].
    #[arg(long, value_name = "ref")]
    pub base: Option<String>,
    /// Branch for the task [default: hand/<task>]; an existing branch only when named here.
    #[arg(long, value_name = "branch")]
    pub branch: Option<String>,
    /// Also lease this issue; if it is held, nothing is created.
    #[arg(long, value_name = "issue")]
    pub issue: Option<String>,
    /// Who holds the lease [default: $GIT_HAND_HOLDER, else user@host].
    #[arg(long, value_name = "holder")]
    pub holder: Option<String>,
    /// Lease time to live (90s, 30m, 2h, 1d) [default: open-ended].
    #[arg(long, value_name = "duration", value_parser = parse_ttl)]
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
    #[arg(last = true, value_name = "command", requires = "exec")]
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
        offer_no_setup: true,
    };
    let on_terminal = std::io::stderr().is_terminal();
    let progress = |busy: Progress<'_>| match busy {
        Progress::Setup(event) => super::setup::show(&args.task, event),
        _ if on_terminal => say(progress_line(busy)),
        _ => {}
    };
    // Every usage error is found before the ledger is opened (and maybe created).
    let checked = spawn::check(ctx, &opts, &progress)?;
    // Read before anything is leased: a bad value must not leave a task behind unrun, nor a
    // JSON credential that a remote with the fence would refuse. Plain text hands out no
    // credential (it points at `git hand env`), so it does not read it.
    let carried = (args.exec || json) && credential_push::carried(ctx.repo()?)?;
    let mut ledger = ctx.open_ledger()?;
    let s = spawn::spawn(ctx, &mut ledger, &opts, checked, &progress)?;
    let env = credential_push::environment(&s.task, &s.tenure, carried);
    let hooks = s.hooks_problem.as_ref().map(HooksWords::of);
    if let Some(HooksWords { problem, hints }) = &hooks {
        // Loud on purpose: without the hooks a zombie's push goes through.
        say([format!("WARNING: this lease is NOT enforced: {problem}")]);
        say(hints.iter().map(|hint| format!("  fix: {hint}")));
    }
    if !json {
        // `--print-path` keeps stderr to warnings: only the copies that failed.
        say(included_lines(&s.included, args.print_path));
    }
    if args.exec {
        let warn = |trouble: RenewalTrouble| say([trouble_line(trouble)]);
        let status = exec::run(&s, &args.command, &env, &ledger.place(), &warn)?;
        if !status.success() {
            say(exec_failed_lines(&s, &args.command, status));
        }
        return Ok(Done {
            stdout: String::new(),
            code: ExitCode::from(exit_status::exit_code(status)),
        });
    }
    if json {
        let push_options = if carried {
            credential_push::push_options(&s.task, &s.tenure).to_vec()
        } else {
            vec![]
        };
        let shape = SpawnJson::of(&s, &env, &push_options, hooks.as_ref());
        return Done::json(&shape, None);
    }
    if !args.print_path {
        say_spawned(ctx, &s);
    }
    Ok(Done {
        stdout: format!("{}\n", s.path.display()),
        code: ExitCode::SUCCESS,
    })
}

/// What spawn is busy with, on a terminal, while it waits on git or copies (a copy only when
/// it is large).
fn progress_line(busy: Progress<'_>) -> Option<String> {
    match busy {
        Progress::FetchingOrigin => Some("fetching origin...".to_string()),
        Progress::CreatingSlot(path) => Some(format!("creating slot {}...", path.display())),
        Progress::Including(at) => including_line(at),
        // Shown whatever stderr is, by `super::setup::show`.
        Progress::Setup(_) => None,
    }
}

/// A copy shows a line only from this size (or [`LARGE_FILES`] files) on: a small one is over
/// before a line could help.
const LARGE_BYTES: u64 = 64 << 20;
const LARGE_FILES: u64 = 10_000;

/// `including node_modules/ (34512 files, 1.1 GiB; 0 B of 1.2 GiB done)...`, for a large copy.
fn including_line(at: Copying<'_>) -> Option<String> {
    (at.total_bytes >= LARGE_BYTES || at.total_files >= LARGE_FILES).then(|| {
        format!(
            "including {} ({}, {}; {} of {} done)...",
            at.path,
            files(at.files),
            size(at.bytes),
            size(at.done_bytes),
            size(at.total_bytes)
        )
    })
}

/// What `hand.include` copied, in one line, and what it did not, in another; with
/// `failures_only`, only the copies that failed.
fn included_lines(included: &Included, failures_only: bool) -> Vec<String> {
    let mut lines = Vec::new();
    let copied = &included.copied;
    if !copied.is_empty() && !failures_only {
        let count: u64 = copied.iter().map(|c| c.files).sum();
        let bytes: u64 = copied.iter().map(|c| c.bytes).sum();
        let how = if copied.iter().all(|c| c.how == How::Reflink) {
            "reflinked"
        } else {
            "copied"
        };
        let paths: Vec<_> = copied
            .iter()
            .map(|c| crate::shown::shown(&c.path))
            .collect();
        lines.push(format!(
            "included {} ({}, {}, {how})",
            paths.join(", "),
            files(count),
            size(bytes)
        ));
    }
    const SHOWN: usize = 8;
    let skipped: Vec<&NotCopied> = (included.skipped.iter())
        .filter(|n| !failures_only || n.reason == Reason::Failed)
        .collect();
    if !skipped.is_empty() {
        let mut why: Vec<String> = skipped
            .iter()
            .take(SHOWN)
            .map(|n| not_included(n))
            .collect();
        if skipped.len() > SHOWN {
            why.push(format!("{} more", skipped.len() - SHOWN));
        }
        lines.push(format!("not included: {}", why.join("; ")));
    }
    lines
}

/// `config.local (tracked)`, `.env.shared (a symlink out of the main worktree: /etc/x)`.
fn not_included(n: &NotCopied) -> String {
    let why = match n.reason {
        Reason::Tracked => "tracked: the checkout has it",
        Reason::NotIgnored => "not ignored by git: add it to .gitignore to include it",
        Reason::SymlinkOutside => "a symlink out of the main worktree",
        Reason::InSlot => "the slot already has it",
        Reason::Failed => "failed",
    };
    // A path and a link's target are file names from the repository: shown escaped.
    let path = crate::shown::shown(&n.path);
    match &n.detail {
        Some(detail) => format!("{path} ({why}: {})", crate::shown::shown(detail)),
        None => format!("{path} ({why})"),
    }
}

/// `1 file`, `3 files`.
fn files(n: u64) -> String {
    if n == 1 {
        "1 file".to_string()
    } else {
        format!("{n} files")
    }
}

/// `512 B`, `3.4 KiB`, `1.1 GiB`.
fn size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// What spawn says when `--exec`'s command failed: the task outlives its command, so a user who
/// saw only the command's own failure would not know the slot is still leased.
fn exec_failed_lines(s: &Spawned, command: &[OsString], status: ExitStatus) -> [String; 2] {
    let program = command
        .first()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let how = exit_status::how_it_ended(status);
    [
        format!(
            "the command {program} {how}; task {} stays active in slot {} ({})",
            s.task.name,
            s.slot_n,
            s.path.display()
        ),
        format!(
            "  next: git hand teardown {}   # end the task and free its slot",
            s.task.name
        ),
    ]
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
pub(super) struct HooksWords {
    pub(super) problem: String,
    pub(super) hints: Vec<String>,
}

impl HooksWords {
    pub(super) fn of(lapse: &HooksNotInForce) -> Self {
        match lapse {
            HooksNotInForce::OptedOut(lapse) => Self {
                problem: format!(
                    "hand.installHooks is false, so git-hand installed no hooks, and {}",
                    lapse.message
                ),
                hints: super::hint::lines(
                    &std::iter::once(
                        Hint::hand("install").why("installs git-hand's hooks and opts back in"),
                    )
                    .chain(lapse.hints.iter().cloned())
                    .collect::<Vec<_>>(),
                ),
            },
            HooksNotInForce::Lapsed { problem, hints } => Self {
                problem: problem.clone(),
                hints: super::hint::lines(hints),
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
    skipped: Vec<SkippedJson<'a>>,
    included: Vec<CopiedJson<'a>>,
    not_included: Vec<NotCopiedJson<'a>>,
    /// The variables `--exec` sets: the credential, and with `hand.remoteFence` the push
    /// options as configuration entries after those spawn's own environment carries.
    env: Vars<'a, String>,
    /// `hand.lease=<id>`, `hand.token=<n>`, `hand.task=<name>` with `hand.remoteFence`, else
    /// empty: for a program that builds its environment afresh or pushes with `-o`.
    push_options: &'a [String],
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
        env: &'a [(String, String)],
        push_options: &'a [String],
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
            skipped: each(&s.skipped),
            included: each(&s.included.copied),
            not_included: each(&s.included.skipped),
            env: Vars(env),
            push_options,
            hooks: HooksJson {
                in_force: hooks.is_none(),
                problem: hooks.map(|h| h.problem.as_str()),
                hints: hooks.map(|h| h.hints.as_slice()),
            },
        }
    }
}
