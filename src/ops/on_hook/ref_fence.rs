//! What the reference-transaction hook decides (issue 16): in a slot, a ref transaction made by a
//! process whose credential is not the slot's current lease is refused in the `prepared` state,
//! so a zombie's commit, reset or rebase never moves a ref of the task that took its slot; and a
//! transaction that moves the branch of another live task is refused (branch fencing).
//!
//! It is pre-push's decision ([`crate::ops::on_hook::decide`]) on other input: the branches are the
//! `refs/heads/*` the transaction moves, fenced on the remote a task records (origin's push URL),
//! so the verdict words, the holder named and the ledger looked in are the same as a refused
//! push's. Nothing here prints. The sh shim decides most transactions without starting git-hand;
//! what reaches here is a `prepared` transaction in a leased slot by a process presenting a
//! credential (or in a slot that requires one).

use crate::ops::on_hook::{self, PrePush, Said};
use crate::ops::{Context, Result, fence, fence::verdict};

/// One line of reference-transaction stdin: `<old> <new> <ref>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefUpdate {
    pub old: String,
    pub new: String,
    pub name: String,
}

/// Parses the hook's stdin; a line that is not three fields is an error (refuse: a hook that
/// cannot tell what moves must not let it through).
pub fn parse_ref_lines(stdin: &str) -> std::result::Result<Vec<RefUpdate>, String> {
    stdin
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(
            |line| match line.split(' ').collect::<Vec<_>>().as_slice() {
                [old, new, name] if !name.is_empty() => Ok(RefUpdate {
                    old: old.to_string(),
                    new: new.to_string(),
                    name: name.to_string(),
                }),
                _ => Err(format!(
                    "unexpected reference-transaction input line {line:?}"
                )),
            },
        )
        .collect()
}

/// Whether an update moves something the fence guards: a ref changing value under any name git
/// hands the hook for a worktree's HEAD or a ref: `HEAD` and `refs/...` (shared refs and this
/// worktree's own `refs/bisect/`, `refs/worktree/`, `refs/rewritten/`), and every name under
/// `worktrees/<id>/` or `main-worktree/` (another worktree's, or this one's, HEAD, per-worktree
/// refs and pseudo-refs: `git update-ref --no-deref worktrees/<id>/HEAD` detaches that worktree).
/// This worktree's own pseudo-refs (`ORIG_HEAD`, `AUTO_MERGE`, `CHERRY_PICK_HEAD`, ...) are git's
/// bookkeeping during an operation and move no branch and no HEAD. A no-op update (old = new)
/// moves nothing; but null -> null is a deletion made without its old value
/// (`git update-ref -d <ref>`), not a no-op. Remote-tracking refs (`refs/remotes/`) only mirror
/// what a remote already has: the pushes that change the remote are fenced by pre-push, and
/// refusing the mirror's update would only make a push that already happened (`--no-verify`, a
/// lapsed pre-push) report failure.
///
/// The reference-transaction shim (`hooks/reference-transaction`) makes the same decision in sh
/// before it starts git-hand; `tests/it/ref_fence.rs` runs one table of names through both.
pub fn guards(update: &RefUpdate) -> bool {
    let name = update.name.as_str();
    (name == "HEAD"
        || (name.starts_with("refs/") && !name.starts_with("refs/remotes/"))
        || name.starts_with("worktrees/")
        || name.starts_with("main-worktree/"))
        && (update.old != update.new || on_hook::is_null_oid(&update.new))
}

/// Whether `name` is another worktree's ref, as git resolves the name in the worktree whose
/// admin dir is `<common>/worktrees/<own_id>` (`own_id`: `None` in the main worktree):
/// `main-worktree/...` is the main worktree's, `worktrees/<id>/...` is worktree `<id>`'s. A slot's
/// lease moves its own worktree's HEAD and the shared refs (branches fenced by their tasks), never
/// another worktree's HEAD: that worktree may be another live task's slot, or the main worktree.
pub fn other_worktree(name: &str, own_id: Option<&str>) -> bool {
    if let Some(rest) = name.strip_prefix("main-worktree/") {
        return !rest.is_empty() && own_id.is_some();
    }
    match name
        .strip_prefix("worktrees/")
        .and_then(|r| r.split_once('/'))
    {
        Some((id, _)) => Some(id) != own_id,
        None => false,
    }
}

/// The outcome: pre-push's decision, with `head_oid` set to the commit the refused transaction
/// would have written (for the rescue advice).
pub(crate) type RefDecision = PrePush;

/// Judges a prepared transaction made in the worktree of `ctx`, and records a refusal.
/// `hand.fenceRefs=false` allows every transaction.
pub(crate) fn reference_transaction(
    ctx: &Context,
    updates: &[RefUpdate],
) -> Result<Option<RefDecision>> {
    let moving: Vec<&RefUpdate> = updates.iter().filter(|u| guards(u)).collect();
    if moving.is_empty() {
        return Ok(None);
    }
    let repo = ctx.repo()?;
    if !crate::ops::repo::settings::Settings::load(repo)?.fence_refs()? {
        return Ok(None);
    }
    let branches = fence::branches(moving.iter().map(|u| u.name.as_str()));
    // A local branch is fenced on the remote its task records: the key spawn recorded.
    let remote = || fence::task_remote(repo);
    let subject = verdict::Subject::of(ctx)?;
    let (mut out, ledger) = on_hook::decide(ctx, &subject, remote, &branches)?;
    // A current lease moves its own worktree's HEAD, never another's (checked once the verdict
    // allows: a stale credential is refused for what it is).
    let own_id = repo
        .loc
        .is_linked()
        .then(|| repo.loc.admin_dir.file_name().and_then(|n| n.to_str()))
        .flatten();
    if out.refusal.is_none()
        && let Some(u) = moving.iter().find(|u| other_worktree(&u.name, own_id))
    {
        out.refusal = Some(on_hook::Refusal::Worktree {
            name: u.name.clone(),
        });
        out.head_branch = repo.head_branch();
        out.head_oid = repo.head_oid();
    }
    let (Some(refusal), Some(finding), Some(mut ledger)) =
        (out.refusal.clone(), out.finding.clone(), ledger)
    else {
        return Ok(None);
    };
    let commit = refused_commit(&moving, &refusal);
    out.head_oid = commit.clone().or(out.head_oid);
    on_hook::record_refusal_of(
        &mut ledger,
        &finding,
        &refusal,
        &subject.key,
        Said::RefUpdate,
        None,
        commit.as_deref(),
    )?;
    Ok(Some(out))
}

/// The commit to rescue: the new value of the refused branch update (or of the first moving
/// update), else the value a deletion would have removed. `None`: the caller uses HEAD's.
fn refused_commit(moving: &[&RefUpdate], refusal: &on_hook::Refusal) -> Option<String> {
    let pick = match refusal {
        on_hook::Refusal::Branch { branch, .. } => moving
            .iter()
            .find(|u| u.name.strip_prefix("refs/heads/") == Some(branch.as_str())),
        on_hook::Refusal::Worktree { name } => moving.iter().find(|u| &u.name == name),
        on_hook::Refusal::Verdict(_) | on_hook::Refusal::LeaseRequired { .. } => None,
    }
    .or_else(|| moving.iter().find(|u| !on_hook::is_null_oid(&u.new)))
    .or(moving.first())?;
    // A symbolic-ref update's values are `ref:<name>`, not commits: never a --base.
    let commit = |o: &&String| on_hook::is_object_name(o) && !on_hook::is_null_oid(o);
    [&pick.new, &pick.old].into_iter().find(commit).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ref_lines_parse_and_only_head_and_refs_that_change_are_guarded() {
        let z = "0".repeat(40);
        let a = "a".repeat(40);
        let input = format!(
            "{z} {a} HEAD\n{a} {a} refs/heads/x\n{z} {z} AUTO_MERGE\n{a} {z} refs/tags/t\n\
             {z} {a} refs/remotes/origin/x\n{z} {z} refs/heads/gone\n"
        );
        let updates = parse_ref_lines(&input).unwrap();
        let guarded: Vec<_> = updates
            .iter()
            .filter(|u| guards(u))
            .map(|u| u.name.as_str())
            .collect();
        assert_eq!(guarded, ["HEAD", "refs/tags/t", "refs/heads/gone"]);
        assert!(parse_ref_lines("only two\n").is_err());
        assert!(parse_ref_lines("").unwrap().is_empty());
    }
}
