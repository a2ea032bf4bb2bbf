//! `git-hand hook claude worktree-create|worktree-remove|session-start`: what the entries `git
//! hand install --claude` writes into Claude Code's settings run (docs/agents.md). Each reads the
//! JSON object Claude Code hands it on stdin.
//!
//! `worktree-create` prints the slot's path, alone, as the last line of stdout: Claude Code
//! runs the session there. Everything else goes to stderr, and any failure exits 1, which fails
//! the session's start (Claude Code has no fallback: a worktree nothing leased is never made).
//! `worktree-remove`'s status is ignored by Claude Code, and `session-start`'s stdout would be
//! read by the model as context: both say what they did on stderr only.

use std::io::Write;

use clap::ValueEnum;

use super::{exit, say};
use crate::cli::{Done, Failure};
use crate::hint::Hint;
use crate::ops::Context;
use crate::ops::claude::HookInput;
use crate::ops::claude::create::{self, Created};
use crate::ops::claude::remove::{self, Removed};
use crate::ops::claude::session_start::{self, ENV_FILE_ENV, Started};
use crate::ops::task::spawn::{Progress, SlotSource};
use crate::ops::task::teardown::TornDown;

/// The Claude Code hook event a command serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClaudeEvent {
    WorktreeCreate,
    WorktreeRemove,
    SessionStart,
}

pub fn run(ctx: &Context, event: ClaudeEvent) -> Result<Done, Failure> {
    let input = HookInput::read(std::io::stdin().lock())?;
    match event {
        ClaudeEvent::WorktreeCreate => worktree_create(ctx, &input),
        ClaudeEvent::WorktreeRemove => Ok(worktree_remove(ctx, &input)),
        ClaudeEvent::SessionStart => Ok(session_start(ctx, &input)),
    }
}

fn worktree_create(ctx: &Context, input: &HookInput) -> Result<Done, Failure> {
    // The hook runs in the project directory; the input says which.
    let here = match &input.cwd {
        Some(cwd) => Context::new(cwd.clone())
            .with_scan(ctx.scan())
            .with_env(ctx.env().clone()),
        None => Context::new(ctx.cwd.clone())
            .with_scan(ctx.scan())
            .with_env(ctx.env().clone()),
    };
    if let Err(e) = here.repo() {
        return Err(Failure::from(e).hint(Hint::run(
            "Claude Code's worktrees come from git-hand only in a git repository: start claude \
             -w in one",
        )));
    }
    let name = input.name.clone().unwrap_or_default();
    let progress = |busy: Progress<'_>| {
        if let Progress::Setup(event) = busy {
            crate::cli::setup::show(&name, event);
        }
    };
    let created = create::create(&here, input, &progress);
    let mut err = std::io::stderr().lock();
    for note in here.take_notices() {
        let _ = writeln!(err, "git-hand: note: {note}");
    }
    let Created { spawned, holder } = created?;
    let how = match spawned.source {
        SlotSource::Created => "a new slot",
        SlotSource::Reused => "a reused slot",
        SlotSource::Existing => "the slot it already has (a retry)",
    };
    let session = match &holder.session {
        Some(s) => format!("session {s}"),
        None => "a session that sent no session id (keyed by the worktree name alone)".into(),
    };
    say(&[format!(
        "leased {how} to {session} as task {} on branch {} (token {})",
        spawned.task.name, spawned.task.branch, spawned.tenure.token
    )]);
    if let Some(lapse) = &spawned.hooks_problem {
        let words = crate::cli::spawn::HooksWords::of(lapse);
        say(&[format!(
            "WARNING: this lease is NOT enforced: {}",
            words.problem
        )]);
        say(&words
            .hints
            .iter()
            .map(|h| format!("  fix: {h}"))
            .collect::<Vec<_>>());
    }
    Ok(Done::ok(format!("{}\n", spawned.path.display())))
}

fn worktree_remove(ctx: &Context, input: &HookInput) -> Done {
    let name = input
        .worktree_path
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let show =
        |event: crate::ops::repo::setup::SetupEvent<'_>| crate::cli::setup::show(&name, event);
    match remove::remove(
        ctx.scan(),
        input,
        Some(crate::ops::repo::setup::Shown(&show)),
    ) {
        Ok(Removed::Ended(TornDown::Freed { task, .. })) => say(&[format!(
            "task {} ended: its slot is free for the next task, its commits stay on {}",
            task.name, task.branch
        )]),
        Ok(Removed::Ended(TornDown::LeaseEnded { task, .. } | TornDown::AlreadyDone(task))) => {
            say(&[format!(
                "task {} had ended already; its commits stay on {}",
                task.name, task.branch
            )])
        }
        Ok(Removed::KeptOpen { task, dirty }) => {
            let mut lines = vec![format!(
                "task {} is left open: its slot holds {} uncommitted change(s), which removing it \
                 would lose",
                task.name,
                dirty.len()
            )];
            lines.push(format!(
                "  commit them (git -C {0} add -A && git -C {0} commit), then: git hand teardown {1}",
                task.slot_key(),
                task.name
            ));
            lines.push(format!(
                "  or drop them: git hand teardown --force {}",
                task.name
            ));
            say(&lines);
        }
        Ok(Removed::NotOurs { path, why }) => say(&[format!(
            "left {} as it is: {why}",
            crate::shown::path(&path)
        )]),
        Err(e) => {
            let f = Failure::from(e);
            let mut lines = vec![format!("worktree not removed: {}", f.message)];
            lines.extend(
                crate::cli::hint::lines(&f.hints)
                    .iter()
                    .map(|h| format!("  run: {h}")),
            );
            say(&lines);
            return exit(1);
        }
    }
    exit(0)
}

fn session_start(ctx: &Context, input: &HookInput) -> Done {
    let env_file = std::env::var_os(ENV_FILE_ENV)
        .filter(|f| !f.is_empty())
        .map(std::path::PathBuf::from);
    match session_start::session_start(ctx.scan(), input, &ctx.cwd, env_file.as_deref()) {
        Ok(Started::Exported {
            task,
            tenure,
            current: false,
            ..
        }) => say(&[format!(
            "this session's lease of task {} (token {}) is no longer the slot's: its commits \
             and pushes here will be refused",
            task.name, tenure.token
        )]),
        Ok(_) => {}
        Err(e) => {
            say(&[format!("session credential not set: {e}")]);
            return exit(1);
        }
    }
    exit(0)
}
