//! What the disk says about a ledger that is not there: stamps that name it and slots in pools.
//!
//! The ledger cannot tell a ledger that never existed from one that was lost; the worktrees it
//! leased can. Before a missing ledger is created (or read as an empty one), this looks for
//! linked worktrees whose stamp names that ledger, in the pool root and among this repository's
//! worktrees, and for slots in this repository's pool without a stamp. Any of them means the
//! ledger existed: a new one would restart their tokens at 1 and leave their pool behind, still
//! locked (issue 10). The same traces are what `doctor --repair` rebuilds a ledger from.
//!
//! This runs only when the ledger file is missing, never on a path that found it.

use std::path::{Path, PathBuf};

use crate::git::link::{common_dir_of, names_back};
use crate::ops::pool::stamp::{self, Stamp};
use crate::ops::{Context, Error, Result, pool};

/// A worktree git-hand leased, found on disk.
#[derive(Debug, Clone)]
pub(crate) struct Trace {
    /// The work tree (a realpath).
    pub worktree: PathBuf,
    /// Its repository's common dir, read from its admin dir.
    pub common_dir: Option<PathBuf>,
    pub stamp: Option<Stamp>,
    /// Where it sits in a pool, when it does.
    pub slot: Option<PoolSlot>,
    /// Its admin dir names it back: it is the worktree its `.git` file says.
    pub proven: bool,
}

/// A slot's place in a pool: `<root>/<repo-name>-<id6>/<n>/<repo-name>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PoolSlot {
    pub pool_dir: PathBuf,
    pub id6: String,
    pub n: i64,
}

/// The traces that say a ledger existed.
#[derive(Debug, Clone, Default)]
pub(crate) struct Evidence {
    pub traces: Vec<Trace>,
}

impl Evidence {
    pub fn is_empty(&self) -> bool {
        self.traces.is_empty()
    }

    /// What was found, in a few words: the count and the first worktree.
    pub fn summary(&self) -> String {
        let Some(first) = self.traces.first() else {
            return "nothing".into();
        };
        let what = |t: &Trace| match (&t.stamp, &t.slot) {
            (Some(s), _) => format!(
                "{} (stamped for task {}, token {})",
                t.worktree.display(),
                s.task,
                s.token
            ),
            (None, Some(slot)) => format!("{} (slot {} of a pool)", t.worktree.display(), slot.n),
            (None, None) => t.worktree.display().to_string(),
        };
        match self.traces.len() {
            1 => format!("a worktree leased from it remains: {}", what(first)),
            n => format!(
                "{n} worktrees leased from it remain, among them {}",
                what(first)
            ),
        }
    }
}

/// The traces of the ledger at `ledger` that the disk around this repository holds: stamps
/// naming it (in every pool under this repository's pool root, and in this repository's
/// linked worktrees) and unstamped slots in this repository's pool. Without a repository there
/// is nothing to look at.
pub(crate) fn gather(ctx: &Context, ledger: &Path) -> Result<Evidence> {
    let Some(repo) = ctx.repo_opt() else {
        return Ok(Evidence::default());
    };
    let mut traces = vec![];
    if let Ok(root) = pool::root(repo, ctx.env()) {
        traces.extend(pool_slots(&root));
    }
    for w in repo.linked_worktrees().unwrap_or_default() {
        if traces.iter().any(|t| t.worktree == w.path) {
            continue;
        }
        if let Ok(Some(stamp)) = stamp::read(&w.admin_dir) {
            traces.push(Trace {
                worktree: w.path.clone(),
                common_dir: Some(repo.loc.common_dir.clone()),
                stamp: Some(stamp),
                slot: None,
                proven: w.exists && names_back(&w.admin_dir, &w.path).is_ok(),
            });
        }
    }
    let common = &repo.loc.common_dir;
    traces.retain(|t| match &t.stamp {
        Some(s) => s.ledger.is_file(ledger),
        // An unstamped slot is this ledger's only when it is this repository's.
        None => t.slot.is_some() && t.common_dir.as_ref() == Some(common),
    });
    Ok(Evidence { traces })
}

/// The error for a missing ledger that the disk says existed.
pub(crate) fn missing_error(ledger: &Path, evidence: &Evidence) -> Error {
    super::PlaceError::LedgerMissing {
        ledger: ledger.to_path_buf(),
        traces: evidence.summary(),
    }
    .into()
}

/// Refuses when the missing ledger at `ledger` left traces (see the module docs).
pub(crate) fn refuse_if_it_existed(ctx: &Context, ledger: &Path) -> Result<()> {
    let evidence = gather(ctx, ledger)?;
    if evidence.is_empty() {
        Ok(())
    } else {
        Err(missing_error(ledger, &evidence))
    }
}

/// Every slot in every pool under `root`: `<root>/<name>-<id6>/<n>/<name>` with a `.git` link.
fn pool_slots(root: &Path) -> Vec<Trace> {
    let mut out = vec![];
    for pool in read_dirs(root) {
        let Some(dir_name) = pool
            .file_name()
            .and_then(|n| n.to_str())
            .map(str::to_string)
        else {
            continue;
        };
        let Some((name, id6)) = dir_name.rsplit_once('-') else {
            continue;
        };
        if id6.len() != 6 || !id6.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        for numbered in read_dirs(&pool) {
            let Some(n) = numbered
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.parse::<i64>().ok())
            else {
                continue;
            };
            let worktree = numbered.join(name);
            let Ok(admin) = crate::git::link::admin_dir_of(&worktree) else {
                continue;
            };
            let worktree = std::fs::canonicalize(&worktree).unwrap_or(worktree);
            out.push(Trace {
                proven: names_back(&admin, &worktree).is_ok(),
                common_dir: common_dir_of(&admin),
                stamp: stamp::read(&admin).ok().flatten(),
                slot: Some(PoolSlot {
                    pool_dir: std::fs::canonicalize(&pool).unwrap_or(pool.clone()),
                    id6: id6.to_ascii_lowercase(),
                    n,
                }),
                worktree,
            });
        }
    }
    out
}

fn read_dirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    dirs
}
