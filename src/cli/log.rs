//! `git hand log`: the ledger's event log, newest first.

use clap::Args;
use serde::Serialize;

use super::output::{Time, paint, table};
use super::{Done, Failure};
use crate::clock::relative;
use crate::ledger::{Event, LeaseId};
use crate::ops::Context;
use crate::ops::lease;

#[derive(Debug, Args)]
pub struct LogArgs {
    /// How many events to show.
    #[arg(long, value_name = "n", default_value_t = 50)]
    pub limit: u32,
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
}

impl<'a> EventJson<'a> {
    fn of(e: &'a Event) -> Self {
        Self {
            id: e.id,
            at: Time(e.at),
            kind: &e.kind,
            resource: e.resource_kind.as_deref().map(|kind| ResourceJson {
                kind,
                key: e.resource_key.as_deref(),
            }),
            lease_id: e.lease_id.as_ref(),
            token: e.token,
            holder: e.holder.as_deref(),
            detail: e.detail.as_deref(),
        }
    }
}

pub fn log(ctx: &Context, args: LogArgs, json: bool) -> Result<Done, Failure> {
    let mut ledger = ctx.ledger_for_reading()?;
    let (events, now) = lease::log(&mut ledger, args.limit)?;
    if json {
        let events = events.iter().map(EventJson::of).collect();
        return Done::json(&LogJson { events }, None);
    }
    let rows: Vec<Vec<String>> = events
        .iter()
        .map(|e| {
            vec![
                relative(e.at, now),
                e.kind.clone(),
                e.resource_key.clone().unwrap_or_default(),
                e.token.map(|t| t.to_string()).unwrap_or_default(),
                e.holder.clone().unwrap_or_default(),
                e.detail.clone().unwrap_or_default(),
            ]
        })
        .collect();
    Ok(Done::ok(table(
        &["WHEN", "EVENT", "RESOURCE", "TOKEN", "HOLDER", "DETAIL"],
        &rows,
        paint(ctx),
    )))
}
