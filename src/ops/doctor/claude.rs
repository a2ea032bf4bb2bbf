//! Claude Code hooks that lapsed where `git hand install --claude` wrote them.

use std::path::PathBuf;

use super::{Problem, ProblemKind};
use crate::git::Repo;
use crate::hint::Hint;
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
            let mut p = Problem {
                kind: ProblemKind::ClaudeHooksLapsed,
                subject: lapse.file.display().to_string(),
                detail: format!("{} ({})", lapse.message, lapse.kind),
                action: match lapse.kind {
                    LapseKind::Unreadable => "none: this needs your hand".into(),
                    _ => format!("write git-hand's Claude Code hooks again ({})", lapse.fix),
                },
                repaired: false,
                command: None,
            };
            match done {
                Some((_, Ok(()))) => p.repaired = true,
                Some((_, Err(why))) => {
                    p.detail.push_str(&format!("; cannot write them: {why}"));
                    p.command = Some(Hint::run(lapse.fix.clone()));
                }
                None if lapse.kind == LapseKind::Unreadable || !repair => {
                    p.command = Some(Hint::run(lapse.fix.clone()));
                }
                None => {}
            }
            p
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
