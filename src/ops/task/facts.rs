//! What `git hand list` shows of a task's worktree: uncommitted changes, commits ahead of and
//! behind a base (the caller picks which: the task's own base branch, else the default branch)
//! and the branch's upstream, and when the last commit was made. Read only, never under a ledger
//! transaction.
//!
//! Two git processes per slot, started together (`git status --porcelain=v2 --branch` gives the
//! changes and the upstream's counts, `git rev-list --left-right --count` the base's),
//! and the slots read by a few threads at once: sixteen tasks cost about what two of them do in
//! turn. Every git runs with `--no-optional-locks`, so a `list` never takes a slot's index lock
//! from under the spawn, the teardown or the agent's own commit at work there.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::clock::Millis;
use crate::git::{Git, Repo};

/// Commits on one side and not the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Divergence {
    pub ahead: u64,
    pub behind: u64,
}

/// The branch's upstream and how far apart they are; `divergence` is `None` when the upstream
/// is configured but its ref is gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    pub name: String,
    pub divergence: Option<Divergence>,
}

/// A slot's worktree as git sees it now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    /// The commit HEAD points at; `None` on an unborn branch.
    pub head: Option<String>,
    /// Modified, staged, conflicted or untracked files (ignored ones do not count).
    pub dirty: bool,
    /// When HEAD's commit was made (its committer time).
    pub last_commit_at: Option<Millis>,
    /// Against the base given to [`gather`]; `None` without one, or on an unborn branch.
    pub base: Option<Divergence>,
    /// `None` when the checked-out branch has no upstream (or HEAD is detached).
    pub upstream: Option<Upstream>,
}

/// At most this many slots are read at once: enough to keep two cores busy while the other
/// gits wait on the disk, few enough that a pool of 64 slots does not start 128 gits together.
const READERS: usize = 8;

/// A worktree to read, and the commit to measure it against, if any.
#[derive(Debug, Clone)]
pub struct Slot {
    pub dir: PathBuf,
    pub base: Option<String>,
}

/// The facts of each worktree in `slots`, in order (`None` for one git could not read), each
/// measured against its own base commit when it has one.
pub(crate) fn gather(repo: &Repo, slots: &[Slot]) -> Vec<Option<Facts>> {
    let next = AtomicUsize::new(0);
    let mut read: Vec<(usize, Option<Facts>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..READERS.min(slots.len()))
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = vec![];
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(slot) = slots.get(i) else { break };
                        mine.push((i, read_slot(&slot.dir, slot.base.as_deref())));
                    }
                    mine
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_default())
            .collect()
    });
    read.sort_by_key(|(i, _)| *i);
    let mut facts: Vec<Option<Facts>> = vec![None; slots.len()];
    for (i, f) in read {
        facts[i] = f.map(|mut f| {
            // The commit's time from the object database, in this process: no third git.
            f.last_commit_at = f
                .head
                .as_deref()
                .and_then(|oid| repo.commit_time(oid))
                .map(|secs| secs * 1000);
            f
        });
    }
    facts
}

/// One slot: `git status` and, with a base, `git rev-list` running side by side.
fn read_slot(dir: &Path, base: Option<&str>) -> Option<Facts> {
    let git = Git::new(dir);
    let status = git
        .command(&[
            "--no-optional-locks",
            "status",
            "--porcelain=v2",
            "--branch",
            "--untracked-files=normal",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let counts = base.and_then(|base| {
        git.command(&[
            "--no-optional-locks",
            "rev-list",
            "--left-right",
            "--count",
            &format!("{base}...HEAD"),
            "--",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()
    });
    let status = status.wait_with_output().ok()?;
    let counts = counts.and_then(|c| c.wait_with_output().ok());
    if !status.status.success() {
        return None;
    }
    let mut facts = parse_status(&String::from_utf8_lossy(&status.stdout));
    facts.base = counts
        .filter(|c| c.status.success() && facts.head.is_some())
        .and_then(|c| parse_left_right(&String::from_utf8_lossy(&c.stdout)));
    Some(facts)
}

/// `git status --porcelain=v2 --branch`: the `# branch.*` headers, then one line per changed
/// or untracked file.
fn parse_status(out: &str) -> Facts {
    let mut facts = Facts {
        head: None,
        dirty: false,
        last_commit_at: None,
        base: None,
        upstream: None,
    };
    for line in out.lines() {
        let Some(header) = line.strip_prefix("# ") else {
            facts.dirty |= !line.is_empty();
            continue;
        };
        if let Some(oid) = header.strip_prefix("branch.oid ") {
            facts.head = (oid != "(initial)").then(|| oid.to_string());
        } else if let Some(name) = header.strip_prefix("branch.upstream ") {
            facts.upstream = Some(Upstream {
                name: name.to_string(),
                divergence: None,
            });
        } else if let Some(ab) = header.strip_prefix("branch.ab ") {
            let mut counts = ab.split(' ').map(|n| n.trim_start_matches(['+', '-']));
            let ahead = counts.next().and_then(|n| n.parse().ok());
            let behind = counts.next().and_then(|n| n.parse().ok());
            if let (Some(up), Some(ahead), Some(behind)) = (&mut facts.upstream, ahead, behind) {
                up.divergence = Some(Divergence { ahead, behind });
            }
        }
    }
    facts
}

/// `git rev-list --left-right --count BASE...HEAD`: `<behind>\t<ahead>` (the left side is the
/// base's own commits).
fn parse_left_right(out: &str) -> Option<Divergence> {
    let mut counts = out.split_whitespace().map(str::parse::<u64>);
    let behind = counts.next()?.ok()?;
    let ahead = counts.next()?.ok()?;
    Some(Divergence { ahead, behind })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_gives_the_head_the_changes_and_the_upstream() {
        let f = parse_status(
            "# branch.oid 0123456789abcdef0123456789abcdef01234567\n# branch.head hand/a\n\
             # branch.upstream origin/hand/a\n# branch.ab +2 -1\n? new.txt\n",
        );
        assert_eq!(
            f.head.as_deref(),
            Some("0123456789abcdef0123456789abcdef01234567")
        );
        assert!(f.dirty);
        assert_eq!(
            f.upstream,
            Some(Upstream {
                name: "origin/hand/a".into(),
                divergence: Some(Divergence {
                    ahead: 2,
                    behind: 1
                })
            })
        );
    }

    #[test]
    fn a_clean_detached_worktree_has_no_upstream_and_a_gone_one_no_counts() {
        let f = parse_status("# branch.oid (initial)\n# branch.head (detached)\n");
        assert!(!f.dirty && f.head.is_none() && f.upstream.is_none());
        let f = parse_status("# branch.oid abc\n# branch.head x\n# branch.upstream origin/x\n");
        assert_eq!(f.upstream.and_then(|u| u.divergence), None);
    }

    #[test]
    fn left_right_counts_are_behind_then_ahead() {
        assert_eq!(
            parse_left_right("1\t3\n"),
            Some(Divergence {
                ahead: 3,
                behind: 1
            })
        );
        assert_eq!(parse_left_right(""), None);
    }
}
