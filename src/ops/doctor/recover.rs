//! `git hand doctor`'s look at the ledger itself, before it trusts it, and what it can do about
//! one that is lost or damaged: rebuild a lost one from the disk, copy a damaged one with its
//! WAL (`--backup`).
//!
//! A rebuilt ledger knows what the disk proves and continues what the disk shows: each
//! repository whose pool holds slots is registered under an id that starts with its pool's six
//! characters (so the pool is used again, not left behind); each slot its worktree proves is a
//! free slot again; each worktree's next token is one above its stamp's. Tasks, tenures, issue
//! leases and the event log are not on disk and are gone: a credential from the lost ledger
//! names a lease id the new one never granted, so every push presenting one is refused
//! (`unknown-lease`) until its holder spawns again.

use std::path::{Path, PathBuf};

use super::{DoctorError, Finding, Problem, ProblemKind, Rebuild};
use crate::clock::{Clock, SystemClock};
use crate::ledger::recovery::{self, Copied, Health, TableCount};
use crate::ledger::{EventKind, Ledger, LedgerError, Place, RepoId, WorktreeKey};
use crate::ops::ledger_place::evidence::{self, Evidence, PoolSlot, Trace};
use crate::ops::{Context, Error, Result};

/// The ledger's own problems, and whether a sound ledger is there now (it was, or `repair`
/// just rebuilt it), so that doctor may go on to check the repository against it.
pub(crate) fn ledger_problems(ctx: &Context, repair: bool) -> Result<(Vec<Problem>, bool)> {
    // A team ledger has no file to look at: it is sound when the server lets doctor connect.
    let Place::File(path) = ctx.ledger_location()?.place else {
        return Ok((vec![], true));
    };
    let diagnosis = recovery::diagnose(&path)?;
    ctx.note(diagnosis.notices);
    match diagnosis.health {
        Health::Healthy => Ok((vec![], true)),
        Health::TooNew { found, supported } => Err(LedgerError::TooNew {
            path,
            found,
            supported,
        }
        .into()),
        Health::Missing => missing_ledger(ctx, &path, repair),
        Health::Unusable { found } => unusable_ledger(ctx, &path, found, repair),
        Health::Damaged { report, readable } => {
            Ok((vec![damaged_ledger(&path, &report, &readable)], false))
        }
    }
}

/// No ledger file: a problem only when the disk says there was one (then `repair` rebuilds it
/// from that evidence); doctor never creates an empty one.
fn missing_ledger(ctx: &Context, path: &Path, repair: bool) -> Result<(Vec<Problem>, bool)> {
    let evidence = evidence::gather(ctx, path)?;
    if evidence.is_empty() {
        // No ledger and nothing that says there was one: nothing to check, and doctor
        // creates none.
        return Ok((vec![], false));
    }
    let rebuild = match repair {
        true => Rebuild::Done(rebuild(path, &evidence, None)?),
        false => Rebuild::Planned {
            traces: evidence.traces.len(),
        },
    };
    let p = Problem {
        kind: ProblemKind::LedgerMissing,
        subject: path.display().to_string(),
        finding: Finding::LedgerMissing {
            traces: evidence.summary(),
            rebuild,
        },
        repaired: repair,
    };
    Ok((vec![p], repair))
}

/// A file that is no ledger SQLite can use: `repair` moves it aside (never deletes it) and
/// rebuilds from the disk.
fn unusable_ledger(
    ctx: &Context,
    path: &Path,
    found: String,
    repair: bool,
) -> Result<(Vec<Problem>, bool)> {
    let evidence = evidence::gather(ctx, path)?;
    let rebuild = match repair {
        true => {
            let moved = recovery::move_aside(path, SystemClock.now_ms())?;
            Rebuild::Done(rebuild(path, &evidence, Some(&moved))?)
        }
        false => Rebuild::Planned {
            traces: evidence.traces.len(),
        },
    };
    let p = Problem {
        kind: ProblemKind::LedgerDamaged,
        subject: path.display().to_string(),
        finding: Finding::LedgerUnusable {
            found,
            aside: aside_path(path),
            rebuild,
        },
        repaired: repair,
    };
    Ok((vec![p], repair))
}

/// A ledger SQLite's check finds damaged: never repaired in place (rows may still be in its
/// WAL); the command takes a copy that keeps them.
fn damaged_ledger(path: &Path, report: &[String], readable: &[TableCount]) -> Problem {
    Problem {
        kind: ProblemKind::LedgerDamaged,
        subject: path.display().to_string(),
        finding: Finding::LedgerDamaged {
            report: report.to_vec(),
            readable: readable_text(readable),
            backup: backup_suggestion(path),
        },
        repaired: false,
    }
}

/// `repos 1, tenures 40, events unreadable (...)`; when no table can be read, the schema
/// itself is what is damaged.
fn readable_text(counts: &[TableCount]) -> String {
    match counts.first().map(|c| &c.rows) {
        Some(Err(e)) if counts.iter().all(|c| c.rows.is_err()) => format!("no table ({e})"),
        _ => counts
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// `1 slot`, `2 slots`, `0 repositories`.
pub(crate) fn count(n: usize, noun: &str) -> String {
    match (n, noun.strip_suffix('y')) {
        (1, _) => format!("1 {noun}"),
        (_, Some(stem)) => format!("{n} {stem}ies"),
        (_, None) => format!("{n} {noun}s"),
    }
}

/// `<ledger>.damaged-<now>`, as [`recovery::move_aside`] will name it.
fn aside_path(ledger: &Path) -> PathBuf {
    let mut s = ledger.as_os_str().to_owned();
    s.push(".damaged-<now>");
    PathBuf::from(s)
}

/// Where doctor suggests a copy: beside the ledger, named for the moment.
fn backup_suggestion(ledger: &Path) -> PathBuf {
    let dir = ledger.parent().unwrap_or(Path::new("."));
    dir.join(format!("ledger-backup-{}.sqlite", SystemClock.now_ms()))
}

/// Builds the new ledger (see the module docs) and says what it did.
fn rebuild(path: &Path, evidence: &Evidence, moved: Option<&Path>) -> Result<String> {
    let plan = Plan::of(evidence)?;
    let why = match moved {
        Some(m) => format!("the ledger was no ledger (moved aside to {})", m.display()),
        None => "the ledger was missing".into(),
    };
    let built = Ledger::create_with(path, |tx| {
        let mut slots = 0;
        for repo in &plan.repos {
            tx.restore_repo(&repo.common_dir, &repo.id)?;
            for (n, worktree, token) in &repo.slots {
                tx.ensure_slot(&repo.id, *n, worktree)?;
                tx.raise_last_token(&tx.view().worktree(worktree), *token)?;
                slots += 1;
            }
        }
        for (worktree, token) in &plan.floors {
            tx.raise_last_token(&tx.view().worktree(worktree), *token)?;
        }
        let detail = format!(
            "rebuilt: {why}; {} and {} restored from the disk, tokens continue after the \
             stamps'",
            count(plan.repos.len(), "repository"),
            count(slots, "slot")
        );
        for repo in &plan.repos {
            for (_, worktree, token) in &repo.slots {
                tx.log(
                    EventKind::Repaired,
                    &tx.view().worktree(worktree),
                    None,
                    Some(&format!(
                        "slot restored by a rebuild; tokens continue after {token}"
                    )),
                )?;
            }
        }
        tx.log_ledger_event(EventKind::Repaired, &detail)?;
        Ok(detail)
    })?;
    built.ok_or_else(|| {
        DoctorError::LedgerAppeared {
            path: path.to_path_buf(),
        }
        .into()
    })
}

/// What a rebuild writes.
struct Plan {
    repos: Vec<RepoPlan>,
    /// Worktrees outside a restored pool (adopted ones, other pools): only their tokens.
    floors: Vec<(WorktreeKey, i64)>,
}

struct RepoPlan {
    common_dir: String,
    id: RepoId,
    /// Slot number, realpath, the largest token its stamp shows.
    slots: Vec<(i64, WorktreeKey, i64)>,
}

/// A trace whose slot can be restored: its worktree proves itself and its repository is
/// still there.
fn restorable(t: &Trace) -> Option<(&PathBuf, &PoolSlot)> {
    match (&t.common_dir, &t.slot) {
        (Some(common), Some(slot)) if t.proven && common.is_dir() => Some((common, slot)),
        _ => None,
    }
}

impl Plan {
    fn of(evidence: &Evidence) -> Result<Self> {
        // Each repository gets back the pool directory holding most of its slots (a repository
        // registered twice in the lost ledger had two).
        let mut pools: Vec<(&PathBuf, &PoolSlot, usize)> = vec![];
        for (common, slot) in evidence.traces.iter().filter_map(restorable) {
            match pools
                .iter_mut()
                .find(|(c, p, _)| *c == common && p.pool_dir == slot.pool_dir)
            {
                Some(pool) => pool.2 += 1,
                None => pools.push((common, slot, 1)),
            }
        }
        pools.sort_by_key(|pool| std::cmp::Reverse(pool.2));
        let mut plan = Plan {
            repos: vec![],
            floors: vec![],
        };
        for t in &evidence.traces {
            let token = t.stamp.as_ref().map_or(0, |s| s.token);
            let key = WorktreeKey::from_canonical(&t.worktree);
            let pool = restorable(t).and_then(|(common, slot)| {
                pools
                    .iter()
                    .find(|(c, _, _)| *c == common)
                    .filter(|(_, p, _)| p.pool_dir == slot.pool_dir)
                    .map(|(_, p, _)| (common.to_string_lossy().into_owned(), &p.id6, slot.n))
            });
            let Some((common, id6, n)) = pool else {
                plan.floors.push((key, token));
                continue;
            };
            let i = match plan.repos.iter().position(|r| r.common_dir == common) {
                Some(i) => i,
                None => {
                    let rest = crate::ids::random_hex(5)
                        .map_err(|e| Error::from(LedgerError::Random(e)))?;
                    plan.repos.push(RepoPlan {
                        common_dir: common,
                        id: RepoId::new(format!("{id6}{rest}")),
                        slots: vec![],
                    });
                    plan.repos.len() - 1
                }
            };
            plan.repos[i].slots.push((n, key, token));
        }
        Ok(plan)
    }
}

/// `git hand doctor --backup PATH`: a copy of the ledger, with the rows still in its WAL, in a
/// new file at `to` (relative to the command's directory).
pub fn backup(ctx: &Context, to: &Path) -> Result<Copied> {
    let path = match ctx.ledger_location()?.place {
        Place::File(path) => path,
        Place::Server(url) => {
            return Err(DoctorError::BackupOfServer {
                url: url.to_string(),
            }
            .into());
        }
    };
    let to = ctx.cwd.join(to);
    if std::fs::symlink_metadata(&to).is_ok() {
        return Err(DoctorError::BackupTargetExists { to }.into());
    }
    if !path.exists() {
        return Err(DoctorError::NoLedgerToBackUp { path }.into());
    }
    Ok(recovery::backup(&path, &to)?)
}
