//! `WorktreeCreate`: a Claude Code session asks for a worktree and git-hand leases it a slot, a
//! spawn like any other (the repository's `.handconfig` setup and includes, the hooks in force),
//! for a task named after the worktree name, held by the session ([`SessionHolder`]), on branch
//! `hand/<task>` from the base Claude Code would have used itself (`origin/HEAD`, else `HEAD`).
//!
//! The same session asking again for the same name (Claude Code retries a hook that timed out)
//! gets the same slot and lease back; another name, or another session, gets another slot. A
//! task name in use by another live task is never that task's slot, and a branch an ended task
//! kept is never taken over, nor a name or branch that is one of those but for case (spawn
//! refuses such a pair): the first free variant (`feat1-2`, `feat1-3`, ...) is spawned instead.

use super::ClaudeError;
use super::{HookInput, SessionHolder};
use crate::hint::Hint;
use crate::ledger::{Ledger, Task, TaskState};
use crate::ops::task::spawn::{self, Progress, SpawnOptions, Spawned};
use crate::ops::{Context, Result, repo::names, repo::settings::Settings};

/// The most variants of a taken name tried before giving up.
const MAX_VARIANTS: usize = 64;

/// What `WorktreeCreate` leased.
pub struct Created {
    pub spawned: Spawned,
    pub holder: SessionHolder,
}

/// Leases a slot for the session `input` names (or finds the one it has for that name).
pub fn create(
    ctx: &Context,
    input: &HookInput,
    progress: &dyn Fn(Progress<'_>),
) -> Result<Created> {
    let name = input.name.clone().ok_or(ClaudeError::NoName)?;
    if let Some(c) = name.chars().find(|c| names::is_deceptive(*c)) {
        return Err(ClaudeError::DeceptiveName {
            name: crate::shown::shown(&name).into_owned(),
            code_point: names::code_point(c),
        }
        .into());
    }
    let name = held_name(&name);
    let holder = match &input.session {
        Some(session) => SessionHolder {
            session: Some(session.clone()),
            name,
        },
        None => keyed_by_name(ctx, &name)?,
    };
    let holder_text = holder.holder();
    let repo = ctx.repo()?;
    let settings = Settings::load(repo)?;
    let ttl = settings.claude_ttl()?;
    let base = claude_base(repo);
    let retried = own_open_task(ctx, &holder_text)?.map(|t| t.name);
    let candidates = match &retried {
        Some(task) => vec![task.clone()],
        None => variants(&task_name_for(&holder.name)),
    };
    // `None`: another live task has the name.
    let spawn_as = |task: &str| -> Result<Option<(Ledger, Result<Spawned>)>> {
        let opts = SpawnOptions {
            task,
            base: Some(&base),
            branch: None,
            issue: None,
            holder: &holder_text,
            ttl,
            fetch: false,
            no_setup: false,
            offer_no_setup: false,
        };
        // Whatever stops the spawn here (an untrusted `.handconfig`, a bad `hand.*` value) is
        // fixed outside the session, which then starts again.
        let checked = spawn::check(ctx, &opts, progress).map_err(|e| {
            e.with_hint(Hint::run("claude -w <name>").why("then start the session again"))
        })?;
        let mut ledger = ctx.open_ledger()?;
        if retried.is_none() && taken_by_another(ctx, &mut ledger, task, &holder_text)? {
            return Ok(None);
        }
        let spawned = spawn::spawn(ctx, &mut ledger, &opts, checked, progress);
        Ok(Some((ledger, spawned)))
    };
    let leased = |spawned: Spawned| {
        // The slot is leased: a file that cannot be written is said, not a failure.
        if let Err(e) = super::exclude::ensure(repo) {
            ctx.note(vec![e.to_string()]);
        }
        Ok(Created {
            spawned,
            holder: holder.clone(),
        })
    };
    for task in candidates.iter().take(MAX_VARIANTS) {
        // WorktreeRemove keeps an ended task's branch, and spawn refuses to take an existing
        // branch it was not named: a later session asking for the name again would fail to
        // start (Claude Code has no fallback), so the kept branch counts as taken, and so does
        // one that is its name but for case, which spawn refuses too (`hand/Fix`, `hand/fix`).
        if retried.is_none() && branch_taken(repo, &format!("hand/{task}")) {
            continue;
        }
        let Some((mut ledger, spawned)) = spawn_as(task)? else {
            continue;
        };
        match spawned {
            Ok(spawned) => return leased(spawned),
            Err(e) if retried.is_none() && e.is_precondition() => {
                // A concurrent session took the name between the look and the spawn.
                if taken_by_another(ctx, &mut ledger, task, &holder_text)? {
                    continue;
                }
                // The same session and name asked twice at once, and the other request is
                // spawning it: that one's slot, once it is ready, or why not.
                return match (own_open_task(ctx, &holder_text)?, e) {
                    (Some(own), e) => match spawn_as(&own.name)? {
                        Some((_, spawned)) => spawned.and_then(leased),
                        None => Err(e),
                    },
                    (None, e) => Err(e),
                };
            }
            Err(e) => return Err(e),
        }
    }
    Err(ClaudeError::EveryNameTaken {
        name: crate::shown::shown(&holder.name).into_owned(),
    }
    .into())
}

/// The open task this very holder (session and name) has in this repository: a retried
/// `WorktreeCreate`. Read without creating the ledger.
///
/// A task its first attempt left `spawning` because Claude Code killed the hook at its timeout
/// (the process is gone) is settled first, as `doctor --repair` would, and the retry spawns
/// afresh; one whose spawn still runs (the same request twice at once) is refused, since two
/// spawns of one task would fight over its slot.
fn own_open_task(ctx: &Context, holder: &str) -> Result<Option<Task>> {
    let Some(mut ledger) = ctx.open_existing(&ctx.ledger_location()?.place)? else {
        return Ok(None);
    };
    let Some(repo_id) = ctx.repo_id(&mut ledger)? else {
        return Ok(None);
    };
    let Some(task) = ledger.read(|v| v.open_task_held_by(&repo_id, holder))? else {
        return Ok(None);
    };
    if task.state != TaskState::Spawning {
        return Ok(Some(task));
    }
    if crate::ops::doctor::settle_crashed_spawn(ctx, &mut ledger, &task)? {
        return Ok(None);
    }
    Err(ClaudeError::StillAtWork {
        task: task.name,
        pid: task.pid,
    }
    .into())
}

/// The holder of a session that sent no session id (the desktop app has sent only `cwd`,
/// `hook_event_name` and `name`): keyed by the name alone, so the same request again is a retry
/// and gets the same slot. Unless a process sits in that slot: then another session runs there,
/// and this one is keyed by the first free variant of the name (`feat1-2`), never handed it.
fn keyed_by_name(ctx: &Context, name: &str) -> Result<SessionHolder> {
    for candidate in variants(name) {
        let holder = SessionHolder {
            session: None,
            name: candidate,
        };
        let Some(task) = own_open_task(ctx, &holder.holder())? else {
            return Ok(holder);
        };
        let dir = std::path::PathBuf::from(task.slot_key().as_str());
        let slot = crate::ops::task::sessions::SessionSlot {
            dir: &dir,
            pid_ns: task.pid_ns,
        };
        if crate::ops::task::sessions::presence(ctx.scan(), &[slot])
            != [crate::ops::task::sessions::Presence::Alive]
        {
            return Ok(holder);
        }
    }
    Err(ClaudeError::EverySlotInSession {
        name: crate::shown::shown(name).into_owned(),
    }
    .into())
}

/// The worktree name as a holder keeps it: a long one (a holder is at most 200 characters) is
/// cut, and a digest of the whole name keeps names that share their start apart.
fn held_name(name: &str) -> String {
    const KEEP: usize = 100;
    if name.len() <= KEEP + 20 {
        return name.to_string();
    }
    let mut cut = KEEP;
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    // FNV-1a: stable across builds and platforms, which a holder kept in the ledger needs.
    let digest = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{}~{digest:016x}", &name[..cut])
}

/// Whether the local branch exists, or one whose name is its name but for case.
fn branch_taken(repo: &crate::git::Repo, branch: &str) -> bool {
    repo.ref_oid(&format!("refs/heads/{branch}")).is_some()
        || !repo.branches_differing_in_case(branch).is_empty()
}

/// Whether an open task named `task` (or `task` but for case, which spawn refuses) is held by
/// someone else than `holder`, in this repository or, on a team ledger, on another machine
/// pushing to the same remote.
fn taken_by_another(ctx: &Context, ledger: &mut Ledger, task: &str, holder: &str) -> Result<bool> {
    let repo = ctx.repo()?;
    let remote = crate::ops::fence::task_remote(repo);
    let common = repo.loc.common_dir.clone();
    Ok(ledger.read(|v| {
        let here = match v.repo_by_dir(&common)? {
            Some(r) => v.open_task_ignoring_case(&r.id, task)?,
            None => None,
        };
        let elsewhere = match (&here, &remote) {
            (None, Some(remote)) => v.open_task_elsewhere(remote, task)?,
            _ => None,
        };
        Ok(here
            .or(elsewhere)
            .is_some_and(|t| t.holder != holder || t.name != task))
    })?)
}

/// The base Claude Code would have made its worktree from: what `origin/HEAD` names, else
/// `HEAD` (the commit the session's directory has checked out).
///
/// Handed to spawn by its full name (or as `HEAD`), which spawn reads without starting git.
fn claude_base(repo: &crate::git::Repo) -> String {
    repo.symref_target("refs/remotes/origin/HEAD")
        .filter(|target| target.starts_with("refs/remotes/") && repo.ref_oid(target).is_some())
        .unwrap_or_else(|| "HEAD".into())
}

/// A task name made from Claude Code's worktree name: every character a task name cannot hold
/// becomes `-`, and what git refuses in a branch (`..`, a trailing `.` or `.lock`) is taken
/// out, so `hand/<task>` is a branch; room is left for a variant's suffix.
pub(crate) fn task_name_for(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    while out.contains("..") {
        out = out.replace("..", ".");
    }
    out.truncate(60);
    loop {
        let trimmed = out
            .trim_start_matches(['-', '.'])
            .trim_end_matches('.')
            .to_string();
        let trimmed = trimmed
            .strip_suffix(".lock")
            .map_or(trimmed.clone(), str::to_string);
        if trimmed == out {
            break;
        }
        out = trimmed;
    }
    if out.is_empty() { "claude".into() } else { out }
}

/// `name`, then `name-2`, `name-3`, ...
fn variants(name: &str) -> Vec<String> {
    std::iter::once(name.to_string())
        .chain((2..=MAX_VARIANTS).map(|n| format!("{name}-{n}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worktree_name_becomes_a_task_name_and_a_branch() {
        for (given, want) in [
            ("feat1", "feat1"),
            ("agent-a1b2c3", "agent-a1b2c3"),
            ("fix login/page", "fix-login-page"),
            ("-x", "x"),
            ("..hidden", "hidden"),
            ("a..b", "a.b"),
            ("v1.lock", "v1"),
            ("trailing.", "trailing"),
            ("日本", "--".trim_matches('-')),
            ("", "claude"),
            ("...", "claude"),
        ] {
            let got = task_name_for(given);
            let want = if want.is_empty() { "claude" } else { want };
            assert_eq!(got, want, "{given:?}");
            assert!(names::task_name(&got).is_ok(), "{got:?}");
            assert!(names::branch(&format!("hand/{got}")).is_ok(), "{got:?}");
        }
        let long = "x".repeat(200);
        assert_eq!(task_name_for(&long).len(), 60);
        let held = held_name(&long);
        assert!(
            held.len() <= 120 && held != held_name(&"x".repeat(201)),
            "{held}"
        );
        assert_eq!(held_name("feat1"), "feat1");
        assert!(
            names::holder(&format!(
                "claude:{}:{}",
                "s".repeat(64),
                held_name(&"é".repeat(300))
            ))
            .is_ok()
        );
        assert_eq!(variants("a")[..3], ["a", "a-2", "a-3"]);
    }
}
