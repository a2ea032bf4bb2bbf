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

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::{self, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use super::install::{
    Over, TEMP_PREFIX, io_err, sweep_temp_files, write_atomic, write_atomic_mode,
};
use super::{CHAINED_SUFFIX, HookError, shim};
use crate::git::{Git, GitError};

/// The section of `<common>/config`, as `git config --remove-section` names it.
pub const SECTION: &str = "includeIf.gitdir:./worktrees/**";

/// Its one key, as `git config` names it.
const KEY: &str = "includeIf.gitdir:./worktrees/**.path";

/// The key as `git config --get-regexp` prints it (section and key lowercased by git).
const KEY_LISTED: &str = "includeif.gitdir:./worktrees/**.path";

/// What [`KEY`] holds: relative to the config file's directory, so it survives a moved repository.
pub const INCLUDE_PATH: &str = "git-hand/linked.config";

/// Every hook name in githooks(5) for git 2.47, in its order. L holds an entry for each but
/// reference-transaction (which is git-hand's shim there).
pub const HOOK_NAMES: [&str; 28] = [
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
    pub fn hints(&self) -> Vec<String> {
        match self {
            LinkedError::Hook(e) => e.hints(),
            e if e.is_lock_contention() => vec!["run the same command again".into()],
            LinkedError::Git { file, .. } if file.is_dir() => vec![format!(
                "git -C {} config --list   # must work for git-hand to read the repository's configuration",
                file.display()
            )],
            LinkedError::Git { file, .. } => vec![format!(
                "git config -f {} --list   # must work for git-hand to read it",
                file.display()
            )],
            LinkedError::SectionTaken { config, .. } => vec![format!(
                "git config -f {} --remove-section 'includeIf.gitdir:./worktrees/**'   # or move what you keep there to another section, then run git hand install",
                config.display()
            )],
            LinkedError::NotADirectory { path } => vec![format!(
                "ls -ld {}   # git-hand writes only into a directory of its own there; move it away, then run git hand install",
                path.display()
            )],
            LinkedError::Loop { .. } => vec![
                "git config --unset core.hooksPath   # the main worktree's hooks then are the repository's own, and git hand install puts its layout back".into(),
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

/// What [`include`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Included {
    Added,
    Unchanged,
}

/// What [`exclude`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Excluded {
    Removed,
    NotThere,
}

/// What one file of the layout is after a [`sync`] wrote it (or, from [`state`], would be).
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

/// What [`state`] found, for doctor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkedState {
    /// `<common>/config` holds git-hand's section.
    pub included: bool,
    /// `linked.config` sets `core.hooksPath` to L.
    pub points_at_l: bool,
    /// `linked.config` records the current D and common dir.
    pub records_current: bool,
    /// D as the main worktree sees it now ([`main_hooks_dir`]).
    pub d: PathBuf,
    /// What D and common dir `linked.config` records, when it can be read.
    pub recorded: Option<(PathBuf, PathBuf)>,
    /// What a [`sync`] would change now (L's stale entries and `linked.config`); empty when L
    /// matches D.
    pub stale: Vec<LinkedChange>,
    /// Entries of L git-hand did not write (a tool's installer run in a slot writes into L, an
    /// edited forwarder, a directory): [`sync`] leaves them, so they are not what L should be.
    pub foreign: Vec<PathBuf>,
}

/// D: the main worktree's hooks directory, `core.hooksPath` as the common dir reads it (where
/// the includeIf never matches, so `linked.config` is ignored), else `<common>/hooks`. A
/// relative value stays relative: it is relative to the top of whichever worktree runs a hook.
pub fn main_hooks_dir(common: &Path) -> Result<PathBuf, LinkedError> {
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

/// Rule 1: appends `[includeIf "gitdir:./worktrees/**"] path = git-hand/linked.config` to
/// `<common>/config` (through git), noting first whether the file ended in a newline.
pub fn include(common: &Path) -> Result<Included, LinkedError> {
    let paths = Paths::of(&canonical(common)?);
    match section(&paths)? {
        Section::Ours => return Ok(Included::Unchanged),
        Section::Other(found) => {
            return Err(LinkedError::SectionTaken {
                config: paths.repo_config,
                found,
            });
        }
        Section::Absent => {}
    }
    let before = fs::read(&paths.repo_config).map_err(io_err("read", &paths.repo_config))?;
    // A note is written, never removed here: a concurrent include may have appended the section
    // (and its newline) between our look and this read, and its note is the one that counts.
    // A stale note is harmless: the strip takes a newline only from a file of exactly that length.
    if !before.is_empty() && !before.ends_with(b"\n") {
        own_dir(&paths.own)?;
        write_plain(
            &paths.newline_note,
            Note::of(&before).text().as_bytes(),
            0o644,
        )?;
    }
    // Two spawns installing at once: the other one's git may hold `config.lock` for its own
    // write of this very section. Wait briefly for it, then see whether its write is ours too.
    for _ in 0..LOCK_ATTEMPTS {
        match config_file(&paths, &[KEY, INCLUDE_PATH], "add the includeIf section to") {
            Ok(()) => return Ok(Included::Added),
            Err(e) if e.is_lock_contention() => {
                if matches!(section(&paths)?, Section::Ours) {
                    return Ok(Included::Unchanged);
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) => return Err(e),
        }
    }
    config_file(&paths, &[KEY, INCLUDE_PATH], "add the includeIf section to")?;
    Ok(Included::Added)
}

/// How often [`include`] finds `config.lock` held by another git before it gives up.
const LOCK_ATTEMPTS: usize = 10;

/// Whether [`include`] could add the section: refused (changing nothing) when the user has a
/// section of that name holding anything else. Asked before anything of the layout is written.
pub fn check_includable(common: &Path) -> Result<(), LinkedError> {
    let paths = Paths::of(&canonical(common)?);
    match section(&paths)? {
        Section::Other(found) => Err(LinkedError::SectionTaken {
            config: paths.repo_config,
            found,
        }),
        Section::Ours | Section::Absent => Ok(()),
    }
}

/// Rule 1: removes the section (through git) and the newline git added for it, so
/// `<common>/config` is byte for byte what it was before [`include`].
pub fn exclude(common: &Path) -> Result<Excluded, LinkedError> {
    let paths = Paths::of(&canonical(common)?);
    match section(&paths)? {
        // An earlier exclude removed the section but stopped before its newline was taken
        // back (the strip found git's lock): finish it, then forget the note.
        Section::Absent => {
            strip_noted_newline(&paths)?;
            return Ok(Excluded::NotThere);
        }
        Section::Other(found) => {
            return Err(LinkedError::SectionTaken {
                config: paths.repo_config,
                found,
            });
        }
        Section::Ours => {}
    }
    config_file(
        &paths,
        &["--remove-section", SECTION],
        "remove the includeIf section from",
    )?;
    strip_noted_newline(&paths)?;
    Ok(Excluded::Removed)
}

/// Takes back the newline git added when [`include`] appended the section to a file that had
/// none (its length then is in the note), and removes the note. A note that cannot be read is
/// an error, not an absent one: the newline would be left for good.
fn strip_noted_newline(paths: &Paths) -> Result<(), LinkedError> {
    let noted = match fs::read_to_string(&paths.newline_note) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_err("read", &paths.newline_note)(e).into()),
    };
    if let Some(note) = noted.as_deref().and_then(Note::parse) {
        strip_final_newline(&paths.repo_config, note)?;
    }
    remove_if_present(&paths.newline_note)
}

/// What the newline note records of `<common>/config` as it was before [`include`]: its length
/// and a digest of its bytes, so the newline is taken back only from that very file (plus the
/// newline), never from one the user changed since to the same length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Note {
    len: usize,
    /// FNV-1a of the bytes; absent in a note an earlier build wrote (length only).
    digest: Option<u64>,
}

impl Note {
    fn of(bytes: &[u8]) -> Note {
        Note {
            len: bytes.len(),
            digest: Some(fnv1a(bytes)),
        }
    }

    fn text(&self) -> String {
        match self.digest {
            Some(d) => format!("{} {d:016x}", self.len),
            None => self.len.to_string(),
        }
    }

    fn parse(text: &str) -> Option<Note> {
        let mut words = text.split_whitespace();
        let len = words.next()?.parse().ok()?;
        let digest = match words.next() {
            Some(d) => Some(u64::from_str_radix(d, 16).ok()?),
            None => None,
        };
        Some(Note { len, digest })
    }

    fn matches(&self, bytes: &[u8]) -> bool {
        bytes.len() == self.len && self.digest.is_none_or(|d| d == fnv1a(bytes))
    }
}

/// FNV-1a, 64 bits: a digest to recognise a file by, not a defence against anyone.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
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

/// For doctor: the section, `linked.config`, and what a [`sync`] to the current D would change.
pub fn state(common: &Path, reftx_shim: &str) -> Result<LinkedState, LinkedError> {
    let paths = Paths::of(&canonical(common)?);
    let included = matches!(section(&paths)?, Section::Ours);
    let d = main_hooks_dir(&paths.common)?;
    let plan = plan(&paths, &d, reftx_shim)?;
    let text = fs::read(&paths.config).ok();
    let recorded = text.as_deref().and_then(parse_record);
    let points_at_l = text.is_some() && hooks_path_of(&paths)?.as_deref() == Some(&paths.hooks);
    let records_current = recorded.as_ref() == Some(&(d.clone(), paths.common.clone()));
    let foreign = plan
        .entries
        .iter()
        .filter(|s| s.is_foreign())
        .map(|s| s.path.clone())
        .collect();
    let mut stale: Vec<LinkedChange> = plan
        .entries
        .iter()
        .filter(|s| !s.matches() && !s.is_foreign())
        .map(|s| LinkedChange {
            path: s.path.clone(),
            change: s.change,
        })
        .collect();
    if text.as_deref() != Some(plan.config.as_slice()) {
        stale.push(LinkedChange {
            path: paths.config.clone(),
            change: EntryChange::Config,
        });
    }
    Ok(LinkedState {
        included,
        points_at_l,
        records_current,
        d,
        recorded,
        stale,
        foreign,
    })
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
    pub fn is_current(&self) -> bool {
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
        included: included_as_written(&paths.repo_config)?,
        config_current: fs::read(&paths.config).ok().as_deref() == Some(plan.config.as_slice()),
        ..Check::default()
    };
    if !check.included && has_header(&paths.repo_config)? {
        check.included = matches!(section(&paths)?, Section::Ours);
    }
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

/// Whether `<common>/config` holds the section exactly as `git config` appends it:
/// the header line, then the one key.
fn included_as_written(config: &Path) -> Result<bool, LinkedError> {
    let text = match fs::read(config) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(io_err("read", config)(e).into()),
    };
    let header = "[includeIf \"gitdir:./worktrees/**\"]".as_bytes();
    let key = format!("path = {INCLUDE_PATH}");
    let lines: Vec<&[u8]> = text
        .split(|b| *b == b'\n')
        .map(|l| l.trim_ascii())
        .collect();
    Ok(lines
        .windows(2)
        .any(|w| w[0] == header && w[1] == key.as_bytes()))
}

/// L of the repository whose common dir is `common`: `<common>/git-hand/hooks`.
pub fn hooks_dir(common: &Path) -> PathBuf {
    Paths::of(common).hooks
}

/// The `core.hooksPath` that `<common>/git-hand/linked.config` sets, read from the file (no git):
/// a worktree whose hooks directory is that value runs hooks through git-hand's layout, also when
/// it is not L any more (a moved repository).
pub fn recorded_hooks_path(common: &Path) -> Option<PathBuf> {
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
pub fn rewrite_shim(common: &Path, reftx_shim: &str) -> Result<PathBuf, LinkedError> {
    let paths = Paths::of(&canonical(common)?);
    own_dir(&paths.own)?;
    own_dir(&paths.hooks)?;
    let path = paths.hooks.join(REFERENCE_TRANSACTION);
    write_atomic(&path, reftx_shim.as_bytes(), Over::Anything)?;
    Ok(path)
}

/// Removes L's entries (those [`sync`] writes), `linked.config` and the directories when empty:
/// rule 1's "go with it", after [`exclude`]. Files in L git-hand did not write stay.
pub fn remove_files(common: &Path) -> Result<Vec<PathBuf>, LinkedError> {
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

/// The target of a forwarder [`sync`] wrote (`<D>/<name>`, or `./<D>/<name>` for a relative
/// D), for "in force" to follow (rule 6). `None`: not a forwarder.
pub fn forward_target(bytes: &[u8]) -> Option<PathBuf> {
    let head = format!("#!/bin/sh\n{FORWARDER_MARKER}\n[ -x ");
    let (target, _) = sh_word(bytes.strip_prefix(head.as_bytes())?)?;
    // Only what sync writes, byte for byte: an edited forwarder is not followed.
    (forwarder(Path::new(OsStr::from_bytes(&target))) == bytes)
        .then(|| PathBuf::from(OsString::from_vec(target)))
}

/// The text of a forwarder to `target`: git's own rule for a hook that is not (or no longer)
/// executable is to skip it, so the forwarder does too; `exec` keeps git's stdin and makes `$0`
/// the target's path (pre-commit's script and git-hand's shim find their files beside `$0`).
fn forwarder(target: &Path) -> Vec<u8> {
    let q = shim::sh_quote_bytes(target.as_os_str().as_bytes());
    let mut text = Vec::new();
    text.extend_from_slice(b"#!/bin/sh\n");
    text.extend_from_slice(FORWARDER_MARKER.as_bytes());
    text.extend_from_slice(b"\n[ -x ");
    text.extend_from_slice(&q);
    text.extend_from_slice(b" ] || exit 0\nexec ");
    text.extend_from_slice(&q);
    text.extend_from_slice(b" \"$@\"\n");
    text
}

/// What one file of L should be.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Want {
    /// A regular file with these bytes, mode 0755.
    File(Vec<u8>),
    Link(PathBuf),
    Nothing,
}

/// One file of L: what it should be, whether it is, and what writing it would be reported as.
struct Step {
    path: PathBuf,
    want: Want,
    change: EntryChange,
    now: Have,
}

impl Step {
    /// Something git-hand did not write holds the place: reported, and moved aside by [`sync`]
    /// when it is a file ([`Self::is_displaceable`]), else left alone.
    fn is_foreign(&self) -> bool {
        !self.matches() && !self.now.is_ours()
    }

    /// A foreign regular file: [`sync`] moves it aside (a rename keeps every byte).
    fn is_displaceable(&self) -> bool {
        self.is_foreign() && matches!(self.now, Have::File { .. })
    }

    fn matches(&self) -> bool {
        match (&self.want, &self.now) {
            (Want::File(bytes), Have::File { bytes: have, exec }) => *exec && bytes == have,
            (Want::Link(target), Have::Link(have)) => target == have,
            (Want::Nothing, Have::Nothing) => true,
            _ => false,
        }
    }
}

/// What a file of L is now. Never follows a link.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Have {
    Nothing,
    File {
        bytes: Vec<u8>,
        exec: bool,
    },
    Link(PathBuf),
    /// A directory, a FIFO, a socket, a device: nothing git-hand writes.
    Other,
}

impl Have {
    /// Whether [`sync`] may replace or remove it: nothing, a link (L's links are git-hand's:
    /// nothing else makes one there), a forwarder exactly as `sync` writes it, or git-hand's
    /// shim (of any version).
    fn is_ours(&self) -> bool {
        match self {
            Have::Nothing | Have::Link(_) => true,
            Have::File { bytes, .. } => forward_target(bytes).is_some() || shim::is_ours(bytes),
            Have::Other => false,
        }
    }
}

struct Plan {
    entries: Vec<Step>,
    config: Vec<u8>,
}

fn plan(paths: &Paths, d: &Path, reftx_shim: &str) -> Result<Plan, LinkedError> {
    let relative = d.is_relative();
    // Where D's hooks are looked for: D itself, or a relative D under the main worktree (none in
    // a bare repository: no forwarders then).
    let probe = match relative {
        true => main_worktree(&paths.common)?.map(|top| top.join(d)),
        false => Some(d.to_path_buf()),
    };
    if !relative && (d == paths.hooks || fs::canonicalize(d).ok() == Some(paths.hooks.clone())) {
        return Err(LinkedError::Loop { d: d.to_path_buf() });
    }
    // What a forwarder execs: hooks run at the worktree's top, so a relative D is `./<D>`.
    let target = |name: &str| match relative {
        true => Path::new(".").join(d).join(name),
        false => d.join(name),
    };
    let has = |name: &str| probe.as_ref().is_some_and(|p| is_hook(&p.join(name)));
    let mut entries = Vec::new();
    // githooks(5) as of git 2.47, and any other hook D holds (a newer git's name): a hook D has
    // is forwarded whatever git-hand's list knows.
    let newer: Vec<String> = probe
        .as_ref()
        .map(|p| newer_hook_names(p))
        .unwrap_or_default();
    let names = HOOK_NAMES
        .iter()
        .copied()
        .chain(newer.iter().map(String::as_str));
    for name in names {
        let path = paths.hooks.join(name);
        let (want, change) = if name == REFERENCE_TRANSACTION {
            (
                Want::File(reftx_shim.as_bytes().to_vec()),
                EntryChange::Shim,
            )
        } else if has(name) {
            (Want::File(forwarder(&target(name))), EntryChange::Forwarder)
        } else if relative {
            (Want::Nothing, EntryChange::Removed)
        } else {
            (Want::Link(d.join(name)), EntryChange::Link)
        };
        entries.push(step(path, want, change)?);
    }
    // The shim's chained hook is D's reference-transaction; when that is git-hand's own shim
    // (installed before issue 25), the user's hook is the one it chained.
    let chained = format!("{REFERENCE_TRANSACTION}{CHAINED_SUFFIX}");
    let d_reftx = probe.as_ref().map(|p| p.join(REFERENCE_TRANSACTION));
    let ours = d_reftx
        .as_ref()
        .is_some_and(|p| fs::read(p).is_ok_and(|b| shim::is_ours(&b)));
    let chain_to = match (has(REFERENCE_TRANSACTION), ours) {
        (true, false) => Some(REFERENCE_TRANSACTION.to_string()),
        (true, true) if has(&chained) => Some(chained.clone()),
        _ => None,
    };
    let want = match chain_to {
        Some(name) => Want::File(forwarder(&target(&name))),
        // D has no reference-transaction hook yet: a dangling link, so one added there later runs
        // in slots at once (through the shim, as its chained hook), as every other name's does.
        None if !relative && !ours => Want::Link(d.join(REFERENCE_TRANSACTION)),
        None => Want::Nothing,
    };
    let change = match want {
        Want::Nothing => EntryChange::Removed,
        Want::Link(_) => EntryChange::Link,
        Want::File(_) => EntryChange::Chained,
    };
    entries.push(step(paths.hooks.join(&chained), want, change)?);
    Ok(Plan {
        entries,
        config: linked_config(paths, d),
    })
}

/// The hooks in `d` whose names git-hand's list does not know: executable files named as git
/// names hooks (lowercase words and dashes: no `.sample`, no `.git-hand-chained`).
fn newer_hook_names(d: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(d) else {
        return vec![];
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| {
            !n.is_empty()
                && n.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')
                && !HOOK_NAMES.contains(&n.as_str())
                && is_hook(&d.join(n))
        })
        .collect();
    names.sort();
    names
}

fn step(path: PathBuf, want: Want, change: EntryChange) -> Result<Step, LinkedError> {
    let now = have(&path)?;
    Ok(Step {
        path,
        want,
        change,
        now,
    })
}

fn have(path: &Path) -> Result<Have, LinkedError> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Have::Nothing),
        Err(e) => return Err(io_err("look at", path)(e).into()),
    };
    if meta.file_type().is_symlink() {
        let target = fs::read_link(path).map_err(io_err("read the link", path))?;
        return Ok(Have::Link(target));
    }
    if !meta.is_file() {
        return Ok(Have::Other);
    }
    let bytes = fs::read(path).map_err(io_err("read", path))?;
    Ok(Have::File {
        bytes,
        exec: meta.permissions().mode() & 0o111 != 0,
    })
}

/// `linked.config`: the record (rule 4, a comment git ignores) and `core.hooksPath = L`.
fn linked_config(paths: &Paths, d: &Path) -> Vec<u8> {
    let mut text = Vec::new();
    text.extend_from_slice(RECORD_PREFIX.as_bytes());
    text.extend_from_slice(&config_quote(d.as_os_str().as_bytes()));
    text.extend_from_slice(b" and common dir ");
    text.extend_from_slice(&config_quote(paths.common.as_os_str().as_bytes()));
    text.extend_from_slice(b"\n# by git-hand, for linked worktrees only (docs/hooks.md); git hand install rewrites it\n[core]\n\thooksPath = ");
    text.extend_from_slice(&config_quote(paths.hooks.as_os_str().as_bytes()));
    text.push(b'\n');
    text
}

/// The D and common dir `linked.config`'s first line records.
fn parse_record(text: &[u8]) -> Option<(PathBuf, PathBuf)> {
    let line = text.split(|b| *b == b'\n').next()?;
    let rest = line.strip_prefix(RECORD_PREFIX.as_bytes())?;
    let (d, rest) = config_unquote(rest)?;
    let rest = rest.strip_prefix(b" and common dir ")?;
    let (common, rest) = config_unquote(rest)?;
    rest.is_empty().then(|| {
        (
            PathBuf::from(OsString::from_vec(d)),
            PathBuf::from(OsString::from_vec(common)),
        )
    })
}

/// `core.hooksPath` as `linked.config` sets it, read by git.
fn hooks_path_of(paths: &Paths) -> Result<Option<PathBuf>, LinkedError> {
    let file = paths.config.as_os_str();
    let args: [&OsStr; 5] = [
        "config".as_ref(),
        "-f".as_ref(),
        file,
        "--get".as_ref(),
        "core.hooksPath".as_ref(),
    ];
    let out = git_output(&paths.common, &args)
        .map_err(|source| git_err("read", &paths.config, source))?;
    let mut value = out.stdout;
    if value.last() == Some(&b'\n') {
        value.pop();
    }
    Ok(out
        .status
        .success()
        .then(|| PathBuf::from(OsString::from_vec(value))))
}

/// A git config value in double quotes: `\`, `"`, newline and tab escaped, so any path is one
/// value (and one line).
fn config_quote(bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![b'"'];
    for &b in bytes {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'"' => out.extend_from_slice(b"\\\""),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\t' => out.extend_from_slice(b"\\t"),
            _ => out.push(b),
        }
    }
    out.push(b'"');
    out
}

/// The inverse of [`config_quote`] at the start of `text`: the value and what follows it.
fn config_unquote(text: &[u8]) -> Option<(Vec<u8>, &[u8])> {
    let mut rest = text.strip_prefix(b"\"")?;
    let mut out = Vec::new();
    loop {
        let (&b, tail) = rest.split_first()?;
        rest = tail;
        match b {
            b'"' => return Some((out, rest)),
            b'\\' => {
                let (&e, tail) = rest.split_first()?;
                rest = tail;
                out.push(match e {
                    b'n' => b'\n',
                    b't' => b'\t',
                    other => other,
                });
            }
            _ => out.push(b),
        }
    }
}

/// The inverse of [`shim::sh_quote_bytes`] at the start of `text` (a path may hold newlines, so no line
/// splitting): the word and what follows it.
fn sh_word(text: &[u8]) -> Option<(Vec<u8>, &[u8])> {
    let mut rest = text.strip_prefix(b"'")?;
    let mut out = Vec::new();
    loop {
        let end = rest.iter().position(|b| *b == b'\'')?;
        out.extend_from_slice(&rest[..end]);
        rest = &rest[end + 1..];
        match rest.strip_prefix(b"\\''") {
            Some(after) => {
                out.push(b'\'');
                rest = after;
            }
            None => return Some((out, rest)),
        }
    }
}

/// Whether the section is there, and whether it holds only git-hand's line.
enum Section {
    Absent,
    Ours,
    Other(String),
}

fn section(paths: &Paths) -> Result<Section, LinkedError> {
    let ours = format!("{KEY_LISTED} {INCLUDE_PATH}");
    match section_listed(paths)? {
        Some(listed) if listed == ours => Ok(Section::Ours),
        Some(listed) => Ok(Section::Other(listed)),
        None if !has_header(&paths.repo_config)? => Ok(Section::Absent),
        // git lists no key of a header with nothing under it: such a header of the user's is
        // theirs, and `git config` would put our key under it instead of at the end. Or it is a
        // concurrent include's, written between git's read and ours: a second look tells.
        None => match section_listed(paths)? {
            Some(listed) if listed == ours => Ok(Section::Ours),
            _ => Ok(Section::Other(SECTION.into())),
        },
    }
}

/// The section's keys as `git config --get-regexp` lists them, `None` when it lists none.
fn section_listed(paths: &Paths) -> Result<Option<String>, LinkedError> {
    let file = paths.repo_config.as_os_str();
    let args: [&OsStr; 5] = [
        "config".as_ref(),
        "-f".as_ref(),
        file,
        "--get-regexp".as_ref(),
        r"^includeif\.gitdir:\./worktrees/\*\*\.".as_ref(),
    ];
    let out = git_output(&paths.common, &args)
        .map_err(|source| git_err("read", &paths.repo_config, source))?;
    match out.status.code() {
        Some(0) => Ok(Some(
            String::from_utf8_lossy(&out.stdout).trim_end().to_string(),
        )),
        Some(1) => Ok(None),
        _ => Err(git_err(
            "read",
            &paths.repo_config,
            failed("config --get-regexp", &out),
        )),
    }
}

/// Whether `config` has a line opening the section (`[includeIf "gitdir:./worktrees/**"]`, the
/// section name in any case, as git reads it).
fn has_header(config: &Path) -> Result<bool, LinkedError> {
    let text = fs::read(config).map_err(io_err("read", config))?;
    let header = b"[includeif \"gitdir:./worktrees/**\"]";
    Ok(text.split(|b| *b == b'\n').any(|line| {
        let line = line.trim_ascii();
        line.len() >= header.len() && line[..header.len()].eq_ignore_ascii_case(header)
    }))
}

/// `git config -f <common>/config <args>`, through the one runner.
fn config_file(paths: &Paths, args: &[&str], action: &'static str) -> Result<(), LinkedError> {
    let mut all: Vec<&OsStr> = vec![
        "config".as_ref(),
        "-f".as_ref(),
        paths.repo_config.as_os_str(),
    ];
    all.extend(args.iter().map(|a| OsStr::new(*a)));
    let out = git_output(&paths.common, &all)
        .map_err(|source| git_err(action, &paths.repo_config, source))?;
    match out.status.success() {
        true => Ok(()),
        false => Err(git_err(
            action,
            &paths.repo_config,
            failed("config -f", &out),
        )),
    }
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
pub const DISPLACED_SUFFIX: &str = ".git-hand-displaced";

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

/// Takes away the newline git added at the end of `config`, which was the bytes `note` records
/// without it: only when the file is exactly those and a newline (lines someone added after the
/// section keep theirs, and so does a file changed since to the same length). Holds git's own lock (`config.lock`, created exclusively) so no git writes the
/// file meanwhile.
fn strip_final_newline(config: &Path, note: Note) -> Result<(), LinkedError> {
    // Through a symlinked config, as git's own lock follows it: the file is replaced, the link kept.
    let config = &fs::canonicalize(config).unwrap_or_else(|_| config.to_path_buf());
    let lock = config.with_file_name(match config.file_name() {
        Some(name) => format!("{}.lock", name.to_string_lossy()),
        None => "config.lock".into(),
    });
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&lock)
        .map_err(io_err("lock", config))?;
    let result = (|| {
        let bytes = fs::read(config).map_err(io_err("read", config))?;
        let Some(kept) = bytes.strip_suffix(b"\n").filter(|k| note.matches(k)) else {
            return Ok(false);
        };
        let mode = fs::metadata(config)
            .map_err(io_err("look at", config))?
            .permissions();
        file.write_all(kept)
            .and_then(|()| file.set_permissions(mode))
            .and_then(|()| file.sync_all())
            .map_err(io_err("write", &lock))?;
        fs::rename(&lock, config).map_err(io_err("write", config))?;
        Ok::<bool, LinkedError>(true)
    })();
    if !matches!(result, Ok(true)) {
        let _ = fs::remove_file(&lock);
    }
    result.map(drop)
}

fn remove_if_present(path: &Path) -> Result<(), LinkedError> {
    super::install::remove_if_present(path).map_err(LinkedError::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::HookName;

    #[test]
    fn the_newline_note_knows_the_file_it_was_written_for() {
        let note = Note::of(b"[core]\n\tbare = false");
        assert_eq!(Note::parse(&note.text()), Some(note));
        assert!(note.matches(b"[core]\n\tbare = false"));
        assert!(
            !note.matches(b"[core]\n\tbare = falsE"),
            "same length, other bytes"
        );
        assert!(!note.matches(b"[core]\n\tbare = false\n"));
        // A note of an earlier build holds the length alone.
        let old = Note::parse("20").unwrap();
        assert!(old.matches(b"[core]\n\tbare = false"));
        assert_eq!(Note::parse("x"), None);
        assert_eq!(Note::parse("20 nothex"), None);
    }
    use std::process::{Command, Stdio};

    /// git with a hermetic environment: no global or system configuration, nothing inherited
    /// that points it at another repository or makes git-hand's shim judge.
    fn git_cmd(dir: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new("git");
        cmd.arg("-C").arg(dir).args(args).stdin(Stdio::null());
        for var in crate::git::runner::SCRUBBED {
            cmd.env_remove(var);
        }
        for var in [
            "GIT_HAND_LEASE",
            "GIT_HAND_TOKEN",
            "CLAUDE_CODE_SESSION_ID",
            "GIT_HAND_IN_HOOK",
            "GIT_HAND_INTERNAL",
        ] {
            cmd.env_remove(var);
        }
        cmd.env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com");
        cmd
    }

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = git_cmd(dir, args).output().unwrap();
        assert!(
            out.status.success(),
            "git {args:?} in {}: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .unwrap()
            .trim_end()
            .to_string()
    }

    fn shim_text() -> &'static str {
        shim::content(HookName::ReferenceTransaction)
    }

    /// A repository with one commit: (temp dir, main worktree, common dir), all canonical.
    fn repo() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let top = fs::canonicalize(tmp.path()).unwrap().join("repo");
        fs::create_dir(&top).unwrap();
        git(&top, &["init", "-q", "-b", "main"]);
        git(&top, &["commit", "-q", "--allow-empty", "-m", "init"]);
        let common = top.join(".git");
        (tmp, top, common)
    }

    /// A linked worktree of the repository at `from` on a new branch.
    fn add_worktree(from: &Path, dir: &Path, branch: &str) {
        git(
            from,
            &["worktree", "add", "-q", "-b", branch, dir.to_str().unwrap()],
        );
    }

    /// `git rev-parse --git-path hooks` in `dir`, made absolute.
    fn hooks_of(dir: &Path) -> PathBuf {
        let hooks = PathBuf::from(git(dir, &["rev-parse", "--git-path", "hooks"]));
        let hooks = dir.join(hooks);
        fs::canonicalize(&hooks).unwrap_or(hooks)
    }

    /// An executable sh script appending `$0`, its arguments and stdin to `log`.
    fn recording_hook(path: &Path, log: &Path, with_stdin: bool) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let log = String::from_utf8(shim::sh_quote_bytes(log.as_os_str().as_bytes())).unwrap();
        let stdin = if with_stdin { "; cat" } else { "" };
        fs::write(
            path,
            format!("#!/bin/sh\n{{ printf '%s\\n' \"$0\" \"$@\"{stdin}; }} >>{log}\n"),
        )
        .unwrap();
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn read(path: &Path) -> String {
        fs::read_to_string(path).unwrap_or_default()
    }

    fn changes_of(changes: &[LinkedChange]) -> Vec<(String, EntryChange)> {
        changes
            .iter()
            .map(|c| {
                let name = c.path.file_name().unwrap().to_string_lossy().to_string();
                (name, c.change)
            })
            .collect()
    }

    #[test]
    fn after_include_and_sync_the_main_worktree_runs_d_and_a_linked_one_runs_l() {
        for bare in [false, true] {
            let tmp = tempfile::tempdir().unwrap();
            let root = fs::canonicalize(tmp.path()).unwrap();
            let mut kept = None;
            let (main, common) = if bare {
                let seed = root.join("seed");
                fs::create_dir(&seed).unwrap();
                git(&seed, &["init", "-q", "-b", "main"]);
                git(&seed, &["commit", "-q", "--allow-empty", "-m", "init"]);
                let bare_dir = root.join("bare.git");
                git(
                    &root,
                    &["clone", "-q", "--bare", "seed", bare_dir.to_str().unwrap()],
                );
                (bare_dir.clone(), bare_dir)
            } else {
                let (keep, top, common) = repo();
                kept = Some(keep);
                (top, common)
            };
            let d = main_hooks_dir(&common).unwrap();
            assert_eq!(d, common.join("hooks"), "bare: {bare}");
            assert_eq!(include(&common).unwrap(), Included::Added);
            assert!(!sync(&common, shim_text()).unwrap().is_empty());
            let slot = root.join("slot");
            add_worktree(&main, &slot, "slot");
            let l = common.join("git-hand/hooks");
            assert_eq!(hooks_of(&main), d, "bare: {bare}");
            assert_eq!(hooks_of(&slot), l, "bare: {bare}");
            drop(kept);
        }
    }

    #[test]
    fn a_d_hook_runs_in_a_linked_worktree_through_its_forwarder_with_ds_path_and_gits_arguments_and_stdin()
     {
        let (tmp, top, common) = repo();
        let log = tmp.path().join("log");
        let d = main_hooks_dir(&common).unwrap();
        recording_hook(&d.join("pre-push"), &log, true);
        include(&common).unwrap();
        sync(&common, shim_text()).unwrap();
        let l_hook = common.join("git-hand/hooks/pre-push");
        assert!(fs::symlink_metadata(&l_hook).unwrap().is_file());
        assert_eq!(
            forward_target(&fs::read(&l_hook).unwrap()),
            Some(d.join("pre-push"))
        );

        let remote = tmp.path().join("remote.git");
        git(
            tmp.path(),
            &["init", "-q", "--bare", remote.to_str().unwrap()],
        );
        let slot = tmp.path().join("slot");
        add_worktree(&top, &slot, "slot");
        git(
            &slot,
            &["commit", "-q", "--allow-empty", "-m", "in the slot"],
        );
        let head = git(&slot, &["rev-parse", "HEAD"]);
        let url = remote.to_str().unwrap();
        git(&slot, &["push", "-q", url, "slot"]);
        let zero = "0".repeat(head.len());
        assert_eq!(
            read(&log),
            format!(
                "{}\n{url}\n{url}\nrefs/heads/slot {head} refs/heads/slot {zero}\n",
                d.join("pre-push").display()
            )
        );
    }

    #[test]
    fn a_hook_added_to_d_after_sync_runs_through_its_link_until_the_next_sync_makes_it_a_forwarder()
    {
        let (tmp, top, common) = repo();
        let log = tmp.path().join("log");
        let d = main_hooks_dir(&common).unwrap();
        include(&common).unwrap();
        sync(&common, shim_text()).unwrap();
        let slot = tmp.path().join("slot");
        add_worktree(&top, &slot, "slot");
        let l_hook = common.join("git-hand/hooks/pre-commit");
        assert_eq!(fs::read_link(&l_hook).unwrap(), d.join("pre-commit"));

        recording_hook(&d.join("pre-commit"), &log, false);
        let written = fs::read(d.join("pre-commit")).unwrap();
        git(&slot, &["commit", "-q", "--allow-empty", "-m", "one"]);
        assert_eq!(read(&log), format!("{}\n", l_hook.display()));

        let changes = sync(&common, shim_text()).unwrap();
        assert_eq!(
            changes_of(&changes),
            [("pre-commit".to_string(), EntryChange::Forwarder)]
        );
        assert!(fs::symlink_metadata(&l_hook).unwrap().is_file());
        assert_eq!(
            fs::read(d.join("pre-commit")).unwrap(),
            written,
            "wrote through the link"
        );
        fs::remove_file(&log).unwrap();
        git(&slot, &["commit", "-q", "--allow-empty", "-m", "two"]);
        assert_eq!(read(&log), format!("{}\n", d.join("pre-commit").display()));
    }

    #[test]
    fn a_forwarder_whose_d_hook_is_gone_becomes_a_link() {
        let (tmp, top, common) = repo();
        let log = tmp.path().join("log");
        let d = main_hooks_dir(&common).unwrap();
        recording_hook(&d.join("pre-commit"), &log, false);
        include(&common).unwrap();
        sync(&common, shim_text()).unwrap();
        let l_hook = common.join("git-hand/hooks/pre-commit");
        assert!(fs::symlink_metadata(&l_hook).unwrap().is_file());

        fs::remove_file(d.join("pre-commit")).unwrap();
        let changes = sync(&common, shim_text()).unwrap();
        assert_eq!(
            changes_of(&changes),
            [("pre-commit".to_string(), EntryChange::Link)]
        );
        assert_eq!(fs::read_link(&l_hook).unwrap(), d.join("pre-commit"));
        let slot = tmp.path().join("slot");
        add_worktree(&top, &slot, "slot");
        git(&slot, &["commit", "-q", "--allow-empty", "-m", "one"]);
        assert_eq!(read(&log), "");
        assert!(!d.join("pre-commit").exists());
    }

    #[test]
    fn a_second_sync_changes_nothing_and_state_finds_nothing_stale() {
        let (tmp, _top, common) = repo();
        let log = tmp.path().join("log");
        let d = main_hooks_dir(&common).unwrap();
        recording_hook(&d.join("pre-push"), &log, true);
        recording_hook(&d.join(REFERENCE_TRANSACTION), &log, true);
        include(&common).unwrap();
        let first = changes_of(&sync(&common, shim_text()).unwrap());
        for expected in [
            ("pre-push", EntryChange::Forwarder),
            ("pre-commit", EntryChange::Link),
            (REFERENCE_TRANSACTION, EntryChange::Shim),
            (
                "reference-transaction.git-hand-chained",
                EntryChange::Chained,
            ),
            ("linked.config", EntryChange::Config),
        ] {
            assert!(
                first.contains(&(expected.0.to_string(), expected.1)),
                "{expected:?} in {first:?}"
            );
        }
        assert_eq!(first.len(), HOOK_NAMES.len() + 2);
        let l = common.join("git-hand/hooks");
        let inodes = |dir: &Path| {
            let mut all: Vec<_> = fs::read_dir(dir)
                .unwrap()
                .map(|e| {
                    let e = e.unwrap();
                    (
                        e.file_name(),
                        std::os::unix::fs::MetadataExt::ino(&e.metadata().unwrap()),
                    )
                })
                .collect();
            all.sort();
            all
        };
        let before = (inodes(&l), inodes(&common.join("git-hand")));
        assert_eq!(sync(&common, shim_text()).unwrap(), []);
        assert_eq!((inodes(&l), inodes(&common.join("git-hand"))), before);

        let state = state(&common, shim_text()).unwrap();
        assert!(
            state.included && state.points_at_l && state.records_current,
            "{state:?}"
        );
        assert_eq!(state.recorded, Some((d.clone(), common.clone())));
        assert_eq!(state.stale, []);
        assert_eq!(state.d, d);
    }

    #[test]
    fn a_changed_d_is_reported_stale_and_the_next_sync_rewrites_the_record_and_l() {
        let (tmp, _top, common) = repo();
        let log = tmp.path().join("log");
        let old = main_hooks_dir(&common).unwrap();
        include(&common).unwrap();
        sync(&common, shim_text()).unwrap();

        let new = tmp.path().join("hooks2");
        recording_hook(&new.join("pre-push"), &log, true);
        git(
            &common,
            &["config", "core.hooksPath", new.to_str().unwrap()],
        );
        let state = state(&common, shim_text()).unwrap();
        assert_eq!(state.d, new);
        assert!(state.included && state.points_at_l && !state.records_current);
        assert_eq!(state.recorded, Some((old, common.clone())));
        let stale = changes_of(&state.stale);
        assert!(stale.contains(&("pre-push".to_string(), EntryChange::Forwarder)));
        assert!(stale.contains(&("linked.config".to_string(), EntryChange::Config)));
        assert_eq!(
            stale.len(),
            HOOK_NAMES.len() + 1,
            "every link (the chained one too) and the config: {stale:?}"
        );

        let changes = sync(&common, shim_text()).unwrap();
        assert_eq!(changes_of(&changes), stale);
        assert_eq!(
            fs::read_link(common.join("git-hand/hooks/pre-commit")).unwrap(),
            new.join("pre-commit")
        );
        assert!(state_is_clean(&common));
    }

    fn state_is_clean(common: &Path) -> bool {
        let state = state(common, shim_text()).unwrap();
        state.records_current && state.points_at_l && state.stale.is_empty()
    }

    #[test]
    fn exclude_gives_back_the_config_byte_for_byte_with_or_without_a_final_newline() {
        for tail in [
            "",
            "\n",
            "# a comment of the user's\n",
            "# no newline after me",
        ] {
            let (_tmp, _top, common) = repo();
            let config = common.join("config");
            let mut before = fs::read(&config).unwrap();
            before.extend_from_slice(tail.as_bytes());
            if tail.is_empty() {
                // The same file without its final newline.
                before.pop();
            }
            fs::write(&config, &before).unwrap();
            assert_eq!(include(&common).unwrap(), Included::Added);
            let with = fs::read_to_string(&config).unwrap();
            assert!(
                with.ends_with(
                    "[includeIf \"gitdir:./worktrees/**\"]\n\tpath = git-hand/linked.config\n"
                ),
                "{with}"
            );
            assert_eq!(include(&common).unwrap(), Included::Unchanged);
            assert_eq!(exclude(&common).unwrap(), Excluded::Removed);
            assert_eq!(fs::read(&config).unwrap(), before, "tail {tail:?}");
            assert_eq!(exclude(&common).unwrap(), Excluded::NotThere);
            assert_eq!(fs::read(&config).unwrap(), before, "tail {tail:?}");
            assert!(!common.join("git-hand/config-had-no-final-newline").exists());
        }
    }

    /// An exclude that removed the section but stopped before it took back git's newline (the
    /// strip found `config.lock`) is finished by the next one: the file is as it was before.
    #[test]
    fn a_retried_exclude_takes_back_the_newline_an_interrupted_one_left() {
        let (_tmp, _top, common) = repo();
        let config = common.join("config");
        let mut before = fs::read(&config).unwrap();
        before.pop();
        fs::write(&config, &before).unwrap();
        include(&common).unwrap();
        // What the interrupted exclude did: the section is gone, the newline and the note stay.
        git(
            &common,
            &[
                "config",
                "-f",
                config.to_str().unwrap(),
                "--remove-section",
                SECTION,
            ],
        );
        assert_ne!(fs::read(&config).unwrap(), before);
        assert_eq!(exclude(&common).unwrap(), Excluded::NotThere);
        assert_eq!(fs::read(&config).unwrap(), before);
        assert!(!common.join("git-hand/config-had-no-final-newline").exists());
    }

    /// A header of the user's with nothing under it is theirs: neither added to (git would put
    /// the key under it, not at the end) nor removed.
    #[test]
    fn an_empty_section_of_the_users_is_neither_added_to_nor_removed() {
        let (_tmp, _top, common) = repo();
        let config = common.join("config");
        let mut text = fs::read(&config).unwrap();
        text.extend_from_slice(b"[includeIf \"gitdir:./worktrees/**\"]\n");
        fs::write(&config, &text).unwrap();
        assert!(matches!(
            include(&common),
            Err(LinkedError::SectionTaken { .. })
        ));
        assert!(matches!(
            exclude(&common),
            Err(LinkedError::SectionTaken { .. })
        ));
        assert_eq!(fs::read(&config).unwrap(), text);
    }

    /// A forwarder is no shim of git-hand's: the chain runner, which skips git-hand's own shim,
    /// runs a chained forwarder (D's reference-transaction from L's shim).
    #[test]
    fn a_forwarder_is_not_taken_for_git_hands_shim() {
        let text = forwarder(Path::new("/repo/.git/hooks/reference-transaction"));
        assert!(!shim::is_ours(&text));
        assert!(shim::is_ours(shim_text().as_bytes()));
        assert_eq!(
            forward_target(&text),
            Some(PathBuf::from("/repo/.git/hooks/reference-transaction"))
        );
    }

    #[test]
    fn lines_added_after_the_section_keep_their_final_newline() {
        let (_tmp, _top, common) = repo();
        let config = common.join("config");
        let mut before = fs::read(&config).unwrap();
        before.pop();
        fs::write(&config, &before).unwrap();
        include(&common).unwrap();
        git(&common, &["config", "their.key", "kept"]);
        exclude(&common).unwrap();
        let after = fs::read_to_string(&config).unwrap();
        let mut expected = String::from_utf8(before).unwrap();
        expected.push_str("\n[their]\n\tkey = kept\n");
        assert_eq!(after, expected);
    }

    #[test]
    fn a_section_with_the_users_own_lines_is_neither_added_to_nor_removed() {
        let (_tmp, _top, common) = repo();
        git(&common, &["config", KEY, "their.config"]);
        let before = fs::read(common.join("config")).unwrap();
        assert!(matches!(
            include(&common),
            Err(LinkedError::SectionTaken { .. })
        ));
        assert!(matches!(
            exclude(&common),
            Err(LinkedError::SectionTaken { .. })
        ));
        assert_eq!(fs::read(common.join("config")).unwrap(), before);
    }

    #[test]
    fn a_relative_d_gets_forwarders_to_dot_d_and_no_links() {
        let (tmp, top, common) = repo();
        let log = tmp.path().join("log");
        recording_hook(&top.join(".husky/_/pre-commit"), &log, false);
        git(&top, &["add", "-f", ".husky"]);
        git(&top, &["commit", "-q", "-m", "husky"]);
        git(&top, &["config", "core.hooksPath", ".husky/_"]);
        let d = main_hooks_dir(&common).unwrap();
        assert_eq!(d, Path::new(".husky/_"));
        include(&common).unwrap();
        let changes = changes_of(&sync(&common, shim_text()).unwrap());
        assert_eq!(
            changes,
            [
                ("pre-commit".to_string(), EntryChange::Forwarder),
                (REFERENCE_TRANSACTION.to_string(), EntryChange::Shim),
                ("linked.config".to_string(), EntryChange::Config),
            ]
        );
        let l = common.join("git-hand/hooks");
        assert_eq!(
            forward_target(&fs::read(l.join("pre-commit")).unwrap()),
            Some(PathBuf::from("./.husky/_/pre-commit"))
        );
        assert!(fs::symlink_metadata(l.join("pre-push")).is_err());

        let slot = tmp.path().join("slot");
        add_worktree(&top, &slot, "slot");
        git(
            &slot,
            &["commit", "-q", "--allow-empty", "-m", "in the slot"],
        );
        assert_eq!(read(&log), "./.husky/_/pre-commit\n");
        assert!(state_is_clean(&common));
    }

    #[test]
    fn ds_reference_transaction_runs_in_a_slot_as_the_shims_chained_hook() {
        let (tmp, top, common) = repo();
        let log = tmp.path().join("log");
        let d = main_hooks_dir(&common).unwrap();
        let hook = d.join(REFERENCE_TRANSACTION);
        fs::write(
            &hook,
            format!(
                "#!/bin/sh\necho \"$GIT_HAND_HOOK_DIR $1\" >>{}\n",
                String::from_utf8(shim::sh_quote_bytes(log.as_os_str().as_bytes())).unwrap()
            ),
        )
        .unwrap();
        fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
        include(&common).unwrap();
        sync(&common, shim_text()).unwrap();
        let slot = tmp.path().join("slot");
        add_worktree(&top, &slot, "slot");
        fs::remove_file(&log).unwrap();
        git(
            &slot,
            &["commit", "-q", "--allow-empty", "-m", "in the slot"],
        );
        let l = common.join("git-hand/hooks");
        let logged = read(&log);
        assert!(
            logged.contains(&format!("{} committed\n", l.display())),
            "{logged}"
        );

        // D's reference-transaction is git-hand's own (installed before issue 25): the chained
        // hook is the one it chained.
        fs::rename(&hook, d.join("reference-transaction.git-hand-chained")).unwrap();
        fs::write(&hook, shim_text()).unwrap();
        fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(
            changes_of(&sync(&common, shim_text()).unwrap()),
            [(
                "reference-transaction.git-hand-chained".to_string(),
                EntryChange::Chained
            )]
        );
        assert_eq!(
            forward_target(&fs::read(l.join("reference-transaction.git-hand-chained")).unwrap()),
            Some(d.join("reference-transaction.git-hand-chained"))
        );
    }

    #[test]
    fn a_moved_repository_gets_its_record_and_l_rewritten() {
        let (tmp, top, common) = repo();
        include(&common).unwrap();
        sync(&common, shim_text()).unwrap();
        let moved = tmp.path().join("moved");
        fs::rename(&top, &moved).unwrap();
        let common = fs::canonicalize(moved.join(".git")).unwrap();
        assert!(!state_is_clean(&common));
        let changes = changes_of(&sync(&common, shim_text()).unwrap());
        assert!(changes.contains(&("linked.config".to_string(), EntryChange::Config)));
        assert!(changes.contains(&("pre-push".to_string(), EntryChange::Link)));
        assert_eq!(
            hooks_path_of(&Paths::of(&common)).unwrap(),
            Some(common.join("git-hand/hooks"))
        );
        assert!(state_is_clean(&common));
    }

    #[test]
    fn a_hook_name_newer_than_git_hands_list_is_forwarded_and_removed_with_the_rest() {
        let (_tmp, _top, common) = repo();
        let d = common.join("hooks");
        let future = d.join("post-future");
        fs::write(&future, "#!/bin/sh\nexit 0\n").unwrap();
        fs::set_permissions(&future, fs::Permissions::from_mode(0o755)).unwrap();
        // Not hook names: git's samples and git-hand's chained files.
        fs::write(d.join("pre-push.git-hand-chained"), "#!/bin/sh\n").unwrap();
        include(&common).unwrap();
        sync(&common, shim_text()).unwrap();
        let l = common.join("git-hand/hooks");
        let entry = fs::read(l.join("post-future")).unwrap();
        assert_eq!(forward_target(&entry), Some(future));
        assert!(!l.join("pre-push.git-hand-chained").exists());
        assert!(!l.join("pre-push.sample").exists());
        exclude(&common).unwrap();
        remove_files(&common).unwrap();
        assert!(!common.join("git-hand").exists());
    }

    #[test]
    fn remove_files_leaves_no_file_of_the_layout() {
        let (_tmp, _top, common) = repo();
        include(&common).unwrap();
        sync(&common, shim_text()).unwrap();
        exclude(&common).unwrap();
        let removed = remove_files(&common).unwrap();
        // Every name's entry, the chained link and linked.config.
        assert_eq!(removed.len(), HOOK_NAMES.len() + 2);
        assert!(!common.join("git-hand").exists());
    }

    /// What a tool wrote into L (git-lfs's installer run in a slot writes there: it honours
    /// `core.hooksPath`), an edited forwarder and a directory in a hook's place are not
    /// git-hand's: sync leaves them, state names them, uninstall keeps them.
    #[test]
    fn what_git_hand_did_not_write_in_l_is_left_and_reported() {
        let (_tmp, _top, common) = repo();
        include(&common).unwrap();
        sync(&common, shim_text()).unwrap();
        let l = common.join("git-hand/hooks");
        let lfs = l.join("post-commit");
        fs::remove_file(&lfs).unwrap();
        fs::write(&lfs, "#!/bin/sh\ngit lfs post-commit \"$@\"\n").unwrap();
        fs::set_permissions(&lfs, fs::Permissions::from_mode(0o755)).unwrap();
        fs::remove_file(l.join("pre-rebase")).unwrap();
        fs::create_dir(l.join("pre-rebase")).unwrap();
        let before = fs::read(&lfs).unwrap();

        let state = state(&common, shim_text()).unwrap();
        let mut foreign = state.foreign.clone();
        foreign.sort();
        assert_eq!(foreign, vec![lfs.clone(), l.join("pre-rebase")]);
        assert_eq!(state.stale, vec![], "foreign entries are not stale ones");
        // The tool's file is moved aside, byte for byte, and git-hand's entry takes its place;
        // the directory is left where it is.
        let displaced = l.join("post-commit.git-hand-displaced");
        assert_eq!(
            sync(&common, shim_text()).unwrap(),
            [
                LinkedChange {
                    path: displaced.clone(),
                    change: EntryChange::Displaced
                },
                LinkedChange {
                    path: lfs.clone(),
                    change: EntryChange::Link
                }
            ]
        );
        assert_eq!(fs::read(&displaced).unwrap(), before);
        assert!(fs::symlink_metadata(&lfs).unwrap().file_type().is_symlink());
        assert_eq!(state_of_foreign(&common), vec![l.join("pre-rebase")]);
        assert_eq!(sync(&common, shim_text()).unwrap(), []);
        exclude(&common).unwrap();
        remove_files(&common).unwrap();
        assert_eq!(
            fs::read(&displaced).unwrap(),
            before,
            "uninstall took a tool's hook"
        );
        assert!(l.join("pre-rebase").is_dir());
    }

    fn state_of_foreign(common: &Path) -> Vec<PathBuf> {
        state(common, shim_text()).unwrap().foreign
    }

    #[test]
    fn a_symlinked_hooks_dir_is_not_written_through() {
        let (tmp, _top, common) = repo();
        let elsewhere = tmp.path().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        fs::create_dir(common.join("git-hand")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, common.join("git-hand/hooks")).unwrap();
        assert!(matches!(
            sync(&common, shim_text()),
            Err(LinkedError::NotADirectory { .. })
        ));
        assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);
    }

    #[test]
    fn quoting_round_trips_any_path() {
        for path in [
            "/a/b",
            "/it's here/x",
            "/q\"uo\\te/\nline\tend",
            "./.husky/_/pre-commit",
        ] {
            let text = forwarder(Path::new(path));
            assert_eq!(forward_target(&text), Some(PathBuf::from(path)), "{path:?}");
            let quoted = config_quote(path.as_bytes());
            assert!(!quoted.contains(&b'\n'));
            assert_eq!(
                config_unquote(&quoted),
                Some((path.as_bytes().to_vec(), &b""[..]))
            );
        }
        assert_eq!(forward_target(b"#!/bin/sh\nexec '/x' \"$@\"\n"), None);
    }
}
