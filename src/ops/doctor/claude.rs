//! Claude Code hooks that lapsed where `git hand install --claude` wrote them.

use super::{Problem, ProblemKind};
use crate::git::Repo;
use crate::ops::claude::settings::{self, LapseKind};

/// One problem per lapse of git-hand's entries in each settings file `install --claude`
/// recorded, whether or not git-hand leased anything yet. `--repair` writes them again (as
/// `install --claude` does) into a file that still reads as settings; one that does not needs
/// the user's hand.
pub(super) fn claude_hooks_lapsed(repo: &Repo, repair: bool) -> Vec<Problem> {
    let mut out = vec![];
    {
        let Some(state) = settings::in_force(repo) else {
            return out;
        };
        let mut repaired: Vec<(std::path::PathBuf, Result<(), String>)> = vec![];
        if repair {
            for install in settings::recorded(&repo.loc.common_dir) {
                let lapsed = state.lapses.iter().any(|l| l.file == install.file);
                let readable = !state
                    .lapses
                    .iter()
                    .any(|l| l.file == install.file && l.kind == LapseKind::Unreadable);
                if lapsed && readable {
                    let done = settings::install(
                        &repo.loc.common_dir,
                        &install.file,
                        install.which.clone(),
                        state.timeout,
                    )
                    .map(drop)
                    .map_err(|e| e.to_string());
                    repaired.push((install.file, done));
                }
            }
        }
        for lapse in &state.lapses {
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
                    p.command = Some(lapse.fix.clone());
                }
                None if lapse.kind == LapseKind::Unreadable || !repair => {
                    p.command = Some(lapse.fix.clone());
                }
                None => {}
            }
            out.push(p);
        }
    }
    out
}
