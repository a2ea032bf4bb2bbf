//! Where an operation runs: the current directory, the repository around it (if any), the
//! ledger's location and the default holder, with the environment reads that decide them.
//!
//! Every ledger an operation uses is opened here, so that a missing ledger the disk says existed
//! is never created again or read as an empty one, and what opening did that the user should
//! hear about (a ledger file made private) is kept as notices for the command line to print.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::{Error, Result};
use crate::git::Repo;
use crate::ledger::{self, Ledger, LedgerLocation};

pub struct Context {
    pub cwd: PathBuf,
    repo: std::result::Result<Repo, crate::git::InspectError>,
    notices: Mutex<Vec<String>>,
}

impl Context {
    /// Looks for a repository around `cwd`; not finding one is only an error for verbs that
    /// need one.
    pub fn new(cwd: PathBuf) -> Self {
        let repo = Repo::discover(&cwd);
        Self {
            cwd,
            repo,
            notices: Mutex::new(vec![]),
        }
    }

    pub fn repo(&self) -> Result<&Repo> {
        self.repo.as_ref().map_err(|e| Error::Usage {
            message: e.to_string(),
            hints: vec!["run it inside a repository, or pass -C <path>".into()],
        })
    }

    pub fn repo_opt(&self) -> Option<&Repo> {
        self.repo.as_ref().ok()
    }

    /// The repository, for a verb that records it in the ledger: its paths become keys and
    /// appear in messages, so one git-hand cannot record (a newline in it) is a usage error
    /// before anything is written.
    pub fn repo_to_record(&self) -> Result<&Repo> {
        let repo = self.repo()?;
        let fix = "move the repository to a path without control characters";
        super::names::path(&repo.loc.common_dir, "the repository", fix)?;
        if let Some(workdir) = &repo.loc.workdir {
            super::names::path(workdir, "the worktree", fix)?;
        }
        Ok(repo)
    }

    /// `GIT_HAND_LEDGER`, else `git config hand.ledger`, else the XDG state dir. A path the
    /// stamp could not carry (a newline ends its line) is a usage error, before anything opens it.
    pub fn ledger_location(&self) -> Result<LedgerLocation> {
        let config = match self.repo_opt() {
            Some(repo) => configured_ledger(repo)?,
            None => None,
        };
        let location =
            ledger::default_location(|k| std::env::var_os(k), config).ok_or_else(|| {
                Error::usage(
                    "cannot tell where the ledger lives: neither HOME nor XDG_STATE_HOME is set",
                )
                .with_hint("export GIT_HAND_LEDGER=/path/to/ledger.sqlite")
            })?;
        super::names::path(
            &location.path,
            &format!("the ledger path (from {})", location.source),
            "export GIT_HAND_LEDGER=/a/path/without/control/characters/ledger.sqlite",
        )?;
        Ok(location)
    }

    /// Opens (migrating as needed) the ledger, creating it only when there is no file and
    /// nothing on disk says there was one (`evidence`).
    pub fn open_ledger(&self) -> Result<Ledger> {
        let path = self.ledger_location()?.path;
        if std::fs::symlink_metadata(&path).is_err() {
            super::evidence::refuse_if_it_existed(self, &path)?;
        }
        Ok(self.noted(Ledger::open(&path)?))
    }

    /// The ledger for a verb that only reads: the real one when it exists, else an empty one in
    /// memory, so `list`, `log` and friends never create a ledger file; but never an empty one
    /// in place of a ledger the disk says existed.
    pub fn ledger_for_reading(&self) -> Result<Ledger> {
        let path = self.ledger_location()?.path;
        match self.open_existing(&path)? {
            Some(ledger) => Ok(ledger),
            None => {
                super::evidence::refuse_if_it_existed(self, &path)?;
                Ok(Ledger::empty()?)
            }
        }
    }

    /// The ledger at `path` if there is a file there (never created; a damaged file is an
    /// error, never an empty ledger).
    pub fn open_existing(&self, path: &Path) -> Result<Option<Ledger>> {
        Ok(Ledger::open_existing(path)?.map(|l| self.noted(l)))
    }

    fn noted(&self, mut ledger: Ledger) -> Ledger {
        self.note(ledger.take_notices());
        ledger
    }

    /// Keeps notices for the command line to print.
    pub fn note(&self, notices: Vec<String>) {
        if let Ok(mut kept) = self.notices.lock() {
            kept.extend(notices);
        }
    }

    /// What the user should hear about that was not the outcome (taken once).
    pub fn take_notices(&self) -> Vec<String> {
        self.notices
            .lock()
            .map(|mut n| std::mem::take(&mut *n))
            .unwrap_or_default()
    }

    /// `--holder`, else `GIT_HAND_HOLDER`, else `user@host`.
    pub fn holder(&self, explicit: Option<&str>) -> Result<String> {
        let env = std::env::var("GIT_HAND_HOLDER")
            .ok()
            .filter(|h| !h.is_empty());
        let holder = match (explicit, env) {
            (Some(h), _) => h.to_string(),
            (None, Some(h)) => h,
            (None, None) => default_holder(),
        };
        super::names::holder(&holder)?;
        Ok(holder)
    }
}

/// `user@host` from the environment and the kernel's host name.
pub fn default_holder() -> String {
    let user = ["USER", "LOGNAME"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        .unwrap_or_else(|| "user".into());
    format!("{user}@{}", hostname())
}

fn hostname() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".into())
}

/// `git config hand.ledger`: an absolute path (or one starting with `~/`) git-hand can record.
fn configured_ledger(repo: &Repo) -> Result<Option<PathBuf>> {
    let Some(value) = super::settings::git_string(repo, "hand.ledger").filter(|p| !p.is_empty())
    else {
        return Ok(None);
    };
    let path = expand_home(&value);
    let recordable = path
        .to_str()
        .is_some_and(|p| !p.chars().any(super::names::is_deceptive));
    if path.is_absolute() && recordable {
        Ok(Some(path))
    } else {
        Err(repo
            .bad_config(
                "hand.ledger",
                "an absolute path (or one starting with ~/) without control characters",
                Some("~/.local/state/git-hand/ledger.sqlite".into()),
            )
            .into())
    }
}

pub fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => PathBuf::from(path),
    }
}
