//! The one way git-hand runs the git CLI.
//!
//! Every child git gets a scrubbed environment: the `GIT_DIR`-style variables a hook inherits from
//! the git that called it would otherwise point our commands at the wrong repository or index.
//! `GIT_HAND_INTERNAL=1` tells our own hooks that git-hand is the caller, so the post-checkout
//! hook of a `git worktree add` we run does not recurse into git-hand.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Variables that would redirect a child git away from the directory we run it in (scrubbed
/// from the setup commands' environment too, `ops/repo/setup.rs`).
pub(crate) const SCRUBBED: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_PREFIX",
    "GIT_NAMESPACE",
    "GIT_QUARANTINE_PATH",
];

/// Set on every child git so our hooks know git-hand itself is running git.
pub const INTERNAL_ENV: &str = "GIT_HAND_INTERNAL";

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot run git: {source}")]
    Spawn { source: std::io::Error },
    #[error("`git {args}` failed ({status}): {stderr}")]
    Failed {
        args: String,
        status: String,
        stderr: String,
    },
    #[error("`git {args}` printed something that is not UTF-8")]
    NotUtf8 { args: String },
}

/// A git CLI bound to a working directory.
#[derive(Debug, Clone)]
pub struct Git {
    dir: PathBuf,
}

impl Git {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The command, ready to run, with the scrubbed environment.
    ///
    /// The directory is given as `git -C`, not as the child's working directory: with a working
    /// directory the standard library `fork`s a static binary (it cannot find glibc's
    /// `posix_spawn_file_actions_addchdir_np`), copying git-hand's page tables for every git it
    /// starts; without one it uses `posix_spawn`'s vfork. 0.4-0.5 ms of CPU per spawn
    /// (docs/performance.md, "Spawn's CPU").
    #[must_use = "a command is run only by its caller"]
    pub fn command<S: AsRef<OsStr>>(&self, args: &[S]) -> Command {
        let mut cmd = Command::new("git");
        cmd.arg("-C")
            .arg(&self.dir)
            .args(args)
            .stdin(Stdio::null())
            .env(INTERNAL_ENV, "1");
        for var in SCRUBBED {
            cmd.env_remove(var);
        }
        cmd
    }

    /// Runs git and returns its output whatever the exit status.
    pub fn output<S: AsRef<OsStr>>(&self, args: &[S]) -> Result<Output, GitError> {
        self.command(args)
            .output()
            .map_err(|source| GitError::Spawn { source })
    }

    /// Runs git, requires success, and returns stdout without the trailing newline.
    pub fn run<S: AsRef<OsStr>>(&self, args: &[S]) -> Result<String, GitError> {
        let out = self.output(args)?;
        if !out.status.success() {
            return Err(failed(args, &out));
        }
        String::from_utf8(out.stdout)
            .map(|s| s.trim_end_matches('\n').to_string())
            .map_err(|_| GitError::NotUtf8 { args: join(args) })
    }

    /// Runs a git predicate (`merge-base --is-ancestor`, `show-ref --verify`): exit 0 is true,
    /// exit 1 is false, anything else is an error, so a broken repository never reads as "no".
    pub fn test<S: AsRef<OsStr>>(&self, args: &[S]) -> Result<bool, GitError> {
        let out = self.output(args)?;
        match out.status.code() {
            Some(0) => Ok(true),
            Some(1) => Ok(false),
            _ => Err(failed(args, &out)),
        }
    }
}

fn join<S: AsRef<OsStr>>(args: &[S]) -> String {
    args.iter()
        .map(|a| a.as_ref().to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

fn failed<S: AsRef<OsStr>>(args: &[S], out: &Output) -> GitError {
    GitError::Failed {
        args: join(args),
        status: out.status.to_string(),
        stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
    }
}
