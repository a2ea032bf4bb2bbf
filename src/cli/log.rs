//! `git hand log`: the ledger's event log, newest first.

use clap::Args;
use serde_json::{Value, json};

use super::output::{paint, table, time_json};
use super::{Done, Failure};
use crate::clock::relative;
use crate::ops::Context;
use crate::ops::lease;

#[derive(Debug, Args)]
pub struct LogArgs {
    /// How many events to show.
    #[arg(long, default_value_t = 50)]
    pub limit: u32,
    /// Print one JSON object (fields: docs/cli.md).
    #[arg(long)]
    pub json: bool,
}

pub fn log(ctx: &Context, args: LogArgs) -> Result<Done, Failure> {
    let mut ledger = ctx.ledger_for_reading()?;
    let (events, now) = lease::log(&mut ledger, args.limit)?;
    if args.json {
        let events: Vec<Value> = events
            .iter()
            .map(|e| {
                json!({
                    "id": e.id, "at": time_json(Some(e.at)), "kind": e.kind,
                    "resource": e.resource_kind.as_ref().map(|k| json!({ "kind": k, "key": e.resource_key })),
                    "lease_id": e.lease_id, "token": e.token, "holder": e.holder, "detail": e.detail,
                })
            })
            .collect();
        return Ok(Done::json(&json!({ "events": events }), None));
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
