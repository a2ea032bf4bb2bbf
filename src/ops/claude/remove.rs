//! `WorktreeRemove`: Claude Code is done with a worktree a `WorktreeCreate` hook made, and
//! git-hand ends its task keeping every piece of work: the branch and its commits stay (Claude
//! Code asks its user before it removes a worktree with commits), the slot goes back to the
//! pool for the next task, and uncommitted changes are never destroyed: such a task is left
//! open, which the hook says on stderr and `git hand list` shows, for its user to commit or
//! tear down.
//!
//! It acts by `worktree_path` alone, whatever session id comes with it (a hook command needs
//! only its stdin and cwd), and only on a task a Claude Code session holds: a worktree git-hand
//! did not make for Claude Code is left as it is. The session id only ever refuses: a session
//! that held an earlier lease of the slot, now leased again, leaves the new holder's task alone.

use super::ClaudeError;
use crate::git::status::dirty_files;
use crate::platform::procs::Scan;
use std::path::{Path, PathBuf};

use super::{HookInput, SessionHolder, SessionId};
use crate::git::Git;
use crate::ledger::{Ledger, Task};
use crate::ops::repo::setup::Shown;
use crate::ops::task::teardown::{self, TeardownOptions, TornDown};
use crate::ops::{Context, Error, Result, pool::slot, task::tasks};

/// What `WorktreeRemove` did.
#[derive(Debug)]
pub enum Removed {
    /// The task ended and its slot is free; its branch keeps its commits.
    Ended(TornDown),
    /// The slot holds uncommitted changes: the task stays open, nothing was touched.
    KeptOpen { task: Task, dirty: Vec<String> },
    /// Not a slot git-hand leased to a Claude Code session: nothing was done.
    NotOurs { path: PathBuf, why: &'static str },
}

/// Ends the task of the worktree `input` names, unless that would lose work.
pub fn remove(scan: Scan, input: &HookInput, setup: Option<Shown<'_>>) -> Result<Removed> {
    let path = input
        .worktree_path
        .clone()
        .ok_or(ClaudeError::NoWorktreePath)?;
    let not_ours = |why| {
        Ok(Removed::NotOurs {
            path: path.clone(),
            why,
        })
    };
    if !path.is_dir() {
        return not_ours("it is not a directory");
    }
    let ctx = Context::new(path.clone()).with_scan(scan);
    let Ok(repo) = ctx.repo() else {
        return not_ours("it is not in a git repository");
    };
    let Some(mut ledger) = ctx.open_existing(&ctx.ledger_location()?.place)? else {
        return not_ours("git-hand has no ledger");
    };
    let Ok(task) = tasks::resolve_task(&ctx, &mut ledger, None) else {
        return not_ours("it is not a slot leased to a task");
    };
    if SessionHolder::parse(&task.holder).is_none() {
        return not_ours("its task is not a Claude Code session's");
    }
    let slot_path = PathBuf::from(task.slot_key().as_str());
    if !same_dir(&slot_path, &path) || slot::prove(&repo.loc.common_dir, &slot_path).is_err() {
        return not_ours("it is not the task's slot itself");
    }
    if let Some(session) = &input.session
        && held_earlier_tenure(&mut ledger, &task, session)?
    {
        return not_ours("this session held an earlier lease of it, and it was leased again since");
    }
    let dirty = dirty_files(&Git::new(&slot_path)).map_err(Error::from)?;
    if !dirty.is_empty() {
        return Ok(Removed::KeptOpen { task, dirty });
    }
    let name = task.name.clone();
    teardown::teardown(
        &ctx,
        &mut ledger,
        &TeardownOptions {
            task: &name,
            force: false,
            keep_unpushed: true,
            setup,
        },
    )
    .map(Removed::Ended)
}

/// Whether `session` held a tenure of the task's slot, but not the task's own: the session id is
/// a refusal signal (never a grant), as in the verdict. A session whose task was torn down
/// while it ran, and whose slot went to another task, sends its old path when it exits; acting
/// on it would end the new holder's task.
fn held_earlier_tenure(ledger: &mut Ledger, task: &Task, session: &SessionId) -> Result<bool> {
    let prefix = SessionHolder::prefix_of(session);
    let own = ledger.read(|v| v.newest_of_holder(&task.slot_resource(), &prefix))?;
    Ok(own.is_some_and(|t| task.lease_id.as_ref() != Some(&t.lease_id)))
}

/// Whether two paths name one directory (the ledger keeps realpaths; Claude Code may send the
/// path it was given).
fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
