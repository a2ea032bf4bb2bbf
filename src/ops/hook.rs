//! What the hooks decide. `pre-push` judges the pushing worktree's credential and fences task
//! branches; `post-checkout` warns in a slot whose lease ended, records the branch of a leased
//! slot, and registers (or, with `hand.adoptWorktrees`, leases) a worktree made by a plain
//! `git worktree add`. Nothing here prints: the CLI turns decisions into `git-hand:` lines.
//!
//! The allow path of pre-push is one ledger read and no write. Every refusal is appended to the
//! event log. A ledger that cannot be read refuses: the hook is a seatbelt and fails closed.

use std::path::PathBuf;

use super::verdict::{self, Finding, Verdict};
use super::{Context, Result, fence, stamp};
use crate::clock::relative;
use crate::ledger::{EventKind, Ledger, Resource, Task, Tenure};

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
pub fn parse_push_lines(stdin: &str) -> std::result::Result<Vec<PushedRef>, String> {
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
fn is_object_name(oid: &str) -> bool {
    matches!(oid.len(), 40 | 64) && oid.bytes().all(|b| b.is_ascii_hexdigit())
}

/// An all-zero object id (sha1 or sha256 length): "no commit".
pub fn is_null_oid(oid: &str) -> bool {
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
}

/// The outcome of pre-push.
#[derive(Debug, Clone)]
pub struct PrePush {
    pub refusal: Option<Refusal>,
    pub finding: Option<Finding>,
    /// Where the work is, for the "how to keep it" advice.
    pub head_branch: Option<String>,
    pub head_oid: Option<String>,
    pub now: i64,
}

/// Judges a push from the worktree of `ctx` to the remote at `url` (the hook's second
/// argument; `None` when git gave none), and records a refusal.
pub fn pre_push(ctx: &Context, url: Option<&str>, refs: &[PushedRef]) -> Result<PrePush> {
    // The branches the remote would see updated, each looked up once.
    let mut branches: Vec<String> = refs
        .iter()
        .filter_map(|r| r.remote_ref.strip_prefix("refs/heads/"))
        .map(str::to_string)
        .collect();
    branches.sort();
    branches.dedup();
    let (out, ledger) = decide(ctx, url, &ctx.cwd, &branches)?;
    if let (Some(refusal), Some(finding), Some(mut ledger)) = (&out.refusal, &out.finding, ledger) {
        record_refusal(
            &mut ledger,
            finding,
            refusal,
            &verdict::Subject::key_of(ctx)?,
            Said::Push,
        )?;
    }
    Ok(out)
}

/// The one decision behind pre-push, `check` and `status`: the worktree's credential judged
/// (`verdict::judge`) and, with `hand.fenceBranches`, the pushed `branches` fenced on the remote
/// at `url` (a relative local path resolved from `base`, where git resolves it). Writes nothing;
/// returns the ledger it read, for the caller that records a refusal.
pub fn decide(
    ctx: &Context,
    url: Option<&str>,
    base: &std::path::Path,
    branches: &[String],
) -> Result<(PrePush, Option<Ledger>)> {
    let repo = ctx.repo()?;
    let subject = verdict::Subject::of(ctx)?;
    // Read before anything else decides: a bad value refuses the push (fail closed).
    let fence = repo.config_bool("hand.fenceBranches", true)?;
    let mut out = PrePush {
        refusal: None,
        finding: None,
        // Filled in only for a refusal's advice: the allow path reads no HEAD.
        head_branch: None,
        head_oid: None,
        now: 0,
    };
    let Some(mut ledger) = subject.ledger(ctx)? else {
        return Ok((out, None)); // git-hand never ran with this ledger: nothing to fence.
    };
    let common = repo.loc.common_dir.to_string_lossy().into_owned();
    let remote = url.map(|u| fence::pushed_remote(u, base));
    let (finding, fenced) = ledger.read(|v| {
        let finding = subject.judge(v)?;
        if !fence || branches.is_empty() {
            return Ok((finding, None));
        }
        let repo_id = v.repo_by_dir(&common)?.map(|r| r.id);
        let presented = finding
            .tenure
            .as_ref()
            .filter(|_| finding.verdict == Verdict::Current)
            .map(|t| t.lease_id.as_str());
        let fenced = fence::fenced(
            v,
            remote.as_deref(),
            repo_id.as_deref(),
            branches,
            presented,
        )?;
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
    }
    out.finding = Some(finding);
    Ok((out, Some(ledger)))
}

/// Where `git push` from this worktree would go, for `check` and `status`: the checked-out
/// branch's upstream (`branch.<name>.remote` and `.merge`), else the same-named branch on
/// origin. `None` on a detached HEAD (only the lease is judged then).
#[derive(Debug, Clone, serde::Serialize)]
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
    pub ledger: PathBuf,
    pub decision: PrePush,
    pub target: Option<PushTarget>,
    /// Whether the hooks are in force for this worktree (an error: why that could not be told).
    pub hooks: std::result::Result<crate::hooks::InForce, String>,
    /// Whether git-hand has leased or registered anything for this repository: a lapse of the
    /// hooks matters only then.
    pub known: bool,
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
                hints: vec!["git hand doctor".into()],
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
    let (decision, ledger) = decide(ctx, url.as_deref(), &base, &branches)?;
    let common = repo.loc.common_dir.to_string_lossy().into_owned();
    let known = match ledger {
        Some(mut l) => l.read(|v| Ok(v.repo_by_dir(&common)?.is_some()))?,
        None => false,
    };
    let git = crate::git::Git::new(workdir.as_ref().unwrap_or(&repo.loc.admin_dir));
    let hooks = crate::hooks::in_force(&git, workdir.as_deref()).map_err(|e| e.to_string());
    Ok(Here {
        ledger: verdict::Subject::of(ctx)?.ledger_path,
        workdir,
        decision,
        target,
        hooks,
        known,
    })
}

/// Appends the refusal to the event log (the only write a refused push or ref update makes):
/// `push-refused`, or `ref-update-refused` for [`Said::RefUpdate`].
pub(super) fn record_refusal(
    ledger: &mut Ledger,
    f: &Finding,
    refusal: &Refusal,
    workdir: &str,
    said: Said,
) -> Result<()> {
    let (kind, what, by) = match said {
        Said::RefUpdate => (EventKind::RefUpdateRefused, "ref update refused", "made in"),
        Said::Push | Said::Check => (EventKind::PushRefused, "push refused", "pushed from"),
    };
    let (res, tenure, detail) = match refusal {
        Refusal::Verdict(_) => (
            Resource::worktree(f.slot.clone().unwrap_or_else(|| workdir.to_string())),
            f.tenure.clone(),
            format!("{what}: {}", f.verdict.as_str()),
        ),
        Refusal::Branch {
            branch,
            task,
            tenure,
        } => (
            tenure.resource.clone(),
            Some((**tenure).clone()),
            format!(
                "{what}: branch {branch} belongs to live task {} ({by} {workdir})",
                task.name
            ),
        ),
    };
    ledger.write(|tx| tx.log(kind, &res, tenure.as_ref(), Some(&detail)))?;
    Ok(())
}

/// Who is reading a refusal: the pre-push hook refusing a push, `check`/`status` saying what
/// the hook would do (nothing was attempted, so nothing "was pushed" or not), or the
/// reference-transaction hook aborting a ref update (`head_oid` is then the refused commit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Said {
    Push,
    Check,
    RefUpdate,
}

/// The lines a refusal prints (without the `git-hand: ` prefix). They never suggest
/// `--no-verify`: coding agents retry with whatever a refusal suggests (issue 11).
pub fn refusal_lines(p: &PrePush, said: Said) -> Vec<String> {
    let Some(refusal) = &p.refusal else {
        return vec![];
    };
    let now = p.now;
    let mut lines = vec![];
    let task_of = |f: &Finding| f.task.as_ref().map(|t| t.name.clone());
    let refused = match said {
        Said::Push => "push refused",
        Said::Check => "a push from here would be refused",
        Said::RefUpdate => "ref update refused",
    };
    match refusal {
        Refusal::Verdict(f) => {
            lines.push(format!(
                "{refused} ({}): {}",
                f.verdict.as_str(),
                verdict_reason(f, now)
            ));
            if f.credential_error.is_some() {
                lines.push(
                    "unset GIT_HAND_LEASE GIT_HAND_TOKEN, or set both again: eval \"$(git hand env <task>)\"".into(),
                );
            }
            if f.verdict == Verdict::NoCredential {
                // Only the holder should take the credential: say whose it is, not "take it".
                let name = task_of(f).unwrap_or_else(|| "<task>".into());
                lines.push(format!(
                    "if you hold task {name}: eval \"$(git hand env {name})\" and {} again",
                    if said == Said::RefUpdate {
                        "run the command"
                    } else {
                        "push"
                    }
                ));
            }
            lines.extend(keep_work_advice(p, task_of(f), said));
        }
        Refusal::Branch {
            branch,
            task,
            tenure,
        } if said == Said::RefUpdate => {
            lines.push(format!(
                "{refused}: branch {branch} belongs to live task {} (held by {}, token {}); only that task's lease may move it.",
                task.name, tenure.holder, tenure.token
            ));
            let own = p.finding.as_ref().and_then(task_of);
            lines.extend(keep_work_advice(p, own, said));
        }
        Refusal::Branch {
            branch,
            task,
            tenure,
        } => {
            lines.push(format!(
                "{refused}: branch {branch} belongs to live task {} (held by {}, token {}); only that task's lease may push it.",
                task.name, tenure.holder, tenure.token
            ));
            lines.push(format!(
                "push it from the task's slot with its credential: eval \"$(git hand env {})\"",
                task.name
            ));
            lines.push(
                "or push under another name: git push origin HEAD:refs/heads/<new-branch>".into(),
            );
        }
    }
    lines
}

/// The credential as presented: `token 5 (lease 0123456789)`, from what the holder presented
/// (never the ledger's idea of it: a wrong token is the point of the message).
fn presented(f: &Finding) -> Option<String> {
    let c = f.credential.as_ref()?;
    Some(match c.token {
        Some(t) => format!("token {t} (lease {})", short(&c.lease_id)),
        None => format!("lease {}", short(&c.lease_id)),
    })
}

/// Why a verdict refuses, in one sentence.
fn verdict_reason(f: &Finding, now: i64) -> String {
    let task_of = |f: &Finding| f.task.as_ref().map(|t| t.name.clone());
    let yours = presented(f);
    let holder_now = |n: &Tenure| {
        format!(
            "{} with token {} since {}",
            n.holder,
            n.token,
            relative(n.acquired_at, now)
        )
    };
    match f.verdict {
        Verdict::Stale => {
            let now_held = f.newest.as_ref().map_or_else(|| "?".into(), holder_now);
            format!(
                "this worktree was leased again. You present {}; it is now held by {now_held}.",
                yours.unwrap_or_else(|| "an older lease".into())
            )
        }
        Verdict::Expired => format!(
            "your lease, {}, expired {}; an expired lease is never renewed.",
            yours.unwrap_or_else(|| "the stamped one".into()),
            f.tenure
                .as_ref()
                .and_then(|t| t.expires_at)
                .map_or_else(String::new, |e| relative(e, now))
        ),
        Verdict::Released => match yours {
            Some(yours) => format!("your lease, {yours}, was released (its task was torn down)."),
            None => "this worktree's last lease was released (its task was torn down), and this push presents no credential.".into(),
        },
        Verdict::UnknownLease => unknown_lease_reason(f, yours, holder_now),
        Verdict::IssueLost => format!(
            "task {}'s issue lease is no longer its own{}.",
            task_of(f).unwrap_or_default(),
            f.issue_now.as_ref().map_or_else(String::new, |t| format!(
                " ({} holds it now, token {})",
                t.holder, t.token
            ))
        ),
        Verdict::NoCredential => format!(
            "hand.requireCredential is set and this shell carries no GIT_HAND_LEASE; the worktree is leased to task {}{}.",
            task_of(f).unwrap_or_else(|| "?".into()),
            yours.map_or_else(String::new, |y| format!(" ({y}, from its stamp)"))
        ),
        Verdict::Unmanaged | Verdict::Current => String::new(),
    }
}

/// Why `unknown-lease`: the credential does not parse, there is none, the ledger never granted
/// it, it is another worktree's, or its token is not the one granted. Says what was presented.
fn unknown_lease_reason(
    f: &Finding,
    yours: Option<String>,
    holder_now: impl Fn(&Tenure) -> String,
) -> String {
    let yours = yours.unwrap_or_default();
    match (&f.credential_error, &f.credential, &f.tenure) {
        (Some(why), _, _) => format!("the credential in this environment does not parse: {why}."),
        (None, None, _) => format!(
            "this worktree is leased{}, but this push presents no credential (no GIT_HAND_LEASE in the environment and no stamp in the worktree).",
            f.newest
                .as_ref()
                .map_or_else(String::new, |n| format!(" to {}", holder_now(n)))
        ),
        (None, Some(_), None) => {
            format!("the ledger never granted the lease you present, {yours}.")
        }
        (None, Some(_), Some(t)) if Some(t.resource.key.as_str()) != f.slot.as_deref() => format!(
            "the lease you present, {yours}, was granted for {}, not for this worktree.",
            t.resource.key
        ),
        (None, Some(c), Some(t)) => format!(
            "you present {yours}, but lease {} was granted with token {}.",
            short(&c.lease_id),
            t.token
        ),
    }
}

fn keep_work_advice(p: &PrePush, task: Option<String>, said: Said) -> Vec<String> {
    let new_task = task.map_or_else(|| "<new-task>".to_string(), |t| format!("{t}-rescue"));
    if said == Said::RefUpdate {
        // The whole oid: the refused commit is on no ref, so nothing else names it.
        let oid = p.head_oid.as_deref().unwrap_or("HEAD");
        return vec![
            format!("no ref moved; the objects are kept (commit {oid} stays in the object store)."),
            format!(
                "to keep the work under a lease of your own: git hand spawn {new_task} --base {oid}"
            ),
        ];
    }
    let at = match (&p.head_branch, &p.head_oid) {
        (Some(b), Some(o)) => format!("local branch {b} ({})", short(o)),
        (None, Some(o)) => format!("commit {}", short(o)),
        _ => "this worktree".into(),
    };
    let base = p.head_oid.as_deref().map(short).unwrap_or("HEAD");
    vec![
        match said {
            Said::Push => format!("your commits are safe in {at}; nothing was pushed."),
            Said::Check | Said::RefUpdate => format!("your commits are in {at}."),
        },
        format!(
            "to keep working on them under a lease of your own: git hand spawn {new_task} --base {base}"
        ),
    ]
}

fn short(s: &str) -> &str {
    &s[..s.len().min(10)]
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
    Registered(super::adopt::Registered),
}

/// Runs the post-checkout logic. `prev`/`flag` are git's arguments.
pub fn post_checkout(ctx: &Context, prev: &str, flag: &str) -> Result<PostCheckout> {
    let repo = ctx.repo()?;
    let Some(workdir) = repo.loc.workdir.clone() else {
        return Ok(PostCheckout::Nothing);
    };
    let stamp = stamp::read(&repo.loc.admin_dir).ok().flatten();
    if is_null_oid(prev) && flag == "1" && repo.loc.is_linked() && stamp.is_none() {
        return Ok(super::adopt::register(ctx, repo, &workdir)?
            .map_or(PostCheckout::Nothing, PostCheckout::Registered));
    }
    let Some(stamp) = stamp else {
        return Ok(PostCheckout::Nothing);
    };
    let Some(mut ledger) = ctx.open_existing(&stamp.ledger)? else {
        return Ok(PostCheckout::LeaseEnded {
            verdict: Verdict::UnknownLease,
        });
    };
    let key = workdir.to_string_lossy().into_owned();
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
                &Resource::worktree(key.clone()),
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
