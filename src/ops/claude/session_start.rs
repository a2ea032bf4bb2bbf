//! `SessionStart`: a Claude Code session starts (or is resumed) in a directory, and git-hand
//! appends the session's own lease for that worktree to the file Claude Code names in
//! `CLAUDE_ENV_FILE`, whose `export` lines reach every Bash command of the session.
//!
//! The lease is found by the session id and the slot, never by who holds the slot now: a
//! session resumed after its task ended and its slot went to another task gets its own, now
//! stale, credential, so its commits and pushes there are refused as any zombie's; it is never
//! handed the new holder's. A session that never held the slot (a person running `claude` in a
//! task they spawned) gets nothing, and is judged as before.

use super::ClaudeError;
use crate::platform::procs::Scan;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{HookInput, SessionHolder, SessionId};
use crate::ledger::{Task, Tenure};
use crate::ops::fence::verdict::Subject;
use crate::ops::{Context, Result, fence::credential_push};

/// The variable naming the file whose lines reach the session's Bash commands.
pub(crate) const ENV_FILE_ENV: &str = "CLAUDE_ENV_FILE";

/// What `SessionStart` did.
// Made once per session start and matched at once: its size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Started {
    /// The session's own lease of this slot was appended to the file.
    Exported {
        task: Task,
        tenure: Tenure,
        /// Whether it is the slot's live tenure (else the session's pushes will be refused).
        current: bool,
        file: PathBuf,
    },
    /// Nothing to export, and why.
    Nothing(&'static str),
}

/// Appends the session's credential for the worktree it starts in to `env_file`.
pub fn session_start(
    scan: Scan,
    input: &HookInput,
    cwd: &Path,
    env_file: Option<&Path>,
) -> Result<Started> {
    let Some(session) = &input.session else {
        return Ok(Started::Nothing("the hook's input names no session"));
    };
    let Some(file) = env_file else {
        return Ok(Started::Nothing(
            "CLAUDE_ENV_FILE is not set (a Claude Code too old to hand one over)",
        ));
    };
    let dir = input.cwd.clone().unwrap_or_else(|| cwd.to_path_buf());
    let ctx = Context::new(dir).with_scan(scan);
    if ctx.repo().is_err() {
        return Ok(Started::Nothing(
            "the session's directory is not in a git repository",
        ));
    }
    let Some((task, tenure, current)) = own_lease(&ctx, session)? else {
        return Ok(Started::Nothing(
            "this session holds no lease of this worktree",
        ));
    };
    let carried = credential_push::carried(ctx.repo()?)?;
    append(file, &lines(&task, &tenure, carried))?;
    Ok(Started::Exported {
        task,
        tenure,
        current,
        file: file.to_path_buf(),
    })
}

/// The session's newest tenure of the worktree `ctx` is in, its task, and whether it is the
/// slot's live tenure; `None` when the session never held it. One read of the ledger that
/// stamped the worktree (else the configured one), never created.
fn own_lease(ctx: &Context, session: &SessionId) -> Result<Option<(Task, Tenure, bool)>> {
    let subject = Subject::of(ctx)?;
    let Some(mut ledger) = ctx.open_existing(&subject.ledger)? else {
        return Ok(None);
    };
    let prefix = SessionHolder::prefix_of(session);
    Ok(ledger.read(|v| {
        let slot = v.worktree(&subject.key);
        let Some(own) = v.newest_of_holder(&slot, &prefix)? else {
            return Ok(None);
        };
        let Some(task) = v.task_by_lease(&own.lease_id)? else {
            return Ok(None);
        };
        let current = v
            .current(&slot)?
            .is_some_and(|t| t.lease_id == own.lease_id);
        Ok(Some((task, own, current)))
    })?)
}

/// The lines the session's shell evaluates: the credential's `export` lines and, with the
/// remote fence on, the push options (as `git hand env` prints them).
fn lines(task: &Task, tenure: &Tenure, carried: bool) -> String {
    // Values are hex, digits and task names ([A-Za-z0-9._-]): nothing a shell would expand.
    let mut text = String::from("# git-hand: this Claude Code session's own lease\n");
    for (k, v) in crate::ops::fence::credential::env_vars(task, tenure) {
        text.push_str(&format!("export {k}={v}\n"));
    }
    if carried {
        text.push_str(&credential_push::shell(&credential_push::push_options(
            task, tenure,
        )));
    }
    text
}

fn append(file: &Path, text: &str) -> Result<()> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| {
            ClaudeError::EnvFileUnwritable {
                file: crate::shown::path(file),
                reason: e.to_string(),
            }
            .into()
        })
}
