//! Where an operation runs: the current directory, the repository around it (if any), the
//! ledger's location and the default holder, with the environment reads that decide them.
//!
//! The seam a test holds: a context reads its environment from an [`Env`] (the process's, or
//! one the test spells out, [`Context::with_env`]), asks its process table of a [`Scan`]
//! ([`Context::with_scan`]) and gives every ledger it opens its clock (the wall clock, or a
//! [`ManualClock`] the test moves, [`Context::with_clock`]), so a library test can build the
//! world an operation decides in (`tests/it/library.rs`). What an operation reads of the
//! environment goes through [`Context::env`]: the ledger's place, the holder, the pool's root,
//! `~` in `hand.root` and `hand.ledger`, the credential and the Claude Code session. Still read
//! from the process: the approvals' directory (`repo::trust`), a server's push options, and
//! what the layers below `ops` read for themselves (git's, the hooks' chain, libpq's).
//!
//! Every ledger an operation uses is opened here, so that a missing ledger the disk says existed
//! is never created again or read as an empty one, and what opening did that the user should
//! hear about (a ledger file made private) is kept as notices for the command line to print.
//! A team ledger (a `postgres://` URL) is opened the same way for every verb: connecting
//! migrates its schema and creates nothing else, so the read-only verbs and the hooks write
//! nothing to the server.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::{Error, Result};
use crate::clock::ManualClock;
use crate::git::{InspectError, Repo};
use crate::ledger::{self, Ledger, LedgerLocation, Mode, Place, RepoId};
pub use crate::platform::env::Env;
use crate::platform::procs::Scan;

pub struct Context {
    pub cwd: PathBuf,
    repo: std::result::Result<Repo, Arc<InspectError>>,
    notices: Mutex<Vec<String>>,
    /// A server's pre-receive hook: the repository is read with its own configuration file only
    /// and the ledger is the one that file names ([`Context::for_server`]).
    server: bool,
    /// The process table every question of who is inside a slot, or whether a recorded process
    /// still runs, is asked of.
    scan: Scan,
    /// The environment this context's own decisions read (the ledger's place, the holder).
    env: Env,
    /// The clock every ledger this context opens reads (`None`: the wall clock).
    clock: Option<ManualClock>,
}

impl Context {
    /// This repository's id in `ledger`, or `None` if git-hand never saw it.
    pub fn repo_id(&self, ledger: &mut Ledger) -> Result<Option<RepoId>> {
        let common = &self.repo()?.loc.common_dir;
        Ok(ledger.read(|v| Ok(v.repo_by_dir(common)?.map(|r| r.id)))?)
    }

    /// Looks for a repository around `cwd`; not finding one is only an error for verbs that
    /// need one.
    pub fn new(cwd: PathBuf) -> Self {
        let repo = Repo::discover(&cwd).map_err(Arc::new);
        Self {
            cwd,
            repo,
            notices: Mutex::new(vec![]),
            server: false,
            scan: Scan::native(),
            env: Env::process(),
            clock: None,
        }
    }

    /// Where a server's pre-receive hook runs: the repository at `dir` (receive-pack runs the
    /// hook inside it) with its own configuration file only, and the ledger that file's
    /// `hand.ledger` names (issue 22). Over a local path or `file://` the hook inherits the
    /// pusher's environment (`GIT_HAND_LEDGER`, `HOME`, `XDG_STATE_HOME`, `GIT_CONFIG_GLOBAL`):
    /// none of it may choose the ledger, the machine or a setting the server judges with.
    pub(crate) fn for_server(dir: PathBuf) -> Self {
        let repo = Repo::open_isolated(&dir).map_err(Arc::new);
        Self {
            cwd: dir,
            repo,
            notices: Mutex::new(vec![]),
            server: true,
            scan: Scan::native(),
            env: Env::process(),
            clock: None,
        }
    }

    /// The same place, with processes asked of `scan` (a test holds the table it runs against).
    pub fn with_scan(self, scan: Scan) -> Self {
        Self { scan, ..self }
    }

    /// The same place, reading `env` instead of the process's environment (a test's world).
    pub fn with_env(self, env: Env) -> Self {
        Self { env, ..self }
    }

    /// The same place, every ledger it opens reading `clock` (a test moves time by hand; the
    /// binary never does: no clock can be set from outside it).
    pub fn with_clock(self, clock: ManualClock) -> Self {
        Self {
            clock: Some(clock),
            ..self
        }
    }

    /// The environment this context reads.
    pub fn env(&self) -> &Env {
        &self.env
    }

    /// The process table this operation asks.
    pub fn scan(&self) -> Scan {
        self.scan
    }

    pub fn repo(&self) -> Result<&Repo> {
        self.repo
            .as_ref()
            .map_err(|e| ContextError::NoRepo(Arc::clone(e)).into())
    }

    pub(crate) fn repo_opt(&self) -> Option<&Repo> {
        self.repo.as_ref().ok()
    }

    /// The repository, for a verb that records it in the ledger: its paths become keys and
    /// appear in messages, so one git-hand cannot record (a newline in it) is a usage error
    /// before anything is written.
    pub(crate) fn repo_to_record(&self) -> Result<&Repo> {
        let repo = self.repo()?;
        let fix = "move the repository to a path without control characters";
        super::repo::names::path(&repo.loc.common_dir, "the repository", fix)?;
        if let Some(workdir) = &repo.loc.workdir {
            super::repo::names::path(workdir, "the worktree", fix)?;
        }
        Ok(repo)
    }

    /// `GIT_HAND_LEDGER`, else `git config hand.ledger`, else the XDG state dir: a SQLite file
    /// or a team ledger's `postgres://` URL. A path the stamp could not carry (a newline ends its
    /// line) or a URL that does not parse is a usage error, before anything opens it.
    pub fn ledger_location(&self) -> Result<LedgerLocation> {
        if self.server {
            return server_ledger(self.repo()?, &self.env);
        }
        let config = match self.repo_opt() {
            Some(repo) => configured_ledger(repo, &self.env)?,
            None => None,
        };
        let location = ledger::default_location(|k| self.env.var_os(k), config)
            .map_err(bad_url)?
            .ok_or(ContextError::NoStateDir)?;
        if let Place::File(path) = &location.place {
            super::repo::names::path(
                path,
                &format!("the ledger path (from {})", location.source),
                "export GIT_HAND_LEDGER=/a/path/without/control/characters/ledger.sqlite",
            )?;
        }
        Ok(location)
    }

    /// The ledger a stamp names, as this process reaches it: a team ledger that the configured
    /// location names too (the same server and database) is reached with the configured URL,
    /// so its password and options are used; any other with the stamp's own URL (which has no
    /// password: `PGPASSWORD` or the password file supplies one). A file is the stamp's file.
    pub(crate) fn stamped_ledger(&self, stamped: &Place) -> Place {
        if let Place::Server(_) = stamped
            && let Ok(configured) = self.ledger_location()
            && configured.place.same_database(stamped)
        {
            return configured.place;
        }
        stamped.clone()
    }

    /// Opens (migrating as needed) the ledger, creating a file only when there is none and
    /// nothing on disk says there was one (`evidence`). A team ledger is connected to.
    pub fn open_ledger(&self) -> Result<Ledger> {
        let place = self.ledger_location()?.place;
        if let Place::File(path) = &place
            && std::fs::symlink_metadata(path).is_err()
        {
            super::ledger_place::evidence::refuse_if_it_existed(self, path)?;
        }
        let machine = self.machine_of(&place)?;
        Ok(self.noted(Ledger::open_creating(place)?.on_machine(&machine)))
    }

    /// The ledger for a verb that only reads: the real one when it exists, else an empty one in
    /// memory, so `list`, `log` and friends never create a ledger file; but never an empty one
    /// in place of a ledger the disk says existed.
    pub fn ledger_for_reading(&self) -> Result<Ledger> {
        let place = self.ledger_location()?.place;
        match self.open_existing(&place)? {
            Some(ledger) => Ok(ledger),
            None => {
                if let Place::File(path) = &place {
                    super::ledger_place::evidence::refuse_if_it_existed(self, path)?;
                }
                Ok(Ledger::empty()?)
            }
        }
    }

    /// The ledger at `place` if there is one, for reading ([`Mode::Read`]): a file is never
    /// created (a damaged one is an error, never an empty ledger); a team ledger is connected to
    /// (an unreachable server is an error).
    pub fn open_existing(&self, place: &Place) -> Result<Option<Ledger>> {
        let machine = self.machine_of(place)?;
        Ok(Ledger::open(place, Mode::Read)?.map(|l| self.noted(l).on_machine(&machine)))
    }

    /// The machine a ledger at `place` is seen from: this one's id on a team ledger, none on a
    /// file (one machine).
    fn machine_of(&self, place: &Place) -> Result<String> {
        match place {
            Place::Server(_) => self.machine(),
            Place::File(_) => Ok(String::new()),
        }
    }

    /// This machine's id on a team ledger: `git config hand.machine`, else the platform's machine
    /// id (`platform::machine`: on Linux the systemd one, `/etc/machine-id`). Read only for a
    /// team ledger: a file ledger is one machine.
    pub fn machine(&self) -> Result<String> {
        if let Some(repo) = self.repo_opt()
            && let Some(name) = super::repo::settings::machine(repo)?
        {
            return Ok(name);
        }
        crate::platform::machine::id()
            .filter(|id| super::repo::names::is_machine_id(id))
            .ok_or_else(|| {
                ContextError::NoMachineId {
                    hostname: crate::platform::machine::hostname(),
                }
                .into()
            })
    }

    /// A ledger this context opened, its notices kept and its clock this context's.
    fn noted(&self, mut ledger: Ledger) -> Ledger {
        self.note(ledger.take_notices());
        match &self.clock {
            Some(clock) => ledger.with_clock(Box::new(clock.clone())),
            None => ledger,
        }
    }

    /// Keeps notices for the command line to print.
    pub fn note(&self, notices: Vec<String>) {
        if let Ok(mut kept) = self.notices.lock() {
            kept.extend(notices);
        }
    }

    /// What the user should hear about that was not the outcome (taken once).
    pub(crate) fn take_notices(&self) -> Vec<String> {
        self.notices
            .lock()
            .map(|mut n| std::mem::take(&mut *n))
            .unwrap_or_default()
    }

    /// `--holder`, else `GIT_HAND_HOLDER`, else `user@host`.
    pub fn holder(&self, explicit: Option<&str>) -> Result<String> {
        let env = self.env.var("GIT_HAND_HOLDER").filter(|h| !h.is_empty());
        let holder = match (explicit, env) {
            (Some(h), _) => h.to_string(),
            (None, Some(h)) => h,
            (None, None) => default_holder(&self.env),
        };
        super::repo::names::holder(&holder)?;
        Ok(holder)
    }
}

/// `user@host` from the environment and the kernel's host name.
pub(crate) fn default_holder(env: &Env) -> String {
    let user = ["USER", "LOGNAME"]
        .iter()
        .find_map(|k| env.var(k).filter(|v| !v.is_empty()))
        .unwrap_or_else(|| "user".into());
    format!("{user}@{}", crate::platform::machine::hostname())
}

/// A team ledger URL that does not parse: a usage error naming the part (never the password).
fn bad_url(e: ledger::server::UrlError) -> Error {
    ContextError::BadUrl(ledger::server::ServerError::Url(e)).into()
}

/// `git config hand.ledger`: a team ledger's `postgres://` URL, or an absolute path (or one
/// starting with `~/`) git-hand can record.
/// Where a server's own configuration file says its ledger is, under [`SERVER_LEDGER_SOURCE`]:
/// only the repository's `hand.ledger` (its config file; [`Repo::open_isolated`] reads no
/// other), a `postgres://` URL or an absolute path. None is an error naming the command that
/// sets it (the hook then refuses every push: a server fails closed). A `GIT_HAND_LEDGER` in
/// the hook's environment is the pusher's: naming any other ledger, it refuses the push; it is
/// never used.
fn server_ledger(repo: &Repo, env: &Env) -> Result<LedgerLocation> {
    let common = &repo.loc.common_dir;
    let Some(setting) = repo
        .config_string("hand.ledger")
        .filter(|v| !v.trim().is_empty())
    else {
        return Err(ContextError::ServerNamesNoLedger {
            common: common.clone(),
        }
        .into());
    };
    let place = server_place(setting.clone().into(), env).map_err(bad_url)?;
    if let Place::File(path) = &place
        && !(path.is_absolute()
            && path
                .to_str()
                .is_some_and(|p| !p.chars().any(super::repo::names::is_deceptive)))
    {
        return Err(repo
            .bad_config(
                "hand.ledger",
                "on a server, an absolute path without control characters, or a postgres:// URL \
                 (the hook's HOME is the pusher's, so ~/ means nothing here)",
                None,
            )
            .into());
    }
    if let Some(theirs) = env.var_os("GIT_HAND_LEDGER").filter(|v| !v.is_empty()) {
        let same = server_place(theirs.clone(), env).is_ok_and(|t| same_place(&t, &place));
        if !same {
            return Err(ContextError::PusherNamesAnother {
                theirs: theirs.to_string_lossy().into_owned(),
                place: place.to_string(),
                common: common.clone(),
            }
            .into());
        }
    }
    Ok(LedgerLocation {
        place,
        source: SERVER_LEDGER_SOURCE,
    })
}

/// Where a server's ledger comes from, as messages say.
pub(crate) const SERVER_LEDGER_SOURCE: &str = "the repository's own hand.ledger";

/// A server's ledger setting read as a place, with none of libpq's environment but `HOME` (the
/// password file's default place): `PGHOST`, `PGDATABASE` and friends in the hook's environment
/// are the pusher's, and a server URL names its host and database itself.
fn server_place(
    setting: OsString,
    env: &Env,
) -> std::result::Result<Place, crate::ledger::server::UrlError> {
    Place::from_setting(setting, &|k| (k == "HOME").then(|| env.var_os(k)).flatten())
}

/// Whether two places are one ledger: the same file (by its real path where it exists) or the
/// same team database.
fn same_place(a: &Place, b: &Place) -> bool {
    match (a, b) {
        (Place::File(a), Place::File(b)) => {
            let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
            real(a) == real(b)
        }
        _ => a.same_database(b),
    }
}

fn configured_ledger(repo: &Repo, env: &Env) -> Result<Option<OsString>> {
    let Some(value) =
        super::repo::settings::git_string(repo, "hand.ledger").filter(|p| !p.is_empty())
    else {
        return Ok(None);
    };
    if ledger::server::is_server_url(&value) {
        return Ok(Some(value.into()));
    }
    let path = super::repo::settings::expand_home(&value, env);
    let recordable = path
        .to_str()
        .is_some_and(|p| !p.chars().any(super::repo::names::is_deceptive));
    if path.is_absolute() && recordable {
        Ok(Some(path.into_os_string()))
    } else {
        Err(repo
            .bad_config(
                "hand.ledger",
                "an absolute path (or one starting with ~/) without control characters, or a \
                 postgres:// URL",
                Some("~/.local/state/git-hand/ledger.sqlite".into()),
            )
            .into())
    }
}

/// Why an operation could not tell where it runs: the facts of each case. The commands that
/// get the user out of it are `cli`'s (`cli::way_out`).
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    /// The verb needs a repository, and none is around the current directory (or git-hand
    /// cannot read it).
    #[error(transparent)]
    NoRepo(Arc<InspectError>),
    /// Neither `HOME` nor `XDG_STATE_HOME` is set, so no default ledger place can be named.
    #[error("cannot tell where the ledger lives: neither HOME nor XDG_STATE_HOME is set")]
    NoStateDir,
    /// A team ledger URL that does not parse (its message names the part, never the password).
    #[error(transparent)]
    BadUrl(ledger::server::ServerError),
    /// No machine id and no `hand.machine`: a team ledger cannot tell this machine's rows.
    #[error(
        "cannot tell this machine from the others on the team ledger: {} is missing and \
         hand.machine is not set",
        crate::platform::machine::SOURCE
    )]
    NoMachineId { hostname: String },
    /// A server's repository (`common`) names no ledger in its own configuration.
    #[error(
        "{} names no ledger in its own configuration (hand.ledger in {}): the server judges \
         pushes only with its own ledger, never one the pusher's environment or configuration \
         names",
        common.display(),
        common.join("config").display()
    )]
    ServerNamesNoLedger { common: PathBuf },
    /// The pusher's `GIT_HAND_LEDGER` (`theirs`) names another ledger than the server's own.
    #[error(
        "the push's environment names a ledger (GIT_HAND_LEDGER={theirs:?}) that is not this \
         server's own ({place}, hand.ledger in {}): the server judges only with its own ledger, \
         and a ledger the pusher names is refused, never used; push without GIT_HAND_LEDGER \
         set, or with it naming the server's ledger",
        common.join("config").display()
    )]
    PusherNamesAnother {
        theirs: String,
        place: String,
        common: PathBuf,
    },
}

impl ContextError {
    pub fn kind(&self) -> super::Kind {
        match self {
            ContextError::NoRepo(_) | ContextError::NoStateDir | ContextError::BadUrl(_) => {
                super::Kind::Usage
            }
            ContextError::NoMachineId { .. } => super::Kind::Precondition,
            ContextError::ServerNamesNoLedger { .. } | ContextError::PusherNamesAnother { .. } => {
                super::Kind::Failed
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hint::Hint;

    /// A context outside any repository, reading only `vars`.
    fn outside_a_repo(vars: &[(&str, &str)]) -> (tempfile::TempDir, Context) {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Context::new(dir.path().to_path_buf()).with_env(Env::of(vars.iter().copied()));
        (dir, ctx)
    }

    #[test]
    fn the_ledger_is_where_the_contexts_environment_says_not_the_processes() {
        let (_dir, ctx) = outside_a_repo(&[("GIT_HAND_LEDGER", "/team/ledger.sqlite")]);
        let location = ctx.ledger_location().unwrap();
        assert_eq!(location.place, Place::File("/team/ledger.sqlite".into()));
        assert_eq!(location.source, "GIT_HAND_LEDGER");

        let (_dir, ctx) = outside_a_repo(&[("XDG_STATE_HOME", "/state"), ("HOME", "/home/a")]);
        assert_eq!(
            ctx.ledger_location().unwrap().place,
            Place::File("/state/git-hand/ledger.sqlite".into())
        );

        let (_dir, ctx) = outside_a_repo(&[]);
        let Err(e) = ctx.ledger_location() else {
            panic!("an environment without HOME names no ledger");
        };
        let crate::cli::Failure {
            kind,
            message,
            hints,
        } = e.into();
        assert_eq!(kind, crate::ops::Kind::Usage);
        assert!(
            message.contains("neither HOME nor XDG_STATE_HOME"),
            "{message}"
        );
        assert_eq!(
            hints,
            [Hint::run("export GIT_HAND_LEDGER=/path/to/ledger.sqlite")]
        );
    }

    #[test]
    fn the_holder_is_the_flag_then_git_hand_holder_then_user_at_host() {
        let (_dir, ctx) = outside_a_repo(&[("GIT_HAND_HOLDER", "agent-7"), ("USER", "ann")]);
        assert_eq!(ctx.holder(Some("bob")).unwrap(), "bob");
        assert_eq!(ctx.holder(None).unwrap(), "agent-7");
        let (_dir, ctx) = outside_a_repo(&[("LOGNAME", "ann")]);
        let host = crate::platform::machine::hostname();
        assert_eq!(ctx.holder(None).unwrap(), format!("ann@{host}"));
        let (_dir, ctx) = outside_a_repo(&[("GIT_HAND_HOLDER", "two\nlines")]);
        assert!(ctx.holder(None).is_err(), "a holder a stamp cannot carry");
    }
}
