//! The words of each doctor finding: what is wrong (its detail), what `--repair` does or did
//! (its action), and the command that settles it by hand, from the facts `ops::doctor` found.

use std::path::Path;

use crate::hint::{Hint, say};
use crate::ops::doctor::{Finding, Rebuild, Reinstall, SetAside, SpawnUndo};

/// What is wrong, and what a repair came to where it did not settle it.
pub(super) fn detail(f: &Finding) -> String {
    match f {
        Finding::LedgerMissing { traces, .. } => traces.clone(),
        Finding::LedgerUnusable { found, .. } => found.clone(),
        Finding::LedgerDamaged {
            report, readable, ..
        } => format!(
            "SQLite's check reports: {}; readable: {readable}",
            report.join("; ")
        ),
        Finding::StuckSpawn { step, undo, .. } => {
            let after = match undo {
                Some(SpawnUndo::Changed(now)) => format!(
                    "; left alone: the task changed while doctor waited for the slot (it is {} \
                     now)",
                    now.map_or_else(|| "gone".into(), |s| s.to_string())
                ),
                Some(SpawnUndo::Failed { why, .. }) => {
                    format!("; cannot put the slot back: {why}")
                }
                Some(SpawnUndo::Abandoned) | None => String::new(),
            };
            format!(
                "spawn stopped at step {:?}; its process is gone{after}",
                step_text(*step)
            )
        }
        Finding::StuckTeardown {
            step,
            cannot_finish,
            ..
        } => format!(
            "teardown stopped at step {:?}; its process is gone{}",
            step_text(*step),
            cannot_finish
                .as_ref()
                .map_or_else(String::new, |e| format!("; cannot finish: {e}"))
        ),
        Finding::Unseen {
            spawn,
            step,
            pid,
            ns,
            here,
        } => format!(
            "{} at step {:?} by process {pid} of PID namespace {ns}, which this /proc ({here}) \
             cannot see into: it may still be at work",
            verb(*spawn),
            step_text(*step),
        ),
        Finding::ExpiredLease {
            n,
            holder,
            token,
            work,
            ..
        } => {
            let mut d = format!("the lease of slot {n} (held by {holder}, token {token}) expired");
            if !work.is_empty() {
                d.push_str(&format!("; the slot holds work: {}", work.join("; ")));
            }
            d
        }
        Finding::MissingSlot { n, task } => match task {
            Some((name, branch)) => format!(
                "slot {n} of active task {name} is gone from disk; its commits are on {branch}"
            ),
            None => format!("slot {n} is gone from disk"),
        },
        Finding::UnknownSlot { worktree: true, .. } => {
            "a worktree of this repository in the pool that the ledger does not know".into()
        }
        Finding::UnknownSlot { .. } => {
            "a directory in the pool that is no worktree of this repository".into()
        }
        Finding::UnusableUnseen { n, why } => format!("free slot {n}: {why}"),
        Finding::UnusableDirty { n, files, .. } => format!(
            "free slot {n} holds {} uncommitted or untracked file(s) (e.g. {}), so no spawn will \
             take it",
            files.len(),
            files.first().map_or("", String::as_str)
        ),
        Finding::UnprovenSlot {
            n,
            why,
            task,
            set_aside,
        } => format!(
            "slot {n} is not the worktree git-hand made: {why}{}{}",
            task.as_ref()
                .map_or_else(String::new, |(name, branch)| format!(
                    "; task {name} holds it, its commits are on {branch}"
                )),
            match set_aside {
                Some(SetAside::LeasedMeanwhile) => "; it was leased meanwhile, left alone",
                _ => "",
            }
        ),
        Finding::PrunableWorktree { locked, .. } => format!(
            "git lists this worktree but its directory is gone{}",
            if *locked { " (locked)" } else { "" }
        ),
        Finding::HalfAdded { gitdir, .. } => format!(
            "its gitdir {gitdir}, so it names no worktree and git lists none (as a git worktree \
             add killed before writing it leaves it); {}",
            half_added(f).0
        ),
        Finding::ClaudeHooksLapsed {
            message,
            kind,
            cannot_write,
            ..
        } => format!(
            "{message} ({kind}){}",
            cannot_write
                .as_ref()
                .map_or_else(String::new, |why| format!("; cannot write them: {why}"))
        ),
        Finding::HooksUnknown { why, .. } => {
            format!("cannot tell whether the hooks are in force: {why}")
        }
        Finding::SlotGotHooks { dir } => format!(
            "the slot had no {}, so git ran no hook in it",
            dir.display()
        ),
        Finding::SlotHooksFailed { why } => {
            format!("cannot give the slot the repository's hooks: {why}")
        }
        Finding::HooksLapsed {
            message,
            kind,
            reinstall,
            ..
        } => {
            let after = match reinstall {
                Some(Reinstall::MendedNow(Some(now))) => format!("; now: {now}"),
                Some(Reinstall::DidNotHelp(why)) => format!("; reinstalling did not help: {why}"),
                Some(Reinstall::Failed { why, .. }) => format!("; cannot reinstall: {why}"),
                _ => String::new(),
            };
            format!("{message} ({kind}){after}")
        }
        Finding::ClockSkew { skew_ms } => format!(
            "{:.1} s {} the team ledger server's",
            skew_ms.unsigned_abs() as f64 / 1000.0,
            if *skew_ms > 0 { "ahead of" } else { "behind" }
        ),
        Finding::UnfencedRemote { .. } => "no hand.remoteUrl is set: the branch fence covers \
                                           pushes to this repository's path only, none over \
                                           ssh or https"
            .into(),
    }
}

/// What `--repair` does, or did.
pub(super) fn action(f: &Finding) -> String {
    match f {
        Finding::LedgerMissing { rebuild, .. } => match rebuild {
            Rebuild::Planned { traces } => rebuild_action(*traces, None),
            Rebuild::Done(record) => record.clone(),
        },
        Finding::LedgerUnusable { aside, rebuild, .. } => match rebuild {
            Rebuild::Planned { traces } => format!(
                "{}; or put back a backup of the ledger instead",
                rebuild_action(*traces, Some(aside))
            ),
            Rebuild::Done(record) => record.clone(),
        },
        Finding::LedgerDamaged { .. } => {
            "none: take a copy that keeps the rows still in the WAL, then put back a backup of \
             the ledger (or salvage the copy with sqlite3's .recover); copying the file alone \
             loses the newest rows"
                .into()
        }
        Finding::StuckSpawn {
            undo: Some(SpawnUndo::Changed(_)),
            ..
        } => "none: its spawn was still at work".into(),
        Finding::StuckSpawn {
            puts_back: true, ..
        } => "put the slot back to a clean checkout, release its leases and mark it done; the \
              branch stays"
            .into(),
        Finding::StuckSpawn { .. } => {
            "release its leases and mark it done; the slot's files and the branch stay".into()
        }
        Finding::StuckTeardown { .. } => {
            "finish the teardown (uncommitted changes block it; commits stay on the branch)".into()
        }
        Finding::Unseen { .. } => "none: a process doctor cannot see is not proven gone".into(),
        Finding::ExpiredLease { work, .. } if !work.is_empty() => {
            "none: the slot holds work".into()
        }
        Finding::ExpiredLease { .. } => {
            "end the lease and mark the task done; the slot becomes free".into()
        }
        Finding::MissingSlot { .. } => {
            "forget the slot (unregister it from git); end the task it held".into()
        }
        Finding::UnknownSlot { worktree: true, .. } => "adopt it as a free slot".into(),
        Finding::UnknownSlot { .. } => "none: git-hand never deletes what it did not make".into(),
        Finding::UnusableUnseen { .. } => "none: a process doctor cannot see is not proven \
                                           gone, so the slot is neither used nor reset from here"
            .into(),
        Finding::UnusableDirty { .. } => "none: whose work it is cannot be told".into(),
        Finding::UnprovenSlot {
            set_aside: Some(SetAside::Kept(kept)),
            ..
        } => format!("set aside: {kept}"),
        Finding::UnprovenSlot { .. } => "end the task holding it, take the slot out of the pool \
                                         and set the directory aside (its files are kept)"
            .into(),
        Finding::PrunableWorktree { locked: true, .. } => "none: it is locked by someone".into(),
        Finding::PrunableWorktree { .. } => "git worktree prune".into(),
        Finding::HalfAdded { .. } => half_added(f).1,
        Finding::ClaudeHooksLapsed { kind, fix, .. } => match kind {
            crate::ops::claude::settings::LapseKind::Unreadable => {
                "none: this needs your hand".into()
            }
            _ => format!("write git-hand's Claude Code hooks again ({fix})"),
        },
        Finding::HooksUnknown { .. } | Finding::SlotHooksFailed { .. } => "none".into(),
        Finding::SlotGotHooks { dir } => {
            format!("copied {} from the main worktree", dir.display())
        }
        Finding::HooksLapsed {
            repairable,
            opted_out,
            ..
        } => match (repairable, opted_out) {
            (true, false) => say("reinstall git-hand's hooks (")
                .hand("install")
                .text(")")
                .into(),
            (true, true) => say("none: hand.installHooks is false (")
                .hand("uninstall")
                .text("); ")
                .hand("install")
                .text(" opts back in")
                .into(),
            (false, _) => "none: this needs your hand".into(),
        },
        Finding::ClockSkew { .. } => "none by doctor: every lease time is the server's, so \
                                      leases are unaffected; set this machine's clock"
            .into(),
        Finding::UnfencedRemote { .. } => "none by doctor: name each URL clients push to".into(),
    }
}

/// The command that settles it by hand, when doctor does not.
pub(super) fn command(f: &Finding) -> Option<Hint> {
    match f {
        Finding::LedgerDamaged { backup, .. } => {
            Some(Hint::hand(format!("doctor --backup {}", backup.display())))
        }
        Finding::StuckSpawn {
            undo: Some(SpawnUndo::Failed { slot, .. }),
            ..
        } => Some(Hint::run(format!("git -C {slot} status"))),
        Finding::StuckTeardown {
            task,
            cannot_finish: Some(_),
            ..
        } => Some(Hint::hand(format!("teardown {task} --force"))),
        Finding::Unseen { spawn, ns, .. } => Some(Hint::hand("doctor --repair").why(format!(
            "from PID namespace {ns} or one above it, once its {} is over",
            verb(*spawn)
        ))),
        Finding::ExpiredLease { task, work, .. } if !work.is_empty() => Some(
            Hint::hand(format!("teardown {task}")).why("or --force to discard uncommitted changes"),
        ),
        Finding::UnknownSlot {
            key,
            worktree: false,
        } => {
            Some(Hint::run(format!("rm -rf {key}")).why("after checking it holds nothing you need"))
        }
        Finding::UnusableUnseen { .. } => {
            Some(Hint::hand("doctor").why("from that PID namespace or one above it"))
        }
        Finding::UnusableDirty { path, .. } => {
            Some(Hint::run(format!("git -C {path} stash -u")).why(format!(
                "keep it; or, if nothing there is anyone's: git -C {path} reset --hard && git -C \
                 {path} clean -d -f"
            )))
        }
        Finding::PrunableWorktree { path, locked: true } => Some(Hint::run(format!(
            "git worktree unlock {path} && git worktree prune"
        ))),
        Finding::HalfAdded { .. } => {
            let command = half_added(f).2;
            (!command.is_empty()).then(|| Hint::run(command))
        }
        Finding::ClaudeHooksLapsed {
            fix,
            cannot_write,
            by_hand,
            ..
        } => (cannot_write.is_some() || *by_hand).then(|| Hint::run(fix.clone())),
        Finding::HooksUnknown { fix, .. } => fix.clone(),
        Finding::HooksLapsed {
            repairable,
            opted_out,
            fix,
            reinstall,
            ..
        } => match reinstall {
            Some(Reinstall::DidNotHelp(_)) => fix.clone(),
            Some(Reinstall::Failed { fix, .. }) => fix.clone(),
            _ if *repairable && !opted_out => None,
            _ if *repairable => Some(Hint::hand("install")),
            _ => fix.clone(),
        },
        Finding::ClockSkew { .. } => Some(Hint::run("timedatectl set-ntp true")),
        Finding::UnfencedRemote { common } => Some(Hint::run(format!(
            "git -C {} config --add hand.remoteUrl <url>",
            common.display()
        ))),
        _ => None,
    }
}

/// A step as doctor names it (`?`: none recorded).
fn step_text(step: Option<crate::ledger::Step>) -> String {
    step.map_or_else(|| "?".into(), |s| s.to_string())
}

fn verb(spawn: bool) -> &'static str {
    if spawn { "spawn" } else { "teardown" }
}

/// What a half-added admin dir's lock says of it, what `--repair` does about it and the command
/// that settles it by hand (empty: none).
fn half_added(f: &Finding) -> (String, String, String) {
    let Finding::HalfAdded {
        admin,
        reason,
        others,
        removable,
        ..
    } = f
    else {
        return Default::default();
    };
    let admin = admin.display();
    match (reason, others.is_empty()) {
        (None, _) => (
            "not locked, so git worktree prune removes it".to_string(),
            "none by doctor: git's own prune judges it".to_string(),
            "git worktree prune".to_string(),
        ),
        (Some(reason), true) if *removable => (
            format!("locked (\"{reason}\"), so git worktree prune keeps it"),
            "remove it (under the worktree-list lock: no git-hand is adding a worktree)"
                .to_string(),
            String::new(),
        ),
        (Some(reason), true) => (
            format!("locked by someone else (\"{reason}\")"),
            "none: it is not certainly a killed add's".to_string(),
            format!("rm -r {admin}"),
        ),
        (Some(reason), false) => (
            format!(
                "locked (\"{reason}\"), and holding {}, which a killed add writes only after its \
                 gitdir",
                others.join(", ")
            ),
            "none: it is not certainly a killed add's".to_string(),
            format!("rm -r {admin}"),
        ),
    }
}

/// What a rebuild from `traces` worktrees will do, after moving the file `aside` if there is one.
fn rebuild_action(traces: usize, aside: Option<&Path>) -> String {
    let moved = aside.map_or_else(String::new, |a| {
        format!("move it aside to {}, then ", a.display())
    });
    if traces == 0 {
        format!("{moved}create a new, empty ledger")
    } else {
        format!(
            "{moved}build a new ledger from {} found: slots known again, each worktree's tokens \
             continuing after its stamp's",
            crate::ops::doctor::recover::count(traces, "worktree")
        )
    }
}
