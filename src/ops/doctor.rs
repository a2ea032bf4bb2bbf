//! `git hand doctor [--repair]`: find what a crash, a killed agent or a hand-edited repository
//! left inconsistent between the ledger, git and the disk, and settle each with the safe action.
//!
//! Repairs never destroy unlanded work: what cannot be settled safely is reported with the
//! command that would settle it.

use std::path::{Path, PathBuf};

use super::pool;
use super::procs::{self, ProcessId};
use super::prune::OnDisk;
use super::slot::{self, SlotGuard};
use super::teardown::{self, TeardownOptions};
use super::{Context, Result, safety, spawn, stamp, tasks};
use crate::git::Git;
use crate::ledger::{
    EndReason, EventKind, IssueLease, Ledger, Resource, Step, Task, TaskState, TenureState,
};

/// One problem, and what was (or would be) done about it.
#[derive(Debug, Clone)]
pub struct Problem {
    /// A stable word: `ledger-missing`, `ledger-damaged`, `stuck-spawn`, `stuck-teardown`,
    /// `expired-lease`, `missing-slot`, `unknown-slot`, `prunable-worktree`,
    /// `hooks-not-in-force`.
    pub kind: &'static str,
    pub subject: String,
    pub detail: String,
    /// What `--repair` did, or would do.
    pub action: String,
    pub repaired: bool,
    /// The command that settles it by hand, when doctor will not.
    pub command: Option<String>,
}

/// Looks at the ledger itself first (`recover`: a missing, damaged or unusable ledger is
/// reported, never created or migrated), then at this repository against it.
pub fn doctor(ctx: &Context, repair: bool) -> Result<Vec<Problem>> {
    let (mut problems, sound) = super::recover::ledger_problems(ctx, repair)?;
    if !sound {
        return Ok(problems);
    }
    let ledger = &mut ctx.open_ledger()?;
    let repo = ctx.repo()?;
    let Some(repo_id) = tasks::repo_id(ctx, ledger)? else {
        return Ok(problems);
    };
    let git = repo.git();
    let checkup = Checkup {
        ctx,
        repo,
        git,
        repo_id,
        repair,
    };
    checkup.stuck_tasks(ledger, &mut problems)?;
    checkup.expired_leases(ledger, &mut problems)?;
    checkup.missing_slots(ledger, &mut problems)?;
    checkup.unproven_slots(ledger, &mut problems)?;
    checkup.unusable_free_slots(ledger, &mut problems)?;
    checkup.unknown_slots(ledger, &mut problems)?;
    checkup.prunable_worktrees(ledger, &mut problems)?;
    checkup.hooks_not_in_force(ledger, &mut problems)?;
    if repair {
        // Not a problem of its own: the marker follows the setting (see `stamp::REQUIRE_FILE`).
        let required = repo.config_bool("hand.requireCredential", false)?;
        super::stamp::refresh_required(&repo.loc.common_dir, required).map_err(|e| {
            super::Error::failed(
                format!("cannot mark the slots for hand.requireCredential: {e}"),
                vec![],
            )
        })?;
    }
    Ok(problems)
}

fn record(ledger: &mut Ledger, slot: &str, what: &str) -> Result<()> {
    ledger.write(|tx| {
        tx.log(
            EventKind::Repaired,
            &Resource::worktree(slot),
            None,
            Some(what),
        )
    })?;
    Ok(())
}

/// Removes the slot's stamp if it names `lease_id`, once the slot is proven to be itself (an
/// orphan's admin dir is another worktree's).
fn remove_stamp_of(common: &Path, slot: &str, lease_id: Option<&str>) {
    let Ok(admin) = slot::prove(common, Path::new(slot)) else {
        return;
    };
    if let Ok(Some(s)) = stamp::read(&admin)
        && Some(s.lease_id.as_str()) == lease_id
    {
        let _ = stamp::remove(&admin);
    }
}

/// What every check needs to know about the repository being examined.
struct Checkup<'a> {
    ctx: &'a Context,
    repo: &'a crate::git::Repo,
    git: Git,
    repo_id: String,
    repair: bool,
}

impl Checkup<'_> {
    /// Tasks left in `spawning` or `tearing-down` by a process that is gone.
    fn stuck_tasks(&self, ledger: &mut Ledger, out: &mut Vec<Problem>) -> Result<()> {
        let (ctx, repo_id, repair) = (self.ctx, self.repo_id.as_str(), self.repair);

        let open = ledger.read(|v| v.tasks(repo_id, crate::ledger::Tasks::Open))?;
        for task in open
            .into_iter()
            .filter(|t| matches!(t.state, TaskState::Spawning | TaskState::TearingDown))
        {
            let runner = task.pid.map(|pid| ProcessId {
                pid,
                start: task.pid_start,
            });
            if runner.is_some_and(procs::is_running) {
                continue; // Still at work, not stuck.
            }
            let slot = task.slot_path.clone().unwrap_or_default();
            if task.state == TaskState::Spawning {
                let mut p = Problem {
                    kind: "stuck-spawn",
                    subject: task.name.clone(),
                    detail: format!(
                        "spawn stopped at step {:?}; its process is gone",
                        task.step.map_or("?", |s| s.as_str())
                    ),
                    action: if matches!(task.step, Some(Step::Preparing | Step::Creating)) {
                        "put the slot back to a clean checkout, release its leases and mark it \
                         done; the branch stays"
                    } else {
                        "release its leases and mark it done; the slot's files and the branch stay"
                    }
                    .into(),
                    repaired: false,
                    command: None,
                };
                if repair {
                    match self.undo_spawn(ledger, &task) {
                        Ok(()) => {
                            record(
                                ledger,
                                &slot,
                                &format!("abandoned the spawn of task {}", task.name),
                            )?;
                            p.repaired = true;
                        }
                        Err(e) => {
                            p.detail
                                .push_str(&format!("; cannot put the slot back: {e}"));
                            p.command = Some(format!("git -C {slot} status"));
                        }
                    }
                }
                out.push(p);
            } else {
                let mut p = Problem {
                    kind: "stuck-teardown",
                    subject: task.name.clone(),
                    detail: format!(
                        "teardown stopped at step {:?}; its process is gone",
                        task.step.map_or("?", |s| s.as_str())
                    ),
                    action:
                        "finish the teardown (uncommitted changes block it; commits stay on the branch)"
                            .into(),
                    repaired: false,
                    command: None,
                };
                if repair {
                    let opts = TeardownOptions {
                        task: &task.name,
                        force: false,
                        keep_unpushed: true,
                    };
                    match teardown::teardown(ctx, ledger, &opts) {
                        Ok(_) => {
                            record(
                                ledger,
                                &slot,
                                &format!("finished the teardown of task {}", task.name),
                            )?;
                            p.repaired = true;
                        }
                        Err(e) => {
                            p.detail.push_str(&format!("; cannot finish: {e}"));
                            p.command = Some(format!("git hand teardown {} --force", task.name));
                        }
                    }
                }
                out.push(p);
            }
        }
        Ok(())
    }

    /// Active tasks whose slot lease expired and was never taken over: the slot is blocked until
    /// someone ends the lease. Ended when the slot holds no work; otherwise reported.
    fn expired_leases(&self, ledger: &mut Ledger, out: &mut Vec<Problem>) -> Result<()> {
        let (ctx, repo_id, repair) = (self.ctx, self.repo_id.as_str(), self.repair);

        let repo = ctx.repo()?;
        let (slots, now) = ledger.read(|v| Ok((pool::slots(v, repo_id)?, v.now())))?;
        for info in slots {
            let Some(held) = info.held.filter(|t| t.state(now) == TenureState::Expired) else {
                continue;
            };
            let task = ledger.read(|v| v.task_by_lease(&held.lease_id))?;
            // A spawn or teardown still at work (or crashed: `stuck_tasks` settles those) is not an
            // expired lease blocking a slot.
            if task.as_ref().is_some_and(|t| t.state != TaskState::Active) {
                continue;
            }
            let name = task
                .as_ref()
                .map_or_else(|| "(no task)".to_string(), |t| t.name.clone());
            let blockers = safety::reuse_blockers(repo, Path::new(&info.slot.path));
            let mut p = Problem {
                kind: "expired-lease",
                subject: name.clone(),
                detail: format!(
                    "the lease of slot {} (held by {}, token {}) expired",
                    info.slot.n, held.holder, held.token
                ),
                action: "end the lease and mark the task done; the slot becomes free".into(),
                repaired: false,
                command: None,
            };
            if !blockers.is_empty() && Path::new(&info.slot.path).exists() {
                p.detail
                    .push_str(&format!("; the slot holds work: {}", blockers.join("; ")));
                p.action = "none: the slot holds work".into();
                p.command = Some(format!(
                    "git hand teardown {name}   # or --force to discard uncommitted changes"
                ));
            } else if repair {
                let opts = TeardownOptions {
                    task: &name,
                    force: false,
                    keep_unpushed: true,
                };
                match &task {
                    Some(_) => {
                        teardown::teardown(ctx, ledger, &opts)?;
                    }
                    None => {
                        ledger.write(|tx| {
                            tx.release(&held.resource, crate::ledger::By::Lease(&held.lease_id))?;
                            Ok(())
                        })?;
                    }
                }
                record(ledger, &info.slot.path, "ended an expired lease")?;
                p.repaired = true;
            }
            out.push(p);
        }
        Ok(())
    }

    /// Slots the ledger knows but the disk lost. A slot whose task is still spawning or tearing
    /// down is left alone: its directory may simply not exist *yet* (that task's process, or
    /// `stuck_tasks` once it is gone, settles it).
    fn missing_slots(&self, ledger: &mut Ledger, out: &mut Vec<Problem>) -> Result<()> {
        let (git, common, repo_id, repair) = (
            &self.git,
            self.repo.loc.common_dir.as_path(),
            self.repo_id.as_str(),
            self.repair,
        );

        let slots = ledger.read(|v| pool::slots(v, repo_id))?;
        for info in slots
            .into_iter()
            .filter(|i| slot::prove(common, Path::new(&i.slot.path)).is_err_and(|e| e.is_gone()))
        {
            let task: Option<Task> = match &info.held {
                Some(t) => ledger.read(|v| v.task_by_lease(&t.lease_id))?,
                None => None,
            };
            if task.as_ref().is_some_and(|t| t.state != TaskState::Active) {
                continue;
            }
            let mut p = Problem {
                kind: "missing-slot",
                subject: info.slot.path.clone(),
                detail: match &task {
                    Some(t) => format!(
                        "slot {} of active task {} is gone from disk; its commits are on {}",
                        info.slot.n, t.name, t.branch
                    ),
                    None => format!("slot {} is gone from disk", info.slot.n),
                },
                action: "forget the slot (unregister it from git); end the task it held".into(),
                repaired: false,
                command: None,
            };
            if repair {
                if let Some(task) = &task {
                    spawn::abandon(ledger, task, EndReason::SlotMissing, IssueLease::Release)?;
                }
                p.repaired = super::prune::remove_slot(
                    git,
                    common,
                    ledger,
                    &info.slot.path,
                    OnDisk::Missing,
                )?;
            }
            out.push(p);
        }
        Ok(())
    }

    /// Directories in this repository's pool that the ledger does not know as slots.
    fn unknown_slots(&self, ledger: &mut Ledger, out: &mut Vec<Problem>) -> Result<()> {
        let (repo, repo_id, repair) = (self.repo, self.repo_id.as_str(), self.repair);
        let Ok(pool_dir) = std::fs::canonicalize(pool::pool_dir(repo, repo_id)?) else {
            return Ok(());
        };
        let known = ledger.read(|v| pool::known_slot_paths(v, repo_id))?;
        let registered: Vec<PathBuf> = repo
            .linked_worktrees()?
            .into_iter()
            .map(|w| w.path)
            .collect();
        let Ok(entries) = std::fs::read_dir(&pool_dir) else {
            return Ok(());
        };
        for entry in entries.flatten() {
            let Some(n) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<i64>().ok())
            else {
                continue;
            };
            let path = pool::slot_path(&pool_dir, n, repo);
            let key = path.to_string_lossy().into_owned();
            if known.contains(&key) || !path.exists() {
                continue;
            }
            let is_worktree = registered.contains(&path);
            let mut p = Problem {
                kind: "unknown-slot",
                subject: key.clone(),
                detail: if is_worktree {
                    "a worktree of this repository in the pool that the ledger does not know".into()
                } else {
                    "a directory in the pool that is no worktree of this repository".into()
                },
                action: if is_worktree {
                    "adopt it as a free slot".into()
                } else {
                    "none: git-hand never deletes what it did not make".into()
                },
                repaired: false,
                command: (!is_worktree)
                    .then(|| format!("rm -rf {key}   # after checking it holds nothing you need")),
            };
            if repair && is_worktree {
                ledger.write(|tx| tx.ensure_slot(repo_id, n, &key).map(|_| ()))?;
                record(ledger, &key, "adopted an unknown slot")?;
                p.repaired = true;
            }
            out.push(p);
        }
        Ok(())
    }

    /// Worktrees git still lists whose directory is gone and that are no slot of ours.
    fn prunable_worktrees(&self, ledger: &mut Ledger, out: &mut Vec<Problem>) -> Result<()> {
        let (repo, git, repo_id, repair) =
            (self.repo, &self.git, self.repo_id.as_str(), self.repair);
        let known = ledger.read(|v| pool::known_slot_paths(v, repo_id))?;
        let gone: Vec<_> = repo
            .linked_worktrees()?
            .into_iter()
            .filter(|w| !w.exists && !known.contains(&w.path.to_string_lossy().into_owned()))
            .collect();
        for w in gone {
            let path = w.path.to_string_lossy().into_owned();
            let locked = w.lock_reason.is_some();
            let mut p = Problem {
                kind: "prunable-worktree",
                subject: path.clone(),
                detail: format!(
                    "git lists this worktree but its directory is gone{}",
                    if locked { " (locked)" } else { "" }
                ),
                action: if locked {
                    "none: it is locked by someone".into()
                } else {
                    "git worktree prune".into()
                },
                repaired: false,
                command: locked
                    .then(|| format!("git worktree unlock {path} && git worktree prune")),
            };
            if repair && !locked {
                let _lock = super::pool::lock_worktree_list(&repo.loc.common_dir)?;
                git.run(&["worktree", "prune"])?;
                p.repaired = true;
            }
            out.push(p);
        }
        Ok(())
    }

    /// Worktrees whose pushes git-hand's hooks would not check: this one and every open task's
    /// slot (a per-worktree `core.hooksPath` can differ), each hooks directory looked at once.
    /// `--repair` reinstalls into the repository's own hooks directory, never into a
    /// `core.hooksPath` another tool owns (the recipe is the command then), and not when the
    /// user opted out (`hand.installHooks=false`, set by `git hand uninstall`).
    fn hooks_not_in_force(&self, ledger: &mut Ledger, out: &mut Vec<Problem>) -> Result<()> {
        let mut worktrees: Vec<PathBuf> = self.repo.loc.workdir.iter().cloned().collect();
        let open = ledger.read(|v| v.tasks(&self.repo_id, crate::ledger::Tasks::Open))?;
        worktrees.extend(
            open.iter()
                .filter_map(|t| t.slot_path.as_deref())
                .map(PathBuf::from)
                .filter(|p| p.is_dir()),
        );
        let opted_out = !self.repo.config_bool("hand.installHooks", true)?;
        if opted_out && open.is_empty() {
            // Uninstalled on purpose and nothing leased: nothing goes unchecked.
            return Ok(());
        }
        let mut seen_dirs = vec![];
        for worktree in worktrees {
            // A slot leased before slots got the repository's generated hooks directory (husky's
            // `.husky/_`) runs no hook at all: `--repair` gives it that directory.
            if self.repair && Some(&worktree) != self.repo.loc.workdir.as_ref() {
                match super::slot_hooks::inherit(self.repo, &worktree) {
                    Ok(Some(dir)) => out.push(Problem {
                        kind: "hooks-not-in-force",
                        subject: worktree.display().to_string(),
                        detail: format!(
                            "the slot had no {}, so git ran no hook in it",
                            dir.display()
                        ),
                        action: format!("copied {} from the main worktree", dir.display()),
                        repaired: true,
                        command: None,
                    }),
                    Ok(None) => {}
                    Err(e) => out.push(Problem {
                        kind: "hooks-not-in-force",
                        subject: worktree.display().to_string(),
                        detail: format!("cannot give the slot the repository's hooks: {e}"),
                        action: "none".into(),
                        repaired: false,
                        command: None,
                    }),
                }
            }
            let git = Git::new(&worktree);
            let state = match crate::hooks::in_force(&git, Some(&worktree)) {
                Ok(state) => state,
                Err(e) => {
                    out.push(Problem {
                        kind: "hooks-not-in-force",
                        subject: worktree.display().to_string(),
                        detail: format!("cannot tell whether the hooks are in force: {e}"),
                        action: "none".into(),
                        repaired: false,
                        command: e.hints().into_iter().next(),
                    });
                    continue;
                }
            };
            if seen_dirs.contains(&state.dir) {
                continue;
            }
            seen_dirs.push(state.dir.clone());
            for lapse in &state.lapses {
                let fixes = lapse.repairable && !opted_out;
                let mut p = Problem {
                    kind: "hooks-not-in-force",
                    subject: worktree.display().to_string(),
                    detail: format!("{} ({})", lapse.message, lapse.kind.as_str()),
                    action: if fixes {
                        "reinstall git-hand's hooks (git hand install)".into()
                    } else if lapse.repairable {
                        "none: hand.installHooks is false (git hand uninstall); git hand install opts back in".into()
                    } else {
                        "none: this needs your hand".into()
                    },
                    repaired: false,
                    command: (!fixes).then(|| {
                        if opted_out && lapse.repairable {
                            "git hand install".to_string()
                        } else {
                            lapse.hints.first().cloned().unwrap_or_default()
                        }
                    }),
                };
                if self.repair && fixes {
                    match crate::hooks::ensure_installed(&git) {
                        Ok(r) if r.in_force() => p.repaired = true,
                        Ok(r) => {
                            let why = r.problem.map(|p| p.to_string()).unwrap_or_default();
                            p.detail
                                .push_str(&format!("; reinstalling did not help: {why}"));
                            p.command = lapse.hints.first().cloned();
                        }
                        Err(e) => {
                            p.detail.push_str(&format!("; cannot reinstall: {e}"));
                            p.command = e.hints().into_iter().next();
                        }
                    }
                }
                out.push(p);
            }
        }
        Ok(())
    }

    /// Free slots that no spawn will take because they hold files or commits nobody owns any
    /// more (left by a git-hand older than the undo of failed spawns, or written by hand after a
    /// teardown): they count against `hand.maxSlots` for good. Reported with the commands that
    /// settle them; never reset by doctor, since whose work it is cannot be told.
    fn unusable_free_slots(&self, ledger: &mut Ledger, out: &mut Vec<Problem>) -> Result<()> {
        let common = self.repo.loc.common_dir.as_path();
        let (slots, now) = ledger.read(|v| Ok((pool::slots(v, &self.repo_id)?, v.now())))?;
        for info in slots {
            let free = info.held.as_ref().is_none_or(|t| !t.is_live(now)) && info.tasks.is_empty();
            let path = Path::new(&info.slot.path);
            if !free || slot::prove(common, path).is_err() {
                continue;
            }
            let dirty = match safety::dirty_files(&Git::new(path)) {
                Ok(files) if files.is_empty() => continue,
                Ok(files) => files,
                Err(e) => vec![format!("git status failed: {e}")],
            };
            out.push(Problem {
                kind: "unusable-slot",
                subject: info.slot.path.clone(),
                detail: format!(
                    "free slot {} holds {} uncommitted or untracked file(s) (e.g. {}), so no spawn \
                     will take it",
                    info.slot.n,
                    dirty.len(),
                    dirty[0]
                ),
                action: "none: whose work it is cannot be told".into(),
                repaired: false,
                command: Some(format!(
                    "git -C {0} stash -u   # keep it; or, if nothing there is anyone's: git -C {0} \
                     reset --hard && git -C {0} clean -d -f",
                    info.slot.path
                )),
            });
        }
        Ok(())
    }

    /// Undoes a spawn whose process is gone: a slot it was preparing is put back to a clean
    /// detached checkout under its lock (it was clean or new before, and nobody was handed it),
    /// its stamp is removed, its leases are released and the task is marked done. A slot it
    /// had only claimed, not yet proven safe, is left exactly as it is.
    fn undo_spawn(&self, ledger: &mut Ledger, task: &Task) -> Result<()> {
        let common = self.repo.loc.common_dir.as_path();
        let slot = task.slot_path.clone().unwrap_or_default();
        let lease = task.lease_id.as_deref().unwrap_or_default();
        let path = Path::new(&slot);
        if let Some(step @ (Step::Preparing | Step::Creating)) = task.step {
            let guard = SlotGuard::lock(common, path, lease)?;
            // A lease that no longer holds the slot leaves it to its new holder.
            if guard.check(ledger).is_ok() {
                guard.undo(ledger, step == Step::Creating)?;
            }
        }
        remove_stamp_of(common, &slot, task.lease_id.as_deref());
        spawn::abandon(ledger, task, EndReason::AbandonedSpawn, IssueLease::Release)
    }

    /// Slots whose directory is there but is not the worktree git-hand made: an orphan whose
    /// admin dir was lost (the repository cloned again in place) and whose `.git` now resolves
    /// to another slot's, a symlink put in a slot's place, or a directory that is no worktree.
    /// Nothing may run git in them. `--repair` ends the task that held one, takes the slot out of
    /// the pool in the ledger (its number comes back at the same path, with its token history),
    /// and sets the directory aside: a symlink is removed (never what it leads to); a directory
    /// moves to `<pool>/orphaned/`, its `.git` renamed so no git command there acts on another
    /// worktree. Its files are kept.
    fn unproven_slots(&self, ledger: &mut Ledger, out: &mut Vec<Problem>) -> Result<()> {
        let common = self.repo.loc.common_dir.as_path();
        let slots = ledger.read(|v| pool::slots(v, &self.repo_id))?;
        for info in slots {
            let path = Path::new(&info.slot.path);
            let why = match slot::prove(common, path) {
                Ok(_) => continue,
                Err(e) if e.is_gone() => continue,
                Err(e) => e,
            };
            let task = match &info.held {
                Some(t) => ledger.read(|v| v.task_by_lease(&t.lease_id))?,
                None => None,
            };
            // A spawn creating it right now (or one that crashed: `stuck_tasks` settles it).
            if task.as_ref().is_some_and(|t| t.state != TaskState::Active) {
                continue;
            }
            let mut p = Problem {
                kind: "unproven-slot",
                subject: info.slot.path.clone(),
                detail: format!(
                    "slot {} is not the worktree git-hand made: {why}{}",
                    info.slot.n,
                    task.as_ref().map_or_else(String::new, |t| format!(
                        "; task {} holds it, its commits are on {}",
                        t.name, t.branch
                    ))
                ),
                action: "end the task holding it, take the slot out of the pool and set the \
                         directory aside (its files are kept)"
                    .into(),
                repaired: false,
                command: None,
            };
            if self.repair {
                if let Some(task) = &task {
                    spawn::abandon(ledger, task, EndReason::SlotUnproven, IssueLease::Release)?;
                }
                match set_aside(ledger, self.repo, &self.git, &info.slot.path)? {
                    Some(kept) => {
                        record(ledger, &info.slot.path, &format!("set aside: {kept}"))?;
                        p.action = format!("set aside: {kept}");
                        p.repaired = true;
                    }
                    None => p.detail.push_str("; it was leased meanwhile, left alone"),
                }
            }
            out.push(p);
        }
        Ok(())
    }
}

/// Takes an unproven slot out of the pool: in the ledger first (no tenure may hold it, as prune
/// claims a slot), then on disk, under the slot's lock. Returns where its files went, or `None`
/// when it was leased meanwhile.
fn set_aside(
    ledger: &mut Ledger,
    repo: &crate::git::Repo,
    git: &Git,
    path: &str,
) -> Result<Option<String>> {
    let common = repo.loc.common_dir.as_path();
    let _lock = slot::SlotLock::acquire(common, Path::new(path))?;
    let claimed = ledger.write(|tx| tx.remove_free_slot(path))?;
    if !claimed {
        return Ok(None);
    }
    let p = Path::new(path);
    let failed = |e: std::io::Error| {
        super::Error::failed(
            format!("cannot set {path} aside: {e}"),
            vec![format!(
                "ls -la {path}   # then move it out of the pool by hand"
            )],
        )
    };
    let meta = std::fs::symlink_metadata(p).map_err(failed)?;
    if meta.file_type().is_symlink() || !meta.is_dir() {
        std::fs::remove_file(p).map_err(failed)?;
        if let Some(n_dir) = p.parent() {
            let _ = std::fs::remove_dir(n_dir); // only when empty
        }
        forget_registration(repo, git, p)?;
        return Ok(Some(format!(
            "removed {path} (not a directory; nothing it led to was touched)"
        )));
    }
    // `<pool>/<n>/<repo>` goes to `<pool>/orphaned/<n>-<ms>`.
    let n_dir = p.parent().unwrap_or(p);
    let pool = n_dir.parent().unwrap_or(n_dir);
    let n = n_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let aside = pool.join("orphaned").join(format!("{n}-{}", {
        use crate::clock::Clock;
        crate::clock::SystemClock.now_ms()
    }));
    std::fs::create_dir_all(&aside).map_err(failed)?;
    let dest = aside.join(p.file_name().unwrap_or_default());
    std::fs::rename(p, &dest).map_err(failed)?;
    let link = dest.join(".git");
    if std::fs::symlink_metadata(&link).is_ok_and(|m| m.is_file()) {
        std::fs::rename(&link, dest.join(".git-hand-orphaned-link")).map_err(failed)?;
    }
    let _ = std::fs::remove_dir(n_dir);
    forget_registration(repo, git, p)?;
    Ok(Some(format!("its files are in {}", dest.display())))
}

/// Once an unproven slot is out of the way, git may still list the slot git-hand made there
/// (locked, its directory gone): that registration goes too, so the slot can be made again at
/// its path and `git worktree list` stops naming it. An orphan's own registration is already
/// gone (that is what made it an orphan); another slot's is never touched.
fn forget_registration(repo: &crate::git::Repo, git: &Git, path: &Path) -> Result<()> {
    let listed = repo
        .linked_worktrees()?
        .into_iter()
        .any(|w| w.path == path && !w.exists);
    if listed {
        let _lock = pool::lock_worktree_list(&repo.loc.common_dir)?;
        git.run(&["worktree", "remove", "-f", "-f", &path.to_string_lossy()])?;
    }
    Ok(())
}
