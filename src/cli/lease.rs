//! `git hand lease acquire|renew|release|current|list` and `git hand log`.

use clap::{Args, Subcommand};
use serde::Serialize;

use super::output::{TenureJson, expiry_text, paint, table};
use super::shape::ResourceJson;
use super::{Done, Failure, Kind};
use crate::clock::{Millis, parse_ttl, relative};
use crate::hint::Hint;
use crate::ledger::{By, LeaseId, Tenure};
use crate::ops::lease::{self, Outcome, Report, issue_of};
use crate::ops::{Context, repo::names};

#[derive(Debug, Subcommand)]
pub enum LeaseCommand {
    /// Acquire an issue lease (idempotent for the same holder).
    Acquire {
        #[arg(value_name = "issue")]
        issue: String,
        #[command(flatten)]
        holder: HolderArg,
        #[command(flatten)]
        ttl: TtlArg,
    },
    /// Extend the expiry of an issue lease you hold; the token stays.
    Renew {
        #[arg(value_name = "issue")]
        issue: String,
        #[command(flatten)]
        by: ByArgs,
        #[command(flatten)]
        ttl: TtlArg,
    },
    /// Release an issue lease; releasing nothing succeeds.
    Release {
        #[arg(value_name = "issue")]
        issue: String,
        #[command(flatten)]
        by: ByArgs,
    },
    /// Show the live lease of an issue, if any.
    Current {
        #[arg(value_name = "issue")]
        issue: String,
    },
    /// List live issue leases of this repository's namespace.
    List {
        /// Every namespace in the ledger.
        #[arg(long)]
        all: bool,
    },
}

#[derive(Debug, Args)]
pub struct HolderArg {
    /// Who holds the lease [default: $GIT_HAND_HOLDER, else user@host].
    #[arg(long, value_name = "holder")]
    pub holder: Option<String>,
}

#[derive(Debug, Args)]
pub struct ByArgs {
    /// Act as this holder [default: $GIT_HAND_HOLDER, else user@host].
    #[arg(long, value_name = "holder", conflicts_with = "lease")]
    pub holder: Option<String>,
    /// Act only on the tenure with this lease id (a credential).
    #[arg(long, value_name = "lease-id")]
    pub lease: Option<String>,
}

#[derive(Debug, Args)]
pub struct TtlArg {
    /// Time to live: 90s, 30m, 2h, 1d [default: open-ended for acquire, the granted TTL for renew].
    #[arg(long, value_name = "duration", value_parser = parse_ttl)]
    pub ttl: Option<Millis>,
}

pub fn run(ctx: &Context, cmd: LeaseCommand, json: bool) -> Result<Done, Failure> {
    check(ctx, &cmd)?;
    let mut ledger = match &cmd {
        LeaseCommand::Current { .. } | LeaseCommand::List { .. } => ctx.ledger_for_reading()?,
        _ => ctx.open_ledger()?,
    };
    let report = match cmd {
        LeaseCommand::Acquire { issue, holder, ttl } => {
            let holder = ctx.holder(holder.holder.as_deref())?;
            lease::acquire(ctx, &mut ledger, &issue, &holder, ttl.ttl)?
        }
        LeaseCommand::Renew { issue, by, ttl } => {
            let holder = ctx.holder(by.holder.as_deref())?;
            let lease = by.lease.as_deref().map(names::lease_id).transpose()?;
            lease::renew(
                ctx,
                &mut ledger,
                &issue,
                by_of(lease.as_ref(), &holder),
                ttl.ttl,
            )?
        }
        LeaseCommand::Release { issue, by } => {
            let holder = ctx.holder(by.holder.as_deref())?;
            let lease = by.lease.as_deref().map(names::lease_id).transpose()?;
            lease::release(ctx, &mut ledger, &issue, by_of(lease.as_ref(), &holder))?
        }
        LeaseCommand::Current { issue } => lease::current(ctx, &mut ledger, &issue)?,
        LeaseCommand::List { all } => return list(ctx, &mut ledger, all, json),
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
fn parts(outcome: &Outcome) -> (OutcomeWord, Option<&Tenure>, Option<Kind>) {
    use OutcomeWord as W;
    match outcome {
        Outcome::Acquired { tenure, .. } => (W::Acquired, Some(tenure), None),
        Outcome::Held(t) => (W::Held, Some(t), Some(Kind::Precondition)),
        Outcome::Renewed(t) => (W::Renewed, Some(t), None),
        Outcome::NotHolder(t) => (W::NotHolder, t.as_ref(), Some(Kind::Precondition)),
        Outcome::Released(t) => (W::Released, t.as_ref(), None),
        Outcome::Current(Some(t)) => (W::Live, Some(t), None),
        Outcome::Current(None) => (W::Free, None, None),
    }
}

/// A lease verb's `outcome` in JSON, spelled by serde.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "kebab-case")]
enum OutcomeWord {
    Acquired,
    Held,
    Renewed,
    NotHolder,
    Released,
    Live,
    Free,
}

/// The JSON object of one outcome (docs/cli.md, "lease"): the tenure's fields are all null
/// when there is none; `fresh` and `superseded` are there only for `acquire`.
#[derive(Serialize)]
struct ReportJson<'a> {
    outcome: OutcomeWord,
    resource: ResourceJson<'a>,
    namespace: &'a str,
    issue: &'a str,
    #[serde(flatten)]
    tenure: TenureJson<'a>,
    #[serde(flatten)]
    acquired: Option<AcquiredJson<'a>>,
}

#[derive(Serialize)]
struct AcquiredJson<'a> {
    /// Whether this acquire made a new tenure (false: the holder already held it).
    fresh: bool,
    /// The expired tenure this one took over, if any.
    superseded: Option<TenureJson<'a>>,
}

impl<'a> ReportJson<'a> {
    fn of(r: &'a Report) -> Self {
        let (word, tenure, _) = parts(&r.outcome);
        let acquired = match &r.outcome {
            Outcome::Acquired {
                fresh, superseded, ..
            } => Some(AcquiredJson {
                fresh: *fresh,
                superseded: superseded.as_ref().map(TenureJson::of),
            }),
            _ => None,
        };
        Self {
            outcome: word,
            resource: (&r.resource).into(),
            namespace: &r.namespace,
            issue: &r.issue,
            tenure: tenure.map_or(TenureJson::NONE, TenureJson::of),
            acquired,
        }
    }
}

/// `lease list --json`: `namespace` is null with `--all`, or when this repository has none.
#[derive(Serialize)]
struct ListJson<'a> {
    namespace: Option<&'a str>,
    leases: Vec<LeaseJson<'a>>,
}

#[derive(Serialize)]
struct LeaseJson<'a> {
    resource: ResourceJson<'a>,
    namespace: &'a str,
    issue: &'a str,
    #[serde(flatten)]
    tenure: TenureJson<'a>,
}

impl<'a> LeaseJson<'a> {
    fn of(t: &'a Tenure) -> Self {
        let (namespace, issue) = t
            .resource
            .key
            .rsplit_once('#')
            .unwrap_or(("", &t.resource.key));
        Self {
            resource: (&t.resource).into(),
            namespace,
            issue,
            tenure: TenureJson::of(t),
        }
    }
}

fn render(r: &Report, json: bool) -> Result<Done, Failure> {
    let (_, _, kind) = parts(&r.outcome);
    if json {
        return Done::json(&ReportJson::of(r), kind);
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
        Outcome::Held(t) => return Err(held(r, &what, t)),
        Outcome::NotHolder(holder) => return Err(not_holder(r, &what, holder.as_ref())),
    };
    Ok(Done::with(text, kind))
}

/// `acquire` refused: someone else holds the issue.
fn held(r: &Report, what: &str, t: &Tenure) -> Failure {
    Failure::new(
        Kind::Precondition,
        format!(
            "{what} is held by {} ({}, token {})",
            t.holder,
            expiry_text(t.expires_at, r.now),
            t.token
        ),
    )
    .hint(Hint::run(format!(
        "wait for it, or ask {} to run: git hand lease release {}",
        t.holder, r.issue
    )))
}

/// `renew` or `release` refused: the caller holds no live lease on the issue (`holder`, if
/// anyone, does).
fn not_holder(r: &Report, what: &str, holder: Option<&Tenure>) -> Failure {
    match holder {
        Some(t) => Failure::new(
            Kind::Precondition,
            format!(
                "you do not hold {what}: {} does ({}, token {})",
                t.holder,
                expiry_text(t.expires_at, r.now),
                t.token
            ),
        )
        .hint(Hint::hand(format!("lease current {}", r.issue))),
        None => Failure::new(
            Kind::Precondition,
            format!("you hold no live lease on {what}; it may have expired"),
        )
        .hint(
            Hint::hand(format!("lease acquire {}", r.issue)).why("a new tenure, with a new token"),
        ),
    }
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
        let shape = ListJson {
            namespace: listing.namespace.as_deref(),
            leases: listing.leases.iter().map(LeaseJson::of).collect(),
        };
        return Done::json(&shape, None);
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
