//! Before anything is leased: the hooks that enforce the lease are installed, or found not in
//! force and said so, so a spawn that dies halfway never leaves a leased slot whose pushes
//! nothing checks without having said so (issue 11).

use crate::git::{Git, Repo};
use crate::hooks::Lapse;

/// Why the hooks will not enforce a spawned lease; the CLI says it loudly, with its fixes.
#[derive(Debug, Clone)]
pub enum HooksNotInForce {
    /// `hand.installHooks` is false, so nothing was installed, and this lapse follows.
    OptedOut(Lapse),
    /// Installing failed, or left the hooks not in force: what is wrong and the commands that
    /// fix it.
    Lapsed {
        problem: String,
        hints: Vec<crate::hint::Hint>,
    },
}

/// Makes sure the hooks that enforce the lease are installed (never writing into a directory
/// another hook manager owns, nor anywhere when `install` is false), and says why not when they
/// are not in force: the problem and the commands that fix it.
pub(super) fn ensure_in_force(
    ctx: &crate::ops::Context,
    repo: &Repo,
    git: &Git,
    install: bool,
) -> Option<HooksNotInForce> {
    // The common case, proven without a git process: no core.hooksPath but git-hand's own for
    // linked worktrees (the read follows includes too), and our current shims in the repository's
    // own hooks directory and in the one of linked worktrees.
    if crate::hooks::not_moved_by_another_tool(repo)
        && crate::hooks::current_in(&repo.loc.common_dir)
    {
        return None;
    }
    if !install {
        return lapse_without_installing(repo, git);
    }
    match crate::hooks::ensure_installed(git) {
        Ok(report) => {
            note_displaced(ctx, &report.displaced);
            report.problem.and_then(|p| {
                // Not git-hand's own shims, but a manager whose hooks call git-hand (husky's or
                // lefthook's recipe committed): in force all the same.
                let by_manager = crate::hooks::in_force(git, repo.loc.workdir.as_deref())
                    .is_ok_and(|state| state.unchecked().is_none());
                (!by_manager).then(|| lapsed(p.to_string(), p.hints()))
            })
        }
        Err(e) => Some(lapsed(e.to_string(), e.hints())),
    }
}

/// Says what the install moved aside: a tool's hook that slots ran instead of git-hand's (an
/// installer run in a slot) stops running there until it is installed from the main worktree.
fn note_displaced(ctx: &crate::ops::Context, displaced: &[std::path::PathBuf]) {
    if displaced.is_empty() {
        return;
    }
    ctx.note(
        displaced
            .iter()
            .map(|p| crate::hooks::displaced_line(p))
            .collect(),
    );
}

/// With `hand.installHooks=false`: nothing is installed or chained, and a lapse is still
/// reported.
fn lapse_without_installing(repo: &Repo, git: &Git) -> Option<HooksNotInForce> {
    match crate::hooks::in_force(git, repo.loc.workdir.as_deref()) {
        Ok(state) => state.unchecked().cloned().map(HooksNotInForce::OptedOut),
        Err(e) => Some(lapsed(e.to_string(), e.hints())),
    }
}

fn lapsed(problem: String, hints: Vec<crate::hint::Hint>) -> HooksNotInForce {
    HooksNotInForce::Lapsed { problem, hints }
}
