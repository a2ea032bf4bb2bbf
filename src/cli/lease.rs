//! `git hand lease acquire|renew|release|current|list` and `git hand log`.

use clap::{Args, Subcommand};
use serde_json::{Value, json};

use super::output::{expiry_text, merge, no_tenure_json, paint, table, tenure_json};
use super::{Done, Failure, Kind};
use crate::clock::{Millis, parse_ttl, relative};
use crate::ledger::{By, LeaseId, Tenure};
use crate::ops::lease::{self, Outcome, Report, issue_of};
use crate::ops::{Context, names};

#[derive(Debug, Subcommand)]
pub enum LeaseCommand {
    /// Acquire an issue lease (idempotent for the same holder).
    Acquire {
        issue: String,
        #[command(flatten)]
        holder: HolderArg,
        #[command(flatten)]
        ttl: TtlArg,
        /// Print one JSON object (fields: docs/cli.md).
        #[arg(long)]
        json: bool,
    },
    /// Extend the expiry of an issue lease you hold; the token stays.
    Renew {
        issue: String,
        #[command(flatten)]
        by: ByArgs,
        #[command(flatten)]
        ttl: TtlArg,
        /// Print one JSON object (fields: docs/cli.md).
        #[arg(long)]
        json: bool,
    },
    /// Release an issue lease; releasing nothing succeeds.
    Release {
        issue: String,
        #[command(flatten)]
        by: ByArgs,
        /// Print one JSON object (fields: docs/cli.md).
        #[arg(long)]
        json: bool,
    },
    /// Show the live lease of an issue, if any.
    Current {
        issue: String,
        /// Print one JSON object (fields: docs/cli.md).
        #[arg(long)]
        json: bool,
    },
    /// List live issue leases of this repository's namespace.
    List {
        /// Every namespace in the ledger.
        #[arg(long)]
        all: bool,
        /// Print one JSON object (fields: docs/cli.md).
        #[arg(long)]
        json: bool,
    },
}

impl LeaseCommand {
    pub fn json(&self) -> bool {
        match self {
            LeaseCommand::Acquire { json, .. }
            | LeaseCommand::Renew { json, .. }
            | LeaseCommand::Release { json, .. }
            | LeaseCommand::Current { json, .. }
            | LeaseCommand::List { json, .. } => *json,
        }
    }
}

#[derive(Debug, Args)]
pub struct HolderArg {
    /// Who holds the lease [default: $GIT_HAND_HOLDER, else user@host].
    #[arg(long, value_name = "H")]
    pub holder: Option<String>,
}

#[derive(Debug, Args)]
pub struct ByArgs {
    /// Act as this holder [default: $GIT_HAND_HOLDER, else user@host].
    #[arg(long, value_name = "H", conflicts_with = "lease")]
    pub holder: Option<String>,
    /// Act only on the tenure with this lease id (a credential).
    #[arg(long, value_name = "ID")]
    pub lease: Option<String>,
}

#[derive(Debug, Args)]
pub struct TtlArg {
    /// Time to live: 90s, 30m, 2h, 1d [default: open-ended for acquire, the granted TTL for renew].
    #[arg(long, value_name = "DUR", value_parser = parse_ttl)]
    pub ttl: Option<Millis>,
}

pub fn run(ctx: &Context, cmd: LeaseCommand) -> Result<Done, Failure> {
    check(ctx, &cmd)?;
    let mut ledger = match &cmd {
        LeaseCommand::Current { .. } | LeaseCommand::List { .. } => ctx.ledger_for_reading()?,
        _ => ctx.open_ledger()?,
    };
    let (report, json) = match cmd {
        LeaseCommand::Acquire {
            issue,
            holder,
            ttl,
            json,
        } => {
            let holder = ctx.holder(holder.holder.as_deref())?;
            (
                lease::acquire(ctx, &mut ledger, &issue, &holder, ttl.ttl)?,
                json,
            )
        }
        LeaseCommand::Renew {
            issue,
            by,
            ttl,
            json,
        } => {
            let holder = ctx.holder(by.holder.as_deref())?;
            let lease = by.lease.as_deref().map(names::lease_id).transpose()?;
            (
                lease::renew(
                    ctx,
                    &mut ledger,
                    &issue,
                    by_of(lease.as_ref(), &holder),
                    ttl.ttl,
                )?,
                json,
            )
        }
        LeaseCommand::Release { issue, by, json } => {
            let holder = ctx.holder(by.holder.as_deref())?;
            let lease = by.lease.as_deref().map(names::lease_id).transpose()?;
            (
                lease::release(ctx, &mut ledger, &issue, by_of(lease.as_ref(), &holder))?,
                json,
            )
        }
        LeaseCommand::Current { issue, json } => (lease::current(ctx, &mut ledger, &issue)?, json),
        LeaseCommand::List { all, json } => return list(ctx, &mut ledger, all, json),
    };
    render(&report, json)
}

/// The usage errors of a lease verb, found before the ledger is opened (and maybe created): the
/// issue id, the holder, the `--lease` id, the namespace configuration and the repository's paths.
fn check(ctx: &Context, cmd: &LeaseCommand) -> Result<(), Failure> {
    let (issue, holder, by) = match cmd {
        LeaseCommand::Acquire { issue, holder, .. } => (issue, holder.holder.as_deref(), None),
        LeaseCommand::Renew { issue, by, .. } | LeaseCommand::Release { issue, by, .. } => {
            (issue, by.holder.as_deref(), Some(by))
        }
        LeaseCommand::Current { issue, .. } => {
            names::issue_id(issue)?;
            return Ok(());
        }
        LeaseCommand::List { .. } => return Ok(()),
    };
    names::issue_id(issue)?;
    if let Some(id) = by.and_then(|b| b.lease.as_deref()) {
        names::lease_id(id)?;
    }
    ctx.holder(holder)?;
    ctx.repo_to_record()?;
    lease::configured_namespace(ctx)?;
    Ok(())
}

fn by_of<'a>(lease: Option<&'a LeaseId>, holder: &'a str) -> By<'a> {
    match lease {
        Some(id) => By::Lease(id),
        None => By::Holder(holder),
    }
}

/// The outcome word, its tenure, and the exit kind.
fn parts(outcome: &Outcome) -> (&'static str, Option<&Tenure>, Option<Kind>) {
    match outcome {
        Outcome::Acquired { tenure, .. } => ("acquired", Some(tenure), None),
        Outcome::Held(t) => ("held", Some(t), Some(Kind::Precondition)),
        Outcome::Renewed(t) => ("renewed", Some(t), None),
        Outcome::NotHolder(t) => ("not-holder", t.as_ref(), Some(Kind::Precondition)),
        Outcome::Released(t) => ("released", t.as_ref(), None),
        Outcome::Current(Some(t)) => ("live", Some(t), None),
        Outcome::Current(None) => ("free", None, None),
    }
}

/// The JSON object of one outcome (docs/cli.md, "lease").
pub fn report_json(r: &Report) -> Value {
    let (word, tenure, _) = parts(&r.outcome);
    let base = json!({
        "outcome": word,
        "resource": { "kind": "issue", "key": r.resource.key },
        "namespace": r.namespace,
        "issue": r.issue,
    });
    let mut value = merge(base, tenure.map_or_else(no_tenure_json, tenure_json));
    if let Outcome::Acquired {
        fresh, superseded, ..
    } = &r.outcome
    {
        value = merge(
            value,
            json!({ "fresh": fresh, "superseded": superseded.as_ref().map(tenure_json) }),
        );
    }
    value
}

fn render(r: &Report, json: bool) -> Result<Done, Failure> {
    let (_, _, kind) = parts(&r.outcome);
    if json {
        return Ok(Done::json(&report_json(r), kind));
    }
    let what = format!("issue {} ({})", r.issue, r.namespace);
    let lease_line = |t: &Tenure| {
        format!(
            "token {}, lease {}, {}",
            t.token,
            t.lease_id,
            expiry_text(t.expires_at, r.now)
        )
    };
    let text = match &r.outcome {
        Outcome::Acquired {
            tenure,
            fresh: true,
            superseded,
        } => {
            let took = superseded
                .as_ref()
                .map(|s| format!(" (took over from {}, whose lease expired)", s.holder))
                .unwrap_or_default();
            format!(
                "acquired {what} for {}{took}: {}\n",
                tenure.holder,
                lease_line(tenure)
            )
        }
        Outcome::Acquired { tenure, .. } => {
            format!(
                "already held by {}: {what}, {}\n",
                tenure.holder,
                lease_line(tenure)
            )
        }
        Outcome::Renewed(t) => format!("renewed {what}: {}\n", lease_line(t)),
        Outcome::Released(Some(t)) => format!("released {what} (token {} stays spent)\n", t.token),
        Outcome::Released(None) => format!("{what} was not held; nothing to release\n"),
        Outcome::Current(Some(t)) => format!("{what} is held by {}: {}\n", t.holder, lease_line(t)),
        Outcome::Current(None) => format!("{what} is free\n"),
        Outcome::Held(t) => {
            return Err(Failure::new(
                Kind::Precondition,
                format!(
                    "{what} is held by {} ({}, token {})",
                    t.holder,
                    expiry_text(t.expires_at, r.now),
                    t.token
                ),
            )
            .hint(format!(
                "wait for it, or ask {} to run: git hand lease release {}",
                t.holder, r.issue
            )));
        }
        Outcome::NotHolder(Some(t)) => {
            return Err(Failure::new(
                Kind::Precondition,
                format!(
                    "you do not hold {what}: {} does ({}, token {})",
                    t.holder,
                    expiry_text(t.expires_at, r.now),
                    t.token
                ),
            )
            .hint(format!("git hand lease current {}", r.issue)));
        }
        Outcome::NotHolder(None) => {
            return Err(Failure::new(
                Kind::Precondition,
                format!("you hold no live lease on {what}; it may have expired"),
            )
            .hint(format!(
                "git hand lease acquire {}   # a new tenure, with a new token",
                r.issue
            )));
        }
    };
    Ok(Done::with(text, kind))
}

fn list(
    ctx: &Context,
    ledger: &mut crate::ledger::Ledger,
    all: bool,
    json: bool,
) -> Result<Done, Failure> {
    let which = if all {
        lease::Namespaces::All
    } else {
        lease::Namespaces::This
    };
    let listing = lease::list(ctx, ledger, which)?;
    if json {
        let leases: Vec<Value> = listing
            .leases
            .iter()
            .map(|t| {
                let (namespace, issue) = t
                    .resource
                    .key
                    .rsplit_once('#')
                    .unwrap_or(("", &t.resource.key));
                merge(
                    json!({ "resource": t.resource, "namespace": namespace, "issue": issue }),
                    tenure_json(t),
                )
            })
            .collect();
        return Ok(Done::json(
            &json!({ "namespace": listing.namespace, "leases": leases }),
            None,
        ));
    }
    if listing.leases.is_empty() {
        return Ok(Done::ok("no live issue leases\n".into()));
    }
    let rows: Vec<Vec<String>> = listing
        .leases
        .iter()
        .map(|t| {
            vec![
                issue_of(&t.resource).to_string(),
                t.holder.clone(),
                t.token.to_string(),
                relative(t.acquired_at, listing.now),
                expiry_text(t.expires_at, listing.now),
                t.lease_id.to_string(),
            ]
        })
        .collect();
    Ok(Done::ok(table(
        &["ISSUE", "HOLDER", "TOKEN", "SINCE", "EXPIRY", "LEASE"],
        &rows,
        paint(ctx),
    )))
}
