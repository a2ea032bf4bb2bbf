//! git-hand's entries in a Claude Code settings file (`.claude/settings.local.json`, the
//! committed `.claude/settings.json`, or `~/.claude/settings.json`): writing them (`git hand
//! install --claude`), taking them out again (`git hand uninstall --claude`), and telling when
//! they lapsed (`status`, `doctor`). Nothing here runs a hook or prints.
//!
//! The file is the user's and Claude Code's as much as ours: Claude Code rewrites it itself
//! (a permission granted "always" lands there). So every other key and every other hook entry is
//! kept as it was, in its order ([`ordered`]), the file is replaced atomically
//! (a temporary file beside it, renamed over it, with its mode), and an entry is git-hand's only
//! when its command calls [`CALL`]. Uninstall leaves the file byte for byte as install found it:
//! install keeps a copy of the bytes it replaced in the repository's common git dir
//! ([`RECORD_FILE`], with where it wrote, for `status`), and uninstall puts them back when the
//! file without our entries means the same as they do; otherwise (someone changed the file
//! meanwhile) it removes our entries and only the containers install made for them.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::hint::{Words, hand, say};
use crate::repo_file::{self, RepoFileError};

mod ordered;

use ordered::{Json, Obj};

/// What every command git-hand writes calls: an entry whose command contains it is ours.
pub(crate) const CALL: &str = "git-hand hook claude ";

/// The file in the repository's common git dir that records each settings file install
/// `--claude` wrote, with the bytes it replaced.
pub(crate) const RECORD_FILE: &str = "git-hand-claude.json";

/// Seconds each entry's timeout adds to `hand.setupTimeout`: `WorktreeCreate` runs a spawn,
/// whose `git worktree add`, checkout and includes come on top of the setup command (`npm ci`),
/// and Claude Code kills a hook at its timeout.
pub(crate) const GIT_MARGIN_SECS: u64 = 300;

/// The Claude Code hook events git-hand answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Event {
    WorktreeCreate,
    WorktreeRemove,
    SessionStart,
}

impl Event {
    pub const ALL: [Event; 3] = [
        Event::WorktreeCreate,
        Event::WorktreeRemove,
        Event::SessionStart,
    ];

    /// Its key under `hooks` in the settings file.
    pub fn key(self) -> &'static str {
        match self {
            Event::WorktreeCreate => "WorktreeCreate",
            Event::WorktreeRemove => "WorktreeRemove",
            Event::SessionStart => "SessionStart",
        }
    }

    /// The `git-hand hook claude` verb that answers it.
    pub fn verb(self) -> &'static str {
        match self {
            Event::WorktreeCreate => "worktree-create",
            Event::WorktreeRemove => "worktree-remove",
            Event::SessionStart => "session-start",
        }
    }
}

/// Which settings file: the per-user one in the main worktree (the default), the committed one
/// (every teammate's `claude -w` then needs git-hand), or one named (`~/.claude/settings.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Which {
    Local,
    Shared,
    File,
}

impl Which {
    /// The file in the main worktree `top` (`None` for [`Which::File`]).
    pub(crate) fn in_worktree(&self, top: &Path) -> Option<PathBuf> {
        let name = match self {
            Which::Local => "settings.local.json",
            Which::Shared => "settings.json",
            Which::File => return None,
        };
        Some(top.join(".claude").join(name))
    }

    /// The install that writes `file` again.
    pub(crate) fn install_command(&self, file: &Path) -> Words {
        hand(match self {
            Which::Local => "install --claude".into(),
            Which::Shared => "install --claude-shared".into(),
            Which::File => format!(
                "install --claude-settings {}",
                crate::hooks::shim::sh_quote(&file.display().to_string())
            ),
        })
    }
}

/// What install or uninstall did to one settings file (`install --json`'s `claude.outcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// install wrote git-hand's entries.
    Installed,
    /// install found them current.
    Unchanged,
    /// uninstall removed them.
    Uninstalled,
    /// uninstall found none.
    NothingInstalled,
}

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("{0}; nothing was written")]
    Read(#[from] RepoFileError),
    #[error("{} is not JSON ({why}); nothing was written", crate::shown::path(.path))]
    NotJson { path: PathBuf, why: String },
    #[error("{} is not the settings Claude Code reads: {what}; nothing was written", crate::shown::path(.path))]
    Shape { path: PathBuf, what: String },
    #[error("cannot write {}: {source}", crate::shown::path(.path))]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{} kept changing while git-hand wrote it (Claude Code rewrites it too); nothing was \
         written: run the same command again",
        crate::shown::path(.path)
    )]
    Changed { path: PathBuf },
}

/// How many times a read-modify-write of a settings file is tried when the file changed under
/// it (Claude Code writes the same file while a session runs).
const ATTEMPTS: usize = 3;

/// Runs `once` again while it finds the file changed under it.
fn retried<T>(mut once: impl FnMut() -> Result<T, SettingsError>) -> Result<T, SettingsError> {
    let mut last = None;
    for _ in 0..ATTEMPTS {
        match once() {
            Err(e @ SettingsError::Changed { .. }) => last = Some(e),
            done => return done,
        }
    }
    Err(last.unwrap_or(SettingsError::Changed {
        path: PathBuf::new(),
    }))
}

/// The seconds each entry's `timeout` needs for `hand.setupTimeout` = `setup`.
pub(crate) fn timeout_secs(setup: Duration) -> u64 {
    let whole = setup.as_secs() + u64::from(setup.subsec_nanos() > 0);
    whole.saturating_add(GIT_MARGIN_SECS)
}

/// The sh command line of `event`'s entry: `git-hand` on `PATH`, else the git-hand that wrote
/// it (`exe`: a desktop app starts Claude Code with a minimal `PATH`), else a message on stderr
/// and exit 1, which fails the worktree's creation (Claude Code has no fallback of its own).
pub fn command(event: Event, exe: Option<&Path>) -> String {
    let recorded = crate::hooks::shim::sh_quote(exe.and_then(Path::to_str).unwrap_or_default());
    let verb = event.verb();
    say(format!(
        "h={recorded}; command -v git-hand >/dev/null 2>&1 && exec git-hand hook claude {verb}; \
         [ -x \"$h\" ] && exec \"$h\" hook claude {verb}; \
         echo \"git-hand: git-hand is not on PATH (nor at ${{h:-the path install recorded}}), \
         so Claude Code's {key} hook cannot run; install git-hand or put it on the PATH Claude \
         Code starts with, then run ",
        key = event.key()
    ))
    .hand("install --claude")
    .text(" again\" >&2; exit 1")
    .into()
}

/// The entry git-hand wants for `event`: one command handler with its timeout.
fn handler(event: Event, exe: Option<&Path>, timeout: u64) -> Json {
    let mut h = Obj::default();
    h.insert("type", "command".into());
    h.insert("command", command(event, exe).into());
    h.insert("timeout", timeout.into());
    Json::Object(h)
}

/// Whether a hook handler is git-hand's.
fn is_ours(handler: &Json) -> bool {
    handler
        .get("command")
        .and_then(Json::as_str)
        .is_some_and(|c| c.contains(CALL))
}

/// Which containers install made for its entries, so uninstall removes those and no other.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Made {
    /// The settings file itself.
    pub file: bool,
    /// Its directory (`.claude/`).
    pub dir: bool,
    /// The top-level `hooks` object.
    pub hooks: bool,
    /// The event arrays under `hooks`.
    pub events: Vec<String>,
}

/// One settings file install wrote, as [`RECORD_FILE`] keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Install {
    pub file: PathBuf,
    pub which: Which,
    /// `None` when install found its entries there already (written by hand, or a record lost):
    /// uninstall then removes whatever taking them out leaves empty.
    pub made: Option<Made>,
    /// The file's bytes before the first install (as text: the file is JSON, so UTF-8), `None`
    /// when it did not exist or install did not see them (its entries were there already).
    pub original: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Record {
    installs: Vec<Install>,
}

/// Every settings file install `--claude` wrote for the repository whose common dir this is.
pub fn recorded(common_dir: &Path) -> Vec<Install> {
    read_record(common_dir).installs
}

fn read_record(common_dir: &Path) -> Record {
    repo_file::read_regular(&common_dir.join(RECORD_FILE), 64 << 20)
        .ok()
        .flatten()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

fn write_record(common_dir: &Path, record: &Record) -> Result<(), SettingsError> {
    let path = common_dir.join(RECORD_FILE);
    if record.installs.is_empty() {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(SettingsError::Write { path, source: e })
            }
            _ => Ok(()),
        };
    }
    let text = serde_json::to_vec_pretty(record).unwrap_or_default();
    write_atomic(&path, &text, 0o644)
}

/// The settings file's path as the record keys it: absolute, its directory resolved when it
/// exists (so `~/.claude/settings.json` and `/home/me/.claude/settings.json` are one file).
pub fn normalized(file: &Path) -> PathBuf {
    let abs = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
    match (abs.parent().map(std::fs::canonicalize), abs.file_name()) {
        (Some(Ok(dir)), Some(name)) => dir.join(name),
        _ => abs,
    }
}

/// Whether `file` can take git-hand's entries (missing, or a settings object), asked before
/// install writes anything anywhere.
pub fn check(file: &Path) -> Result<(), SettingsError> {
    let file = &normalized(file);
    match read_file(file)? {
        Some(b) => parse(file, &b).map(drop),
        None => Ok(()),
    }
}

/// Writes git-hand's three entries into `file` with `timeout` seconds each, recording the
/// install in `common_dir`. Idempotent: entries already current leave the file untouched.
pub fn install(
    common_dir: &Path,
    file: &Path,
    which: Which,
    timeout: u64,
) -> Result<Outcome, SettingsError> {
    retried(|| install_once(common_dir, file, which.clone(), timeout))
}

fn install_once(
    common_dir: &Path,
    file: &Path,
    which: Which,
    timeout: u64,
) -> Result<Outcome, SettingsError> {
    let exe = crate::hooks::shim::recorded();
    let file = &normalized(file);
    let bytes = read_file(file)?;
    let mut doc = match &bytes {
        Some(b) => parse(file, b)?,
        None => Obj::default(),
    };
    let wanted: Vec<(Event, Json)> = Event::ALL
        .into_iter()
        .map(|e| (e, handler(e, exe.as_deref(), timeout)))
        .collect();
    let mut record = read_record(common_dir);
    let known = record.installs.iter().position(|i| &i.file == file);
    if current(&doc, &wanted) {
        if known.is_none() {
            // Entries someone wrote by hand (or a lost record): status looks at them from now on.
            record.installs.push(Install {
                file: file.clone(),
                which,
                made: None,
                original: None,
            });
            write_record(common_dir, &record)?;
        }
        return Ok(Outcome::Unchanged);
    }
    let had_ours = !ours_in(&doc).is_empty();
    let dir = file.parent().unwrap_or(Path::new("."));
    let made_dir = !dir.exists();
    let mut made = put(&mut doc, &wanted);
    made.file = bytes.is_none();
    made.dir = made_dir;
    let entry = match (known, had_ours) {
        // Our entries were there (an older git-hand, another timeout): what the first install
        // found is still what uninstall puts back.
        (Some(i), true) => Install {
            which,
            ..record.installs.remove(i)
        },
        (known, _) => {
            if let Some(i) = known {
                record.installs.remove(i);
            }
            Install {
                file: file.clone(),
                which,
                made: Some(made),
                original: bytes
                    .as_ref()
                    .and_then(|b| String::from_utf8(b.clone()).ok())
                    .filter(|_| !had_ours),
            }
        }
    };
    record.installs.push(entry);
    if made_dir {
        std::fs::create_dir_all(dir).map_err(|source| SettingsError::Write {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    // The record first: a settings file written without it could not be put back.
    write_record(common_dir, &record)?;
    let newline = bytes.as_ref().is_none_or(|b| b.ends_with(b"\n"));
    write_settings(file, &doc, newline, bytes.as_deref())?;
    Ok(Outcome::Installed)
}

/// Removes git-hand's entries from `file`: back to the bytes install found when the rest means
/// the same, else only our entries and the containers install made for them.
pub fn uninstall(common_dir: &Path, file: &Path) -> Result<Outcome, SettingsError> {
    retried(|| uninstall_once(common_dir, file))
}

fn uninstall_once(common_dir: &Path, file: &Path) -> Result<Outcome, SettingsError> {
    let file = &normalized(file);
    let mut record = read_record(common_dir);
    let known = record
        .installs
        .iter()
        .position(|i| &i.file == file)
        .map(|i| record.installs.remove(i));
    let forget = |record: &Record| write_record(common_dir, record);
    let Some(bytes) = read_file(file)? else {
        forget(&record)?;
        return Ok(Outcome::NothingInstalled);
    };
    let mut doc = parse(file, &bytes)?;
    let made = known.as_ref().and_then(|i| i.made.as_ref());
    if !take_out(&mut doc, made) {
        forget(&record)?;
        return Ok(Outcome::NothingInstalled);
    }
    let original = known.as_ref().and_then(|i| i.original.as_deref());
    let same = original
        .and_then(|o| serde_json::from_str::<serde_json::Value>(o).ok())
        .is_some_and(|o| o == Json::Object(doc.clone()).to_value());
    match original {
        Some(o) if same => {
            unchanged_since(file, Some(&bytes))?;
            write_atomic(file, o.as_bytes(), mode_of(file))?
        }
        _ if made.is_some_and(|m| m.file) && doc.is_empty() => {
            std::fs::remove_file(file).map_err(|source| SettingsError::Write {
                path: file.clone(),
                source,
            })?;
            if made.is_some_and(|m| m.dir)
                && let Some(dir) = file.parent()
            {
                // Only when empty: Claude Code or the user may have put files there since.
                let _ = std::fs::remove_dir(dir);
            }
        }
        _ => write_settings(file, &doc, bytes.ends_with(b"\n"), Some(&bytes))?,
    }
    forget(&record)?;
    Ok(Outcome::Uninstalled)
}

/// Why git-hand's entries in one recorded settings file no longer do their job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LapseKind {
    /// The file cannot be read or is not settings JSON any more.
    Unreadable,
    /// An event has no git-hand entry (removed, or the file rewritten without it), or the
    /// file is gone (`event` null).
    Missing,
    /// An entry's command is not the one this git-hand writes (an older git-hand's, another
    /// git-hand's path, edited).
    Stale,
    /// An entry's timeout is shorter than `hand.setupTimeout` needs: Claude Code would kill a
    /// spawn whose setup runs long.
    Timeout,
}

crate::word::words!(LapseKind: "Claude hooks lapse kind");

/// One lapse of git-hand's Claude Code hooks, with the command that mends it.
#[derive(Debug, Clone)]
pub struct Lapse {
    pub kind: LapseKind,
    pub file: PathBuf,
    pub event: Option<Event>,
    /// What lapsed in `file` (which it does not repeat).
    pub message: String,
    pub fix: Words,
}

/// The lapses of every settings file install `--claude` recorded for this repository, judged
/// against the entries this git-hand writes and a timeout of at least `timeout` seconds.
/// Empty when install `--claude` never ran.
pub fn lapses(common_dir: &Path, timeout: u64) -> Vec<Lapse> {
    let exe = crate::hooks::shim::recorded();
    recorded(common_dir)
        .iter()
        .flat_map(|i| lapses_of(i, exe.as_deref(), timeout))
        .collect()
}

/// Whether git-hand's Claude Code hooks are in force for the repository: where install
/// `--claude` wrote and what lapsed there (`status`, `doctor`).
#[derive(Debug, Clone)]
pub struct InForce {
    pub in_force: bool,
    pub files: Vec<PathBuf>,
    pub timeout: u64,
    pub lapses: Vec<Lapse>,
}

/// The state of the Claude Code hooks install `--claude` recorded for `repo`, judged against
/// its `hand.setupTimeout` (the default when that does not parse: `status` must still answer);
/// `None` when install `--claude` never ran (or uninstall took every file out).
pub fn in_force(repo: &crate::git::Repo) -> Option<InForce> {
    let installs = recorded(&repo.loc.common_dir);
    if installs.is_empty() {
        return None;
    }
    let setup = crate::ops::repo::settings::Settings::load(repo)
        .and_then(|s| s.setup_timeout())
        .unwrap_or(Duration::from_secs(600));
    let timeout = timeout_secs(setup);
    let lapses = lapses(&repo.loc.common_dir, timeout);
    Some(InForce {
        in_force: lapses.is_empty(),
        files: installs.into_iter().map(|i| i.file).collect(),
        timeout,
        lapses,
    })
}

fn lapses_of(install: &Install, exe: Option<&Path>, timeout: u64) -> Vec<Lapse> {
    let file = &install.file;
    let fix = install.which.install_command(file);
    let lapse = |kind, event, message: String| Lapse {
        kind,
        file: file.clone(),
        event,
        message,
        fix: fix.clone(),
    };
    let doc = match read_file(file).and_then(|b| b.map(|b| parse(file, &b)).transpose()) {
        Ok(Some(doc)) => doc,
        Ok(None) => {
            return vec![lapse(
                LapseKind::Missing,
                None,
                "it is gone: Claude Code gets no worktrees from git-hand".into(),
            )];
        }
        Err(e) => {
            // The lapse names the file already.
            let why = e.to_string();
            let why = why.trim_end_matches("; nothing was written");
            let why = why
                .strip_prefix(&crate::shown::path(file))
                .unwrap_or(why)
                .trim_start();
            return vec![lapse(
                LapseKind::Unreadable,
                None,
                format!("it {why}: Claude Code gets no worktrees from git-hand"),
            )];
        }
    };
    let mut out = vec![];
    for event in Event::ALL {
        let found = handlers(&doc, event)
            .into_iter()
            .filter(|h| is_ours(h))
            .collect::<Vec<_>>();
        let Some(h) = found.first() else {
            out.push(lapse(
                LapseKind::Missing,
                Some(event),
                format!("no git-hand {} hook any more", event.key()),
            ));
            continue;
        };
        if h.get("command").and_then(Json::as_str) != Some(command(event, exe).as_str()) {
            out.push(lapse(
                LapseKind::Stale,
                Some(event),
                format!(
                    "the {} hook's command is not the one this git-hand writes",
                    event.key()
                ),
            ));
        }
        let has = h.get("timeout").and_then(Json::as_u64);
        if has.is_none_or(|t| t < timeout) {
            let has = has.map_or("none".to_string(), |t| format!("{t} s"));
            out.push(lapse(
                LapseKind::Timeout,
                Some(event),
                format!(
                    "the {} hook's timeout ({has}) is shorter than hand.setupTimeout plus {GIT_MARGIN_SECS} s for git ({timeout} s): Claude Code would kill a slow setup",
                    event.key()
                ),
            ));
        }
    }
    out
}

fn read_file(file: &Path) -> Result<Option<Vec<u8>>, SettingsError> {
    Ok(repo_file::read_regular(file, repo_file::SETTINGS_CAP)?)
}

/// The file's top-level object, or why it is not one.
fn parse(file: &Path, bytes: &[u8]) -> Result<Obj, SettingsError> {
    let value: Json = serde_json::from_slice(bytes).map_err(|e| SettingsError::NotJson {
        path: file.to_path_buf(),
        why: e.to_string(),
    })?;
    let shape = |what: &str| SettingsError::Shape {
        path: file.to_path_buf(),
        what: what.into(),
    };
    let Json::Object(doc) = value else {
        return Err(shape("its top level is not an object"));
    };
    match doc.get("hooks") {
        None | Some(Json::Object(_)) => {}
        Some(_) => return Err(shape("\"hooks\" is not an object")),
    }
    for event in Event::ALL {
        let Some(groups) = doc.get("hooks").and_then(|h| h.get(event.key())) else {
            continue;
        };
        let Some(groups) = groups.as_array() else {
            return Err(shape(&format!("\"hooks.{}\" is not an array", event.key())));
        };
        if groups.iter().any(|g| {
            g.as_object().is_none() || g.get("hooks").is_some_and(|h| h.as_array().is_none())
        }) {
            return Err(shape(&format!(
                "an entry of \"hooks.{}\" is not an object with a \"hooks\" array",
                event.key()
            )));
        }
    }
    Ok(doc)
}

/// Every handler of `event`, across its matcher groups.
fn handlers(doc: &Obj, event: Event) -> Vec<&Json> {
    doc.get("hooks")
        .and_then(|h| h.get(event.key()))
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(|g| g.get("hooks").and_then(Json::as_array))
        .flatten()
        .collect()
}

/// git-hand's handlers, of any event.
fn ours_in(doc: &Obj) -> Vec<&Json> {
    Event::ALL
        .into_iter()
        .flat_map(|e| handlers(doc, e))
        .filter(|h| is_ours(h))
        .collect()
}

/// Whether each event has exactly the wanted handler of ours and no other.
fn current(doc: &Obj, wanted: &[(Event, Json)]) -> bool {
    wanted.iter().all(|(event, want)| {
        let ours: Vec<_> = handlers(doc, *event)
            .into_iter()
            .filter(|h| is_ours(h))
            .collect();
        matches!(ours.as_slice(), [one] if one.to_value() == want.to_value())
    })
}

/// Puts the wanted handlers in: in place of the first of ours in each event (the others of ours
/// dropped), else appended in a group of their own. Which containers it made.
fn put(doc: &mut Obj, wanted: &[(Event, Json)]) -> Made {
    let mut made = Made {
        hooks: !doc.contains_key("hooks"),
        ..Made::default()
    };
    let hooks = doc.entry("hooks", || Json::Object(Obj::default()));
    let Json::Object(hooks) = hooks else {
        return made;
    };
    for (event, want) in wanted {
        if !hooks.contains_key(event.key()) {
            made.events.push(event.key().into());
        }
        let groups = hooks.entry(event.key(), || Json::Array(vec![]));
        let Json::Array(groups) = groups else {
            continue;
        };
        let mut placed = false;
        for group in groups.iter_mut() {
            let Some(list) = group.get_mut("hooks").and_then(Json::as_array_mut) else {
                continue;
            };
            list.retain_mut(|h| {
                if !is_ours(h) {
                    return true;
                }
                if placed {
                    return false;
                }
                *h = want.clone();
                placed = true;
                true
            });
        }
        if !placed {
            let mut group = Obj::default();
            group.insert("hooks", Json::Array(vec![want.clone()]));
            groups.push(Json::Object(group));
        }
    }
    made
}

/// Takes git-hand's handlers out, and the containers that leaves empty where install made them
/// (`made`; with no record of the install, wherever taking ours out emptied them). A group of
/// ours (nothing but `hooks`) goes with its last handler; a group with a matcher of someone's
/// stays. Whether anything was ours.
fn take_out(doc: &mut Obj, made: Option<&Made>) -> bool {
    let Some(Json::Object(hooks)) = doc.get_mut("hooks") else {
        return false;
    };
    let mut removed = false;
    for event in Event::ALL {
        let Some(Json::Array(groups)) = hooks.get_mut(event.key()) else {
            continue;
        };
        let mut here = false;
        groups.retain_mut(|group| {
            let only_hooks = group.as_object().is_some_and(|g| g.len() == 1);
            let Some(list) = group.get_mut("hooks").and_then(Json::as_array_mut) else {
                return true;
            };
            let before = list.len();
            list.retain(|h| !is_ours(h));
            if list.len() == before {
                return true;
            }
            here = true;
            !(list.is_empty() && only_hooks)
        });
        removed |= here;
        let emptied = here && groups.is_empty();
        let ours = made.is_none_or(|m| m.events.iter().any(|e| e == event.key()));
        if emptied && ours {
            hooks.remove(event.key());
        }
    }
    if removed && hooks.is_empty() && made.is_none_or(|m| m.hooks) {
        doc.remove("hooks");
    }
    removed
}

/// The settings as Claude Code writes them (two-space indent), with a final newline when asked,
/// unless the file is no longer what was read (`before`; `None`: there was none).
fn write_settings(
    file: &Path,
    doc: &Obj,
    newline: bool,
    before: Option<&[u8]>,
) -> Result<(), SettingsError> {
    let mut text = serde_json::to_vec_pretty(&Json::Object(doc.clone())).unwrap_or_default();
    if newline {
        text.push(b'\n');
    }
    unchanged_since(file, before)?;
    write_atomic(file, &text, mode_of(file))
}

/// `Changed` when the file is no longer what was read: Claude Code (or the user) wrote it in
/// between, and writing now would lose that. Checked just before the rename, which narrows the
/// window to the rename itself (nothing locks a file Claude Code writes).
fn unchanged_since(file: &Path, before: Option<&[u8]>) -> Result<(), SettingsError> {
    if read_file(file)?.as_deref() == before {
        Ok(())
    } else {
        Err(SettingsError::Changed {
            path: file.to_path_buf(),
        })
    }
}

/// The mode of the file there, else 0644.
fn mode_of(file: &Path) -> u32 {
    std::fs::symlink_metadata(file).map_or(0o644, |m| m.permissions().mode() & 0o7777)
}

/// Replaces `path` with `bytes` atomically: a temporary file in the same directory, given
/// `mode`, synced, renamed over it.
fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> Result<(), SettingsError> {
    let err = |source| SettingsError::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".git-hand-tmp-")
        .tempfile_in(dir)
        .map_err(err)?;
    tmp.write_all(bytes)
        .and_then(|()| {
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(mode))
        })
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(err)?;
    tmp.persist(path).map_err(|e| err(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Obj {
        parse(Path::new("s.json"), text.as_bytes()).unwrap()
    }

    fn wanted(timeout: u64) -> Vec<(Event, Json)> {
        Event::ALL
            .into_iter()
            .map(|e| (e, handler(e, Some(Path::new("/opt/git-hand")), timeout)))
            .collect()
    }

    #[test]
    fn a_file_that_changed_since_it_was_read_is_not_written_over() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.local.json");
        std::fs::write(&file, b"{\"a\": 1}\n").unwrap();
        let doc = doc("{\"b\": 2}");
        let e = write_settings(&file, &doc, true, Some(b"{}")).unwrap_err();
        assert!(matches!(e, SettingsError::Changed { .. }), "{e}");
        assert_eq!(std::fs::read(&file).unwrap(), b"{\"a\": 1}\n");
        write_settings(&file, &doc, true, Some(b"{\"a\": 1}\n")).unwrap();
        assert!(
            String::from_utf8(std::fs::read(&file).unwrap())
                .unwrap()
                .contains("\"b\"")
        );
        let mut tries = 0;
        let e = retried(|| -> Result<(), SettingsError> {
            tries += 1;
            Err(SettingsError::Changed { path: file.clone() })
        });
        assert!(e.is_err() && tries == ATTEMPTS);
    }

    #[test]
    fn every_command_calls_its_verb_and_is_recognised_as_ours() {
        for event in Event::ALL {
            let c = command(event, Some(Path::new("/opt/it's/git-hand")));
            assert!(c.contains(&format!("exec git-hand hook claude {}", event.verb())));
            assert!(c.contains("h='/opt/it'\\''s/git-hand'"), "{c}");
            assert!(c.ends_with("exit 1"));
            assert!(is_ours(&handler(event, None, 1)));
        }
    }

    #[test]
    fn the_timeout_covers_the_setup_and_a_margin() {
        assert_eq!(timeout_secs(Duration::from_secs(600)), 900);
        assert_eq!(timeout_secs(Duration::from_millis(1500)), 302);
    }

    #[test]
    fn put_keeps_others_in_order_and_take_out_undoes_it() {
        let text = r#"{"z": 1, "hooks": {"SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}], "Stop": []}, "a": [2]}"#;
        let mut d = doc(text);
        let made = put(&mut d, &wanted(900));
        assert!(!made.hooks);
        assert_eq!(made.events, ["WorktreeCreate", "WorktreeRemove"]);
        let keys: Vec<_> = d.keys().collect();
        assert_eq!(keys, ["z", "hooks", "a"]);
        let events: Vec<_> = d
            .get("hooks")
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(
            events,
            ["SessionStart", "Stop", "WorktreeCreate", "WorktreeRemove"]
        );
        assert!(current(&d, &wanted(900)));
        assert!(!current(&d, &wanted(901)));
        assert!(take_out(&mut d, Some(&made)));
        // Back to the file's own order, key for key.
        assert_eq!(Json::Object(d), serde_json::from_str::<Json>(text).unwrap());
    }

    #[test]
    fn put_replaces_an_older_entry_in_place_and_drops_duplicates() {
        let old = r#"{"hooks": {"WorktreeCreate": [{"hooks": [{"type": "command", "command": "git-hand hook claude worktree-create"}, {"type": "command", "command": "other"}]}, {"hooks": [{"command": "x git-hand hook claude worktree-create"}]}]}}"#;
        let mut d = doc(old);
        put(&mut d, &wanted(900));
        let groups = d
            .get("hooks")
            .and_then(|h| h.get("WorktreeCreate"))
            .and_then(Json::as_array)
            .unwrap();
        assert_eq!(groups.len(), 2);
        let list = |g: &Json| g.get("hooks").unwrap().as_array().unwrap().clone();
        assert_eq!(list(&groups[0])[0], wanted(900)[0].1);
        assert_eq!(
            list(&groups[0])[1].get("command").unwrap().as_str(),
            Some("other")
        );
        assert!(list(&groups[1]).is_empty());
        assert!(current(&d, &wanted(900)));
    }

    #[test]
    fn take_out_without_a_record_removes_what_it_emptied_and_keeps_a_matcher_group() {
        let mut d = doc(
            r#"{"hooks": {"SessionStart": [{"matcher": "resume", "hooks": [{"command": "git-hand hook claude session-start"}]}], "WorktreeCreate": [{"hooks": [{"command": "git-hand hook claude worktree-create"}]}]}}"#,
        );
        assert!(take_out(&mut d, None));
        assert_eq!(
            Json::Object(d).to_value(),
            serde_json::json!({"hooks": {"SessionStart": [{"matcher": "resume", "hooks": []}]}})
        );
        let mut none = doc(r#"{"hooks": {"Stop": []}}"#);
        assert!(!take_out(&mut none, None));
    }

    #[test]
    fn a_file_of_another_shape_is_refused_by_name() {
        for (text, what) in [
            ("[]", "top level"),
            (r#"{"hooks": 3}"#, "\"hooks\" is not"),
            (
                r#"{"hooks": {"WorktreeCreate": {}}}"#,
                "hooks.WorktreeCreate",
            ),
            (r#"{"hooks": {"SessionStart": [1]}}"#, "hooks.SessionStart"),
        ] {
            let e = parse(Path::new("/r/.claude/s.json"), text.as_bytes()).unwrap_err();
            let e = e.to_string();
            assert!(e.contains("/r/.claude/s.json") && e.contains(what), "{e}");
        }
        let e = parse(Path::new("/r/s.json"), b"{,").unwrap_err();
        assert!(e.to_string().contains("is not JSON"), "{e}");
    }
}
