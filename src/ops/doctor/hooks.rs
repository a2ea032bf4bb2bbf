//! Worktrees whose pushes git-hand's hooks would not check.

use std::path::{Path, PathBuf};

use super::{Checkup, Finding, Problem, ProblemKind, Reinstall};
use crate::git::Git;
use crate::hooks::{Lapse, LapseKind};
use crate::ledger::Ledger;
use crate::ops::Result;

/// What `--repair`'s one reinstall into a hooks directory came to.
type Reinstalled = std::result::Result<crate::hooks::EnsureReport, crate::hooks::HookError>;

impl Checkup<'_> {
    /// Worktrees whose pushes git-hand's hooks would not check: this one and every open task's
    /// slot (a per-worktree `core.hooksPath` can differ), each hooks directory looked at once.
    /// `--repair` reinstalls into the repository's own hooks directory, never into a
    /// `core.hooksPath` another tool owns (the recipe is the command then), and not when the
    /// user opted out (`hand.installHooks=false`, set by `git hand uninstall`).
    pub(super) fn hooks_not_in_force(
        &self,
        ledger: &mut Ledger,
        out: &mut Vec<Problem>,
    ) -> Result<()> {
        let open = ledger.read(|v| v.tasks(&self.repo_id, crate::ledger::Tasks::Open))?;
        let slots = open
            .iter()
            .filter_map(|t| t.slot_path.as_ref())
            .map(|key| key.as_path().to_path_buf())
            .filter(|p| p.is_dir())
            .collect();
        let check = HooksCheck {
            repo: self.repo,
            repair: self.repair,
        };
        check.worktrees(slots, !open.is_empty(), out)
    }
}

/// The hooks of a repository the ledger does not know (moved since its tasks were leased, or
/// never spawned in): the main worktree's, and through it the hooks its slots run (a moved
/// repository's `linked.config` points them at the old place).
pub(super) fn hooks_of_unknown_repository(
    repo: &crate::git::Repo,
    repair: bool,
    out: &mut Vec<Problem>,
) -> Result<()> {
    // Only where git-hand's hooks were installed: a repository git-hand never touched has
    // nothing of git-hand's to be out of force.
    let installed = crate::hooks::linked::Paths::of(&repo.loc.common_dir)
        .config
        .exists();
    match installed {
        true => HooksCheck { repo, repair }.worktrees(vec![], false, out),
        false => Ok(()),
    }
}

/// The hooks check of one repository: its main worktree and the `slots` given.
struct HooksCheck<'a> {
    repo: &'a crate::git::Repo,
    repair: bool,
}

impl HooksCheck<'_> {
    fn worktrees(&self, slots: Vec<PathBuf>, leased: bool, out: &mut Vec<Problem>) -> Result<()> {
        let mut worktrees: Vec<PathBuf> = self.repo.loc.workdir.iter().cloned().collect();
        worktrees.extend(slots);
        let opted_out = !crate::ops::repo::settings::Settings::load(self.repo)?.install_hooks()?;
        if opted_out && !leased {
            // Uninstalled on purpose and nothing leased: nothing goes unchecked.
            return Ok(());
        }
        let mut seen_dirs = vec![];
        let mut seen_lapses = vec![];
        for worktree in worktrees {
            // A slot leased before slots got the repository's generated hooks directory (husky's
            // `.husky/_`) runs no hook at all: `--repair` gives it that directory.
            if self.repair && Some(&worktree) != self.repo.loc.workdir.as_ref() {
                out.extend(self.give_slot_the_repository_hooks(&worktree));
            }
            let git = Git::new(&worktree);
            let state = match crate::hooks::in_force(&git, Some(&worktree)) {
                Ok(state) => state,
                Err(e) => {
                    out.push(Problem {
                        kind: ProblemKind::HooksNotInForce,
                        subject: worktree.display().to_string(),
                        finding: Finding::HooksUnknown {
                            why: e.to_string(),
                            fix: e.hints().into_iter().next(),
                        },
                        repaired: false,
                    });
                    continue;
                }
            };
            // Slots share the hooks directory of linked worktrees, the main worktree does not;
            // a lapse they share with it (the pre-push both run) is named once.
            let key = (state.dir.clone(), state.linked.clone());
            if seen_dirs.contains(&key) {
                continue;
            }
            seen_dirs.push(key);
            let lapses: Vec<&Lapse> = state
                .lapses
                .iter()
                .filter(|l| !seen_lapses.contains(&(l.kind, l.message.clone())))
                .collect();
            seen_lapses.extend(lapses.iter().map(|l| (l.kind, l.message.clone())));
            // One reinstall mends every lapse of this directory that git-hand may fix: the
            // same `ensure_installed` a second lapse ran again found nothing left to do.
            let reinstalled = (self.repair && !opted_out && lapses.iter().any(|l| l.repairable))
                .then(|| crate::hooks::ensure_installed(&git));
            for lapse in lapses {
                out.push(self.lapse(&worktree, lapse, opted_out, reinstalled.as_ref()));
            }
        }
        Ok(())
    }

    /// Copies the repository's generated hooks directory into a slot that lacks it (see
    /// [`crate::ops::pool::slot_hooks::inherit`]); a problem when it did, or could not.
    fn give_slot_the_repository_hooks(&self, worktree: &Path) -> Option<Problem> {
        match crate::ops::pool::slot_hooks::inherit(self.repo, worktree) {
            Ok(Some(dir)) => Some(Problem {
                kind: ProblemKind::HooksNotInForce,
                subject: worktree.display().to_string(),
                finding: Finding::SlotGotHooks { dir },
                repaired: true,
            }),
            Ok(None) => None,
            Err(e) => Some(Problem {
                kind: ProblemKind::HooksNotInForce,
                subject: worktree.display().to_string(),
                finding: Finding::SlotHooksFailed { why: e.to_string() },
                repaired: false,
            }),
        }
    }

    /// One lapse of the hooks of `worktree`, with what `--repair`'s reinstall of its directory
    /// came to (`reinstalled`, run when git-hand may write there: not a `core.hooksPath`
    /// another tool owns, not after the user opted out).
    fn lapse(
        &self,
        worktree: &Path,
        lapse: &Lapse,
        opted_out: bool,
        reinstalled: Option<&Reinstalled>,
    ) -> Problem {
        let fixes = lapse.repairable && !opted_out;
        let reinstall = reinstalled.filter(|_| fixes).map(|r| match r {
            Ok(r) if r.in_force() => Reinstall::Mended,
            // Slots handed to the main worktree's core.hooksPath: this lapse is mended, and
            // what that directory lacks is its own lapse, named with its recipe.
            Ok(r) if lapse.kind == LapseKind::LinkedHooks && !r.changes.is_empty() => {
                Reinstall::MendedNow(r.problem.as_ref().map(|p| p.to_string()))
            }
            Ok(r) => Reinstall::DidNotHelp(
                r.problem
                    .as_ref()
                    .map(|p| p.to_string())
                    .unwrap_or_default(),
            ),
            Err(e) => Reinstall::Failed {
                why: e.to_string(),
                fix: e.hints().into_iter().next(),
            },
        });
        Problem {
            kind: ProblemKind::HooksNotInForce,
            subject: worktree.display().to_string(),
            repaired: matches!(reinstall, Some(Reinstall::Mended | Reinstall::MendedNow(_))),
            finding: Finding::HooksLapsed {
                message: lapse.message.clone(),
                kind: lapse.kind,
                repairable: lapse.repairable,
                opted_out,
                fix: lapse.hints.first().cloned(),
                reinstall,
            },
        }
    }
}
