//! What git-hand decides when git runs one of its hooks (the hook files themselves are
//! [`crate::hooks`]). `pre-push` judges the pushing worktree's credential and fences task
//! branches; `post-checkout` warns in a slot whose lease ended, records the branch of a leased
//! slot, and registers (or, with `hand.adoptWorktrees`, leases) a worktree made by a plain
//! `git worktree add`. Nothing here prints: the CLI turns decisions into `git-hand:` lines.
//!
//! The allow path of pre-push is one ledger read and no write. Every refusal is appended to the
//! event log. A ledger that cannot be read refuses: the hook is a seatbelt and fails closed. One
//! exception: a team ledger whose server cannot be reached, for a push from a worktree that no
//! lease names (no stamp, no credential in the environment), allows it unchecked
//! ([`PrePush::unchecked`]), so a team's server being down does not stop pushes git-hand has
//! nothing to say about; a push from a slot is still refused.
//!
//! A room of `ops` (issue 26): with its children, what each git hook decides: pre-push and
//! post-checkout here, reference-transaction (`ref_fence`), the server's pre-receive
//! (`pre_receive`), and the adoption of a plain `git worktree add` (`adopt`).
//!
//! `check`, `status` and `git hand` itself also ask `hooks::in_force`; the hook never does, so its
//! allow path stays one ledger read.

use std::path::PathBuf;

use super::fence::verdict::{self, Finding, Verdict};
use super::{Context, Result, fence, pool::stamp};
use crate::hint::Hint;
use crate::ledger::{EventKind, Ledger, LedgerError, Resource, Task, Tenure, WorktreeKey};

pub mod adopt;
mod error;
pub mod pre_receive;
pub mod ref_fence;

pub use error::OnHookError;

/// One line of pre-push stdin: `<local ref> <local oid> <remote ref> <remote oid>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushedRef {
    pub local_ref: String,
    pub local_oid: String,
    pub remote_ref: String,
    pub remote_oid: String,
}

/// Parses pre-push stdin; malformed lines are errors, because a hook that cannot tell what is
/// being pushed must refuse. Both object names must be full hex object ids (sha1 or sha256).
pub(crate) fn parse_push_lines(stdin: &str) -> std::result::Result<Vec<PushedRef>, String> {
    stdin
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let parts: Vec<&str> = line.split_whitespace().collect();
            match parts.as_slice() {
                [local_ref, local_oid, remote_ref, remote_oid]
                    if is_object_name(local_oid) && is_object_name(remote_oid) =>
                {
                    Ok(PushedRef {
                        local_ref: local_ref.to_string(),
                        local_oid: local_oid.to_string(),
                        remote_ref: remote_ref.to_string(),
                        remote_oid: remote_oid.to_string(),
                    })
                }
                _ => Err(format!("unexpected pre-push input line {line:?}")),
            }
        })
        .collect()
}

/// A full object id as git prints it: 40 (sha1) or 64 (sha256) hex digits.
pub(super) fn is_object_name(oid: &str) -> bool {
    matches!(oid.len(), 40 | 64) && oid.bytes().all(|b| b.is_ascii_hexdigit())
}

/// An all-zero object id (sha1 or sha256 length): "no commit".
pub(crate) fn is_null_oid(oid: &str) -> bool {
    matches!(oid.len(), 40 | 64) && oid.bytes().all(|b| b == b'0')
}

/// Why a push was refused, with the facts for the message.
#[derive(Debug, Clone)]
pub enum Refusal {
    /// The worktree's credential is not current.
    Verdict(Box<Finding>),
    /// The push updates the branch of a live task from outside that task's lease.
    Branch {
        branch: String,
        task: Box<Task>,
        tenure: Box<Tenure>,
    },
    /// Only the reference-transaction hook decides it: the transaction moves `name`, another
    /// worktree's HEAD or per-worktree ref (`worktrees/<id>/HEAD`, `main-worktree/HEAD`, ...).
    Worktree { name: String },
    /// Only the server's pre-receive decides it: the push updates a branch that matches one of
    /// the server's `hand.requireLease` patterns without a current lease of a task of this
    /// repository. `presented`: the task of the current lease the push presented, which is
    /// another repository's (`None`: it presented no lease).
    LeaseRequired {
        branch: String,
        pattern: String,
        presented: Option<Box<Task>>,
    },
}

/// The outcome of pre-push (`Default`: allowed, nothing found).
#[derive(Debug, Clone, Default)]
pub struct PrePush {
    pub refusal: Option<Refusal>,
    pub finding: Option<Finding>,
    /// Where the work is, for the "how to keep it" advice.
    pub head_branch: Option<String>,
    pub head_oid: Option<String>,
    /// The presenter's own work, for a refusal of its credential (issue 22).
    pub own: OwnWork,
    pub now: i64,
    /// Allowed without a check: why the team ledger could not be asked (the CLI warns).
    pub unchecked: Option<String>,
}

/// Judges a push from the worktree of `ctx` to the remote at `url` (the hook's second
/// argument; `None` when git gave none), and records a refusal.
pub fn pre_push(ctx: &Context, url: Option<&str>, refs: &[PushedRef]) -> Result<PrePush> {
    // The branches the remote would see updated, each looked up once.
    let branches = fence::branches(refs.iter().map(|r| r.remote_ref.as_str()));
    let subject = verdict::Subject::of(ctx)?;
    // git resolves a relative local path from the worktree it pushes from, where the hook runs.
    let remote = || url.map(|u| fence::pushed_remote(u, &ctx.cwd));
    let (out, ledger) = match decide(ctx, &subject, remote, &branches) {
        Err(e)
            if subject.stamp.is_none()
                && super::fence::credential::env_credential(ctx.env()).is_none()
                && !in_a_pool(ctx, &subject.key) =>
        {
            match unreachable_server(&e) {
                Some(why) => return Ok(PrePush::unchecked(why)),
                None => return Err(e),
            }
        }
        decided => decided?,
    };
    if let (Some(refusal), Some(finding), Some(mut ledger)) = (&out.refusal, &out.finding, ledger) {
        record_refusal(
            &mut ledger,
            finding,
            refusal,
            &subject.key,
            Said::Push,
            None,
        )?;
    }
    Ok(out)
}

/// Whether `workdir` lies in this repository's pool: a slot whose stamp is gone (deleted by
/// the agent in it, say) is still a slot, and with the ledger unreachable its push is refused
/// like any slot's instead of going on unchecked. A pool root that cannot be worked out counts
/// as no pool.
fn in_a_pool(ctx: &Context, workdir: &WorktreeKey) -> bool {
    let Ok(repo) = ctx.repo() else {
        return false;
    };
    super::pool::root(repo, ctx.env())
        .ok()
        .and_then(|root| std::fs::canonicalize(root).ok())
        .is_some_and(|root| std::path::Path::new(workdir.as_str()).starts_with(root))
}

/// What a refusal names as the presenter's own work (issue 22). Once its slot was leased again,
/// the worktree's HEAD is on the new holder's branch: "your commits are safe in local branch
/// hand/b" named the new holder's work as the zombie's, and offered its tip as the rescue base.
#[derive(Debug, Clone, Default)]
pub struct OwnWork {
    /// The commits the presenter's lease was refused moving a ref to (its `ref-update-refused`
    /// events), oldest first: they are on no branch, so only their object ids name them.
    pub refused: Vec<String>,
    /// The presenter's task's branch and its tip, when it exists here and no other open task
    /// has it (a task spawned again under the same name has the same branch).
    pub branch: Option<(String, String)>,
    /// HEAD's branch and the other open task whose branch it is (the slot's holder now): never
    /// named as the presenter's.
    pub head_theirs: Option<(String, String)>,
    /// The presenter's rescue task name that no open task and no branch has yet:
    /// `<task>-rescue`, else `<task>-rescue-2`, ... (`None`: the presenter's task is unknown).
    pub rescue: Option<String>,
}

/// Marks the refused commit in a `ref-update-refused` event's detail, where [`own_work`] reads it.
const REFUSED_COMMIT: &str = "; refused commit ";

/// How many of a lease's refused commits a refusal names (the newest).
const REFUSED_SHOWN: usize = 5;

/// How many rescue names [`free_rescue`] tries before it gives up on finding a free one.
const RESCUE_TRIES: u32 = 100;

/// Works out [`OwnWork`] for a refusal of `f`'s credential: a refusal's path only (reads the
/// ledger and refs; the allow path never comes here). No transaction stays open across a read
/// of git's refs.
fn own_work(
    repo: &crate::git::Repo,
    ledger: &mut Ledger,
    f: &Finding,
    head_branch: Option<&str>,
) -> Result<OwnWork> {
    let presenter = f.task.as_ref();
    let common = &repo.loc.common_dir;
    let (refused, others) = ledger.read(|v| {
        let mut refused: Vec<String> = vec![];
        if let Some(t) = &f.tenure {
            for e in v.events_of_lease(&t.lease_id)? {
                let commit = e
                    .detail
                    .as_deref()
                    .filter(|_| e.kind == EventKind::RefUpdateRefused.to_string())
                    .and_then(|d| d.rsplit_once(REFUSED_COMMIT))
                    .map(|(_, oid)| oid.split(';').next().unwrap_or(oid).trim().to_string())
                    .filter(|oid| is_object_name(oid));
                if let Some(oid) = commit.filter(|o| !refused.contains(o)) {
                    refused.push(oid);
                }
            }
        }
        // The open task other than the presenter's on each branch a refusal could name.
        let repo_id = v.repo_by_dir(common)?.map(|r| r.id);
        let mut others = vec![];
        for branch in presenter
            .map(|t| t.branch.as_str())
            .into_iter()
            .chain(head_branch)
        {
            let other = match &repo_id {
                Some(id) => v
                    .open_task_on_branch(id, branch)?
                    .filter(|t| presenter.is_none_or(|p| p.id != t.id)),
                None => None,
            };
            others.push((branch.to_string(), other.map(|t| t.name)));
        }
        // The newest few: a long-lived zombie's every attempt is in `git hand log`.
        let skip = refused.len().saturating_sub(REFUSED_SHOWN);
        Ok((refused.split_off(skip), others))
    })?;
    let theirs = |branch: &str| {
        others
            .iter()
            .find(|(b, _)| b == branch)
            .and_then(|(_, t)| t.clone())
    };
    let branch = presenter
        .filter(|t| theirs(&t.branch).is_none())
        .and_then(|t| {
            Some((
                t.branch.clone(),
                repo.ref_oid(&format!("refs/heads/{}", t.branch))?,
            ))
        });
    let head_theirs = head_branch.and_then(|b| Some((b.to_string(), theirs(b)?)));
    let rescue = match presenter {
        Some(t) => free_rescue(repo, ledger, &t.name)?,
        None => None,
    };
    Ok(OwnWork {
        refused,
        branch,
        head_theirs,
        rescue,
    })
}

/// The first of `<task>-rescue`, `<task>-rescue-2`, ... that no open task of this repository is
/// named and whose default branch (`hand/<name>`) does not exist: a suggested rescue that
/// already exists would fail, or worse, join someone else's work.
fn free_rescue(repo: &crate::git::Repo, ledger: &mut Ledger, task: &str) -> Result<Option<String>> {
    let common = &repo.loc.common_dir;
    for n in 1..=RESCUE_TRIES {
        let name = match n {
            1 => format!("{task}-rescue"),
            n => format!("{task}-rescue-{n}"),
        };
        if super::repo::names::task_name(&name).is_err() {
            return Ok(None);
        }
        if repo.ref_oid(&format!("refs/heads/hand/{name}")).is_some() {
            continue;
        }
        let taken = ledger.read(|v| match v.repo_by_dir(common)? {
            Some(r) => Ok(v.open_task(&r.id, &name)?.is_some()),
            None => Ok(false),
        })?;
        if !taken {
            return Ok(Some(name));
        }
    }
    Ok(None)
}

impl PrePush {
    fn unchecked(why: String) -> Self {
        Self {
            unchecked: Some(why),
            ..Self::default()
        }
    }
}

/// The words of a team ledger's server that could not be reached, when that is what `e` is.
fn unreachable_server(e: &super::Error) -> Option<String> {
    match e {
        super::Error::Ledger(crate::ledger::LedgerError::Server(s)) if s.is_unreachable() => {
            Some(s.to_string())
        }
        super::Error::Hinted(h) => unreachable_server(&h.error),
        _ => None,
    }
}

/// The one decision behind pre-push, `check`, `status` and the reference-transaction hook: the
/// worktree's credential (as the caller's `subject` presents it) judged (`verdict::judge`) and,
/// with `hand.fenceBranches`, the pushed `branches` fenced on the remote whose key (see
/// [`fence::pushed_remote`], [`fence::task_remote`]) `remote` works out: called only when there
/// is something to fence, since a local remote's key costs a realpath (`None`: no remote, the
/// repository's own tasks are fenced). Writes nothing; returns the ledger it read, for the caller
/// that records a refusal.
pub(crate) fn decide(
    ctx: &Context,
    subject: &verdict::Subject,
    remote: impl FnOnce() -> Option<String>,
    branches: &[String],
) -> Result<(PrePush, Option<Ledger>)> {
    let repo = ctx.repo()?;
    // Read before anything else decides: a bad value refuses the push (fail closed).
    let fence = super::repo::settings::Settings::load(repo)?.fence_branches()?;
    // HEAD is filled in only for a refusal's advice: the allow path reads none.
    let mut out = PrePush::default();
    let Some(mut ledger) = subject.ledger(ctx)? else {
        return Ok((out, None)); // git-hand never ran with this ledger: nothing to fence.
    };
    let common = &repo.loc.common_dir;
    let fencing = fence && !branches.is_empty();
    let remote = if fencing { remote() } else { None };
    let (finding, fenced) = ledger.read(|v| {
        let finding = subject.judge(v)?;
        if !fencing {
            return Ok((finding, None));
        }
        let presented = finding
            .tenure
            .as_ref()
            .filter(|_| finding.verdict == Verdict::Current)
            .map(|t| &t.lease_id);
        let fenced = fence::fenced(v, remote.as_deref(), common, branches, presented)?;
        Ok((finding, fenced))
    })?;
    out.now = finding.now;
    if !finding.verdict.allows() {
        out.refusal = Some(Refusal::Verdict(Box::new(finding.clone())));
    } else if let Some((branch, task, tenure)) = fenced {
        out.refusal = Some(Refusal::Branch {
            branch,
            task: Box::new(task),
            tenure: Box::new(tenure),
        });
    }
    if out.refusal.is_some() {
        out.head_branch = repo.head_branch();
        out.head_oid = repo.head_oid();
        out.own = own_work(repo, &mut ledger, &finding, out.head_branch.as_deref())?;
    }
    out.finding = Some(finding);
    Ok((out, Some(ledger)))
}

/// Where `git push` from this worktree would go, for `check` and `status`: the checked-out
/// branch's upstream (`branch.<name>.remote` and `.merge`), else the same-named branch on
/// origin. `None` on a detached HEAD (only the lease is judged then).
#[derive(Debug, Clone)]
pub struct PushTarget {
    pub remote: String,
    pub url: Option<String>,
    pub branch: String,
    /// `upstream` or `same-name`.
    pub via: &'static str,
}

impl PushTarget {
    pub fn of(repo: &crate::git::Repo) -> Option<Self> {
        let local = repo.head_branch()?;
        let remote = repo.config_string(&format!("branch.{local}.remote"));
        let merge = repo.config_string(&format!("branch.{local}.merge"));
        let upstream = merge
            .as_deref()
            .and_then(|m| m.strip_prefix("refs/heads/"))
            .map(str::to_string);
        let (remote, branch, via) = match (remote, upstream) {
            // A "." remote is this repository itself: no push to fence.
            (Some(r), Some(b)) if r != "." => (r, b, "upstream"),
            _ => ("origin".to_string(), local, "same-name"),
        };
        Some(Self {
            url: repo.push_url(&remote),
            remote,
            branch,
            via,
        })
    }
}

/// What `git hand`, `status` and `check` report about the current worktree: exactly pre-push's
/// decision for a push to [`PushTarget`], and whether the hooks would run it at all.
pub struct Here {
    pub workdir: Option<PathBuf>,
    pub ledger: crate::ledger::Place,
    pub decision: PrePush,
    pub target: Option<PushTarget>,
    /// Whether the hooks are in force for this worktree (an error: why that could not be told).
    pub hooks: std::result::Result<crate::hooks::InForce, String>,
    /// Whether git-hand has leased or registered anything for this repository: a lapse of the
    /// hooks matters only then.
    pub known: bool,
    /// `hand.remoteFence` here: whether credentials carry their lease to the remote as push
    /// options (an error: the setting does not parse). What the client can know: whether the
    /// remote checks them is the server's (`git hand install --server`).
    pub remote_fence: std::result::Result<bool, String>,
    /// Whether git-hand's Claude Code hooks are in force, where `install --claude` wrote them
    /// (`None`: it never ran).
    pub claude: Option<super::claude::settings::InForce>,
}

impl Here {
    pub fn finding(&self) -> Finding {
        self.decision
            .finding
            .clone()
            .unwrap_or_else(|| Finding::unmanaged(self.decision.now))
    }

    /// Whether pushes from here are checked at all: the hooks are in force, or git-hand has
    /// nothing to enforce in this repository.
    pub fn lapse(&self) -> Option<crate::hooks::Lapse> {
        let managed = self
            .decision
            .finding
            .as_ref()
            .is_some_and(|f| f.verdict != Verdict::Unmanaged);
        if !self.known && !managed {
            return None;
        }
        match &self.hooks {
            Ok(h) => h.unchecked().cloned(),
            Err(why) => Some(crate::hooks::Lapse {
                kind: crate::hooks::LapseKind::Missing,
                message: format!("cannot tell whether git-hand's hooks are in force: {why}"),
                hints: vec![Hint::hand("doctor")],
                repairable: false,
            }),
        }
    }
}

/// Decides for the current worktree as pre-push would, writing nothing.
pub fn here(ctx: &Context) -> Result<Here> {
    let repo = ctx.repo()?;
    let workdir = repo.loc.workdir.clone();
    let target = PushTarget::of(repo);
    let base = workdir.clone().unwrap_or_else(|| ctx.cwd.clone());
    let branches: Vec<String> = target.iter().map(|t| t.branch.clone()).collect();
    let url = target.as_ref().and_then(|t| t.url.clone());
    let subject = verdict::Subject::of(ctx)?;
    let remote = || url.as_deref().map(|u| fence::pushed_remote(u, &base));
    let (decision, ledger) = decide(ctx, &subject, remote, &branches)?;
    let common = &repo.loc.common_dir;
    let known = match ledger {
        Some(mut l) => l.read(|v| Ok(v.repo_by_dir(common)?.is_some()))?,
        None => false,
    };
    let git = crate::git::Git::new(workdir.as_ref().unwrap_or(&repo.loc.admin_dir));
    let hooks = crate::hooks::in_force(&git, workdir.as_deref()).map_err(|e| e.to_string());
    let remote_fence = super::fence::credential_push::carried(repo).map_err(|e| e.to_string());
    let claude = super::claude::settings::in_force(repo);
    Ok(Here {
        claude,
        ledger: subject.ledger,
        workdir,
        decision,
        target,
        hooks,
        known,
        remote_fence,
    })
}

/// Appends the refusal to the event log (the only write a refused push or ref update makes):
/// `push-refused`, or `ref-update-refused` for [`Said::RefUpdate`]. `pusher`: who pushed, as
/// the server names them (`alice (GL_USERNAME)`), added to the detail.
pub(super) fn record_refusal(
    ledger: &mut Ledger,
    f: &Finding,
    refusal: &Refusal,
    workdir: &WorktreeKey,
    said: Said,
    pusher: Option<&str>,
) -> Result<()> {
    record_refusal_of(ledger, f, refusal, workdir, said, pusher, None)
}

/// [`record_refusal`], naming the `commit` a refused ref update would have written in the
/// detail: a later refusal of the same lease names it as the presenter's own work, on no branch.
pub(super) fn record_refusal_of(
    ledger: &mut Ledger,
    f: &Finding,
    refusal: &Refusal,
    workdir: &WorktreeKey,
    said: Said,
    pusher: Option<&str>,
    commit: Option<&str>,
) -> Result<()> {
    let (kind, what, by) = match said {
        Said::RefUpdate => (EventKind::RefUpdateRefused, "ref update refused", "made in"),
        Said::Push | Said::Check => (EventKind::PushRefused, "push refused", "pushed from"),
        Said::Receive => (EventKind::PushRefused, "push refused", "received by"),
    };
    let (res, tenure, detail) = match refusal {
        // Under the presented tenure's own resource when there is one: the server's pre-receive
        // judged a lease of a slot on the client's machine, and joining the server's machine id
        // to the client's path (`gitserver:<laptop path>`) named a slot that does not exist
        // (issue 22); the client's own `git hand log` finds it there.
        Refusal::Verdict(_) => (
            f.tenure.as_ref().map_or_else(
                || Resource::worktree_on(ledger.machine(), f.slot.as_ref().unwrap_or(workdir)),
                |t| t.resource.clone(),
            ),
            f.tenure.clone(),
            format!("{what}: {}", f.verdict),
        ),
        // A client's refusal under the worktree it was pushed from (this machine's), tied to the
        // live task by its lease: on a team ledger the task's own slot is another machine's, and
        // the pusher's `git hand log` missed its own refused push there (issue 22 item 16). The
        // server has no such worktree of its own: it logs under the task's resource.
        Refusal::Branch {
            branch,
            task,
            tenure,
        } => (
            match said {
                Said::Receive => tenure.resource.clone(),
                Said::Push | Said::Check | Said::RefUpdate => {
                    Resource::worktree_on(ledger.machine(), workdir)
                }
            },
            Some((**tenure).clone()),
            format!(
                "{what}: branch {branch} belongs to live task {} ({by} {workdir})",
                task.name
            ),
        ),
        Refusal::Worktree { name } => (
            Resource::worktree_on(ledger.machine(), f.slot.as_ref().unwrap_or(workdir)),
            f.tenure.clone(),
            format!("{what}: {name} is another worktree's ({by} {workdir})"),
        ),
        Refusal::LeaseRequired {
            branch,
            pattern,
            presented,
        } => (
            Resource::worktree_on(ledger.machine(), workdir),
            f.tenure.clone().filter(|_| presented.is_some()),
            format!(
                "{what}: branch {branch} matches hand.requireLease={pattern} and {} ({by} {workdir})",
                match presented {
                    Some(task) => format!(
                        "the lease presented is task {}'s, of another repository",
                        task.name
                    ),
                    None => "no lease was presented".to_string(),
                }
            ),
        ),
    };
    let detail = match commit {
        Some(oid) => format!("{detail}{REFUSED_COMMIT}{oid}"),
        None => detail,
    };
    let detail = match pusher {
        Some(who) => format!("{detail}; pushed by {who}"),
        None => detail,
    };
    match ledger.write(|tx| tx.log(kind, &res, tenure.as_ref(), Some(&detail))) {
        // A read-only role answers pre-push (docs/team.md, Roles) but may not write the log:
        // the refusal stands, unrecorded, instead of turning into "cannot check the lease".
        Err(LedgerError::ServerReadOnly(_)) => Ok(()),
        other => Ok(other?),
    }
}

/// Who is reading a refusal: the pre-push hook refusing a push, `check`/`status` saying what
/// the hook would do (nothing was attempted, so nothing "was pushed" or not), or the
/// reference-transaction hook aborting a ref update (`head_oid` is then the refused commit), or
/// the server's pre-receive hook refusing a push it received (`head_oid`: the pushed commit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Said {
    Push,
    Check,
    RefUpdate,
    Receive,
}

/// What post-checkout noticed (never an error: the hook must not fail a checkout).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PostCheckout {
    Nothing,
    /// The slot's lease has ended: pushes will be refused.
    LeaseEnded {
        verdict: Verdict,
    },
    /// A plain `git worktree add` made this worktree and it was registered (adopted: leased).
    Registered(adopt::Registered),
}

/// Runs the post-checkout logic. `prev`/`flag` are git's arguments.
pub(crate) fn post_checkout(ctx: &Context, prev: &str, flag: &str) -> Result<PostCheckout> {
    let repo = ctx.repo()?;
    let Some(workdir) = repo.loc.workdir.clone() else {
        return Ok(PostCheckout::Nothing);
    };
    let stamp = stamp::read(&repo.loc.admin_dir).ok().flatten();
    if is_null_oid(prev) && flag == "1" && repo.loc.is_linked() && stamp.is_none() {
        return Ok(adopt::register(ctx, repo, &workdir)?
            .map_or(PostCheckout::Nothing, PostCheckout::Registered));
    }
    let Some(stamp) = stamp else {
        return Ok(PostCheckout::Nothing);
    };
    let Some(mut ledger) = ctx.open_existing(&ctx.stamped_ledger(&stamp.ledger))? else {
        return Ok(PostCheckout::LeaseEnded {
            verdict: Verdict::UnknownLease,
        });
    };
    let key = WorktreeKey::from_canonical(&workdir);
    let finding = ledger.read(|v| {
        verdict::judge(
            v,
            &key,
            Some(&stamp),
            None,
            verdict::CredentialRule::StampSuffices,
        )
    })?;
    if !finding.verdict.allows() {
        return Ok(PostCheckout::LeaseEnded {
            verdict: finding.verdict,
        });
    }
    // A leased slot: remember what it has checked out, writing only when it changed.
    if let (Some(task), Some(branch)) = (finding.task, repo.head_branch())
        && task.checked_out.as_deref() != Some(branch.as_str())
    {
        ledger.write(|tx| {
            tx.set_checked_out(task.id, &branch)?;
            tx.log(
                EventKind::CheckedOut,
                &tx.view().worktree(&key),
                finding.tenure.as_ref(),
                Some(&branch),
            )
        })?;
    }
    Ok(PostCheckout::Nothing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_lines_parse_and_malformed_input_is_an_error() {
        let z = "0".repeat(40);
        let input = format!(
            "refs/heads/a {} refs/heads/a {z}\n\n(delete) {z} refs/heads/b {}\n",
            "1".repeat(40),
            "2".repeat(40)
        );
        let refs = parse_push_lines(&input).unwrap();
        assert_eq!(refs.len(), 2);
        assert_eq!(refs[1].remote_ref, "refs/heads/b");
        assert!(is_null_oid(&refs[0].remote_oid));
        assert!(parse_push_lines("refs/heads/a only-three fields\n").is_err());
        let one = "1".repeat(40);
        for bad in [
            format!("refs/heads/a {} refs/heads/a {z}", "g".repeat(40)),
            format!("refs/heads/a {one} refs/heads/a {}", "0".repeat(39)),
            format!("refs/heads/a {one} refs/heads/a HEAD"),
            format!("refs/heads/a {one}x refs/heads/a {z}"),
            format!("refs/heads/a -{} refs/heads/a {z}", "1".repeat(39)),
        ] {
            assert!(parse_push_lines(&bad).is_err(), "{bad}");
        }
        assert!(
            parse_push_lines(&format!(
                "refs/heads/a {} refs/heads/a {}",
                "a".repeat(64),
                "0".repeat(64)
            ))
            .is_ok()
        );
        assert!(is_null_oid(&"0".repeat(64)));
        assert!(!is_null_oid("0000"));
    }
}
