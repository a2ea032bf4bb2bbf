//! Tasks and pool slots (schema version 2): their rows and the queries on them. How a task moves
//! from state to state, and how it ends, lives in [`super::lifecycle`] (its words in [`super::task_state`]).
//!
//! A slot is a worktree resource the pool owns; its row remembers its number and path so the
//! pool can find it again.

use super::db::{Param, Row};
use super::ids::{LeaseId, RepoId, WorktreeKey};
use super::task_state::{EndReason, Step, TaskState};
use super::tenure::Resource;
use super::{LedgerError, Result, Tx, View};
use crate::clock::Millis;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    pub id: i64,
    pub repo_id: RepoId,
    pub name: String,
    pub state: TaskState,
    pub slot_path: Option<WorktreeKey>,
    /// The slot tenure this task was spawned with. `None` only in rows that predate lease ids;
    /// those fall back to comparing the slot path.
    pub lease_id: Option<LeaseId>,
    pub issue: Option<String>,
    pub issue_lease_id: Option<LeaseId>,
    pub branch: String,
    pub base_oid: Option<String>,
    pub holder: String,
    pub created_at: Millis,
    pub updated_at: Millis,
    pub done_at: Option<Millis>,
    pub done_reason: Option<EndReason>,
    /// The process running spawn or teardown, and its start time (to tell pid reuse apart).
    pub pid: Option<i64>,
    pub pid_start: Option<i64>,
    /// The PID namespace `pid` is a number of (see `platform::procs::Table::namespace`); `None` in rows from
    /// before schema version 7.
    pub pid_ns: Option<i64>,
    pub step: Option<Step>,
    /// The branch the post-checkout hook last saw checked out in the slot.
    pub checked_out: Option<String>,
    /// The normalized URL of the remote the branch is pushed to (origin's at spawn time), which
    /// branch fencing is keyed on; `None` in rows from before schema version 4.
    pub remote: Option<String>,
    /// The full name of the branch or remote-tracking branch the task was based on
    /// (`refs/heads/release`), which `list` and `prune --branches` measure it against; `None`
    /// for a base given as a commit, and in rows from before schema version 5.
    pub base_ref: Option<String>,
    /// The machine the task runs on (empty on a file ledger).
    pub machine: String,
}

const TASK_COLUMNS: &str = "id, repo_id, name, state, slot_path, lease_id, issue, issue_lease_id, \
    branch, base_oid, holder, created_at, updated_at, done_at, done_reason, pid, pid_start, step, \
    checked_out, remote, base_ref, machine, pid_ns FROM tasks";

/// A task as stored: the enums still as their words.
struct TaskRow {
    task: Task,
    state: String,
    step: Option<String>,
    done_reason: Option<String>,
}

impl TaskRow {
    fn from_row(r: &Row<'_>) -> Result<Self> {
        Ok(TaskRow {
            task: Task {
                id: r.get(0)?,
                repo_id: r.get(1)?,
                name: r.get(2)?,
                state: TaskState::Done,
                slot_path: r.get(4)?,
                lease_id: r.get(5)?,
                issue: r.get(6)?,
                issue_lease_id: r.get(7)?,
                branch: r.get(8)?,
                base_oid: r.get(9)?,
                holder: r.get(10)?,
                created_at: r.get(11)?,
                updated_at: r.get(12)?,
                done_at: r.get(13)?,
                done_reason: None,
                pid: r.get(15)?,
                pid_start: r.get(16)?,
                step: None,
                checked_out: r.get(18)?,
                remote: r.get(19)?,
                base_ref: r.get(20)?,
                machine: r.get(21)?,
                pid_ns: r.get(22)?,
            },
            state: r.get(3)?,
            step: r.get(17)?,
            done_reason: r.get(14)?,
        })
    }
}

impl TryFrom<TaskRow> for Task {
    type Error = LedgerError;
    fn try_from(row: TaskRow) -> Result<Self> {
        Ok(Task {
            state: row.state.parse()?,
            step: row.step.as_deref().map(str::parse).transpose()?,
            done_reason: row.done_reason.as_deref().map(str::parse).transpose()?,
            ..row.task
        })
    }
}

impl Task {
    /// The key of the task's slot. Every task records one; a row without it reads as a key
    /// that names no slot.
    pub fn slot_key(&self) -> WorktreeKey {
        self.slot_path.clone().unwrap_or_else(WorktreeKey::none)
    }

    /// The worktree resource of the task's slot (see [`Task::slot_key`]), on its machine.
    pub(crate) fn slot_resource(&self) -> Resource {
        Resource::worktree_on(&self.machine, &self.slot_key())
    }
}

/// Which tasks [`View::tasks`] lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tasks {
    /// Not done: spawning, active or tearing down.
    Open,
    /// Done ones too (history).
    All,
}

/// A pool slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    pub repo_id: RepoId,
    pub n: i64,
    pub path: WorktreeKey,
    pub created_at: Millis,
    /// The machine the slot is on (empty on a file ledger).
    pub machine: String,
    /// The PID namespace whose processes the spawn that last claimed it could see (`None`:
    /// never claimed since schema version 7).
    pub pid_ns: Option<i64>,
}

impl Slot {
    pub fn resource(&self) -> Resource {
        Resource::worktree_on(&self.machine, &self.path)
    }
}

/// What spawn records as its intent.
#[derive(Debug, Clone)]
pub struct NewTask<'a> {
    pub repo_id: &'a RepoId,
    pub name: &'a str,
    pub slot_path: &'a WorktreeKey,
    pub lease_id: &'a LeaseId,
    pub issue: Option<&'a str>,
    pub issue_lease_id: Option<&'a LeaseId>,
    pub branch: &'a str,
    pub base_oid: &'a str,
    pub holder: &'a str,
    pub pid: i64,
    pub pid_start: Option<i64>,
    pub pid_ns: Option<i64>,
    /// Where the spawn starts: see [`Step::Intent`] and [`Step::Preparing`].
    pub step: Step,
    /// The normalized URL of the remote the branch is pushed to, if the repository has one.
    pub remote: Option<&'a str>,
    /// The branch or remote-tracking branch the base was, as a full ref name.
    pub base_ref: Option<&'a str>,
}

impl View<'_> {
    fn task_where(&self, clause: &str, args: &[&dyn Param]) -> Result<Option<Task>> {
        let sql = format!("SELECT {TASK_COLUMNS} WHERE {clause}");
        self.db
            .row(&sql, args, |r| TaskRow::from_row(r)?.try_into())
    }

    pub(super) fn tasks_where(&self, clause: &str, args: &[&dyn Param]) -> Result<Vec<Task>> {
        let sql = format!("SELECT {TASK_COLUMNS} WHERE {clause}");
        self.db
            .rows(&sql, args, |r| TaskRow::from_row(r)?.try_into())
    }

    /// The task of this name that is not done, if any.
    pub fn open_task(&self, repo_id: &RepoId, name: &str) -> Result<Option<Task>> {
        self.task_where(
            "repo_id = ?1 AND name = ?2 AND state <> 'done'",
            &[repo_id, &name],
        )
    }

    /// The open task whose name is `name` but for case (`fix` for `Fix`), or `name` itself
    /// (preferred). Task names are case-sensitive, but their branches `hand/fix` and `hand/Fix`
    /// are one ref file on a case-insensitive filesystem (macOS's default): spawn refuses such a
    /// pair. `lower` reads the same on SQLite and PostgreSQL for the ASCII a task name holds.
    pub(crate) fn open_task_ignoring_case(
        &self,
        repo_id: &RepoId,
        name: &str,
    ) -> Result<Option<Task>> {
        self.task_where(
            "repo_id = ?1 AND lower(name) = lower(?2) AND state <> 'done' \
             ORDER BY name = ?2 DESC, id DESC LIMIT 1",
            &[repo_id, &name],
        )
    }

    /// The open task of a repository held by `holder` (a Claude Code session's, for the
    /// worktree name its holder carries), newest first.
    pub(crate) fn open_task_held_by(&self, repo_id: &RepoId, holder: &str) -> Result<Option<Task>> {
        self.task_where(
            "repo_id = ?1 AND holder = ?2 AND state <> 'done' ORDER BY id DESC LIMIT 1",
            &[repo_id, &holder],
        )
    }

    /// The task a name means: the open one of that name, else the last one that had it (done).
    /// One query; only the open ones are indexed by name, so a done name costs a scan of the
    /// repository's tasks (in SQLite, not a read of every row into git-hand).
    pub(crate) fn task_named(&self, repo_id: &RepoId, name: &str) -> Result<Option<Task>> {
        self.task_where(
            "repo_id = ?1 AND name = ?2 ORDER BY state <> 'done' DESC, id DESC LIMIT 1",
            &[repo_id, &name],
        )
    }

    pub fn task(&self, id: i64) -> Result<Option<Task>> {
        self.task_where("id = ?1", &[&id])
    }

    /// The open task on a branch (branch fencing).
    pub(crate) fn open_task_on_branch(
        &self,
        repo_id: &RepoId,
        branch: &str,
    ) -> Result<Option<Task>> {
        self.task_where(
            "repo_id = ?1 AND branch = ?2 AND state <> 'done' ORDER BY id DESC LIMIT 1",
            &[repo_id, &branch],
        )
    }

    /// The open tasks whose branch a push of `branch` to `remote` (a normalized URL) would
    /// update, newest first: those recorded with that remote, wherever they were spawned, and
    /// those recorded without one (before schema version 4) in repository `repo_id`. One query,
    /// two index searches: the pre-push hook asks it once per pushed branch.
    pub fn open_tasks_on_pushed_branch(
        &self,
        remote: &str,
        repo_id: Option<&RepoId>,
        branch: &str,
    ) -> Result<Vec<Task>> {
        self.tasks_where(&pushed_branch_clause(), &[&remote, &repo_id, &branch])
    }

    /// The open tasks whose branch a push of `branch` to `remote` would update, as
    /// [`View::open_tasks_on_pushed_branch`] finds them (the repository given by its common dir,
    /// a realpath), but only their ids and slot leases, and only those holding a slot lease that
    /// is not `except`: newest first. This is the pre-push hook's fence; a pusher's own task
    /// (`except` its lease) is not among them, so an allowed push reads no task row and no
    /// tenure for it, and the narrow rows compile in a fraction of the full ones.
    pub(crate) fn fence_candidates(
        &self,
        remote: &str,
        common_dir: &std::path::Path,
        branch: &str,
        except: Option<&LeaseId>,
    ) -> Result<Vec<(i64, LeaseId)>> {
        self.db.rows(
            FENCE_CANDIDATES,
            &[
                &remote,
                &common_dir.to_string_lossy(),
                &branch,
                &except,
                &self.machine(),
            ],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }

    /// The open task named `name`, or `name` but for case (see
    /// [`View::open_task_ignoring_case`]), pushed to `remote` on another machine than this one,
    /// if any: a task name is the team's on a remote. A file ledger is one machine, so it asks
    /// nothing.
    pub(crate) fn open_task_elsewhere(&self, remote: &str, name: &str) -> Result<Option<Task>> {
        if self.machine().is_empty() {
            return Ok(None);
        }
        self.task_where(
            "remote = ?1 AND lower(name) = lower(?2) AND state <> 'done' AND machine <> ?3 \
             ORDER BY name = ?2 DESC, id DESC LIMIT 1",
            &[&remote, &name, &self.machine()],
        )
    }

    /// The tasks pushed to `remote` on every machine, oldest first: the open ones, or all of
    /// them (`list` on a team ledger).
    pub(crate) fn tasks_on_remote(&self, remote: &str, which: Tasks) -> Result<Vec<Task>> {
        if which == Tasks::All {
            self.tasks_where("remote = ?1 ORDER BY id", &[&remote])
        } else {
            self.tasks_where("remote = ?1 AND state <> 'done' ORDER BY id", &[&remote])
        }
    }

    /// The newest task spawned with this slot lease.
    pub(crate) fn task_by_lease(&self, lease_id: &LeaseId) -> Result<Option<Task>> {
        self.task_where("lease_id = ?1 ORDER BY id DESC LIMIT 1", &[lease_id])
    }

    /// The open task holding this issue lease.
    pub(crate) fn open_task_by_issue_lease(&self, lease_id: &LeaseId) -> Result<Option<Task>> {
        self.task_where(
            "issue_lease_id = ?1 AND state <> 'done' LIMIT 1",
            &[lease_id],
        )
    }

    /// The tasks of a repository, oldest first: the open ones, or all of them.
    pub fn tasks(&self, repo_id: &RepoId, which: Tasks) -> Result<Vec<Task>> {
        if which == Tasks::All {
            self.tasks_where("repo_id = ?1 ORDER BY id", &[repo_id])
        } else {
            self.tasks_where("repo_id = ?1 AND state <> 'done' ORDER BY id", &[repo_id])
        }
    }

    /// The slots of a repository that have not been pruned, by number.
    pub fn slots(&self, repo_id: &RepoId) -> Result<Vec<Slot>> {
        self.db.rows(
            "SELECT repo_id, n, path, created_at, machine, pid_ns FROM slots WHERE repo_id = ?1 AND removed_at IS NULL ORDER BY n",
            &[repo_id],
            slot_from_row,
        )
    }

    /// This machine's slot at this path, unless pruned.
    pub fn slot_by_path(&self, path: &WorktreeKey) -> Result<Option<Slot>> {
        self.db.once().row(
            "SELECT repo_id, n, path, created_at, machine, pid_ns FROM slots \
             WHERE path = ?1 AND machine = ?2 AND removed_at IS NULL",
            &[path, &self.machine()],
            slot_from_row,
        )
    }

    /// The last token issued for each present slot of a repository, by path: any claim of a
    /// slot since (even one released again) changes it.
    pub(crate) fn slot_last_tokens(&self, repo_id: &RepoId) -> Result<Vec<(WorktreeKey, i64)>> {
        self.db.rows(
            "SELECT s.path, r.last_token FROM slots s JOIN resources r ON r.id = s.resource_id \
             WHERE s.repo_id = ?1 AND s.removed_at IS NULL",
            &[repo_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }

    /// Every slot number a repository has ever used (pruned ones included) and its path: a
    /// pruned number may come back only at the same path, which continues its token history.
    pub(crate) fn slot_numbers(&self, repo_id: &RepoId) -> Result<Vec<(i64, WorktreeKey)>> {
        self.db.rows(
            "SELECT n, path FROM slots WHERE repo_id = ?1 ORDER BY n",
            &[repo_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }
}

/// The clause of [`View::open_tasks_on_pushed_branch`]: two searches joined, each on its
/// partial index (written as one `OR`, SQLite scanned every task ever recorded).
fn pushed_branch_clause() -> String {
    format!(
        "remote = ?1 AND branch = ?3 AND state <> 'done' UNION ALL SELECT {TASK_COLUMNS} \
         WHERE remote IS NULL AND repo_id = ?2 AND branch = ?3 AND state <> 'done' \
         ORDER BY id DESC"
    )
}

/// The statement of [`View::fence_candidates`]: the two index searches of
/// [`pushed_branch_clause`], the repository looked up inside it.
const FENCE_CANDIDATES: &str = "SELECT id, lease_id FROM tasks \
     WHERE remote = ?1 AND branch = ?3 AND state <> 'done' \
     AND lease_id IS NOT NULL AND lease_id IS DISTINCT FROM ?4 \
     UNION ALL SELECT id, lease_id FROM tasks \
     WHERE remote IS NULL AND repo_id = (SELECT id FROM repos WHERE common_dir = ?2 AND machine = ?5) \
     AND branch = ?3 AND state <> 'done' AND lease_id IS NOT NULL \
     AND lease_id IS DISTINCT FROM ?4 ORDER BY id DESC";

/// A slot from `SELECT repo_id, n, path, created_at, machine, pid_ns FROM slots ...`.
pub(super) fn slot_from_row(r: &Row<'_>) -> Result<Slot> {
    Ok(Slot {
        repo_id: r.get(0)?,
        n: r.get(1)?,
        path: r.get(2)?,
        created_at: r.get(3)?,
        machine: r.get(4)?,
        pid_ns: r.get(5)?,
    })
}

impl Tx<'_> {
    /// Records a slot (a new one, or a pruned one coming back at the same number and path).
    pub fn ensure_slot(&self, repo_id: &RepoId, n: i64, path: &WorktreeKey) -> Result<Slot> {
        let view = self.view();
        let rid = self.resource_id(&view.worktree(path))?;
        self.db.once().exec(
            "INSERT INTO slots (resource_id, repo_id, n, path, created_at, machine) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (resource_id) DO UPDATE SET removed_at = NULL",
            &[&rid, repo_id, &n, path, &self.now, &view.machine()],
        )?;
        self.view().slot_by_path(path)?.ok_or_else(|| {
            LedgerError::Corrupt(format!("slot {path} vanished while being recorded"))
        })
    }

    /// Takes a slot out of the pool, unless it is unknown, already out, or held by a tenure
    /// (live or expired): a decision taken from an older read must never remove a slot that was
    /// leased since. Its resource (and so its token history) stays. Returns whether it did.
    pub(crate) fn remove_free_slot(&self, path: &WorktreeKey) -> Result<bool> {
        let view = self.view();
        let held = view.held(&view.worktree(path))?.is_some();
        if view.slot_by_path(path)?.is_none() || held {
            return Ok(false);
        }
        self.db.once().exec(
            "UPDATE slots SET removed_at = ?1 WHERE path = ?2 AND machine = ?3",
            &[&self.now, path, &view.machine()],
        )?;
        Ok(true)
    }

    /// Undoes [`Tx::remove_free_slot`] when git refused to remove the worktree.
    pub(crate) fn restore_slot(&self, path: &WorktreeKey) -> Result<()> {
        self.db.once().exec(
            "UPDATE slots SET removed_at = NULL WHERE path = ?1 AND machine = ?2",
            &[path, &self.view().machine()],
        )?;
        Ok(())
    }

    /// Records spawn's intent: the new task row, as stored. It is read back as the open task of
    /// its name, which is unique (`tasks_one_open_per_name`): that statement is compiled already
    /// (spawn asked it first), where `RETURNING` or a read by id would compile one more.
    pub fn insert_task(&self, t: &NewTask<'_>) -> Result<Task> {
        self.db.once().exec(
            "INSERT INTO tasks (repo_id, name, state, slot_path, lease_id, issue, issue_lease_id, \
             branch, base_oid, holder, created_at, updated_at, pid, pid_start, step, remote, \
             base_ref, machine, pid_ns) VALUES (?1, ?2, 'spawning', ?3, ?4, ?5, ?6, ?7, ?8, ?9, \
             ?10, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
            &[
                t.repo_id,
                &t.name,
                t.slot_path,
                t.lease_id,
                &t.issue,
                &t.issue_lease_id,
                &t.branch,
                &t.base_oid,
                &t.holder,
                &self.now,
                &t.pid,
                &t.pid_start,
                &t.step.to_string(),
                &t.remote,
                &t.base_ref,
                &self.view().machine(),
                &t.pid_ns,
            ],
        )?;
        // The slot remembers whose processes the claiming spawn could see.
        self.db.once().exec(
            "UPDATE slots SET pid_ns = ?1 WHERE path = ?2 AND machine = ?3",
            &[&t.pid_ns, t.slot_path, &self.view().machine()],
        )?;
        self.view().open_task(t.repo_id, t.name)?.ok_or_else(|| {
            LedgerError::Corrupt(format!("task {} vanished as it was recorded", t.name))
        })
    }

    /// Points a task at a new slot lease (spawn retried into another slot, or the holder
    /// re-acquired its slot).
    pub(crate) fn set_task_lease(
        &self,
        id: i64,
        slot_path: &WorktreeKey,
        lease_id: &LeaseId,
    ) -> Result<()> {
        self.db.once().exec(
            "UPDATE tasks SET slot_path = ?1, lease_id = ?2, updated_at = ?3 WHERE id = ?4",
            &[slot_path, lease_id, &self.now, &id],
        )?;
        Ok(())
    }

    pub(crate) fn set_checked_out(&self, id: i64, branch: &str) -> Result<()> {
        self.db.once().exec(
            "UPDATE tasks SET checked_out = ?1 WHERE id = ?2",
            &[&branch, &id],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{FENCE_CANDIDATES, TASK_COLUMNS, pushed_branch_clause};

    fn plan_of(sql: &str, args: &[&str]) -> Vec<String> {
        let mut ledger = crate::ledger::Ledger::empty().unwrap();
        let args: Vec<&dyn crate::ledger::db::Param> = args.iter().map(|a| a as _).collect();
        ledger
            .read(|v| {
                v.db.rows(&format!("EXPLAIN QUERY PLAN {sql}"), &args, |r| {
                    r.get::<String>(3)
                })
            })
            .unwrap()
    }

    fn assert_both_indexes_and_no_task_scanned(plan: &[String]) {
        assert!(
            plan.iter().all(|step| !step.starts_with("SCAN")),
            "{plan:?}"
        );
        assert!(
            plan.iter()
                .any(|s| s.contains("tasks_open_by_remote_branch"))
                && plan.iter().any(|s| s.contains("tasks_open_by_branch")),
            "{plan:?}"
        );
    }

    #[test]
    fn the_pushed_branch_lookup_searches_indexes_and_scans_no_task() {
        let sql = format!("SELECT {TASK_COLUMNS} WHERE {}", pushed_branch_clause());
        assert_both_indexes_and_no_task_scanned(&plan_of(&sql, &["r", "repo", "b"]));
    }

    #[test]
    fn the_fence_lookup_searches_indexes_and_scans_no_task() {
        let plan = plan_of(FENCE_CANDIDATES, &["r", "/repo/.git", "b", "lease", ""]);
        assert_both_indexes_and_no_task_scanned(&plan);
    }
}
