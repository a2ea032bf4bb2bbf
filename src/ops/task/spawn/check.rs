//! Before the ledger: everything a usage error could come from (a bad name, a `--base` that names
//! nothing, a bad `hand.*` value, a path git-hand cannot record) is found here, so such an error
//! leaves no ledger, no repository row and no pool directory behind (issue 10). Nothing here
//! writes.

use super::{Progress, SpawnOptions};
use crate::git::Repo;
use crate::ops::repo::Skip;
use crate::ops::repo::settings::Settings;
use crate::ops::repo::setup::{self, Hook};
use crate::ops::{Context, Result, pool, repo::base, repo::names, repo::trust};

/// What spawn checked before anything was written. [`check`] makes one; the CLI opens the
/// ledger only after it succeeded.
#[derive(Debug, Clone)]
pub struct Checked {
    pub(super) task: String,
    pub(super) branch: String,
    pub(super) issue: Option<String>,
    /// With `--issue`, the issue namespace that git config or origin gives
    /// ([`crate::ops::lease::configured_namespace`]), read here to refuse a bad one before the
    /// ledger and kept so the groundwork does not read it again. `None` without one (or without
    /// `--issue`): the namespace is then the repository's id in the ledger.
    pub(super) namespace: Option<String>,
    pub(super) max_slots: i64,
    /// `None` only when the base could not be resolved but an open task of this name exists:
    /// resuming it needs no base.
    pub(super) base: Option<base::Base>,
    /// `hand.installHooks` (default true): whether spawn may install or chain the hooks.
    pub(super) install_hooks: bool,
    /// The setup commands to run once the slot is ready (none with `--no-setup`).
    pub(super) setup: setup::Plan,
}

/// Validates a spawn without writing anything: names, the repository's paths, the `hand.*`
/// values spawn reads, the ledger and pool locations, and the base (after `git fetch origin`
/// with `--fetch`).
pub fn check(
    ctx: &Context,
    opts: &SpawnOptions<'_>,
    progress: &dyn Fn(Progress<'_>),
) -> Result<Checked> {
    let task = names::task_name(opts.task)?;
    let branch = match opts.branch {
        Some(b) => names::branch(b)?.to_string(),
        None => names::default_branch(task)?,
    };
    let issue = opts.issue.map(names::issue_id).transpose()?;
    names::holder(opts.holder)?;
    let repo = ctx.repo_to_record()?;
    let settings = Settings::load(repo)?;
    let max_slots = settings.max_slots()?;
    let install_hooks = settings.install_hooks()?;
    let setup = setup_plan(&settings, opts)?;
    pool::root(repo, ctx.env())?;
    ctx.ledger_location()?;
    let namespace = match issue {
        Some(_) => crate::ops::lease::configured_namespace(ctx)?,
        None => None,
    };
    let git = repo.git();
    if opts.fetch {
        progress(Progress::FetchingOrigin);
        git.run(&["fetch", "--quiet", "origin"])?;
    }
    let base = match base::resolve(repo, &git, opts.base) {
        Ok(base) => Some(base),
        Err(_) if open_task_exists(ctx, repo, task)? => None,
        Err(e) => return Err(e),
    };
    Ok(Checked {
        task: task.to_string(),
        branch,
        issue: issue.map(str::to_string),
        namespace,
        max_slots,
        base,
        install_hooks,
        setup,
    })
}

/// The setup commands a spawn runs, and the refusal of commands from a `.handconfig` the user
/// has not trusted in its current content: before the ledger, so nothing is leased. None with
/// `--no-setup`.
fn setup_plan(settings: &Settings<'_>, opts: &SpawnOptions<'_>) -> Result<setup::Plan> {
    if opts.no_setup {
        return Ok(setup::Plan::default());
    }
    let skip = opts.offer_no_setup.then(|| Skip::Spawn {
        task: opts.task.to_string(),
    });
    trust::require(settings, &[Hook::OnCreate, Hook::OnReuse], skip)?;
    Ok(settings.setup_plan()?)
}

/// Whether an open task of this name exists, read without creating or writing the ledger.
fn open_task_exists(ctx: &Context, repo: &Repo, task: &str) -> Result<bool> {
    let Some(mut ledger) = ctx.open_existing(&ctx.ledger_location()?.place)? else {
        return Ok(false);
    };
    let common = &repo.loc.common_dir;
    Ok(ledger.read(|v| {
        Ok(match v.repo_by_dir(common)? {
            Some(r) => v.open_task(&r.id, task)?.is_some(),
            None => false,
        })
    })?)
}
