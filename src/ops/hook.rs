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
/// argument; `None` when git gave none).
pub fn pre_push(ctx: &Context, url: Option<&str>, refs: &[PushedRef]) -> Result<PrePush> {
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
        return Ok(out); // git-hand never ran with this ledger: nothing to fence.
    };
    let workdir = &subject.key;
    let common = repo.loc.common_dir.to_string_lossy().into_owned();
    let remote = url.map(|u| fence::pushed_remote(u, &ctx.cwd));
    // The branches the remote would see updated, each looked up once.
    let mut branches: Vec<String> = refs
        .iter()
        .filter_map(|r| r.remote_ref.strip_prefix("refs/heads/"))
        .map(str::to_string)
        .collect();
    branches.sort();
    branches.dedup();
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
            &branches,
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
    if let Some(refusal) = &out.refusal {
        record_refusal(&mut ledger, &finding, refusal, workdir)?;
        out.head_branch = repo.head_branch();
        out.head_oid = repo.head_oid();
    }
    out.finding = Some(finding);
    Ok(out)
}

/// Appends the refusal to the event log (the only write a refused push makes).
fn record_refusal(
    ledger: &mut Ledger,
    f: &Finding,
    refusal: &Refusal,
    workdir: &str,
) -> Result<()> {
    let (res, tenure, detail) = match refusal {
        Refusal::Verdict(_) => (
            Resource::worktree(f.slot.clone().unwrap_or_else(|| workdir.to_string())),
            f.tenure.clone(),
            format!("push refused: {}", f.verdict.as_str()),
        ),
        Refusal::Branch {
            branch,
            task,
            tenure,
        } => (
            tenure.resource.clone(),
            Some((**tenure).clone()),
            format!(
                "push refused: branch {branch} belongs to live task {} (pushed from {workdir})",
                task.name
            ),
        ),
    };
    ledger.write(|tx| tx.log(EventKind::PushRefused, &res, tenure.as_ref(), Some(&detail)))?;
    Ok(())
}

/// The lines a refused push prints (without the `git-hand: ` prefix).
pub fn refusal_lines(p: &PrePush) -> Vec<String> {
    let Some(refusal) = &p.refusal else {
        return vec![];
    };
    let now = p.now;
    let mut lines = vec![];
    let task_of = |f: &Finding| f.task.as_ref().map(|t| t.name.clone());
    match refusal {
        Refusal::Verdict(f) => {
            let yours = f
                .tenure
                .as_ref()
                .map(|t| format!("token {} (lease {})", t.token, short(&t.lease_id)));
            let yours = yours.unwrap_or_else(|| "no credential".into());
            lines.push(format!("push refused ({}): {}", f.verdict.as_str(), match f.verdict {
                Verdict::Stale => {
                    let n = f.newest.as_ref();
                    format!(
                        "this worktree was leased again. You present {yours}; it is now held by {} with token {} since {}.",
                        n.map_or("?", |t| t.holder.as_str()),
                        n.map_or(0, |t| t.token),
                        n.map_or_else(String::new, |t| relative(t.acquired_at, now)),
                    )
                }
                Verdict::Expired => format!(
                    "your lease, {yours}, expired {}; an expired lease is never renewed.",
                    f.tenure.as_ref().and_then(|t| t.expires_at).map_or_else(String::new, |e| relative(e, now))
                ),
                Verdict::Released => format!("your lease, {yours}, was released (the task was torn down)."),
                Verdict::UnknownLease => match &f.credential_error {
                    Some(why) => format!("the credential in this environment does not parse: {why}."),
                    None => format!("the ledger did not grant {yours} for this worktree."),
                },
                Verdict::IssueLost => format!(
                    "task {}'s issue lease is no longer its own{}.",
                    task_of(f).unwrap_or_default(),
                    f.issue_now.as_ref().map_or_else(String::new, |t| format!(" ({} holds it now, token {})", t.holder, t.token))
                ),
                Verdict::NoCredential => format!(
                    "hand.requireCredential is set and this shell carries no GIT_HAND_LEASE; the worktree is leased to task {} ({yours}).",
                    task_of(f).unwrap_or_else(|| "?".into())
                ),
                Verdict::Unmanaged | Verdict::Current => String::new(),
            }));
            if f.credential_error.is_some() {
                lines.push(
                    "unset GIT_HAND_LEASE GIT_HAND_TOKEN, or set both again: eval \"$(git hand env <task>)\"".into(),
                );
            }
            if f.verdict == Verdict::NoCredential {
                // Only the holder should take the credential: say whose it is, not "take it".
                let name = task_of(f).unwrap_or_else(|| "<task>".into());
                lines.push(format!(
                    "if you hold task {name}: eval \"$(git hand env {name})\" and push again"
                ));
            }
            lines.extend(keep_work_advice(p, task_of(f)));
        }
        Refusal::Branch {
            branch,
            task,
            tenure,
        } => {
            lines.push(format!(
                "push refused: branch {branch} belongs to live task {} (held by {}, token {}); only that task's lease may push it.",
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
    lines.push("(git push --no-verify skips client hooks, git-hand's included; the ledger still records every lease.)".into());
    lines
}

fn keep_work_advice(p: &PrePush, task: Option<String>) -> Vec<String> {
    let at = match (&p.head_branch, &p.head_oid) {
        (Some(b), Some(o)) => format!("local branch {b} ({})", short(o)),
        (None, Some(o)) => format!("commit {}", short(o)),
        _ => "this worktree".into(),
    };
    let new_task = task.map_or_else(|| "<new-task>".to_string(), |t| format!("{t}-rescue"));
    let base = p.head_oid.as_deref().map(short).unwrap_or("HEAD");
    vec![
        format!("your commits are safe in {at}; nothing was pushed."),
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
    Registered {
        path: PathBuf,
        adopted_as: Option<String>,
    },
}

/// Runs the post-checkout logic. `prev`/`flag` are git's arguments.
pub fn post_checkout(ctx: &Context, prev: &str, flag: &str) -> Result<PostCheckout> {
    let repo = ctx.repo()?;
    let Some(workdir) = repo.loc.workdir.clone() else {
        return Ok(PostCheckout::Nothing);
    };
    let stamp = stamp::read(&repo.loc.admin_dir).ok().flatten();
    if is_null_oid(prev) && flag == "1" && repo.loc.is_linked() && stamp.is_none() {
        return super::adopt::register(ctx, repo, &workdir);
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
    let finding = ledger.read(|v| verdict::judge(v, &key, Some(&stamp), None, false))?;
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
