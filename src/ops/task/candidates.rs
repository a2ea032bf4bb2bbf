//! What the shell completions offer that the command line cannot know by itself: the names of a
//! repository's open tasks (for `teardown`, `done`, `env`, `renew`, `path`) and the refs a
//! `spawn --base` may name. Only reads: a ledger that is not there is not created, one that is
//! there is opened for reading, and git is asked through `git for-each-ref`.

use crate::ledger::Tasks;
use crate::ops::{Context, Result};

/// The names of the repository's open tasks (spawning, active or tearing down), oldest first;
/// none where git-hand never saw the repository or there is no ledger.
pub(crate) fn task_names(ctx: &Context) -> Result<Vec<String>> {
    let place = ctx.ledger_location()?.place;
    let Some(mut ledger) = ctx.open_existing(&place)? else {
        return Ok(vec![]);
    };
    let Some(repo_id) = ctx.repo_id(&mut ledger)? else {
        return Ok(vec![]);
    };
    let tasks = ledger.read(|v| v.tasks(&repo_id, Tasks::Open))?;
    Ok(tasks.into_iter().map(|t| t.name).collect())
}

/// The repository's branches, remote-tracking branches and tags, as `git` spells them short
/// (`main`, `origin/main`, `v1.0`): what `--base` takes most often.
pub fn refs(ctx: &Context) -> Result<Vec<String>> {
    let out = ctx.repo()?.git().run(&[
        "for-each-ref",
        "--format=%(refname:short)",
        "refs/heads",
        "refs/remotes",
        "refs/tags",
    ])?;
    Ok(out.lines().map(str::to_string).collect())
}
