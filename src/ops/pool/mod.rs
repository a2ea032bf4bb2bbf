//! The pool's layout and its slots: where slots live (`<root>/<repo>-<id6>/<n>/<repo>`), how many
//! there may be, and which existing slot a new task may take.
//!
//! A room of `ops` (issue 26): with its children, everything about the slots themselves: that a
//! slot is the worktree git-hand made and who may change it (`slot`), that it is safe to reuse
//! (`safety`), who is inside it (`procs`), the stamp in its admin dir (`stamp`), and the hooks
//! directory it shares with the repository's other worktrees (`slot_hooks`).
//!
//! Choosing ([`choose`]) is a decision over the pool's facts ([`choice`]), which asks the disk of
//! each slot it tries: an expired slot is proven safe before it is claimed, because claiming ends
//! its task's lease for good; a free slot is claimed first and proven after, so two parallel
//! spawns never probe or switch the same slot.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use super::{Result, repo::names};
use crate::git::{Repo, WorktreeListLock};
use crate::ledger::{RepoId, Slot, Task, Tenure, View, WorktreeKey};
use crate::platform::env::Env;
use crate::platform::procs::{Scan, ns_name};

pub mod choice;
mod error;
pub mod procs;
pub mod safety;
pub mod slot;
pub mod slot_hooks;
pub mod stamp;

pub use error::PoolError;
pub(crate) use error::cannot_remove;

/// `git config hand.root`, else `$XDG_DATA_HOME/git-hand/pools`, else
/// `~/.local/share/git-hand/pools`. A root that is relative (it would move with the current
/// directory) or that git-hand could not record (a newline would break the stamp's lines) is a
/// usage error naming where it came from. `env` is the environment the operation reads.
pub fn root(repo: &Repo, env: &Env) -> Result<PathBuf> {
    if let Some(value) =
        super::repo::settings::git_string(repo, "hand.root").filter(|r| !r.is_empty())
    {
        let root = super::repo::settings::expand_home(&value, env);
        let recordable = root
            .to_str()
            .is_some_and(|r| !r.chars().any(names::is_deceptive));
        if !root.is_absolute() || !recordable {
            return Err(repo
                .bad_config(
                    "hand.root",
                    "an absolute path (or one starting with ~/) without control characters",
                    Some(DEFAULT_ROOT.into()),
                )
                .into());
        }
        return Ok(root);
    }
    let nonempty = |k: &'static str| {
        env.var_os(k)
            .filter(|v| !v.is_empty())
            .map(|v| (k, PathBuf::from(v)))
    };
    let (from, dir) = nonempty("XDG_DATA_HOME")
        .filter(|(_, p)| p.is_absolute())
        .or_else(|| nonempty("HOME").map(|(k, h)| (k, h.join(".local/share"))))
        .ok_or(PoolError::NoRoot)?;
    let root = dir.join("git-hand/pools");
    names::path(
        &root,
        &format!("the pool root (from {from})"),
        "git config hand.root /a/path/without/control/characters",
    )?;
    Ok(root)
}

/// What a bad `hand.root` is replaced with in the hint.
pub(crate) const DEFAULT_ROOT: &str = "~/.local/share/git-hand/pools";

/// This repository's pool directory, `<root>/<repo-name>-<id6>` (which may not exist).
pub(crate) fn pool_dir(repo: &Repo, env: &Env, repo_id: &RepoId) -> Result<PathBuf> {
    let id6 = &repo_id.as_str()[..6.min(repo_id.as_str().len())];
    Ok(root(repo, env)?.join(format!("{}-{id6}", repo.name())))
}

/// The paths of the slots the ledger knows for a repository.
pub(crate) fn known_slot_paths(
    view: &View<'_>,
    repo_id: &RepoId,
) -> crate::ledger::Result<Vec<WorktreeKey>> {
    Ok(view.slots(repo_id)?.into_iter().map(|s| s.path).collect())
}

/// This repository's pool directory, created (0700) and canonicalized, so slot paths built on
/// it are realpaths and can be ledger keys before the slot exists.
pub fn ensure_pool_dir(repo: &Repo, env: &Env, repo_id: &RepoId) -> Result<PathBuf> {
    let dir = pool_dir(repo, env, repo_id)?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(|e| PoolError::CannotCreateDir {
            dir: dir.clone(),
            reason: e.to_string(),
        })?;
    Ok(crate::git::canonical(&dir)?)
}

pub fn slot_path(pool_dir: &Path, n: i64, repo: &Repo) -> PathBuf {
    pool_dir.join(n.to_string()).join(repo.name())
}

/// Runs `git worktree add` (`args`) while holding the worktree-list lock (`_held`), past the
/// half-written admin dirs of spawns killed inside their own `worktree add`: git writes an admin
/// dir's files one by one, and a `commondir` left empty makes every later `worktree add` of the
/// repository fail ("failed to read .git/worktrees/<id>/commondir"), so one killed spawn used to
/// fail every spawn that needed a new slot until `doctor --repair` ran. An admin dir is cleared
/// only when it is certainly such a one: its `commondir` is empty and its `gitdir` names a slot
/// of `pool_dir`. Every spawn registers a slot under this lock, so its maker is dead (a git-hand
/// killed alone may leave its `worktree add` running for a moment: that spawn then fails, and
/// nothing is lost); the slot's own task is stuck in spawning and its repair removes the rest,
/// as for any killed spawn.
pub(crate) fn add_worktree(
    git: &crate::git::Git,
    args: &[&str],
    common: &Path,
    pool_dir: &Path,
    _held: &WorktreeListLock,
) -> Result<()> {
    let mut cleared: Vec<PathBuf> = vec![];
    loop {
        let failure = match git.run(args) {
            Ok(_) => return Ok(()),
            Err(e) => e,
        };
        let debris = match &failure {
            crate::git::GitError::Failed { stderr, .. } => {
                half_written_slot_admin(stderr, common, pool_dir)
            }
            _ => None,
        };
        let Some(admin) = debris.filter(|a| !cleared.contains(a)) else {
            return Err(failure.into());
        };
        std::fs::remove_dir_all(&admin)
            .map_err(|e| cannot_remove(&admin, ", a half-written worktree admin dir", e))?;
        cleared.push(admin);
    }
}

/// The admin dir git's message says it cannot read the `commondir` of, when it is a slot's of
/// `pool_dir` left half-written (see [`add_worktree`]).
fn half_written_slot_admin(stderr: &str, common: &Path, pool_dir: &Path) -> Option<PathBuf> {
    let rest = &stderr[stderr.find("failed to read ")? + "failed to read ".len()..];
    let at = rest.find("/commondir")?;
    let id = Path::new(&rest[..at]).file_name()?;
    let admin = common.join("worktrees").join(id);
    let commondir = std::fs::read_to_string(admin.join("commondir")).ok()?;
    let slot = crate::git::link::worktree_of(&admin)?;
    let in_pool = slot.parent()?.parent()? == pool_dir;
    (commondir.trim().is_empty() && in_pool).then_some(admin)
}

/// Arguments that let git-hand's own `git switch` skip hooks when the only hook it would run is
/// git-hand's post-checkout shim, which does nothing for git-hand's calls: saves starting a shell
/// per switch. With any other hook in play (a chained post-checkout, a reference-transaction
/// hook, a core.hooksPath) hooks run as usual.
pub(crate) fn switch_hook_args(repo: &Repo) -> &'static [&'static str] {
    let quiet = crate::hooks::not_moved_by_another_tool(repo)
        && crate::hooks::only_our_switch_hooks(&repo.loc.common_dir);
    if quiet {
        &["-c", "core.hooksPath=/dev/null"]
    } else {
        &[]
    }
}

/// A slot and the tenure that holds it, if any.
#[derive(Debug, Clone)]
pub struct SlotInfo {
    pub slot: Slot,
    pub held: Option<Tenure>,
    /// Open tasks that name this slot (normally at most the holder's).
    pub tasks: Vec<Task>,
    /// The last token issued for the slot: a claim must find it unchanged.
    pub last_token: i64,
}

impl SlotInfo {
    /// Free: no tenure holds it.
    pub fn is_free(&self) -> bool {
        self.held.is_none()
    }
}

/// Every present slot of a repository with its holder, open tasks and last token: four queries
/// whatever the number of slots.
pub fn slots(view: &View<'_>, repo_id: &RepoId) -> crate::ledger::Result<Vec<SlotInfo>> {
    let mut held: std::collections::HashMap<String, Tenure> = view
        .held_slots(repo_id)?
        .into_iter()
        .map(|t| (t.resource.key.clone(), t))
        .collect();
    let open = view.tasks(repo_id, crate::ledger::Tasks::Open)?;
    let tokens: std::collections::HashMap<WorktreeKey, i64> =
        view.slot_last_tokens(repo_id)?.into_iter().collect();
    Ok(view
        .slots(repo_id)?
        .into_iter()
        .map(|slot| SlotInfo {
            last_token: tokens.get(&slot.path).copied().unwrap_or(0),
            held: held.remove(&slot.resource().key),
            tasks: open
                .iter()
                .filter(|t| t.slot_path.as_ref() == Some(&slot.path))
                .cloned()
                .collect(),
            slot,
        })
        .collect())
}

/// How a spawn will get its slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// A free slot, not yet proven safe: spawn claims it in the ledger first and proves it safe
    /// after, so no other spawn can be probing (or switching) it meanwhile.
    Claim(PathBuf),
    /// Switch an existing, proven-safe slot to the task's branch.
    Reuse(PathBuf),
    /// Create the worktree at a slot the ledger knows but the disk lost.
    Recreate(PathBuf),
    /// A new slot number.
    Create { n: i64, path: PathBuf },
}

impl Plan {
    /// Whether this spawn makes the worktree (a new slot, or one the disk lost) rather than
    /// switching one that is there. Asked after the claim is settled, when a claimed free slot
    /// has become [`Plan::Reuse`].
    pub(crate) fn makes_worktree(&self) -> bool {
        matches!(self, Plan::Create { .. } | Plan::Recreate(_))
    }
}

/// A slot not taken, and why.
#[derive(Debug, Clone)]
pub struct Skipped {
    pub path: String,
    pub why: Vec<String>,
}

/// Picks a slot for a spawn ([`choice::decide`]), asking the disk of each slot it tries.
pub fn choose(
    pool: &choice::Pool<'_>,
    scan: Scan,
    repo: &Repo,
    pool_dir: &Path,
) -> std::result::Result<(Plan, Vec<Skipped>), Vec<Skipped>> {
    choice::decide(
        pool,
        &OnDisk {
            scan,
            repo,
            pool_dir,
        },
    )
}

/// The disk as it is, as [`choice::decide`] asks it.
struct OnDisk<'a> {
    scan: Scan,
    repo: &'a Repo,
    pool_dir: &'a Path,
}

impl choice::Disk for OnDisk<'_> {
    fn unseen(&self, info: &SlotInfo) -> Option<String> {
        unseen_namespace(self.scan, info)
    }
    fn prove(&self, path: &Path) -> std::result::Result<(), slot::NotTheSlot> {
        slot::prove(&self.repo.loc.common_dir, path).map(drop)
    }
    fn prove_absent(&self, path: &Path) -> std::result::Result<(), slot::NotTheSlot> {
        slot::prove_absent(path)
    }
    fn reuse_blockers(&self, path: &Path) -> Vec<String> {
        safety::reuse_blockers(self.scan, self.repo, path)
    }
    fn slot_path(&self, n: i64) -> PathBuf {
        slot_path(self.pool_dir, n, self.repo)
    }
    fn number_taken(&self, n: i64) -> bool {
        number_taken(self.pool_dir, n)
    }
}

/// Whether something is at slot number `n`'s directory of `pool_dir` already.
fn number_taken(pool_dir: &Path, n: i64) -> bool {
    std::fs::symlink_metadata(pool_dir.join(n.to_string())).is_ok()
}

/// Why a slot cannot be proven empty from here, if so: the spawn that last claimed it could see
/// the processes of a PID namespace this scan's `/proc` does not show (one above or beside it,
/// such as the host's from inside a container with its own `/proc`), so a process of its task
/// may sit in it unseen. Such a slot is skipped and never reset (see [`crate::platform::procs::Table::sees`]).
pub(crate) fn unseen_namespace(scan: Scan, info: &SlotInfo) -> Option<String> {
    let ns = info.slot.pid_ns?;
    if scan.sees(Some(ns)) {
        return None;
    }
    let here = scan.namespace().map_or_else(|| "unknown".into(), ns_name);
    Some(format!(
        "last used from PID namespace {}, whose processes this /proc ({here}) cannot see: a \
         process may be inside it unseen; spawn from that namespace or one above it to use it",
        ns_name(ns)
    ))
}

/// The number and path of a new slot: the lowest number no present slot uses, whose directory
/// is free, and which, if an old pruned slot had it, comes back at the same path (so its token
/// history continues). Spawn asks again inside its intent transaction, where the answer cannot
/// change under it.
pub(crate) fn new_slot(
    present: &[i64],
    numbers_used: &[(i64, WorktreeKey)],
    pool_dir: &Path,
    repo: &Repo,
) -> (i64, PathBuf) {
    let n = choice::new_number(
        present,
        numbers_used,
        &|n| slot_path(pool_dir, n, repo),
        &|n| number_taken(pool_dir, n),
    );
    (n, slot_path(pool_dir, n, repo))
}
