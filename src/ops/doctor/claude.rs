//! Claude Code hooks that lapsed where `git hand install --claude` wrote them.

use std::path::PathBuf;

use super::{Finding, Problem, ProblemKind};
use crate::git::Repo;
use crate::ops::claude::settings::{self, LapseKind};

/// One problem per lapse of git-hand's entries in each settings file `install --claude`
/// recorded, whether or not git-hand leased anything yet. `--repair` writes them again (as
/// `install --claude` does) into a file that still reads as settings; one that does not needs
/// the user's hand.
pub(super) fn claude_hooks_lapsed(repo: &Repo, repair: bool) -> Vec<Problem> {
    let Some(state) = settings::in_force(repo) else {
        return vec![];
    };
    let repaired = if repair {
        write_again(repo, &state)
    } else {
        vec![]
    };
    state
        .lapses
        .iter()
        .map(|lapse| {
            let done = repaired.iter().find(|(f, _)| f == &lapse.file);
            Problem {
                kind: ProblemKind::ClaudeHooksLapsed,
                subject: lapse.file.display().to_string(),
                repaired: matches!(done, Some((_, Ok(())))),
                finding: Finding::ClaudeHooksLapsed {
                    message: lapse.message.clone(),
                    kind: lapse.kind,
                    fix: lapse.fix.clone(),
                    cannot_write: done.and_then(|(_, r)| r.clone().err()),
                    by_hand: done.is_none() && (lapse.kind == LapseKind::Unreadable || !repair),
                },
            }
        })
        .collect()
}

/// `--repair`: the entries written again into each recorded file that lapsed and still reads
/// as settings, with what came of it.
fn write_again(repo: &Repo, state: &settings::InForce) -> Vec<(PathBuf, Result<(), String>)> {
    let lapsed = |file: &PathBuf, kind: Option<LapseKind>| {
        state
            .lapses
            .iter()
            .any(|l| &l.file == file && kind.is_none_or(|k| l.kind == k))
    };
    settings::recorded(&repo.loc.common_dir)
        .into_iter()
        .filter(|i| lapsed(&i.file, None) && !lapsed(&i.file, Some(LapseKind::Unreadable)))
        .map(|install| {
            let done = settings::install(
                &repo.loc.common_dir,
                &install.file,
                install.which.clone(),
                state.timeout,
            )
            .map(drop)
            .map_err(|e| e.to_string());
            (install.file, done)
        })
        .collect()
}
