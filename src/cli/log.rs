//! `git hand log`: the ledger's event log, newest first: this repository's events unless
//! `--all-repos`, a task's with `--task`. A slot is shown by its number, so a row fits a
//! terminal; `--json` keeps the path and adds the number.

use clap::Args;
use serde::Serialize;

use super::output::{Time, paint, table};
use super::{Done, Failure};
use crate::clock::relative;
use crate::hint::Hint;
use crate::ledger::{LeaseId, LoggedEvent};
use crate::ops::Context;
use crate::ops::lease::{self, LogQuery, Namespaces};

#[derive(Debug, Args)]
pub struct LogArgs {
    /// How many events to show.
    #[arg(short = 'n', long = "limit", value_name = "n", default_value_t = 50)]
    pub limit: u32,
    /// Only the events of the task of this name (every task that had the name).
    #[arg(long, value_name = "task")]
    pub task: Option<String>,
    /// Every repository's events, not only this one's.
    #[arg(long)]
    pub all_repos: bool,
}

/// `log --json`: `{"events": [...]}`, newest first.
#[derive(Serialize)]
struct LogJson<'a> {
    events: Vec<EventJson<'a>>,
}

#[derive(Serialize)]
struct EventJson<'a> {
    id: i64,
    at: Time,
    kind: &'a str,
    /// Null for an event about no resource.
    resource: Option<ResourceJson<'a>>,
    lease_id: Option<&'a LeaseId>,
    token: Option<i64>,
    holder: Option<&'a str>,
    detail: Option<&'a str>,
}

#[derive(Serialize)]
struct ResourceJson<'a> {
    kind: &'a str,
    key: Option<&'a str>,
    /// The pool slot's number, when the resource is one (null otherwise).
    slot: Option<i64>,
}

impl<'a> EventJson<'a> {
    fn of(logged: &'a LoggedEvent) -> Self {
        let e = &logged.event;
        Self {
            id: e.id,
            at: Time(e.at),
            kind: &e.kind,
            resource: e.resource_kind.as_deref().map(|kind| ResourceJson {
                kind,
                key: e.resource_key.as_deref(),
                slot: logged.slot,
            }),
            lease_id: e.lease_id.as_ref(),
            token: e.token,
            holder: e.holder.as_deref(),
            detail: e.detail.as_deref(),
        }
    }
}

pub fn log(ctx: &Context, args: LogArgs, json: bool) -> Result<Done, Failure> {
    let repos = if args.all_repos {
        Namespaces::All
    } else {
        // Refused before any ledger is opened, as every verb that needs a repository is.
        ctx.repo().map_err(|e| {
            e.with_hint(Hint::hand("log --all-repos").why("every repository's events"))
        })?;
        Namespaces::This
    };
    let mut ledger = ctx.ledger_for_reading()?;
    let query = LogQuery {
        repos,
        task: args.task.as_deref(),
        limit: args.limit,
    };
    let logged = lease::log(ctx, &mut ledger, query)?;
    if json {
        let events = logged.events.iter().map(EventJson::of).collect();
        return Done::json(&LogJson { events }, None);
    }
    let rows: Vec<Vec<String>> = logged
        .events
        .iter()
        .map(|l| {
            let e = &l.event;
            vec![
                relative(e.at, logged.now),
                e.kind.clone(),
                // A holder, a key and a detail may come from a pusher or a repository: shown
                // escaped (`crate::shown`).
                crate::shown::shown(&resource_text(l, repos)).into_owned(),
                e.token.map(|t| t.to_string()).unwrap_or_default(),
                crate::shown::shown(e.holder.as_deref().unwrap_or_default()).into_owned(),
                crate::shown::shown(e.detail.as_deref().unwrap_or_default()).into_owned(),
            ]
        })
        .collect();
    Ok(Done::ok(table(
        &["WHEN", "EVENT", "RESOURCE", "TOKEN", "HOLDER", "DETAIL"],
        &rows,
        paint(ctx),
    )))
}

/// The resource as a row shows it: `slot 3` (`app slot 3` beside other repositories' slots),
/// `issue 7` (its whole key beside other namespaces'), any other worktree by its path.
fn resource_text(l: &LoggedEvent, scope: Namespaces) -> String {
    let e = &l.event;
    let key = e.resource_key.as_deref().unwrap_or_default();
    match (l.slot, e.resource_kind.as_deref(), scope) {
        (Some(n), _, Namespaces::This) => format!("slot {n}"),
        (Some(n), _, Namespaces::All) => {
            // A slot's path ends in the repository's directory name.
            let repo = std::path::Path::new(key).file_name().unwrap_or_default();
            format!("{} slot {n}", repo.to_string_lossy())
        }
        (None, Some("issue"), Namespaces::This) => match key.rsplit_once('#') {
            Some((_, id)) => format!("issue {id}"),
            None => key.to_string(),
        },
        _ => key.to_string(),
    }
}
