//! Issue leases from the command line: `git hand lease acquire|renew|release|current|list` and
//! the event log behind `git hand log`.
//!
//! The namespace of an issue is `git config hand.issueNamespace`, else the normalized origin URL
//! (so clones of one remote share issue leases), else `repo:<id>` of this repository.

use super::{Context, Result};
use crate::clock::Millis;
use crate::git::url::normalize_remote_url;
use crate::ledger::{
    self, Acquire, By, Durability, EventScope, Idempotent, Ledger, LoggedEvent, Release, Renew,
    RepoEvents, Resource, ResourceKind, Retry, Tenure, WorktreeKey,
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
pub(crate) fn configured_namespace(ctx: &Context) -> Result<Option<String>> {
    let repo = ctx.repo()?;
    let settings = super::repo::settings::Settings::load(repo)?;
    if let Some(ns) = settings.issue_namespace().filter(|s| !s.trim().is_empty()) {
        if ns.chars().any(super::repo::names::is_deceptive) {
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

pub(crate) fn repo_namespace(id: &ledger::RepoId) -> String {
    format!("repo:{id}")
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
                Ok(repo_namespace(&tx.ensure_repo(common_dir)?.id))
            }
        }
    }

    /// The namespace for a read: `None` when the repository was never registered (no leases).
    fn for_read(&self, view: &ledger::View<'_>) -> ledger::Result<Option<String>> {
        match self {
            NamespaceSource::Configured(ns) => Ok(Some(ns.clone())),
            NamespaceSource::Repo { common_dir } => {
                Ok(view.repo_by_dir(common_dir)?.map(|r| repo_namespace(&r.id)))
            }
        }
    }
}

/// One write operation on an issue lease, run a second time on a new connection if the team
/// ledger's connection breaks: each caller says why that is safe (`why`). The repository's
/// registration in the same transaction finds the row the first run made, if it committed.
fn write(
    ctx: &Context,
    ledger: &mut Ledger,
    issue: &str,
    why: Idempotent,
    op: impl Fn(&ledger::Tx<'_>, &Resource) -> ledger::Result<Outcome>,
) -> Result<Report> {
    let issue = super::repo::names::issue_id(issue)?.to_string();
    let source = NamespaceSource::of(ctx)?;
    Ok(ledger
        .write_with(Durability::Durable, Retry::Once(why), |tx| {
            let namespace = source.for_write(tx)?;
            let resource = Resource::issue(&namespace, &issue);
            let outcome = op(tx, &resource)?;
            Ok(Report {
                outcome,
                namespace,
                issue: issue.clone(),
                resource,
                now: tx.now(),
            })
        })
        .map(|(out, _)| out)?)
}

pub fn acquire(
    ctx: &Context,
    ledger: &mut Ledger,
    issue: &str,
    holder: &str,
    ttl: Option<Millis>,
) -> Result<Report> {
    // One holder's acquire run twice is one acquire: the second run finds the first's tenure
    // (if it committed) and returns it, same lease id and token, `fresh: false`. A holder
    // whose TTL ran out while the connection was remade gets a new token, but nobody was ever
    // told the first one.
    write(
        ctx,
        ledger,
        issue,
        Idempotent::AcquireBySameHolder,
        |tx, res| {
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
        },
    )
}

pub fn renew(
    ctx: &Context,
    ledger: &mut Ledger,
    issue: &str,
    by: By<'_>,
    ttl: Option<Millis>,
) -> Result<Report> {
    // A second renewal sets the expiry again, from the server's later now.
    write(ctx, ledger, issue, Idempotent::Renew, |tx, res| {
        Ok(match tx.renew(res, by, ttl)? {
            Renew::Renewed(t) => Outcome::Renewed(t),
            Renew::NotHolder(t) => Outcome::NotHolder(t),
        })
    })
}

pub fn release(ctx: &Context, ledger: &mut Ledger, issue: &str, by: By<'_>) -> Result<Report> {
    // A release whose first run committed finds nothing of the caller's the second time, and
    // says so (released nothing), or by lease id the tenure it released (even when another
    // holder acquired the issue meanwhile); a lease id never ends another tenure.
    write(ctx, ledger, issue, Idempotent::Release, |tx, res| {
        Ok(match tx.release(res, by)? {
            Release::Released(t) => Outcome::Released(t),
            Release::NotHolder(t) => Outcome::NotHolder(Some(t)),
        })
    })
}

pub fn current(ctx: &Context, ledger: &mut Ledger, issue: &str) -> Result<Report> {
    let issue = super::repo::names::issue_id(issue)?.to_string();
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
            issue: issue.clone(),
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

/// What `git hand log` reads.
#[derive(Debug, Clone, Copy)]
pub struct LogQuery<'a> {
    /// This repository's events (about its slots, its tasks' worktrees, the worktrees git
    /// lists for it and the issues of its namespace), or every event of the ledger (a
    /// migration's too).
    pub repos: Namespaces,
    /// Only the events of the tasks of this name.
    pub task: Option<&'a str>,
    pub limit: u32,
}

/// The events found, newest first, and the instant they were read at.
pub struct Logged {
    pub events: Vec<LoggedEvent>,
    pub now: Millis,
}

/// The event log, scoped: one read snapshot. A task name the ledger never saw is an error, so a
/// typo does not read as "nothing happened".
pub fn log(ctx: &Context, ledger: &mut Ledger, q: LogQuery<'_>) -> Result<Logged> {
    let this = match q.repos {
        Namespaces::This => Some(ThisRepo::of(ctx)?),
        Namespaces::All => None,
    };
    let (found, now) = ledger.read(|view| {
        let events = scoped_events(view, this.as_ref(), q)?;
        Ok((events, view.now()))
    })?;
    match found {
        Some(events) => Ok(Logged { events, now }),
        // Only a task can be missing.
        None => Err(no_such_task(q.task.unwrap_or_default(), q.repos)),
    }
}

/// The events `q` asks for; `None` when its task is not in the ledger (in this repository).
fn scoped_events(
    view: &ledger::View<'_>,
    this: Option<&ThisRepo>,
    q: LogQuery<'_>,
) -> ledger::Result<Option<Vec<LoggedEvent>>> {
    // A repository the ledger never registered may still have issue leases in its namespace.
    let repo = match this {
        Some(this) => Some((view.repo_by_dir(&this.common_dir)?, this)),
        None => None,
    };
    if let Some(name) = q.task {
        let leases = match &repo {
            Some((None, _)) => None,
            Some((Some(registered), _)) => view.task_leases(name, Some(&registered.id))?,
            None => view.task_leases(name, None)?,
        };
        let Some(leases) = leases else {
            return Ok(None);
        };
        return Ok(Some(view.events_in(&EventScope::Leases(&leases), q.limit)?));
    }
    let Some((registered, this)) = repo else {
        return Ok(Some(view.events_in(&EventScope::All, q.limit)?));
    };
    let namespace = this.namespace.for_read(view)?;
    // Keyed as this machine's (a team ledger qualifies a worktree by its machine).
    let worktrees: Vec<String> = this
        .worktrees
        .iter()
        .map(|path| view.worktree(&WorktreeKey::from_canonical(path)).key)
        .collect();
    let scope = EventScope::Repo(RepoEvents {
        repo_id: registered.as_ref().map(|r| &r.id),
        issue_namespace: namespace.as_deref(),
        worktrees: &worktrees,
    });
    Ok(Some(view.events_in(&scope, q.limit)?))
}

/// What ties events to this repository, read from git before the ledger is.
struct ThisRepo {
    common_dir: std::path::PathBuf,
    namespace: NamespaceSource,
    /// Every worktree git lists, the main one included (a refused push from it is logged there).
    worktrees: Vec<std::path::PathBuf>,
}

impl ThisRepo {
    fn of(ctx: &Context) -> Result<Self> {
        let repo = ctx.repo()?;
        // A worktree git cannot list any more is still named by its task, if it had one.
        let mut worktrees: Vec<std::path::PathBuf> = repo
            .linked_worktrees()
            .map(|all| {
                let paths = all.into_iter().filter(|w| w.exists);
                paths.map(|w| w.path).collect()
            })
            .unwrap_or_default();
        worktrees.extend(repo.main_workdir());
        Ok(Self {
            common_dir: repo.loc.common_dir.clone(),
            namespace: NamespaceSource::of(ctx)?,
            worktrees,
        })
    }
}

fn no_such_task(name: &str, repos: Namespaces) -> super::Error {
    super::task::TaskError::NotInLog {
        name: name.to_string(),
        this_repo: repos == Namespaces::This,
    }
    .into()
}

/// The issue id part of an issue resource key.
pub(crate) fn issue_of(resource: &Resource) -> &str {
    resource
        .key
        .rsplit_once('#')
        .map_or(resource.key.as_str(), |(_, id)| id)
}
