//! `git hand list`: active tasks (and done ones with `--all`) and free slots; for each active
//! task, what git says of its worktree and whether its `--exec` command still runs.
//!
//! The default table fits 100 columns for task names up to about 25 characters: the branch,
//! token, holder and issue are in `--long` (and `--json`), the path in `--paths`.

use clap::Args;
use serde::Serialize;

use super::output::{Paint, TenureJson, Time, expiry_text, paint, table};
use super::{Done, Failure};
use crate::clock::relative;
use crate::ledger::{EndReason, TaskState, Tasks, WorktreeKey};
use crate::ops::Context;
use crate::ops::claude::SessionId;
use crate::ops::task::facts::{Divergence, Facts};
use crate::ops::task::sessions::Presence;
use crate::ops::task::tasks::{self, BaseSource, ComparedWith, FreeSlot, TaskView};

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Include done tasks.
    #[arg(long)]
    pub all: bool,
    /// Add each task's directory (PATH) as the last column.
    #[arg(long)]
    pub paths: bool,
    /// Add each task's branch, token, holder and issue.
    #[arg(long, short = 'l')]
    pub long: bool,
    /// On a team ledger: only this machine's tasks (without it, every machine's tasks pushed
    /// to this repository's remote are listed too).
    #[arg(long)]
    pub here: bool,
}

/// Which columns the text shows beyond the default ones.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Columns {
    pub paths: bool,
    pub long: bool,
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
    /// The machine the task runs on: on a team ledger only.
    #[serde(skip_serializing_if = "Option::is_none")]
    machine: Option<&'a str>,
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
    /// Whether the process that spawned the task (with `--exec`: the one waiting for the
    /// command) still runs; false for a task that is not active.
    exec_running: bool,
    /// The Claude Code session whose task this is; null for any other task.
    claude: Option<ClaudeJson<'a>>,
    /// What git says of an active task's worktree; null otherwise, or when git cannot read it.
    worktree: Option<WorktreeJson<'a>>,
}

/// `list --json`'s `claude`: the session a task's holder names (`claude:<session id>:<name>`).
#[derive(Serialize)]
struct ClaudeJson<'a> {
    /// Null when Claude Code sent no session id (the slot is keyed by name alone).
    session: Option<&'a str>,
    /// The worktree name the session asked for.
    name: &'a str,
    /// `alive`, `gone` or `unknown` (see [`Presence`]); null when nothing was looked at: the
    /// task is not active, is another machine's, or its slot is not provably itself.
    process: Option<Presence>,
}

impl<'a> ClaudeJson<'a> {
    fn of(v: &'a TaskView) -> Option<Self> {
        let session = v.session.as_ref()?;
        Some(Self {
            session: session.session.as_ref().map(SessionId::as_str),
            name: &session.name,
            process: v.presence,
        })
    }
}

/// `list --json`'s `worktree`.
#[derive(Serialize)]
struct WorktreeJson<'a> {
    head: Option<&'a str>,
    dirty: bool,
    last_commit_at: Option<Time>,
    /// Against the task's base branch while it still resolves, else the default branch (the
    /// base `spawn` takes without `--base`); `source` says which. Null without either.
    base_branch: Option<Against<'a>>,
    /// Against the checked-out branch's upstream; null without one. `ahead` and `behind` are
    /// null when the upstream's ref is gone.
    upstream: Option<Against<'a>>,
}

#[derive(Serialize)]
struct Against<'a> {
    #[serde(rename = "ref")]
    name: &'a str,
    ahead: Option<u64>,
    behind: Option<u64>,
    /// For `base_branch` only: `task-base` or `default-branch`.
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<BaseSource>,
}

impl<'a> Against<'a> {
    fn of(name: &'a str, d: Option<Divergence>) -> Self {
        Self {
            name,
            ahead: d.map(|d| d.ahead),
            behind: d.map(|d| d.behind),
            source: None,
        }
    }
}

impl<'a> WorktreeJson<'a> {
    fn of(f: &'a Facts, base: Option<&'a ComparedWith>) -> Self {
        Self {
            head: f.head.as_deref(),
            dirty: f.dirty,
            last_commit_at: Time::of(f.last_commit_at),
            base_branch: base.zip(f.base).map(|(b, d)| Against {
                source: Some(b.source),
                ..Against::of(&b.name, Some(d))
            }),
            upstream: f
                .upstream
                .as_ref()
                .map(|u| Against::of(&u.name, u.divergence)),
        }
    }
}

impl<'a> TaskJson<'a> {
    fn of(v: &'a TaskView, team: bool) -> Self {
        Self {
            task: &v.task.name,
            machine: team.then_some(v.task.machine.as_str()),
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
            exec_running: v.exec_running,
            claude: ClaudeJson::of(v),
            worktree: v
                .facts
                .as_ref()
                .map(|f| WorktreeJson::of(f, v.compared_with.as_ref())),
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
    let reach = if args.here {
        tasks::Reach::Here
    } else {
        tasks::Reach::Team
    };
    let listing = tasks::list(ctx, &mut ledger, which, reach)?;
    if json {
        let team = listing.machine.is_some();
        let shape = ListJson {
            tasks: listing
                .tasks
                .iter()
                .map(|v| TaskJson::of(v, team))
                .collect(),
            free_slots: listing.free_slots.iter().map(FreeSlotJson::of).collect(),
        };
        return Done::json(&shape, None);
    }
    let columns = Columns {
        paths: args.paths,
        long: args.long,
    };
    Ok(Done::ok(render_list(&listing, columns, paint(ctx))))
}

pub(crate) fn render_list(listing: &tasks::Listing, columns: Columns, p: Paint) -> String {
    let mut out = String::new();
    if listing.tasks.is_empty() {
        out.push_str("no tasks\n");
    } else {
        let team = listing.machine.is_some();
        // A Claude Code session's task adds `CLAUDE` (and, with `--long`, `SESSION` and
        // `WORKTREE`); without one the table is as it always was.
        let sessions = has_sessions(listing);
        let mut header = vec!["TASK"];
        if team {
            header.push("MACHINE");
        }
        header.extend([
            "SLOT",
            "STATE",
            "TREE",
            "BASE",
            "UPSTREAM",
            "COMMITTED",
            "EXEC",
        ]);
        if sessions {
            header.push("CLAUDE");
        }
        header.push("LEASE");
        if columns.long {
            header.extend(["BRANCH", "TOKEN", "HOLDER", "ISSUE"]);
        }
        if columns.long && sessions {
            header.extend(["SESSION", "WORKTREE"]);
        }
        if columns.paths {
            header.push("PATH");
        }
        let rows: Vec<Vec<String>> = listing
            .tasks
            .iter()
            .map(|v| row(v, listing, columns, sessions, p))
            .collect();
        out.push_str(&table(&header, &rows, p));
    }
    let (usable, unusable): (Vec<_>, Vec<_>) =
        listing.free_slots.iter().partition(|s| s.problem.is_none());
    if !usable.is_empty() {
        let free: Vec<String> = usable.iter().map(|s| s.info.slot.n.to_string()).collect();
        out.push_str(&format!("free slots: {}\n", free.join(", ")));
    }
    for s in unusable {
        let settle = if s.repairable {
            " (git hand doctor --repair sets it aside)"
        } else {
            ""
        };
        out.push_str(&p.yellow(&format!(
            "slot {} is unusable: {}{settle}",
            s.info.slot.n,
            s.problem.as_deref().unwrap_or_default()
        )));
        out.push('\n');
    }
    out
}

/// One task's cells, in the order of the header.
fn row(
    v: &TaskView,
    listing: &tasks::Listing,
    columns: Columns,
    sessions: bool,
    p: Paint,
) -> Vec<String> {
    let now = listing.now;
    let dash = || "-".to_string();
    let lease = match &v.tenure {
        Some(t) if t.is_live(now) => expiry_text(t.expires_at, now),
        Some(t) if t.ended_at.is_none() => p.yellow(&expiry_text(t.expires_at, now)),
        Some(t) => p.dim(t.end_reason.as_deref().unwrap_or("ended")),
        None => dash(),
    };
    let f = v.facts.as_ref();
    let tree = match f {
        Some(f) if f.dirty => p.yellow("dirty"),
        Some(_) => "clean".into(),
        None => dash(),
    };
    let upstream = match f.and_then(|f| f.upstream.as_ref()) {
        Some(u) => u.divergence.map_or_else(|| "gone".into(), counts),
        None => dash(),
    };
    let mut cells = vec![v.task.name.clone()];
    if listing.machine.is_some() {
        cells.push(v.task.machine.clone());
    }
    cells.extend([
        v.slot_n.map_or_else(dash, |n| n.to_string()),
        v.task.state.to_string().to_string(),
        tree,
        f.and_then(|f| f.base).map_or_else(dash, counts),
        upstream,
        f.and_then(|f| f.last_commit_at)
            .map_or_else(dash, |at| relative(at, now)),
        if v.exec_running {
            p.green("running")
        } else {
            dash()
        },
    ]);
    if sessions {
        cells.push(match v.presence {
            Some(Presence::Alive) => p.green("alive"),
            Some(Presence::Unknown) => p.yellow("unknown"),
            Some(Presence::Gone) => "gone".into(),
            None => dash(),
        });
    }
    cells.push(lease);
    if columns.long {
        cells.extend([
            v.task.branch.clone(),
            v.tenure.as_ref().map_or_else(dash, |t| t.token.to_string()),
            // The holder names a user and a host the environment gave: shown escaped.
            crate::shown::shown(&v.task.holder).into_owned(),
            v.task.issue.clone().unwrap_or_else(dash),
        ]);
    }
    if columns.long && sessions {
        let session = v.session.as_ref();
        cells.extend([
            session
                .and_then(|s| s.session.as_ref())
                .map_or_else(dash, |id| id.to_string()),
            // The name is Claude Code's, given on the hook's stdin: shown escaped.
            session.map_or_else(dash, |s| crate::shown::shown(&s.name).into_owned()),
        ]);
    }
    if columns.paths {
        cells.push(
            v.task
                .slot_path
                .as_ref()
                .map_or_else(dash, |k| crate::shown::path(k.as_path())),
        );
    }
    cells
}

/// Whether some task listed is a Claude Code session's.
fn has_sessions(listing: &tasks::Listing) -> bool {
    listing.tasks.iter().any(|v| v.session.is_some())
}

/// "+2 -1": commits ahead, commits behind.
fn counts(d: Divergence) -> String {
    format!("+{} -{}", d.ahead, d.behind)
}
