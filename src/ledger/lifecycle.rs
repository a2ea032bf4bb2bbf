//! The task lifecycle: the transactions that move a task through its states (the words of those
//! states, steps and end reasons are in [`super::task_state`]) and end it, releasing what it
//! held.
//!
//! ```text
//! spawning (intent → preparing | creating) → active → tearing-down (intent → detached → slot-released) → done
//!     └────────── spawn failed, abandoned by doctor, slot missing or unproven ─────────────┘
//! ```
//!
//! A task row is history: it is marked done, never deleted (except an intent taken back before
//! it touched anything, [`Tx::withdraw_intent`]); a done task's name may be spawned again.
//!
//! Three ways a slot is held against others: spawn's claim (taken before the slot is proven safe,
//! given back if it is not), teardown's pin (the task's own tenure, made open-ended), and prune's or
//! doctor's retirement of a free slot (a tenure of their own, ended when the slot is gone).

use super::events::EventKind;
use super::leases::By;
use super::task_state::{EndReason, Step, TaskState};
use super::tasks::Task;
use super::tenure::Tenure;
use super::{Result, Tx};
use crate::clock::Millis;

/// Whether ending a task also releases its issue lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IssueLease {
    Release,
    /// The holder held the issue lease before the spawn, outside any task: undoing the spawn
    /// leaves it held.
    Keep,
}

impl Tx<'_> {
    /// Moves a task to `state` at `step`, recording which process does the work.
    pub(crate) fn set_task_state(
        &self,
        id: i64,
        state: TaskState,
        step: Step,
        pid: Option<(i64, Option<i64>, Option<i64>)>,
    ) -> Result<()> {
        let (pid, start, ns) = pid.map_or((None, None, None), |(p, s, n)| (Some(p), s, n));
        self.db.once().exec(
            "UPDATE tasks SET state = ?1, step = ?2, updated_at = ?3, pid = coalesce(?4, pid), \
             pid_start = CASE WHEN ?4 IS NULL THEN pid_start ELSE ?5 END, \
             pid_ns = CASE WHEN ?4 IS NULL THEN pid_ns ELSE ?7 END WHERE id = ?6 \
             AND state <> 'done'",
            &[
                &state.to_string(),
                &step.to_string(),
                &self.now,
                &pid,
                &start,
                &id,
                &ns,
            ],
        )?;
        Ok(())
    }

    /// Records how far a multi-step operation got.
    pub(crate) fn set_task_step(&self, id: i64, step: Step) -> Result<()> {
        self.db.once().exec(
            "UPDATE tasks SET step = ?1, updated_at = ?2 WHERE id = ?3",
            &[&step.to_string(), &self.now, &id],
        )?;
        Ok(())
    }

    /// Gives a spawning task's lease the TTL asked for (`None`: open-ended) as the task becomes
    /// active, keeping its token; `None` when the tenure is no longer live. Not logged: the
    /// `task-spawned` of the same transaction names the lease, and a `renewed` row beside it
    /// read as a renewal nobody asked for (issue 13). A renewal by its holder still logs one.
    pub(crate) fn start_term(
        &self,
        tenure: &Tenure,
        ttl: Option<Millis>,
    ) -> Result<Option<Tenure>> {
        let expires_at = ttl.map(|ttl| self.now.saturating_add(ttl));
        let changed = self.db.once().exec(
            "UPDATE tenures SET expires_at = ?1, ttl_ms = ?2, renewed_at = ?3 \
             WHERE lease_id = ?4 AND ended_at IS NULL AND (expires_at IS NULL OR expires_at > ?3)",
            &[&expires_at, &ttl, &self.now, &tenure.lease_id],
        )?;
        Ok((changed > 0).then(|| Tenure {
            expires_at,
            ttl_ms: ttl,
            renewed_at: Some(self.now),
            ..tenure.clone()
        }))
    }

    /// Ends a task: its slot lease and (unless kept) its issue lease are released by their lease
    /// ids, never another tenure of the same resources; the task is marked done with `reason` and
    /// `task-done` is logged, naming the slot lease. Tokens stay spent. Ending an ended task changes nothing.
    pub(crate) fn end_task(&self, task: &Task, reason: EndReason, issue: IssueLease) -> Result<()> {
        self.release_task_leases(task, issue)?;
        let changed = self.db.once().exec(
            "UPDATE tasks SET state = 'done', step = 'done', done_at = ?1, done_reason = ?2, \
             updated_at = ?1 WHERE id = ?3 AND state <> 'done'",
            &[&self.now, &reason.to_string(), &task.id],
        )?;
        if changed > 0 {
            let slot = task.slot_resource();
            let detail = format!("task {} ({})", task.name, reason);
            // Named by its slot lease, so `git hand log --task` finds it through the lease
            // index like the task's other events (rows from before name none).
            let tenure = match &task.lease_id {
                Some(id) => self.view().tenure(id)?,
                None => None,
            };
            self.log(EventKind::TaskDone, &slot, tenure.as_ref(), Some(&detail))?;
        }
        Ok(())
    }

    /// Takes back a spawn's intent before it touched anything (its claimed slot proved unsafe):
    /// the leases go as in [`Tx::end_task`] and the row, which never became a task, is deleted
    /// (a retry records its own). The tenures and events stay: they are the history.
    pub fn withdraw_intent(&self, task: &Task, issue: IssueLease) -> Result<()> {
        self.release_task_leases(task, issue)?;
        self.db.once().exec(
            "DELETE FROM tasks WHERE id = ?1 AND state = 'spawning'",
            &[&task.id],
        )?;
        Ok(())
    }

    fn release_task_leases(&self, task: &Task, issue: IssueLease) -> Result<()> {
        let view = self.view();
        let issue = task
            .issue_lease_id
            .as_ref()
            .filter(|_| issue == IssueLease::Release);
        for id in [task.lease_id.as_ref(), issue].into_iter().flatten() {
            if let Some(t) = view.tenure(id)?
                && t.ended_at.is_none()
            {
                self.release(&t.resource, By::Lease(id))?;
            }
        }
        Ok(())
    }
}
