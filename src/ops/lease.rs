//! Issue leases from the command line: `git hand lease acquire|renew|release|current|list` and
//! the event log behind `git hand log`.
//!
//! The namespace of an issue is `git config hand.issueNamespace`, else the normalized origin URL
//! (so clones of one remote share issue leases), else `repo:<id>` of this repository.

use super::{Context, Result};
use crate::clock::Millis;
use crate::git::url::normalize_remote_url;
use crate::ledger::{
    self, Acquire, By, Event, Ledger, Release, Renew, Resource, ResourceKind, Tenure,
};

/// What one lease operation came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Acquired {
        tenure: Tenure,
        fresh: bool,
        superseded: Option<Tenure>,
    },
    Held(Tenure),
    Renewed(Tenure),
    NotHolder(Option<Tenure>),
    Released(Option<Tenure>),
    /// `current`: the live tenure, if any.
    Current(Option<Tenure>),
}

/// The outcome and what it was about.
#[derive(Debug, Clone)]
pub struct Report {
    pub outcome: Outcome,
    pub namespace: String,
    pub issue: String,
    pub resource: Resource,
    pub now: Millis,
}

/// The issue namespace git can tell without the ledger: config, else origin. A configured
/// namespace appears in every message about an issue lease, so one with a control or
/// bidirectional-formatting character is an error naming the key and the value.
pub fn configured_namespace(ctx: &Context) -> Result<Option<String>> {
    let repo = ctx.repo()?;
    let settings = super::settings::Settings::load(repo)?;
    if let Some(ns) = settings.issue_namespace().filter(|s| !s.trim().is_empty()) {
        if ns.chars().any(super::names::is_deceptive) {
            return Err(settings
                .bad(
                    "hand.issueNamespace",
                    "a name without control or bidirectional-formatting characters",
                    None,
                )
                .into());
        }
        return Ok(Some(ns.trim().to_string()));
    }
    Ok(repo.origin_url().map(|u| normalize_remote_url(&u)))
}

fn repo_namespace(repo: &ledger::RegisteredRepo) -> String {
    format!("repo:{}", repo.id)
}

/// Where the namespace comes from: git config/origin, or this repository's id in the ledger.
enum NamespaceSource {
    Configured(String),
    Repo { common_dir: std::path::PathBuf },
}

impl NamespaceSource {
    fn of(ctx: &Context) -> Result<Self> {
        Ok(match configured_namespace(ctx)? {
            Some(ns) => NamespaceSource::Configured(ns),
            None => NamespaceSource::Repo {
                common_dir: ctx.repo()?.loc.common_dir.clone(),
            },
        })
    }

    /// The namespace for a write: a repository without one gets registered.
    fn for_write(&self, tx: &ledger::Tx<'_>) -> ledger::Result<String> {
        match self {
            NamespaceSource::Configured(ns) => Ok(ns.clone()),
            NamespaceSource::Repo { common_dir } => {
                Ok(repo_namespace(&tx.ensure_repo(common_dir)?))
            }
        }
    }

    /// The namespace for a read: `None` when the repository was never registered (no leases).
    fn for_read(&self, view: &ledger::View<'_>) -> ledger::Result<Option<String>> {
        match self {
            NamespaceSource::Configured(ns) => Ok(Some(ns.clone())),
            NamespaceSource::Repo { common_dir } => {
                Ok(view.repo_by_dir(common_dir)?.as_ref().map(repo_namespace))
            }
        }
    }
}

/// The issue namespace of this repository, registering the repository if it needs an id.
pub fn issue_namespace(ctx: &Context, ledger: &mut Ledger) -> Result<String> {
    let source = NamespaceSource::of(ctx)?;
    match ledger.read(|v| source.for_read(v))? {
        Some(namespace) => Ok(namespace),
        None => Ok(ledger.write(|tx| source.for_write(tx))?),
    }
}

/// One write operation on an issue lease.
fn write(
    ctx: &Context,
    ledger: &mut Ledger,
    issue: &str,
    op: impl FnOnce(&ledger::Tx<'_>, &Resource) -> ledger::Result<Outcome>,
) -> Result<Report> {
    let issue = super::names::issue_id(issue)?.to_string();
    let source = NamespaceSource::of(ctx)?;
    Ok(ledger.write(|tx| {
        let namespace = source.for_write(tx)?;
        let resource = Resource::issue(&namespace, &issue);
        let outcome = op(tx, &resource)?;
        Ok(Report {
            outcome,
            namespace,
            issue,
            resource,
            now: tx.now(),
        })
    })?)
}

pub fn acquire(
    ctx: &Context,
    ledger: &mut Ledger,
    issue: &str,
    holder: &str,
    ttl: Option<Millis>,
) -> Result<Report> {
    write(ctx, ledger, issue, |tx, res| {
        Ok(match tx.acquire(res, holder, ttl)? {
            Acquire::Acquired {
                tenure,
                fresh,
                superseded,
            } => Outcome::Acquired {
                tenure,
                fresh,
                superseded,
            },
            Acquire::Held(t) => Outcome::Held(t),
        })
    })
}

pub fn renew(
    ctx: &Context,
    ledger: &mut Ledger,
    issue: &str,
    by: By<'_>,
    ttl: Option<Millis>,
) -> Result<Report> {
    write(ctx, ledger, issue, |tx, res| {
        Ok(match tx.renew(res, by, ttl)? {
            Renew::Renewed(t) => Outcome::Renewed(t),
            Renew::NotHolder(t) => Outcome::NotHolder(t),
        })
    })
}

pub fn release(ctx: &Context, ledger: &mut Ledger, issue: &str, by: By<'_>) -> Result<Report> {
    write(ctx, ledger, issue, |tx, res| {
        Ok(match tx.release(res, by)? {
            Release::Released(t) => Outcome::Released(t),
            Release::NotHolder(t) => Outcome::NotHolder(Some(t)),
        })
    })
}

pub fn current(ctx: &Context, ledger: &mut Ledger, issue: &str) -> Result<Report> {
    let issue = super::names::issue_id(issue)?.to_string();
    let source = NamespaceSource::of(ctx)?;
    Ok(ledger.read(|view| {
        let namespace = source
            .for_read(view)?
            .unwrap_or_else(|| "repo:(unregistered)".into());
        let resource = Resource::issue(&namespace, &issue);
        let outcome = Outcome::Current(view.current(&resource)?);
        Ok(Report {
            outcome,
            namespace,
            issue,
            resource,
            now: view.now(),
        })
    })?)
}

/// Which namespaces' issue leases [`list`] shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Namespaces {
    /// This repository's (`hand.issueNamespace`, else the normalized origin URL).
    This,
    All,
}

/// Live issue leases: those of this repository's namespace, or of every namespace.
pub struct IssueLeases {
    pub namespace: Option<String>,
    pub leases: Vec<Tenure>,
    pub now: Millis,
}

pub fn list(ctx: &Context, ledger: &mut Ledger, which: Namespaces) -> Result<IssueLeases> {
    let source = if which == Namespaces::All {
        None
    } else {
        Some(NamespaceSource::of(ctx)?)
    };
    Ok(ledger.read(|view| {
        let namespace = match &source {
            Some(source) => source.for_read(view)?,
            None => None,
        };
        let leases = match (&namespace, which) {
            (_, Namespaces::All) => view.list(ResourceKind::Issue, "")?,
            (Some(ns), Namespaces::This) => view.list(ResourceKind::Issue, &format!("{ns}#"))?,
            (None, Namespaces::This) => vec![],
        };
        Ok(IssueLeases {
            namespace,
            leases,
            now: view.now(),
        })
    })?)
}

/// The newest `limit` events of the ledger.
pub fn log(ledger: &mut Ledger, limit: u32) -> Result<(Vec<Event>, Millis)> {
    Ok(ledger.read(|view| Ok((view.events(limit)?, view.now())))?)
}

/// The issue id part of an issue resource key.
pub fn issue_of(resource: &Resource) -> &str {
    resource
        .key
        .rsplit_once('#')
        .map_or(resource.key.as_str(), |(_, id)| id)
}
