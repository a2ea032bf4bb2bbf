//! `git hand install` and `git hand uninstall`: arguments to [`crate::hooks`] calls and
//! [`crate::ops::repo::install`], outcomes to text or `--json` (docs/hooks.md). Warnings go to
//! stderr, each line starting `git-hand:`.

use std::path::{Path, PathBuf};

use clap::Args;
use serde::Serialize;

use super::error::ErrorBody;
use super::shape::{HookChangeJson, each};
use super::{Done, Failure, Kind};
use crate::git::Git;
use crate::hint::Hint;
use crate::hooks::{
    self, Change, HookChange, HookError, HooksLocation, InstallOptions, Layout, Manager, Scene,
    ServerTarget, Target, Warning,
};
use crate::ledger::{LedgerLocation, Place};
use crate::ops::Context;
use crate::ops::claude::settings::{self as claude, Which};
use crate::ops::repo::install;

#[derive(Debug, Args)]
pub struct InstallArgs {
    /// Rewrite git-hand's hooks even where they look current (never removes anyone else's).
    #[arg(long, conflicts_with = "manual")]
    pub force: bool,
    /// Only print what to add to the hook manager in charge (core.hooksPath); write nothing.
    #[arg(long, conflicts_with_all = ["hooks_path", "claude", "claude_settings", "claude_shared"])]
    pub manual: bool,
    /// Install into the directory core.hooksPath names, under the same chaining rules.
    #[arg(long)]
    pub hooks_path: bool,
    /// In a bare repository clients push to: install the pre-receive hook that checks the lease
    /// each push presents, and turn push options on.
    #[arg(long, conflicts_with_all = ["manual", "hooks_path", "claude", "claude_settings", "claude_shared"])]
    pub server: bool,
    /// With --server: install into DIR/pre-receive.d, a directory the server runs itself
    /// (GitLab's custom_hooks or custom_hooks_dir), instead of where git runs hooks from.
    #[arg(long, value_name = "DIR", requires = "server")]
    pub hooks_dir: Option<PathBuf>,
    #[command(flatten)]
    pub claude: ClaudeArgs,
}

/// `uninstall`'s arguments.
#[derive(Debug, Args)]
pub struct UninstallArgs {
    #[command(flatten)]
    pub claude: ClaudeArgs,
}

/// Which Claude Code settings file `--claude` means (docs/agents.md): with any of these flags,
/// install writes git-hand's WorktreeCreate, WorktreeRemove and SessionStart hooks there (and
/// the git hooks, which enforce the leases), uninstall removes those hooks only.
#[derive(Debug, Args)]
pub struct ClaudeArgs {
    /// Claude Code's hooks: the main worktree's .claude/settings.local.json (yours, not
    /// committed), so `claude -w` gets its worktrees from git-hand.
    #[arg(long)]
    pub claude: bool,
    /// With --claude: that settings file instead (~/.claude/settings.json for every project).
    #[arg(long, value_name = "FILE")]
    pub claude_settings: Option<PathBuf>,
    /// With --claude: the committed .claude/settings.json; every teammate's `claude -w` then
    /// needs git-hand.
    #[arg(long, conflicts_with = "claude_settings")]
    pub claude_shared: bool,
}

impl ClaudeArgs {
    /// Which file, when any of the flags is given.
    fn which(&self) -> Option<Which> {
        match (self.claude, &self.claude_settings, self.claude_shared) {
            (_, Some(_), _) => Some(Which::File),
            (_, _, true) => Some(Which::Shared),
            (true, _, _) => Some(Which::Local),
            _ => None,
        }
    }
}

/// The `outcome` of `install --json` and `uninstall --json`, spelled by serde.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "kebab-case")]
enum OutcomeWord {
    /// install wrote a shim.
    Installed,
    /// install found both shims current.
    Unchanged,
    /// install printed the recipe for the hook manager in charge (`--manual`).
    Manual,
    /// install refused, with the recipe.
    Refused,
    /// uninstall removed a shim.
    Uninstalled,
    /// uninstall found none.
    NothingInstalled,
}

/// `install --json` (docs/hooks.md).
#[derive(Serialize)]
struct InstallJson<'a> {
    /// `installed` or `unchanged`.
    outcome: OutcomeWord,
    hooks_dir: &'a Path,
    hooks_path: Option<&'a str>,
    hooks: Vec<HookChangeJson<'a>>,
    /// Files another tool wrote into the hooks directory of linked worktrees, moved aside to
    /// these paths (issue 25); left out when none.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    displaced: &'a [PathBuf],
    /// Where `git-hand` resolves on this PATH; null when it does not.
    git_hand: Option<&'a Path>,
    warnings: Vec<WarningJson>,
    /// Whether this install cleared `hand.installHooks=false`.
    opted_in: bool,
    /// With `--claude`: the Claude Code settings file and what install did to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    claude: Option<ClaudeJson>,
}

/// `claude` in `install --json` and `uninstall --claude --json`.
#[derive(Serialize)]
struct ClaudeJson {
    file: PathBuf,
    /// `installed` or `unchanged`; `uninstalled` or `nothing-installed`.
    outcome: claude::Outcome,
    /// The timeout (seconds) of each entry install wrote.
    #[serde(skip_serializing_if = "Option::is_none")]
    timeout: Option<u64>,
}

/// `uninstall --claude --json`: only the Claude Code hooks were looked at.
#[derive(Serialize)]
struct UninstallClaudeJson {
    /// `uninstalled` or `nothing-installed`.
    outcome: OutcomeWord,
    claude: ClaudeJson,
}

#[derive(Serialize)]
struct WarningJson {
    kind: Warning,
    message: String,
}

/// `uninstall --json` (docs/hooks.md).
#[derive(Serialize)]
struct UninstallJson<'a> {
    /// `uninstalled` or `nothing-installed`.
    outcome: OutcomeWord,
    hooks_dirs: &'a [PathBuf],
    hooks_path: Option<&'a str>,
    hooks: Vec<HookChangeJson<'a>>,
    /// Always false: uninstalling opts out of spawn installing the hooks again.
    install_hooks: bool,
}

/// `install --manual --json`, or a refused `install --json`: the recipe for the hook manager in
/// charge; `error` only when refused.
#[derive(Serialize)]
struct ManualJson<'a> {
    /// `manual` or `refused`.
    outcome: OutcomeWord,
    hooks_dir: &'a Path,
    hooks_path: Option<&'a str>,
    manager: Manager,
    recipe: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorBody<'a>>,
    /// With `--claude`: the Claude Code settings written despite the refusal.
    #[serde(skip_serializing_if = "Option::is_none")]
    claude: Option<&'a ClaudeJson>,
}

pub fn install(ctx: &Context, args: InstallArgs, json: bool) -> Result<Done, Failure> {
    let git = repo_git(ctx)?;
    let work_tree = ctx.repo()?.loc.workdir.clone();
    if args.server {
        return install_server(ctx, &git, &args, json);
    }
    if args.manual {
        let location = hooks::locate(&git)?;
        return manual(&location, work_tree.as_deref(), json, None, None);
    }
    // Found before anything is written: a bare repository has no .claude/ to write to.
    let claude_file = args
        .claude
        .which()
        .map(|which| claude_file(ctx, &args.claude, which))
        .transpose()?;
    if let Some((_, file)) = &claude_file {
        claude::check(file).map_err(claude_failure)?;
    }
    let target = match args.hooks_path {
        true => Target::HooksPath,
        false => Target::Default,
    };
    let force = args.force;
    let report = match hooks::install(&git, InstallOptions { target, force }) {
        Ok(report) => report,
        Err(e) => {
            // A hook manager owns core.hooksPath: the git hooks wait for its recipe, Claude
            // Code's need nothing of it.
            let claude = match (&claude_file, is_refusal(&e)) {
                (Some((which, file)), true) => {
                    Some(install_claude(ctx, which.clone(), file.clone())?)
                }
                _ => None,
            };
            return refuse_or_fail(&git, work_tree.as_deref(), e, json, claude.as_ref());
        }
    };
    install::mark_slots_for_required_credential(ctx.repo()?)?;
    let warnings = report.warnings();
    warn(warnings.iter().map(|w| format!("warning: {}", w.message())));
    if hooks::runs_reference_transaction(&git) == Some(false) {
        warn([
            "warning: this git is older than 2.28 and runs no reference-transaction hook: a superseded holder's commits are refused only at its push".to_string(),
        ]);
    }
    // Installing is opting back in to what `uninstall` opted out of.
    let opted_in =
        hooks::clear_opt_out(&git).map_err(|e| Failure::new(Kind::Failed, e.to_string()))?;
    let claude = claude_file
        .map(|(which, file)| install_claude(ctx, which, file))
        .transpose()?;
    if json {
        let warnings = warnings
            .iter()
            .map(|&kind| WarningJson {
                kind,
                message: kind.message(),
            })
            .collect();
        let shape = InstallJson {
            outcome: if report.wrote_anything()
                || claude
                    .as_ref()
                    .is_some_and(|c| c.outcome == claude::Outcome::Installed)
            {
                OutcomeWord::Installed
            } else {
                OutcomeWord::Unchanged
            },
            hooks_dir: &report.dir,
            hooks_path: report.location.hooks_path.as_deref(),
            hooks: each(&report.hooks),
            displaced: &report.displaced,
            git_hand: report.git_hand.as_deref(),
            warnings,
            opted_in,
            claude,
        };
        return Done::json(&shape, None);
    }
    let mut text = format!("git-hand hooks in {}:\n", report.dir.display());
    text.extend(report.hooks.iter().map(change_line));
    text.extend(
        report
            .displaced
            .iter()
            .map(|p| format!("  {}\n", hooks::displaced_line(p))),
    );
    if opted_in {
        text.push_str(
            "hand.installHooks unset: spawn installs the hooks again when they are missing\n",
        );
    }
    if let Some(c) = &claude {
        text.push_str(&claude_line(c));
    }
    Ok(Done::ok(text))
}

/// The settings file `--claude` names, made absolute: the main worktree's (also from a slot:
/// Claude Code is started in the repository), or the one `--claude-settings` gives.
fn claude_file(
    ctx: &Context,
    args: &ClaudeArgs,
    which: Which,
) -> Result<(Which, PathBuf), Failure> {
    if let Some(file) = &args.claude_settings {
        return Ok((which, claude::normalized(file)));
    }
    let Some(top) = ctx.repo()?.main_workdir() else {
        return Err(Failure::new(
            Kind::Usage,
            "--claude writes the main worktree's .claude/ settings; this repository has no work tree",
        )
        .hint(Hint::hand("install --claude-settings ~/.claude/settings.json")));
    };
    let file = which.in_worktree(&top).unwrap_or_default();
    Ok((which, file))
}

/// Seconds each Claude Code hook may run: `hand.setupTimeout` and git's margin.
fn claude_timeout(repo: &crate::git::Repo) -> Result<u64, Failure> {
    let settings = crate::ops::repo::settings::Settings::load(repo)
        .map_err(|e| Failure::new(Kind::Failed, e.to_string()))?;
    let setup = settings
        .setup_timeout()
        .map_err(|e| Failure::new(Kind::Precondition, e.to_string()))?;
    Ok(claude::timeout_secs(setup))
}

/// Writes git-hand's Claude Code hooks into `file`, loudly when it is the committed one.
fn install_claude(ctx: &Context, which: Which, file: PathBuf) -> Result<ClaudeJson, Failure> {
    let repo = ctx.repo()?;
    let timeout = claude_timeout(repo)?;
    let outcome = claude::install(&repo.loc.common_dir, &file, which.clone(), timeout)
        .map_err(claude_failure)?;
    if which == Which::Shared {
        warn([format!(
            "warning: {} is committed: once it is, every teammate's `claude -w` needs git-hand on its PATH (its WorktreeCreate hook fails the worktree without it); --claude writes your own .claude/settings.local.json instead",
            file.display()
        )]);
    }
    Ok(ClaudeJson {
        file,
        outcome,
        timeout: Some(timeout),
    })
}

/// A settings file that cannot be read or is not Claude Code's settings: nothing was written.
fn claude_failure(e: claude::SettingsError) -> Failure {
    match e {
        claude::SettingsError::Write { .. } => Failure::new(Kind::Failed, e.to_string()),
        // Busy, as a ledger is: exit 3, and the same command again.
        claude::SettingsError::Changed { .. } => Failure::new(Kind::Precondition, e.to_string()),
        claude::SettingsError::Read(crate::repo_file::RepoFileError::Symlink { ref path }) => {
            let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
            Failure::new(Kind::Precondition, e.to_string()).hint(
                Hint::hand(format!(
                    "install --claude-settings {}",
                    crate::hooks::shim::sh_quote(&target.display().to_string())
                ))
                .why("the file the link points to"),
            )
        }
        _ => Failure::new(Kind::Precondition, e.to_string()).hint(Hint::run(
            "fix the file by hand (or move it away), then run the command again",
        )),
    }
}

/// `Claude Code hooks in /r/.claude/settings.local.json: installed (...)`
fn claude_line(c: &ClaudeJson) -> String {
    let what = match c.outcome {
        claude::Outcome::Installed => "installed",
        claude::Outcome::Unchanged => "already current",
        claude::Outcome::Uninstalled => "removed",
        claude::Outcome::NothingInstalled => "none there; nothing to uninstall",
    };
    let detail = c.timeout.map_or(String::new(), |t| {
        format!(" (WorktreeCreate, WorktreeRemove, SessionStart; timeout {t} s each)")
    });
    format!(
        "Claude Code hooks in {}: {what}{detail}\n",
        c.file.display()
    )
}

/// `uninstall --claude`: git-hand's Claude Code hooks only; the git hooks stay.
fn uninstall_claude(
    ctx: &Context,
    args: &ClaudeArgs,
    which: Which,
    json: bool,
) -> Result<Done, Failure> {
    let (_, file) = claude_file(ctx, args, which)?;
    let outcome = claude::uninstall(&ctx.repo()?.loc.common_dir, &file).map_err(claude_failure)?;
    let c = ClaudeJson {
        file,
        outcome,
        timeout: None,
    };
    if json {
        let shape = UninstallClaudeJson {
            outcome: match outcome {
                claude::Outcome::Uninstalled => OutcomeWord::Uninstalled,
                _ => OutcomeWord::NothingInstalled,
            },
            claude: c,
        };
        return Done::json(&shape, None);
    }
    let mut text = claude_line(&c);
    text.push_str("git-hand's git hooks stay (git hand uninstall removes them)\n");
    Ok(Done::ok(text))
}

/// `install --server --json` (docs/hooks.md).
#[derive(Serialize)]
struct ServerJson<'a> {
    /// `installed` or `unchanged`.
    outcome: OutcomeWord,
    hooks_dir: &'a Path,
    /// `chained` or `dispatched` (git-hand's file in the server's `pre-receive.d/`).
    layout: Layout,
    hooks: Vec<HookChangeJson<'a>>,
    /// Whether this call set `receive.advertisePushOptions=true` (false: it was already).
    advertised_push_options: bool,
    /// The ledger the hook will read, opened (created and migrated) by this call: a path, or a
    /// team ledger's URL without its password.
    ledger: &'a Place,
    /// Where that came from: `GIT_HAND_LEDGER`, `git config hand.ledger` or `default`.
    ledger_source: &'a str,
}

/// `install --server`: the pre-receive fence in a bare repository (docs/hooks.md).
fn install_server(
    ctx: &Context,
    git: &Git,
    args: &InstallArgs,
    json: bool,
) -> Result<Done, Failure> {
    if ctx.repo()?.loc.workdir.is_some() {
        return Err(Failure::new(
            Kind::Usage,
            "install --server is for the bare repository clients push to; this one has a work tree",
        )
        .hint(Hint::run("git -C /path/to/repo.git hand install --server").why("on the server"))
        .hint(Hint::hand("install").why("the client hooks, for this clone")));
    }
    let ledger = open_server_ledger(ctx, git)?;
    let rewrite = match args.force {
        true => hooks::Rewrite::Always,
        false => hooks::Rewrite::IfStale,
    };
    let hooks_dir = args
        .hooks_dir
        .as_deref()
        .map(|d| std::path::absolute(d).unwrap_or_else(|_| d.to_path_buf()));
    let target = match &hooks_dir {
        Some(dir) => ServerTarget::Dispatcher(dir),
        None => ServerTarget::Detect,
    };
    let report = hooks::install_server(git, rewrite, target)?;
    let written = install::write_server_ledger(ctx, git, &ledger)?;
    warn(another_users_ledger(ctx.repo()?, git, &ledger));
    let covered = crate::ops::on_hook::pre_receive::Coverage::of(ctx.repo()?);
    if covered.remote_urls.is_empty() {
        warn(Some(covered.warning()));
    }
    let wrote = report.advertised || report.hooks.iter().any(|h| h.change.wrote());
    let outcome = match wrote {
        true => OutcomeWord::Installed,
        false => OutcomeWord::Unchanged,
    };
    if json {
        let shape = ServerJson {
            outcome,
            hooks_dir: &report.dir,
            layout: report.layout,
            hooks: each(&report.hooks),
            advertised_push_options: report.advertised,
            ledger: &ledger.place,
            ledger_source: ledger.source,
        };
        return Done::json(&shape, None);
    }
    let mut text = format!("git-hand server hook in {}:\n", report.dir.display());
    text.extend(report.hooks.iter().map(change_line));
    if report.layout == Layout::Dispatched {
        text.push_str(
            "the server runs every hook in that directory itself: git-hand chains nothing\n",
        );
    }
    text.push_str(match report.advertised {
        true => "receive.advertisePushOptions set to true: pushes can present their lease\n",
        false => "receive.advertisePushOptions is already true\n",
    });
    text.push_str(&format!(
        "ledger: {} (from {}), opened{}\n\
         the hook judges with this repository's own hand.ledger only (never the pusher's \
         environment or configuration); to point it elsewhere: \
         git -C {} config hand.ledger <path-or-url>\n",
        ledger.place,
        ledger.source,
        match written {
            true => ", and written to this repository's hand.ledger",
            false => "",
        },
        git.dir().display()
    ));
    text.push_str(&covered.lines());
    Ok(Done::ok(text))
}

/// The warning when the hook, run as the repository's owner, may not read the ledger found here
/// ([`install::ledger_another_user_may_miss`]).
fn another_users_ledger(
    repo: &crate::git::Repo,
    git: &Git,
    ledger: &LedgerLocation,
) -> Option<String> {
    install::ledger_another_user_may_miss(repo, git, ledger).map(|o| {
        format!(
            "warning: {} belongs to uid {}, not to you (uid {}): the hook runs as the git server's user, with its own environment and configuration, so it may not read {} (found by {}); name the clients' ledger where every user reads it: git -C {} config hand.ledger <path-or-url>",
            git.dir().display(),
            o.owner,
            o.me,
            ledger.place,
            ledger.source,
            git.dir().display()
        )
    })
}

/// Opens the ledger the server's hook will read, as any writing verb does (created if it is
/// not there, migrated), before anything is written: the hook refuses every push when it finds
/// no ledger, so a shim installed beside a ledger that cannot be opened would stop every push to
/// a live repository. A ledger that cannot be opened fails the install (exit 3) with the ledger's
/// own error, and nothing else is changed.
fn open_server_ledger(ctx: &Context, git: &Git) -> Result<LedgerLocation, Failure> {
    let location = ctx.ledger_location()?;
    if let Err(e) = ctx.open_ledger() {
        let mut failure = Failure::from(e);
        failure.kind = Kind::Precondition;
        failure.message = format!(
            "{}; the pre-receive hook would refuse every push without it, so nothing was installed",
            failure.message
        );
        return Err(failure.hint(
            Hint::run(format!(
                "git -C {} config hand.ledger <path-or-url>",
                git.dir().display()
            ))
            .why("the ledger the hook is to read, then run git hand install --server again"),
        ));
    }
    Ok(location)
}

pub fn uninstall(ctx: &Context, args: UninstallArgs, json: bool) -> Result<Done, Failure> {
    if let Some(which) = args.claude.which() {
        return uninstall_claude(ctx, &args.claude, which, json);
    }
    let git = repo_git(ctx)?;
    // A bare repository is where `install --server` put its pre-receive shim.
    let report = match ctx.repo()?.loc.workdir {
        Some(_) => hooks::uninstall(&git)?,
        None => hooks::uninstall_server(&git)?,
    };
    // Uninstalled stays uninstalled: without this the next spawn put the hooks back silently.
    hooks::record_opt_out(&git).map_err(|e| Failure::new(Kind::Failed, e.to_string()))?;
    let opt_out = "hand.installHooks=false: spawn will not install them again (git hand install undoes this)\n";
    if json {
        let shape = UninstallJson {
            outcome: if report.removed_anything() {
                OutcomeWord::Uninstalled
            } else {
                OutcomeWord::NothingInstalled
            },
            hooks_dirs: &report.dirs,
            hooks_path: report.location.hooks_path.as_deref(),
            hooks: each(&report.hooks),
            install_hooks: false,
        };
        return Done::json(&shape, None);
    }
    let dirs: Vec<String> = report
        .dirs
        .iter()
        .map(|d| d.display().to_string())
        .collect();
    let left = report
        .hooks
        .iter()
        .filter(|h| h.change == Change::StaleChained);
    if !report.removed_anything() {
        let mut text = format!(
            "git-hand's hooks are not installed in {}; nothing to uninstall\n",
            dirs.join(" or ")
        );
        text.extend(left.map(change_line));
        text.push_str(opt_out);
        return Ok(Done::ok(text));
    }
    let mut text = format!("git-hand hooks removed from {}:\n", dirs.join(" and "));
    let shown = report
        .hooks
        .iter()
        .filter(|h| h.change != Change::NotInstalled);
    text.extend(shown.map(change_line));
    text.push_str(opt_out);
    Ok(Done::ok(text))
}

/// Git in the top of this worktree (or the git dir of a bare repository): the repository found
/// the way git finds it, `GIT_DIR` included, then asked through the one runner.
fn repo_git(ctx: &Context) -> Result<Git, Failure> {
    let loc = &ctx.repo()?.loc;
    Ok(Git::new(loc.workdir.as_ref().unwrap_or(&loc.admin_dir)))
}

/// `core.hooksPath` is in another tool's hands (or in husky's, for `--hooks-path`): nothing was
/// written; print the recipe for the manager in use, exit 3. Any other error is a plain failure.
/// With `--claude`, the Claude Code hooks were written all the same (`claude`).
fn refuse_or_fail(
    git: &Git,
    work_tree: Option<&Path>,
    e: HookError,
    json: bool,
    claude: Option<&ClaudeJson>,
) -> Result<Done, Failure> {
    if !is_refusal(&e) {
        return Err(e.into());
    }
    let location = hooks::locate(git)?;
    if !json {
        let mut notes = vec![format!("error: {e}")];
        notes.extend(
            super::hint::lines(&e.hints())
                .into_iter()
                .map(|h| format!("  hint: {h}")),
        );
        notes.push("the recipe for your hook manager is on stdout".into());
        notes.extend(claude.map(|c| claude_line(c).trim_end().to_string()));
        warn(notes);
    }
    manual(&location, work_tree, json, Some(&e), claude)
}

/// Whether install refused because another tool's `core.hooksPath` is in charge.
fn is_refusal(e: &HookError) -> bool {
    matches!(
        e,
        HookError::HooksPathSet { .. } | HookError::HuskyHooksPath { .. }
    )
}

/// The recipe for the hook manager in use, as text or as [`ManualJson`] (outcome `refused`,
/// plus `error`, and exit 3 when this is a refusal).
fn manual(
    location: &HooksLocation,
    work_tree: Option<&Path>,
    json: bool,
    refusal: Option<&HookError>,
    claude: Option<&ClaudeJson>,
) -> Result<Done, Failure> {
    let recipe = super::recipe::recipe(&Scene {
        location,
        work_tree,
    });
    let (dir, hooks_path) = (&location.active, location.hooks_path.as_deref());
    let kind = refusal.map(|_| Kind::Precondition);
    let outcome = if refusal.is_some() {
        OutcomeWord::Refused
    } else {
        OutcomeWord::Manual
    };
    if !json {
        return Ok(Done::with(recipe.text, kind));
    }
    let error = refusal.map(|e| (e.to_string(), super::hint::lines(&e.hints())));
    let shape = ManualJson {
        outcome,
        hooks_dir: dir,
        hooks_path,
        manager: recipe.manager,
        recipe: &recipe.text,
        error: error.as_ref().map(|(message, hints)| ErrorBody {
            kind: Kind::Precondition,
            message,
            hints: hints.clone(),
        }),
        claude,
    };
    Done::json(&shape, kind)
}

/// `  pre-push       chained    /r/.git/hooks/pre-push (...)`
fn change_line(c: &HookChange) -> String {
    let chained = c
        .chained
        .as_deref()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy());
    let note = match (c.change, chained) {
        (Change::Chained, Some(n)) => format!(" (your hook is kept as {n} and still runs)"),
        (Change::Restored, _) => " (your hook is back in place)".into(),
        (Change::NotOurs, _) => " (not git-hand's; left alone)".into(),
        (Change::StaleChained, _) => format!(
            " (the server's dispatcher; an older copy of it that git-hand had chained is left, \
             as nothing runs it and putting it back would overwrite the dispatcher: rm {})",
            c.chained.as_deref().unwrap_or(&c.path).display()
        ),
        (_, Some(n)) => format!(" (chained: {n})"),
        _ => String::new(),
    };
    let (hook, change) = (c.hook.to_string(), c.change.to_string());
    format!("  {hook:<14} {change:<10} {}{note}\n", c.path.display())
}

/// Diagnostics on stderr, one `git-hand:` line each.
fn warn(lines: impl IntoIterator<Item = String>) {
    super::output::say(lines);
}
