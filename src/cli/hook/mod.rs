//! `git-hand hook pre-push|post-checkout|reference-transaction|pre-receive`: what the shims in
//! `hooks/` exec (reference-transaction's own command is in [`reference_transaction`], the server's
//! pre-receive in [`pre_receive`], Claude Code's in [`claude`]).
//!
//! pre-push fails closed: a credential that is not current, or a ledger that cannot be read,
//! refuses the push. post-checkout never fails the checkout: it only warns.

use std::ffi::OsString;
use std::io::Read;
use std::process::ExitCode;

use clap::Subcommand;

mod claude;
mod pre_receive;
mod reference_transaction;

use super::{Done, Failure};
use crate::git::INTERNAL_ENV;
use crate::hooks::{HookName, chain};
use crate::ops::Context;
use crate::ops::on_hook::{self, PostCheckout};

#[derive(Debug, Subcommand)]
pub enum HookCommand {
    /// Called by git before a push: `<remote> <url>`, refs on stdin.
    PrePush {
        #[arg(allow_hyphen_values = true, num_args = 0..)]
        args: Vec<OsString>,
    },
    /// Called by git after a checkout: `<prev> <new> <flag>`.
    PostCheckout {
        #[arg(allow_hyphen_values = true, num_args = 0..)]
        args: Vec<OsString>,
    },
    /// Called by git in each state of a ref transaction: `<state>`, `<old> <new> <ref>` on stdin.
    ReferenceTransaction {
        #[arg(allow_hyphen_values = true, num_args = 0..)]
        args: Vec<OsString>,
    },
    /// Called by git on the server before it accepts a push: `<old> <new> <ref>` on stdin, the
    /// push options in `GIT_PUSH_OPTION_<i>`.
    PreReceive {
        #[arg(allow_hyphen_values = true, num_args = 0..)]
        args: Vec<OsString>,
    },
    /// Called by Claude Code's hooks (`git hand install --claude`): the event's JSON on stdin.
    Claude {
        #[arg(value_enum)]
        event: claude::ClaudeEvent,
    },
}

/// `git-hand hook <name> <args>...` exactly as the shims run it, read without clap: the hooks run
/// inside every push and checkout, and building the whole command line first cost a quarter of
/// a millisecond there. Anything else (e.g. `-C`) goes through clap as usual.
pub(crate) fn parse_direct(mut argv: impl Iterator<Item = OsString>) -> Option<HookCommand> {
    argv.next()?; // the program
    if argv.next()? != "hook" {
        return None;
    }
    let name = argv.next()?;
    let args = argv.collect();
    match name.to_str()?.parse::<HookName>().ok()? {
        HookName::PrePush => Some(HookCommand::PrePush { args }),
        HookName::PostCheckout => Some(HookCommand::PostCheckout { args }),
        HookName::ReferenceTransaction => Some(HookCommand::ReferenceTransaction { args }),
        HookName::PreReceive => Some(HookCommand::PreReceive { args }),
    }
}

pub(super) fn say(lines: &[String]) {
    super::output::say(lines);
}

/// Whether this process runs under a `git-hand hook` of the same name (it exported
/// [`crate::hooks::IN_HOOK_ENV`] to the hook it chained): a hand-written hook or a manager calling `git-hand
/// hook pre-push` from inside the chain. Such a call neither judges nor runs the chained hook
/// again (that recursed without bound, issue 11); it exits 0 at once, without reading stdin (the
/// hook that called it may still want it), and the outer call judges once the chain returns.
/// The marker counts only where it is bound to this `PATH` ([`chain::inside_own_chain`]): one a
/// git started below the chain, or an agent, inherited is judged (issue 22).
fn reentered(hook: HookName) -> bool {
    chain::inside_own_chain(hook)
}

pub fn run(ctx: &Context, cmd: HookCommand) -> Result<Done, Failure> {
    let (hook, args) = match cmd {
        // Claude Code's hooks are no git hook: no chain, nothing to re-enter.
        HookCommand::Claude { event } => return claude::run(ctx, event),
        HookCommand::PrePush { args } => (HookName::PrePush, args),
        HookCommand::PostCheckout { args } => (HookName::PostCheckout, args),
        HookCommand::ReferenceTransaction { args } => (HookName::ReferenceTransaction, args),
        HookCommand::PreReceive { args } => (HookName::PreReceive, args),
    };
    if reentered(hook) {
        return Ok(exit(0));
    }
    Ok(match hook {
        HookName::PrePush => pre_push(ctx, &args),
        HookName::PostCheckout => post_checkout(ctx, &args),
        HookName::ReferenceTransaction => reference_transaction::reference_transaction(ctx, &args),
        HookName::PreReceive => pre_receive::pre_receive(ctx, &args),
    })
}

pub(super) fn exit(code: u8) -> Done {
    Done {
        stdout: String::new(),
        code: ExitCode::from(code),
    }
}

fn pre_push(ctx: &Context, args: &[OsString]) -> Done {
    let mut stdin = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut stdin) {
        say(&[format!(
            "push refused: cannot read what is being pushed: {e}"
        )]);
        return exit(1);
    }
    match chain::run_chained(HookName::PrePush, None, args, &stdin) {
        Ok(Some(status)) if !status.success() => {
            return exit(crate::platform::exit_status::exit_code(status).max(1));
        }
        Ok(_) => {}
        Err(e) => {
            say(&[format!(
                "push refused: the chained pre-push hook could not run: {e}"
            )]);
            return exit(1);
        }
    }
    let decision = on_hook::parse_push_lines(&String::from_utf8_lossy(&stdin))
        .map_err(|e| crate::ops::Error::from(crate::ops::on_hook::OnHookError::Unread { why: e }))
        .and_then(|refs| {
            let url = args.get(1).map(|u| u.to_string_lossy());
            on_hook::pre_push(ctx, url.as_deref(), &refs)
        });
    match decision {
        Ok(p) if p.refusal.is_none() => {
            if let Some(why) = &p.unchecked {
                say(&[
                    format!("warning: {why}"),
                    "warning: this worktree is not a git-hand slot, so the push goes on \
                     unchecked (no task's branch could be fenced)"
                        .into(),
                ]);
            }
            upload_lfs_objects(ctx, args, &stdin)
        }
        Ok(p) => {
            say(&super::refusal::lines(&p, on_hook::Said::Push));
            exit(1)
        }
        Err(e) => cannot_check("push refused", e),
    }
}

/// A hook that cannot judge refuses (it fails closed), saying why and what to run.
pub(super) fn cannot_check(refused: &str, e: crate::ops::Error) -> Done {
    let f = Failure::from(e);
    let mut lines = vec![format!(
        "{refused}: cannot check this worktree's lease: {}",
        f.message
    )];
    lines.extend(
        crate::cli::hint::lines(&f.hints)
            .iter()
            .map(|h| format!("  run: {h}")),
    );
    say(&lines);
    exit(1)
}

/// An allowed push whose LFS objects nothing in the chain uploads: git-hand runs git-lfs's
/// pre-push itself (see [`chain::run_lfs_pre_push`]); its failure fails the push, as it would
/// have in git-lfs's own hook.
fn upload_lfs_objects(ctx: &Context, args: &[OsString], stdin: &[u8]) -> Done {
    // The repository was found to judge the push: its common dir holds the LFS objects.
    let Some(repo) = ctx.repo_opt() else {
        return exit(0);
    };
    match chain::run_lfs_pre_push(None, &repo.loc.common_dir, args, stdin) {
        Ok(None) => exit(0),
        Ok(Some(chain::LfsRun::Ran(status))) if status.success() => exit(0),
        Ok(Some(chain::LfsRun::Ran(status))) => {
            say(&["push stopped: git lfs pre-push failed (above); the LFS objects were not all uploaded".into()]);
            exit(crate::platform::exit_status::exit_code(status).max(1))
        }
        Ok(Some(chain::LfsRun::Missing)) => {
            say(&[
                "push stopped: this repository has LFS objects but git-lfs is not on PATH, so they cannot be uploaded".into(),
                "fix: install git-lfs (e.g. apt-get install git-lfs), then push again".into(),
            ]);
            exit(1)
        }
        Err(e) => {
            say(&[format!("push stopped: git lfs pre-push could not run: {e}")]);
            exit(1)
        }
    }
}

fn post_checkout(ctx: &Context, args: &[OsString]) -> Done {
    let chained = chain::run_chained(HookName::PostCheckout, None, args, &[]);
    if std::env::var_os(INTERNAL_ENV).is_none() {
        let arg = |i: usize| {
            args.get(i)
                .map(|a| a.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        match on_hook::post_checkout(ctx, &arg(0), &arg(2)) {
            Ok(PostCheckout::LeaseEnded { verdict }) => say(&[format!(
                "this worktree's lease has ended ({verdict}): pushes from here will be refused; see git hand status"
            )]),
            Ok(PostCheckout::Registered(crate::ops::on_hook::adopt::Registered {
                adopted_as: Some(name),
                ..
            })) => say(&[format!(
                "leased this worktree as task {} (hand.adoptWorktrees); its pushes are fenced",
                crate::shown::shown(&name)
            )]),
            Ok(_) => {}
            Err(e) => say(&[format!("post-checkout: {e} (the checkout itself is fine)")]),
        }
    }
    // The chained hook's status is the hook's status; ours never fails the checkout.
    match chained {
        Ok(Some(status)) => exit(crate::platform::exit_status::exit_code(status)),
        _ => exit(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(args: &[&str]) -> impl Iterator<Item = OsString> {
        args.iter()
            .map(OsString::from)
            .collect::<Vec<_>>()
            .into_iter()
    }

    #[test]
    fn the_shims_command_line_is_read_without_clap_and_anything_else_is_left_to_it() {
        let Some(HookCommand::PrePush { args }) = parse_direct(argv(&[
            "git-hand",
            "hook",
            "pre-push",
            "origin",
            "--weird-url",
        ])) else {
            panic!("pre-push not read directly");
        };
        assert_eq!(args, ["origin", "--weird-url"]);
        assert!(matches!(
            parse_direct(argv(&["git-hand", "hook", "post-checkout", "a", "b", "1"])),
            Some(HookCommand::PostCheckout { .. })
        ));
        for other in [
            &["git-hand"][..],
            &["git-hand", "spawn", "t"],
            &["git-hand", "hook"],
            &["git-hand", "hook", "pre-commit"],
            &["git-hand", "-C", "x", "hook", "pre-push"],
        ] {
            assert!(parse_direct(argv(other)).is_none(), "{other:?}");
        }
    }
}
