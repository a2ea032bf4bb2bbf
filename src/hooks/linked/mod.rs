//! The hooks directory of linked worktrees only (issue 25; docs/hooks.md, "Where the hooks run:
//! linked worktrees only", rules 1, 3, 4 and 5): `<common>/git-hand/hooks` (L), the include file
//! `<common>/git-hand/linked.config` that points `core.hooksPath` at L, and the
//! `[includeIf "gitdir:./worktrees/**"]` section of `<common>/config` that makes every linked
//! worktree, and never the main one, read that file.
//!
//! L mirrors D, the main worktree's hooks directory: git-hand's reference-transaction shim (given
//! by the caller) with D's own reference-transaction hook as its chained hook, and for every other
//! hook name git knows either a forwarder to D's hook (so `$0` is D's path and stdin is git's) or
//! a dangling link to where D's hook would be (so a hook added to D later runs in slots at once,
//! until [`sync`] turns it into a forwarder). Every write is a temp file or link renamed into
//! place, so a link is replaced, never written through into D. The config section is written and
//! removed by git itself (`git config -f`), so uninstall gives back the file byte for byte.
//!
//! [`super::install`] writes the layout where D is the repository's own hooks directory;
//! [`check`] is what spawn's fast path and the lapses read.
//!
//! [`section`] owns the includeIf section of `<common>/config`; [`entries`] what each file of L
//! should be.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use super::HookError;
use super::files::{Over, TEMP_PREFIX, io_err, sweep_temp_files, write_atomic, write_atomic_mode};
use crate::git::{Git, GitError};
use crate::hint::{Hint, say};

mod entries;
mod section;
#[cfg(test)]
mod tests;

pub use entries::forward_target;
use entries::{Have, Want, config_unquote, have, plan};
pub use section::{Excluded, Included, check_includable, exclude, include};
use section::{Section, has_header, included_as_written, section};

/// The section of `<common>/config`, as `git config --remove-section` names it.
pub(crate) const SECTION: &str = "includeIf.gitdir:./worktrees/**";

/// Its one key, as `git config` names it.
const KEY: &str = "includeIf.gitdir:./worktrees/**.path";

/// The key as `git config --get-regexp` prints it (section and key lowercased by git).
const KEY_LISTED: &str = "includeif.gitdir:./worktrees/**.path";

/// What [`KEY`] holds: relative to the config file's directory, so it survives a moved repository.
pub(crate) const INCLUDE_PATH: &str = "git-hand/linked.config";

/// Every hook name in githooks(5) for git 2.47, in its order. L holds an entry for each but
/// reference-transaction (which is git-hand's shim there).
pub(crate) const HOOK_NAMES: [&str; 28] = [
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    REFERENCE_TRANSACTION,
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "p4-changelist",
    "p4-prepare-changelist",
    "p4-post-changelist",
    "p4-pre-submit",
    "post-index-change",
];

const REFERENCE_TRANSACTION: &str = "reference-transaction";

/// Line 2 of a forwarder: what the file is. Not the shims' marker (`shim::MARKER`): a forwarder
/// is no shim, and the chain runner skips what it takes for git-hand's own shim, so a chained
/// forwarder (D's reference-transaction) would never run.
const FORWARDER_MARKER: &str = "# git-hand-forwarder: runs the main worktree's hook of this name";

/// Line 1 of `linked.config` starts so; the rest records D and the common dir (rule 4).
const RECORD_PREFIX: &str = "# git-hand: written for hooks dir ";

/// Where the files of the layout live for one common dir (absolute).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// The repository's common dir.
    pub common: PathBuf,
    /// `<common>/config`, which holds the section.
    pub repo_config: PathBuf,
    /// `<common>/git-hand`: git-hand's own directory.
    pub own: PathBuf,
    /// L: `<common>/git-hand/hooks`.
    pub hooks: PathBuf,
    /// `<common>/git-hand/linked.config`.
    pub config: PathBuf,
    /// Present when `<common>/config` did not end in a newline before [`include`] (git's writer
    /// adds one when it appends the section; [`exclude`] takes it away again). It holds the
    /// file's length then, so a file changed since is not touched.
    pub newline_note: PathBuf,
}

impl Paths {
    pub fn of(common: &Path) -> Paths {
        let own = common.join("git-hand");
        Paths {
            common: common.to_path_buf(),
            repo_config: common.join("config"),
            hooks: own.join("hooks"),
            config: own.join("linked.config"),
            newline_note: own.join("config-had-no-final-newline"),
            own,
        }
    }
}

/// Why the layout could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum LinkedError {
    #[error(transparent)]
    Hook(#[from] HookError),
    #[error("cannot {action} {}: {source}", file.display())]
    Git {
        action: &'static str,
        file: PathBuf,
        source: GitError,
    },
    /// The section exists with something git-hand did not write: adding to it or removing it
    /// would change what the user wrote.
    #[error(
        "{} already has an [includeIf \"gitdir:./worktrees/**\"] section holding more than git-hand's line ({found}); git-hand changed nothing",
        config.display()
    )]
    SectionTaken { config: PathBuf, found: String },
    /// L or git-hand's directory is not a plain directory (a symbolic link): writing there
    /// could land anywhere.
    #[error("{} is not a directory; git-hand will not write through it", path.display())]
    NotADirectory { path: PathBuf },
    /// D is L itself: the forwarders would exec themselves.
    #[error(
        "the main worktree's hooks directory is {}, git-hand's own hooks directory for linked worktrees; git-hand changed nothing",
        d.display()
    )]
    Loop { d: PathBuf },
}

impl LinkedError {
    /// Whether git could not take `config.lock` (another git writes the file right now).
    fn is_lock_contention(&self) -> bool {
        matches!(self, LinkedError::Git { source: GitError::Failed { stderr, .. }, .. }
            if stderr.contains("could not lock config file"))
    }

    /// The commands that get the user out of this error.
    pub fn hints(&self) -> Vec<crate::hint::Hint> {
        match self {
            LinkedError::Hook(e) => e.hints(),
            e if e.is_lock_contention() => vec![Hint::run("run the same command again")],
            LinkedError::Git { file, .. } if file.is_dir() => vec![Hint::run(format!("git -C {} config --list", file.display())).why("must work for git-hand to read the repository's configuration")],
            LinkedError::Git { file, .. } => vec![Hint::run(format!("git config -f {} --list", file.display())).why("must work for git-hand to read it")],
            LinkedError::SectionTaken { config, .. } => vec![Hint::run(format!("git config -f {} --remove-section 'includeIf.gitdir:./worktrees/**'", config.display())).why(say("or move what you keep there to another section, then run ").hand("install"))],
            LinkedError::NotADirectory { path } => vec![Hint::run(format!("ls -ld {}", path.display())).why(say("git-hand writes only into a directory of its own there; move it away, then run ").hand("install"))],
            LinkedError::Loop { .. } => vec![
                Hint::run("git config --unset core.hooksPath").why(say("the main worktree's hooks then are the repository's own, and ").hand("install").text(" puts its layout back")),
            ],
        }
    }

    /// Whether the error means "something of the user's is in the way; nothing was changed".
    pub fn is_precondition(&self) -> bool {
        match self {
            LinkedError::Hook(e) => e.is_precondition(),
            e @ LinkedError::Git { .. } => e.is_lock_contention(),
            LinkedError::SectionTaken { .. }
            | LinkedError::NotADirectory { .. }
            | LinkedError::Loop { .. } => true,
        }
    }
}

/// What one file of the layout is after a [`sync`] wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryChange {
    /// `L/reference-transaction` is the shim text given.
    Shim,
    /// `L/reference-transaction.git-hand-chained` forwards to D's reference-transaction hook.
    Chained,
    /// `L/<name>` forwards to D's hook.
    Forwarder,
    /// `L/<name>` is a dangling (or live) symbolic link to `<D>/<name>`.
    Link,
    /// A file of L that should not be there was removed.
    Removed,
    /// `linked.config` was written (missing, or for another L, D or common dir).
    Config,
    /// A file of L that git-hand did not write was moved aside to this path
    /// (`<name>.git-hand-displaced`), so git-hand's entry could take its place.
    Displaced,
}

/// One file a [`sync`] changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkedChange {
    pub path: PathBuf,
    pub change: EntryChange,
}

/// D: the main worktree's hooks directory, `core.hooksPath` as the common dir reads it (where
/// the includeIf never matches, so `linked.config` is ignored), else `<common>/hooks`. A
/// relative value stays relative: it is relative to the top of whichever worktree runs a hook.
pub(crate) fn main_hooks_dir(common: &Path) -> Result<PathBuf, LinkedError> {
    let common = canonical(common)?;
    let out = git_output(
        &common,
        &["config", "--type=path", "--get", "core.hooksPath"],
    )
    .map_err(|source| git_err("read core.hooksPath of", &common, source))?;
    match out.status.code() {
        Some(0) => {
            let mut value = out.stdout;
            if value.last() == Some(&b'\n') {
                value.pop();
            }
            let value = PathBuf::from(OsString::from_vec(value));
            Ok(match value.as_os_str().is_empty() {
                true => common.join("hooks"),
                // Spelled through a symlink (macOS's /var, a linked home), an absolute D is the
                // same directory as its real path: forwarders and the record use the real one,
                // as `locate` does, so both sides compare equal.
                false if value.is_absolute() => fs::canonicalize(&value).unwrap_or(value),
                // `.git/hooks` written out (a reset after removing husky) is the repository's
                // own directory, not one each worktree has at its top: in a slot `.git` is a
                // file, and a forwarder to `./.git/hooks/<name>` would run nothing.
                false if is_own_hooks_dir(&common, &value)? => common.join("hooks"),
                false => value,
            })
        }
        Some(1) => Ok(common.join("hooks")),
        _ => Err(git_err(
            "read core.hooksPath of",
            &common,
            failed("config --get core.hooksPath", &out),
        )),
    }
}

/// Whether the relative `value`, read at the main worktree's top, is `<common>/hooks`.
fn is_own_hooks_dir(common: &Path, value: &Path) -> Result<bool, LinkedError> {
    let Some(top) = main_worktree(common)? else {
        return Ok(false);
    };
    let own = fs::canonicalize(common.join("hooks")).unwrap_or_else(|_| common.join("hooks"));
    Ok(fs::canonicalize(top.join(value)).is_ok_and(|v| v == own))
}

/// Rules 3 and 5: makes L and `linked.config` match D, as [`main_hooks_dir`] reads it now (not
/// as a caller might: `locate` gives a relative `core.hooksPath` resolved, which is not what a
/// forwarder may exec). `reftx_shim` is git-hand's reference-transaction shim
/// (`shim::content`). Returns what it changed, nothing when everything already matched.
pub fn sync(common: &Path, reftx_shim: &str) -> Result<Vec<LinkedChange>, LinkedError> {
    let paths = Paths::of(&canonical(common)?);
    let d = main_hooks_dir(&paths.common)?;
    let plan = plan(&paths, &d, reftx_shim)?;
    let mut changes = Vec::new();
    for step in plan
        .entries
        .iter()
        .filter(|s| !s.matches() && (!s.is_foreign() || s.is_displaceable()))
    {
        if changes.is_empty() {
            own_dir(&paths.own)?;
            own_dir(&paths.hooks)?;
        }
        if step.is_foreign() {
            // An installer run in a slot wrote into L (`git lfs update --force` replaces the
            // pre-push forwarder, and with it the fence of every slot). Its file is kept beside,
            // under a name git never runs, and git-hand's entry goes back.
            let to = displace(&step.path)?;
            changes.push(LinkedChange {
                path: to,
                change: EntryChange::Displaced,
            });
        }
        match &step.want {
            Want::File(bytes) => {
                write_atomic(&step.path, bytes, Over::Anything)?;
            }
            Want::Link(target) => link_atomic(&step.path, target)?,
            Want::Nothing => remove_if_present(&step.path)?,
        }
        changes.push(LinkedChange {
            path: step.path.clone(),
            change: step.change,
        });
    }
    // Last: the record says L matches D only once it does, so an interrupted sync is redone.
    if fs::read(&paths.config).ok().as_deref() != Some(plan.config.as_slice()) {
        own_dir(&paths.own)?;
        write_plain(&paths.config, &plan.config, 0o644)?;
        changes.push(LinkedChange {
            path: paths.config.clone(),
            change: EntryChange::Config,
        });
    }
    Ok(changes)
}

/// What the layout is for D, read from the files alone (no git for the usual case): spawn's fast
/// path and the lapses `doctor` and `status` report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Check {
    /// `<common>/config` holds git-hand's section.
    pub included: bool,
    /// `linked.config` is what a [`sync`] for this D and common dir writes.
    pub config_current: bool,
    /// `L/reference-transaction` is the shim given, executable.
    pub shim_current: bool,
    /// Entries of L a [`sync`] would rewrite (a hook D gained or lost since, an older shim).
    pub stale: Vec<PathBuf>,
    /// Entries of L git-hand did not write, which [`sync`] leaves (see [`LinkedState::foreign`]).
    pub foreign: Vec<PathBuf>,
}

impl Check {
    /// Everything is as a [`sync`] and [`include`] leave it.
    pub(crate) fn is_current(&self) -> bool {
        self.included
            && self.config_current
            && self.shim_current
            && self.stale.is_empty()
            && self.foreign.is_empty()
    }
}

/// The layout against an absolute D (`<common>/hooks`, as install writes it), from the files:
/// the section is read as text, and only a section git-hand's git did not write in its usual
/// spelling (a header of another case, a comment after it) is asked of git.
pub fn check(common: &Path, d: &Path, reftx_shim: &str) -> Result<Check, LinkedError> {
    let paths = Paths::of(&canonical(common)?);
    let plan = plan(&paths, d, reftx_shim)?;
    let mut check = Check {
        included: included(&paths)?,
        config_current: fs::read(&paths.config).ok().as_deref() == Some(plan.config.as_slice()),
        ..Check::default()
    };
    for step in &plan.entries {
        if step.matches() {
            check.shim_current |= step.change == EntryChange::Shim;
        } else if step.is_foreign() {
            check.foreign.push(step.path.clone());
        } else if step.change != EntryChange::Shim {
            check.stale.push(step.path.clone());
        }
    }
    Ok(check)
}

/// Whether `<common>/config` holds git-hand's section: read as text, and asked of git only for a
/// section not in the spelling git writes it in (a header of another case, a comment after it).
pub(crate) fn is_included(common: &Path) -> Result<bool, LinkedError> {
    included(&Paths::of(&canonical(common)?))
}

fn included(paths: &Paths) -> Result<bool, LinkedError> {
    Ok(included_as_written(&paths.repo_config)?
        || (has_header(&paths.repo_config)? && matches!(section(paths)?, Section::Ours)))
}

/// L of the repository whose common dir is `common`: `<common>/git-hand/hooks`.
pub fn hooks_dir(common: &Path) -> PathBuf {
    Paths::of(common).hooks
}

/// The `core.hooksPath` that `<common>/git-hand/linked.config` sets, read from the file (no git):
/// a worktree whose hooks directory is that value runs hooks through git-hand's layout, also when
/// it is not L any more (a moved repository).
pub(crate) fn recorded_hooks_path(common: &Path) -> Option<PathBuf> {
    let text = fs::read(Paths::of(common).config).ok()?;
    text.split(|b| *b == b'\n').find_map(|line| {
        let value = line.trim_ascii().strip_prefix(b"hooksPath = ")?;
        let (value, rest) = config_unquote(value)?;
        rest.is_empty()
            .then(|| PathBuf::from(OsString::from_vec(value)))
    })
}

/// Writes git-hand's reference-transaction shim into L again even when it is current
/// (`git hand install --force`).
pub(crate) fn rewrite_shim(common: &Path, reftx_shim: &str) -> Result<PathBuf, LinkedError> {
    let paths = Paths::of(&canonical(common)?);
    own_dir(&paths.own)?;
    own_dir(&paths.hooks)?;
    let path = paths.hooks.join(REFERENCE_TRANSACTION);
    write_atomic(&path, reftx_shim.as_bytes(), Over::Anything)?;
    Ok(path)
}

/// Removes L's entries (those [`sync`] writes), `linked.config` and the directories when empty:
/// rule 1's "go with it", after [`exclude`]. Files in L git-hand did not write stay.
pub(crate) fn remove_files(common: &Path) -> Result<Vec<PathBuf>, LinkedError> {
    let paths = Paths::of(&canonical(common)?);
    let mut removed = Vec::new();
    if fs::symlink_metadata(&paths.hooks).is_ok_and(|m| m.is_dir()) {
        // Every entry git-hand wrote, by what it is rather than by name (a newer git's hook
        // name, the chained link): what another tool wrote stays.
        let mut names: Vec<OsString> = fs::read_dir(&paths.hooks)
            .map_err(io_err("list", &paths.hooks))?
            .flatten()
            .map(|e| e.file_name())
            .filter(|n| !n.as_bytes().starts_with(TEMP_PREFIX.as_bytes()))
            .collect();
        names.sort();
        for name in names {
            let path = paths.hooks.join(name);
            let now = have(&path)?;
            if now != Have::Nothing && now.is_ours() {
                remove_if_present(&path)?;
                removed.push(path);
            }
        }
        sweep_temp_files(&paths.hooks);
        let _ = fs::remove_dir(&paths.hooks);
    }
    if fs::symlink_metadata(&paths.config).is_ok() {
        remove_if_present(&paths.config)?;
        removed.push(paths.config.clone());
    }
    // Best effort: the directory may hold other git-hand files, which keep it.
    let _ = fs::remove_dir(&paths.own);
    Ok(removed)
}

/// The main worktree's top, from `git worktree list` (its first entry); `None` in a bare
/// repository. Lines, not `-z` (git 2.36 and later), since git-hand runs on git 2.28: a top
/// whose path holds a newline is the one it cannot read.
fn main_worktree(common: &Path) -> Result<Option<PathBuf>, LinkedError> {
    let args = ["worktree", "list", "--porcelain"];
    let out = git_output(common, &args)
        .map_err(|source| git_err("list the worktrees of", common, source))?;
    if !out.status.success() {
        return Err(git_err(
            "list the worktrees of",
            common,
            failed("worktree list", &out),
        ));
    }
    let mut fields = out.stdout.split(|b| *b == b'\n');
    let Some(top) = fields.next().and_then(|f| f.strip_prefix(b"worktree ")) else {
        return Ok(None);
    };
    let top = PathBuf::from(OsStr::from_bytes(top));
    let bare = fields.take_while(|f| !f.is_empty()).any(|f| f == b"bare");
    Ok((!bare).then_some(top))
}

/// A git command through the crate's runner ([`Git::command`], scrubbed environment). Under
/// `cargo test` it also reads no global or system configuration: the tests run git in this
/// process's environment, which the library cannot change without `unsafe`.
fn git_output<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Result<Output, GitError> {
    let mut cmd = Git::new(dir).command(args);
    // A `git -c core.hooksPath=...` around the git-hand that runs this is that command's, not
    // the repository's: D and the section are read from the files alone.
    cmd.env_remove("GIT_CONFIG_PARAMETERS")
        .env_remove("GIT_CONFIG_COUNT");
    #[cfg(test)]
    cmd.env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1");
    cmd.output().map_err(|source| GitError::Spawn { source })
}

fn failed(args: &str, out: &Output) -> GitError {
    GitError::Failed {
        args: args.to_string(),
        status: out.status.to_string(),
        stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
    }
}

fn git_err(action: &'static str, file: &Path, source: GitError) -> LinkedError {
    LinkedError::Git {
        action,
        file: file.to_path_buf(),
        source,
    }
}

fn canonical(common: &Path) -> Result<PathBuf, LinkedError> {
    fs::canonicalize(common).map_err(|e| io_err("find", common)(e).into())
}

/// Whether `path` is a hook git would run: an executable regular file (through links, as git
/// looks).
fn is_hook(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Creates `dir` when missing; refuses a link or a file there, so no write goes through one.
fn own_dir(dir: &Path) -> Result<(), LinkedError> {
    match fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(LinkedError::NotADirectory {
            path: dir.to_path_buf(),
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            fs::create_dir_all(dir).map_err(|e| io_err("create", dir)(e).into())
        }
        Err(e) => Err(io_err("look at", dir)(e).into()),
    }
}

/// What follows a name in L for a file git-hand moved aside: git runs no hook of such a name.
pub(crate) const DISPLACED_SUFFIX: &str = ".git-hand-displaced";

/// Renames `path` to the first free `<path>.git-hand-displaced[-<n>]` (no-clobber: a link, then
/// the unlink of the old name), so two displaced copies never overwrite each other.
fn displace(path: &Path) -> Result<PathBuf, LinkedError> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    for n in 1..100 {
        let suffix = match n {
            1 => DISPLACED_SUFFIX.to_string(),
            n => format!("{DISPLACED_SUFFIX}-{n}"),
        };
        let to = path.with_file_name(format!("{name}{suffix}"));
        match fs::hard_link(path, &to) {
            Ok(()) => {
                fs::remove_file(path).map_err(io_err("move aside", path))?;
                return Ok(to);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io_err("move aside", path)(e).into()),
        }
    }
    Err(io_err("move aside", path)(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "too many displaced copies beside it",
    ))
    .into())
}

/// A symbolic link at `path` to `target`, made under a temp name and renamed over whatever is
/// there (a rename replaces a link; it never writes through it).
fn link_atomic(path: &Path, target: &Path) -> Result<(), LinkedError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let suffix = crate::ids::random_hex(8).map_err(io_err("name a temporary file in", dir))?;
    let tmp = dir.join(format!("{TEMP_PREFIX}{suffix}"));
    std::os::unix::fs::symlink(target, &tmp).map_err(io_err("link", &tmp))?;
    fs::rename(&tmp, path).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        io_err("write", path)(e).into()
    })
}

/// A non-executable file written atomically (temp file, rename).
fn write_plain(path: &Path, content: &[u8], mode: u32) -> Result<(), LinkedError> {
    write_atomic_mode(path, content, Over::Anything, mode)?;
    Ok(())
}

fn remove_if_present(path: &Path) -> Result<(), LinkedError> {
    super::files::remove_if_present(path).map_err(LinkedError::from)
}
