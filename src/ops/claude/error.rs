//! Why a Claude Code hook could not lease, remove or set up a worktree: the facts of each case.
//! The message says what is still true; the exit code is the error's
//! [`kind`](ClaudeError::kind), the commands that get the user out of it are `cli`'s
//! (`cli::way_out`).

use std::path::PathBuf;

use crate::ops::Kind;

#[derive(Debug, thiserror::Error)]
pub enum ClaudeError {
    /// The hook's input is not what Claude Code sends (`why`).
    #[error(
        "{why}; Claude Code hands its hooks one JSON object on stdin, and nothing was leased or \
         changed"
    )]
    BadInput { why: String },
    /// `WorktreeCreate`'s input has no `name`.
    #[error("the hook's input names no worktree (no \"name\" field): nothing was leased")]
    NoName,
    /// The worktree name holds a character git-hand does not record (`code_point`).
    #[error(
        "the worktree name {name} holds the character {code_point}, which git-hand does not \
         record: nothing was leased"
    )]
    DeceptiveName { name: String, code_point: String },
    /// Every task name made from the worktree name (`name`, as shown) is another live task's.
    #[error(
        "every task name made from the worktree name {name} is taken by another live task: \
         nothing was leased"
    )]
    EveryNameTaken { name: String },
    /// An earlier `WorktreeCreate` of this session and name is still spawning its task.
    #[error(
        "a WorktreeCreate for this session and worktree name is still at work (task {task} is \
         spawning, process {}): nothing was leased",
        pid.map_or_else(|| "?".into(), |p| p.to_string())
    )]
    StillAtWork { task: String, pid: Option<i64> },
    /// No session id was sent, and every slot keyed by the name (`name`, as shown) has a session.
    #[error(
        "sessions run in every slot keyed by the worktree name {name} (Claude Code sent no \
         session id): nothing was leased"
    )]
    EverySlotInSession { name: String },
    /// `WorktreeRemove`'s input has no `worktree_path`.
    #[error("the hook's input names no worktree (no \"worktree_path\" field): nothing was removed")]
    NoWorktreePath,
    /// The session's credential could not be appended to `CLAUDE_ENV_FILE` (`file`, as shown).
    #[error("cannot append the session's credential to {file} (CLAUDE_ENV_FILE): {reason}")]
    EnvFileUnwritable { file: String, reason: String },
    /// Claude Code's files could not be added to the exclude file at `path`; `patterns` are
    /// what would have been added.
    #[error(
        "cannot add Claude Code's files to {}: {reason}; a session's files would keep its slot \
         from being reused (add them: printf '%s\\n' '{}' >> {})",
        path.display(),
        patterns.join("' '"),
        path.display()
    )]
    ExcludeUnwritable {
        path: PathBuf,
        patterns: Vec<String>,
        reason: String,
    },
}

impl ClaudeError {
    pub fn kind(&self) -> Kind {
        match self {
            ClaudeError::BadInput { .. }
            | ClaudeError::NoName
            | ClaudeError::DeceptiveName { .. }
            | ClaudeError::NoWorktreePath => Kind::Usage,
            ClaudeError::EveryNameTaken { .. }
            | ClaudeError::StillAtWork { .. }
            | ClaudeError::EverySlotInSession { .. } => Kind::Precondition,
            ClaudeError::EnvFileUnwritable { .. } | ClaudeError::ExcludeUnwritable { .. } => {
                Kind::Failed
            }
        }
    }
}
