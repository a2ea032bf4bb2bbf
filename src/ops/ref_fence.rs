//! What the reference-transaction hook decides (issue 16): in a slot, a ref transaction made by a
//! process whose credential is not the slot's current lease is refused in the `prepared` state,
//! so a zombie's commit, reset or rebase never moves a ref of the task that took its slot; and a
//! transaction that moves the branch of another live task is refused (branch fencing).
//!
//! It is pre-push's decision ([`super::on_hook::decide`]) on other input: the branches are the
//! `refs/heads/*` the transaction moves, fenced on the remote a task records (origin's push URL),
//! so the verdict words, the holder named and the ledger looked in are the same as a refused
//! push's. Nothing here prints. The sh shim decides most transactions without starting git-hand;
//! what reaches here is a `prepared` transaction in a leased slot by a process presenting a
//! credential (or in a slot that requires one).

use super::on_hook::{self, PrePush, Said};
use super::{Context, Result, fence, verdict};

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

/// Whether an update moves something the fence guards: `HEAD` or a ref under `refs/` changing
/// value. Pseudo-refs git keeps for itself during an operation (`ORIG_HEAD`, `AUTO_MERGE`,
/// `CHERRY_PICK_HEAD`, ...) move no branch, and a no-op update (old = new) moves nothing; but
/// null -> null is a deletion made without its old value (`git update-ref -d <ref>`), not a no-op.
/// Remote-tracking refs (`refs/remotes/`) only mirror what a remote already has: the pushes that
/// change the remote are fenced by pre-push, and refusing the mirror's update would only make a
/// push that already happened (`--no-verify`, a lapsed pre-push) report failure.
pub fn guards(update: &RefUpdate) -> bool {
    (update.name == "HEAD" || update.name.starts_with("refs/"))
        && !update.name.starts_with("refs/remotes/")
        && (update.old != update.new || on_hook::is_null_oid(&update.new))
}

/// The outcome: pre-push's decision, with `head_oid` set to the commit the refused transaction
/// would have written (for the rescue advice).
pub type RefDecision = PrePush;

/// Judges a prepared transaction made in the worktree of `ctx`, and records a refusal.
/// `hand.fenceRefs=false` allows every transaction.
pub fn reference_transaction(ctx: &Context, updates: &[RefUpdate]) -> Result<Option<RefDecision>> {
    let moving: Vec<&RefUpdate> = updates.iter().filter(|u| guards(u)).collect();
    if moving.is_empty() {
        return Ok(None);
    }
    let repo = ctx.repo()?;
    if !super::settings::Settings::load(repo)?.fence_refs()? {
        return Ok(None);
    }
    let branches = fence::branches(moving.iter().map(|u| u.name.as_str()));
    // A local branch is fenced on the remote its task records: the key spawn recorded.
    let remote = || fence::task_remote(repo);
    let subject = verdict::Subject::of(ctx)?;
    let (mut out, ledger) = on_hook::decide(ctx, &subject, remote, &branches)?;
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
