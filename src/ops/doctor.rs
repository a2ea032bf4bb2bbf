//! `git hand doctor [--repair]`: find what a crash, a killed agent or a hand-edited repository
//! left inconsistent between the ledger, git and the disk, and settle each with the safe action.
//!
//! Repairs never destroy unlanded work: what cannot be settled safely is reported with the
//! command that would settle it.

use std::path::{Path, PathBuf};

use super::pool;
use super::procs::{self, ProcessId};
use super::prune::OnDisk;
use super::teardown::{self, TeardownOptions};
use super::{Context, Result, safety, spawn, stamp, tasks};
use crate::git::Git;
use crate::ledger::{EventKind, Ledger, Resource, Task, TaskState, TenureState};

/// One problem, and what was (or would be) done about it.
#[derive(Debug, Clone)]
pub struct Problem {
    /// A stable word: `ledger-missing`, `ledger-damaged`, `stuck-spawn`, `stuck-teardown`,
    /// `expired-lease`, `missing-slot`, `unknown-slot`, `prunable-worktree`.
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
    let git = Git::new(
        repo.loc
            .workdir
            .clone()
            .unwrap_or_else(|| repo.loc.common_dir.clone()),
    );
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
    checkup.unknown_slots(ledger, &mut problems)?;
    checkup.prunable_worktrees(ledger, &mut problems)?;
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

fn remove_stamp_of(slot: &str, lease_id: Option<&str>) {
    let Ok(admin) = stamp::admin_dir_of(Path::new(slot)) else {
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

        let open = ledger.read(|v| v.tasks(repo_id, false))?;
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
                        task.step.as_deref().unwrap_or("?")
                    ),
                    action:
                        "release its leases and mark it done; the slot's files and the branch stay"
                            .into(),
                    repaired: false,
                    command: None,
                };
                if repair {
                    remove_stamp_of(&slot, task.lease_id.as_deref());
                    spawn::abandon(ledger, &task, "abandoned-spawn", false)?;
                    record(
                        ledger,
                        &slot,
                        &format!("abandoned the spawn of task {}", task.name),
                    )?;
                    p.repaired = true;
                }
                out.push(p);
            } else {
                let mut p = Problem {
                    kind: "stuck-teardown",
                    subject: task.name.clone(),
                    detail: format!(
                        "teardown stopped at step {:?}; its process is gone",
                        task.step.as_deref().unwrap_or("?")
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
            .filter(|i| !Path::new(&i.slot.path).exists())
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
                    spawn::abandon(ledger, task, "slot-missing", false)?;
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
}
