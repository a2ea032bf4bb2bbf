//! Copying one machine's file ledger into a team ledger (`git hand ledger copy --to <url>`):
//! what a laptop's ledger must bring along so that nothing it handed out loses its meaning.
//!
//! [`View::export`] reads, from the file ledger, its open tasks, its tenures (held and ended),
//! the done tasks of its ended slot tenures, its slots, its repositories and every resource's
//! last token. [`Tx::import`] writes them into the team ledger in the caller's one transaction,
//! as the machine the transaction acts for: a worktree resource moves under the machine's key
//! (`<machine>:<path>`), an issue keeps its key (issues are the team's), and every tenure keeps
//! its lease id, token, holder and times, so a credential an agent holds and the stamp in its
//! slot name a tenure the team ledger has. Every copied resource's last token becomes at least
//! the file ledger's, so no token a stamp or credential of the file ledger presents is granted
//! again.
//!
//! Ended tenures are copied for the zombies: a process still presenting a lease the laptop had
//! superseded, released or let expire is judged on the team ledger as it was on the laptop
//! (`stale`, `released`, `expired`, naming its task), not as a lease the team never granted.
//! The team's schema takes a tenure only with its resource's last token, and tokens only grow,
//! so they are written in token order, each after raising the last token to it; an ended tenure
//! whose token the team ledger already reached, or of a resource the team ledger holds, cannot
//! join that history and is left out (a zombie presenting it stays `unknown-lease` there,
//! refused all the same).
//!
//! What cannot be copied without breaking a rule (an issue live on the team ledger for another
//! tenure, a resource whose team tokens went past the tenure's, a task name or branch open on
//! the team ledger, a slot number this machine's repository has at another path there, a task
//! half spawned or half torn down) is found before anything is written
//! and returned as [`Conflict`]s: the caller writes nothing then. Running it again after it
//! succeeded changes nothing: a tenure whose lease id the team ledger has is already copied,
//! and so is its task (whatever became of it since); an ended tenure's token is reached by
//! then. The event log is not copied (its rows are
//! the file ledger's history; it stays there): each task copied gets one `copied` event.

use std::collections::{HashMap, HashSet};

use super::events::EventKind;
use super::ids::{LeaseId, RepoId, WorktreeKey};
use super::tasks::{Slot, Task};
use super::tenure::{Resource, ResourceKind, Tenure};
use super::{LedgerError, Result, Tx, View};
use crate::ledger::task_state::TaskState;

/// What a file ledger holds that a team ledger must take over.
#[derive(Debug, Clone, Default)]
pub struct Export {
    /// `(id, common_dir)` of every repository.
    pub repos: Vec<(RepoId, String)>,
    /// Every resource (its key as the file ledger has it) and its last token.
    pub resources: Vec<(Resource, i64)>,
    /// Every held (not ended) tenure, expired or not.
    pub held: Vec<Tenure>,
    /// Every ended tenure, by resource and token: what a verdict on a zombie presenting one
    /// compares (its token against its slot's newest, and how it ended).
    pub ended: Vec<Tenure>,
    /// Every slot not pruned.
    pub slots: Vec<Slot>,
    /// Every open task (spawning, active, tearing down).
    pub tasks: Vec<Task>,
    /// Every done task spawned with a slot lease: the task a verdict names for a zombie of it.
    pub done: Vec<Task>,
}

/// Why a copy was refused; nothing was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Conflict {
    /// The resource is held on the team ledger by another tenure that is live.
    Held {
        key: String,
        holder: String,
        machine: Option<String>,
    },
    /// The team ledger already handed out tokens past the file ledger's live tenure.
    TokensAhead { key: String, team: i64, ours: i64 },
    /// A task of this name, or on this branch, is open on the team ledger.
    TaskOpen {
        task: String,
        what: String,
        holder: String,
        machine: String,
    },
    /// A task still spawning or tearing down: it is finished (or repaired) first.
    Unsettled { task: String, state: TaskState },
    /// This machine's repository `repo` (its common dir) has slot `n` at another path on the
    /// team ledger (`theirs`; `pruned` there, or not) than here (`ours`): a repository's slot
    /// numbers are unique, and a pruned number comes back only at its path.
    SlotNumber {
        repo: String,
        n: i64,
        ours: String,
        theirs: String,
        pruned: bool,
    },
}

/// What [`Tx::import`] did.
#[derive(Debug, Clone, Default)]
pub struct Imported {
    /// The tasks copied now.
    pub copied: Vec<Task>,
    /// The tasks a run before copied (their slot lease is on the team ledger already).
    pub already: Vec<Task>,
    /// Held tenures copied now.
    pub tenures: usize,
    /// Ended tenures copied now.
    pub ended: usize,
    /// Done tasks copied now (those of the ended slot tenures copied).
    pub done_tasks: usize,
    /// The lease ids among those [`Tx::import`] was asked about that the team ledger has now.
    pub present: Vec<LeaseId>,
    /// Slots recorded now.
    pub slots: usize,
    /// Resources whose last token was raised (or that were created), by a tenure copied or
    /// to the file ledger's last token.
    pub tokens_raised: usize,
}

/// What the team ledger has of a resource before the copy writes anything.
#[derive(Debug, Clone, Copy, Default)]
struct TeamResource {
    last_token: i64,
    /// A tenure (live or expired) holds it there.
    held: bool,
}

impl View<'_> {
    /// Everything [`Tx::import`] takes, read in this one snapshot.
    pub fn export(&self) -> Result<Export> {
        let repos = self.db.rows(
            "SELECT id, common_dir FROM repos ORDER BY created_at, id",
            &[],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let resources = self.db.rows(
            "SELECT kind, key, last_token FROM resources ORDER BY id",
            &[],
            |r| {
                let kind: String = r.get(0)?;
                let resource = Resource {
                    kind: kind.parse()?,
                    key: r.get(1)?,
                };
                Ok((resource, r.get(2)?))
            },
        )?;
        let held =
            self.tenures_where("t.ended_at IS NULL ORDER BY t.acquired_at, t.lease_id", &[])?;
        let ended = self.tenures_where(
            "t.ended_at IS NOT NULL ORDER BY t.resource_id, t.token",
            &[],
        )?;
        let slots = self.db.rows(
            "SELECT repo_id, n, path, created_at, machine, pid_ns FROM slots \
             WHERE removed_at IS NULL ORDER BY repo_id, n",
            &[],
            super::tasks::slot_from_row,
        )?;
        let tasks = self.tasks_where("state <> 'done' ORDER BY id", &[])?;
        let done = self.tasks_where("state = 'done' AND lease_id IS NOT NULL ORDER BY id", &[])?;
        Ok(Export {
            repos,
            resources,
            held,
            ended,
            slots,
            tasks,
            done,
        })
    }

    /// A file ledger's resource as this machine's on a team ledger: a worktree under the
    /// machine's key, an issue as it is.
    fn moved(&self, res: &Resource) -> Resource {
        match res.kind {
            ResourceKind::Worktree => {
                Resource::worktree_on(self.machine(), &WorktreeKey::from_stored(res.key.clone()))
            }
            ResourceKind::Issue => res.clone(),
        }
    }

    /// The machine of the open task holding `lease` on this ledger, if one does.
    fn machine_holding(&self, lease: &LeaseId) -> Result<Option<String>> {
        Ok(match self.task_by_lease(lease)? {
            Some(t) if t.state != TaskState::Done => Some(t.machine),
            _ => self.open_task_by_issue_lease(lease)?.map(|t| t.machine),
        })
    }

    /// What stops `export` from being copied into this (team) ledger; empty: nothing does.
    pub(crate) fn conflicts(&self, export: &Export) -> Result<Vec<Conflict>> {
        let mut found = vec![];
        for ours in &export.held {
            if self.has(&ours.lease_id)? {
                continue;
            }
            let res = self.moved(&ours.resource);
            if let Some(theirs) = self.current(&res)? {
                found.push(Conflict::Held {
                    key: res.key.clone(),
                    machine: self.machine_holding(&theirs.lease_id)?,
                    holder: theirs.holder,
                });
                continue;
            }
            let team = self.last_token(&res)?;
            if team > ours.token {
                found.push(Conflict::TokensAhead {
                    key: res.key,
                    team,
                    ours: ours.token,
                });
            }
        }
        for task in &export.tasks {
            if self.task_copied(task)? {
                continue;
            }
            if task.state != TaskState::Active {
                found.push(Conflict::Unsettled {
                    task: task.name.clone(),
                    state: task.state,
                });
            } else if let Some(open) = self.open_rival(export, task)? {
                found.push(open);
            }
        }
        for slot in &export.slots {
            found.extend(self.slot_number_taken(export, slot)?);
        }
        Ok(found)
    }

    /// The slot this machine's copy of `slot`'s repository has at `slot`'s number on this
    /// ledger at another path (pruned or not), unless this ledger has `slot` at its path.
    fn slot_number_taken(&self, export: &Export, slot: &Slot) -> Result<Option<Conflict>> {
        let Some(repo) = self.team_repo(export, &slot.repo_id)? else {
            return Ok(None);
        };
        if self.slot_by_path(&slot.path)?.is_some() {
            return Ok(None);
        }
        let theirs: Option<(WorktreeKey, Option<i64>)> = self.db.row(
            "SELECT path, removed_at FROM slots WHERE repo_id = ?1 AND n = ?2",
            &[&repo, &slot.n],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok(theirs
            .filter(|(path, _)| *path != slot.path)
            .map(|(path, removed)| Conflict::SlotNumber {
                repo: export
                    .repos
                    .iter()
                    .find(|(id, _)| *id == slot.repo_id)
                    .map(|(_, dir)| dir.clone())
                    .unwrap_or_default(),
                n: slot.n,
                ours: slot.path.to_string(),
                theirs: path.to_string(),
                pruned: removed.is_some(),
            }))
    }

    /// What this ledger has of each of `export`'s resources (under its key here), read before
    /// anything is written.
    fn team_resources(&self, export: &Export) -> Result<HashMap<Resource, TeamResource>> {
        let mut found = HashMap::with_capacity(export.resources.len());
        for (res, _) in &export.resources {
            let moved = self.moved(res);
            let team = self
                .db
                .row(
                    "SELECT r.last_token, (SELECT count(*) FROM tenures t \
                     WHERE t.resource_id = r.id AND t.ended_at IS NULL) \
                     FROM resources r WHERE r.kind = ?1 AND r.key = ?2",
                    &[&moved.kind.to_string(), &moved.key],
                    |r| {
                        Ok(TeamResource {
                            last_token: r.get(0)?,
                            held: r.get::<i64>(1)? > 0,
                        })
                    },
                )?
                .unwrap_or_default();
            found.insert(res.clone(), team);
        }
        Ok(found)
    }

    /// The tenures of `export` this ledger takes now, in token order (each resource's in the
    /// order its tokens were handed out): the held ones it lacks, and the ended ones past the
    /// last token of a resource it does not hold (an ended tenure at or below that token is
    /// there already, or the team ledger handed its token out to another).
    fn new_tenures<'e>(
        &self,
        export: &'e Export,
        team: &HashMap<Resource, TeamResource>,
    ) -> Result<Vec<&'e Tenure>> {
        let mut new = vec![];
        for held in &export.held {
            if !self.has(&held.lease_id)? {
                new.push(held);
            }
        }
        new.extend(export.ended.iter().filter(|t| {
            team.get(&t.resource)
                .is_some_and(|r| !r.held && t.token > r.last_token)
        }));
        new.sort_by_key(|t| t.token);
        Ok(new)
    }

    /// An open task on this ledger with `task`'s name or branch (on its remote, or in its
    /// repository as this machine's).
    fn open_rival(&self, export: &Export, task: &Task) -> Result<Option<Conflict>> {
        let rival = |what: String, t: Task| Conflict::TaskOpen {
            task: task.name.clone(),
            what,
            holder: t.holder,
            machine: t.machine,
        };
        if let Some(remote) = &task.remote {
            let by_name = self.tasks_on_remote(remote, super::Tasks::Open)?;
            if let Some(t) = by_name.into_iter().find(|t| t.name == task.name) {
                return Ok(Some(rival(format!("task {}", task.name), t)));
            }
            if let Some(t) = self
                .open_tasks_on_pushed_branch(remote, None, &task.branch)?
                .into_iter()
                .next()
            {
                return Ok(Some(rival(format!("branch {}", task.branch), t)));
            }
        }
        if let Some(repo) = self.team_repo(export, &task.repo_id)?
            && let Some(t) = self.open_task(&repo, &task.name)?
        {
            return Ok(Some(rival(format!("task {}", task.name), t)));
        }
        Ok(None)
    }

    /// The id this machine's copy of the file ledger's repository `id` has here, if any.
    fn team_repo(&self, export: &Export, id: &RepoId) -> Result<Option<RepoId>> {
        let Some((_, dir)) = export.repos.iter().find(|(r, _)| r == id) else {
            return Ok(None);
        };
        Ok(self
            .repo_by_dir(std::path::Path::new(dir))?
            .map(|repo| repo.id))
    }

    /// Whether this ledger has the tenure `lease` (a copy made it, or it was made here).
    fn has(&self, lease: &LeaseId) -> Result<bool> {
        Ok(self.tenure(lease)?.is_some())
    }

    /// Whether `task` was copied here before: its slot lease is here.
    fn task_copied(&self, task: &Task) -> Result<bool> {
        match &task.lease_id {
            Some(lease) => self.has(lease),
            None => Ok(false),
        }
    }
}

impl Tx<'_> {
    /// Copies `export` into this (team) ledger as this transaction's machine, unless
    /// [`View::conflicts`] finds something in the way: then `Ok(Err(conflicts))`, and nothing
    /// was written. `from` names the file ledger in each copied task's event; of the lease ids
    /// in `asked`, those this ledger has afterwards are returned in [`Imported::present`].
    pub fn import(
        &self,
        export: &Export,
        from: &str,
        asked: &[LeaseId],
    ) -> Result<std::result::Result<Imported, Vec<Conflict>>> {
        let view = self.view();
        let conflicts = view.conflicts(export)?;
        if !conflicts.is_empty() {
            return Ok(Err(conflicts));
        }
        let mut done = Imported::default();
        let mut copied = vec![];
        for task in &export.tasks {
            match view.task_copied(task)? {
                true => done.already.push(task.clone()),
                false => copied.push(task),
            }
        }
        // What is new is decided before anything is written.
        let team = view.team_resources(export)?;
        let tenures = view.new_tenures(export, &team)?;
        let repos = self.import_repos(export)?;
        let mut written = HashSet::new();
        let mut ended = HashSet::new();
        let mut reached: HashMap<&Resource, i64> = HashMap::new();
        for tenure in tenures {
            self.import_tenure(tenure)?;
            match tenure.ended_at {
                Some(_) => ended.insert(&tenure.lease_id),
                None => written.insert(&tenure.lease_id),
            };
            reached.insert(&tenure.resource, tenure.token);
        }
        done.tenures = written.len();
        done.ended = ended.len();
        written.extend(&ended);
        for (res, last) in &export.resources {
            let before = team.get(res).map_or(0, |t| t.last_token);
            let now = reached.get(res).map_or(before, |&t| t.max(before));
            if now < *last {
                self.raise_last_token(&view.moved(res), *last)?;
            }
            if before < *last {
                done.tokens_raised += 1;
            }
        }
        for slot in &export.slots {
            if view.slot_by_path(&slot.path)?.is_none() {
                self.ensure_slot(repo_of(&repos, &slot.repo_id)?, slot.n, &slot.path)?;
                // Whose processes its last spawn could see goes with it (see `platform::procs::Table::sees`).
                self.db.once().exec(
                    "UPDATE slots SET pid_ns = ?1 WHERE path = ?2 AND machine = ?3",
                    &[&slot.pid_ns, &slot.path, &view.machine()],
                )?;
                done.slots += 1;
            }
        }
        for task in &export.done {
            if task.lease_id.as_ref().is_some_and(|l| ended.contains(l)) {
                let repo = repo_of(&repos, &task.repo_id)?;
                self.import_done_task(task, repo, &written)?;
                done.done_tasks += 1;
            }
        }
        for task in copied {
            let repo = repo_of(&repos, &task.repo_id)?;
            done.copied.push(self.import_task(task, repo, from)?);
        }
        for lease in asked {
            let held = export.held.iter().any(|t| t.lease_id == *lease);
            if held || written.contains(lease) || view.has(lease)? {
                done.present.push(lease.clone());
            }
        }
        Ok(Ok(done))
    }

    /// This machine's repository for each of the file ledger's: the one the team ledger has at
    /// the same common dir, else the file ledger's, recorded under its id (an issue namespace
    /// `repo:<id>` of a repository without a remote keeps meaning it).
    fn import_repos(&self, export: &Export) -> Result<Vec<(RepoId, RepoId)>> {
        let mut map = Vec::with_capacity(export.repos.len());
        for (id, dir) in &export.repos {
            let here = match self.view().repo_by_dir(std::path::Path::new(dir))? {
                Some(repo) => repo.id,
                None => {
                    self.restore_repo(dir, id)?;
                    id.clone()
                }
            };
            map.push((id.clone(), here));
        }
        Ok(map)
    }

    /// Records `held` (or ended) with its lease id, token, holder, times and end, under this
    /// machine's key for a worktree. An expired tenure of another holder still holding the
    /// resource is ended first, as an acquisition would (`expired-superseded`); [`View::conflicts`]
    /// refused a live one, and tokens past a held one's ([`View::new_tenures`] takes an ended
    /// one only past the resource's last token, on a resource nobody holds).
    fn import_tenure(&self, held: &Tenure) -> Result<()> {
        let res = self.view().moved(&held.resource);
        if let Some(expired) = self.view().held(&res)? {
            self.end(expired, "expired-superseded")?;
        }
        // The team ledger's schema takes a tenure only with its resource's last token: the
        // tenures of a resource come here in token order, so this only ever raises it.
        self.raise_last_token(&res, held.token)?;
        let rid = self.resource_id(&res)?;
        self.db.once().exec(
            "INSERT INTO tenures (lease_id, resource_id, token, holder, ttl_ms, acquired_at, \
             renewed_at, expires_at, ended_at, end_reason) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            &[
                &held.lease_id,
                &rid,
                &held.token,
                &held.holder,
                &held.ttl_ms,
                &held.acquired_at,
                &held.renewed_at,
                &held.expires_at,
                &held.ended_at,
                &held.end_reason,
            ],
        )?;
        Ok(())
    }

    /// Records a done task of the file ledger, whose slot tenure was copied now, as this
    /// machine's in `repo`, as it ended: the task a verdict on its zombie names. Its issue
    /// lease is kept when this ledger has that tenure (`written` now, or before), else left
    /// out (the verdict on an ended lease never reads it). No event: its history stays in the
    /// file ledger's log.
    fn import_done_task(&self, t: &Task, repo: &RepoId, written: &HashSet<&LeaseId>) -> Result<()> {
        let issue_lease = match &t.issue_lease_id {
            Some(l) if written.contains(l) || self.view().has(l)? => Some(l),
            _ => None,
        };
        self.db.once().exec(
            "INSERT INTO tasks (state, repo_id, name, slot_path, lease_id, issue, issue_lease_id, \
             branch, base_oid, holder, created_at, updated_at, done_at, done_reason, remote, \
             base_ref, machine) VALUES ('done', ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, \
             ?12, ?13, ?14, ?15, ?16)",
            &[
                repo,
                &t.name,
                &t.slot_path,
                &t.lease_id,
                &t.issue,
                &issue_lease,
                &t.branch,
                &t.base_oid,
                &t.holder,
                &t.created_at,
                &t.updated_at,
                &t.done_at,
                &t.done_reason.map(|r| r.to_string()),
                &t.remote,
                &t.base_ref,
                &self.view().machine(),
            ],
        )?;
        Ok(())
    }

    /// Records an open task of the file ledger as this machine's, in `repo`, and logs its one
    /// `copied` event.
    fn import_task(&self, t: &Task, repo: &RepoId, from: &str) -> Result<Task> {
        self.db.once().exec(
            "INSERT INTO tasks (repo_id, name, state, slot_path, lease_id, issue, issue_lease_id, \
             branch, base_oid, holder, created_at, updated_at, pid, pid_start, step, \
             checked_out, remote, base_ref, machine, pid_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, \
             ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
            &[
                repo,
                &t.name,
                &t.state.to_string(),
                &t.slot_path,
                &t.lease_id,
                &t.issue,
                &t.issue_lease_id,
                &t.branch,
                &t.base_oid,
                &t.holder,
                &t.created_at,
                &self.now,
                &t.pid,
                &t.pid_start,
                &t.step.map(|s| s.to_string()),
                &t.checked_out,
                &t.remote,
                &t.base_ref,
                &self.view().machine(),
                &t.pid_ns,
            ],
        )?;
        let task = self.view().open_task(repo, &t.name)?.ok_or_else(|| {
            LedgerError::Corrupt(format!("task {} vanished as it was copied", t.name))
        })?;
        let slot = task.slot_resource();
        let tenure = match &task.lease_id {
            Some(lease) => self.view().tenure(lease)?,
            None => None,
        };
        let issue = match &task.issue {
            Some(issue) => format!(", issue {issue}"),
            None => String::new(),
        };
        let detail = format!(
            "task {} on {}{issue} copied from the ledger {from}",
            task.name, task.branch
        );
        self.log(EventKind::Copied, &slot, tenure.as_ref(), Some(&detail))?;
        Ok(task)
    }
}

fn repo_of<'m>(map: &'m [(RepoId, RepoId)], id: &RepoId) -> Result<&'m RepoId> {
    map.iter()
        .find(|(from, _)| from == id)
        .map(|(_, to)| to)
        .ok_or_else(|| LedgerError::Corrupt(format!("repository {id} is not in the ledger")))
}
