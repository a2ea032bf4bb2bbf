//! Every `hand.*` setting git-hand reads, and where its value comes from: git's configuration
//! (any scope, `git -c` included) over the repository's committed `.handconfig` over the
//! default. Every read of a `hand.*` key goes through here.
//!
//! `.handconfig` is read from the main worktree's checkout (`<main worktree>/.handconfig`),
//! whichever worktree git-hand runs in: the main worktree is where the user works and pulls, so
//! every slot, spawn and hook of the repository reads the one file the user sees, and a task's
//! branch (which may start from any `--base`) never changes the settings of the pool it runs in.
//! A bare repository has no checkout, so no file. Only the keys that describe the repository
//! ([`KEYS`], `committable`) may be set there; the others (where the ledger and the pool live,
//! whether spawn may install hooks, this machine's id on a team ledger) are the user's own or
//! the server's (`hand.remoteUrl`, `hand.requireLease`, read by the pre-receive hook in a bare
//! repository), and a value of theirs in the file is ignored and shown as such by
//! `git hand config`.

use std::path::PathBuf;
use std::time::Duration;

use crate::git::{ConfigError, ConfigFile, ConfigOrigin, Repo};
use crate::ops::repo::setup::{Hook, SetupCommand};

pub mod report;

/// Default `hand.maxSlots`.
pub(crate) const DEFAULT_MAX_SLOTS: i64 = 16;

/// The settings file's name, at the top of the main worktree.
pub(crate) const FILE_NAME: &str = ".handconfig";

/// Default `hand.setupTimeout`: a cold `npm ci` or `cargo fetch` fits; a hang does not last.
pub(crate) const DEFAULT_SETUP_TIMEOUT: &str = "10m";

/// A `hand.*` key git-hand reads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Key {
    pub name: &'static str,
    /// Whether the repository's `.handconfig` may set it: not a key that is the user's own
    /// (where the ledger and the pool live, this machine's id) nor one a server reads.
    pub committable: bool,
    /// Whether every value counts (`git config --add`), not only the last.
    pub multi: bool,
    /// The default, in words (`None`: unset means "none", or it is worked out, as the text says).
    pub default: Option<&'static str>,
}

const fn key(name: &'static str, committable: bool, default: Option<&'static str>) -> Key {
    Key {
        name,
        committable,
        multi: false,
        default,
    }
}

/// A multi-valued key (none by default).
const fn multi(name: &'static str, committable: bool) -> Key {
    Key {
        name,
        committable,
        multi: true,
        default: None,
    }
}

/// Every `hand.*` key, in the order `git hand config` shows them: the repository's, the user's
/// and this machine's, then the server's (read in a bare repository the remote fence guards).
pub(crate) const KEYS: &[Key] = &[
    key("hand.maxSlots", true, Some("16")),
    key("hand.requireCredential", true, Some("false")),
    key("hand.fenceBranches", true, Some("true")),
    key("hand.fenceRefs", true, Some("true")),
    key("hand.remoteFence", true, Some("false")),
    key("hand.adoptWorktrees", true, Some("false")),
    key("hand.issueNamespace", true, None),
    multi("hand.include", true),
    key("hand.onCreate", true, None),
    key("hand.onReuse", true, None),
    key("hand.onTeardown", true, None),
    key("hand.setupTimeout", true, Some(DEFAULT_SETUP_TIMEOUT)),
    key("hand.claudeTtl", true, None),
    key("hand.installHooks", false, Some("true")),
    key("hand.ledger", false, None),
    key("hand.root", false, None),
    key("hand.machine", false, None),
    multi("hand.remoteUrl", false),
    multi("hand.requireLease", false),
];

fn committable(name: &str) -> bool {
    KEYS.iter()
        .any(|k| k.committable && k.name.eq_ignore_ascii_case(name))
}

/// Where a value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Git's configuration, in this scope and file.
    Git(ConfigOrigin),
    /// The repository's `.handconfig`.
    File(PathBuf),
    /// An environment variable that overrides git's configuration (`GIT_HAND_LEDGER`).
    Env(&'static str),
    /// Nothing sets it.
    Default,
}

/// A repository's settings: git's configuration and its `.handconfig`, read once per opened
/// repository ([`Repo::committed_config`]).
pub struct Settings<'r> {
    repo: &'r Repo,
    file: Option<&'r ConfigFile>,
}

/// `path` with a leading `~/` made the home directory `env` names (`hand.root`, `hand.ledger`).
pub(crate) fn expand_home(path: &str, env: &crate::platform::env::Env) -> PathBuf {
    match (path.strip_prefix("~/"), env.var_os("HOME")) {
        (Some(rest), Some(home)) => std::path::Path::new(&home).join(rest),
        _ => PathBuf::from(path),
    }
}

/// The `.handconfig` git-hand reads for `repo` (whether or not it exists): in the main
/// worktree's checkout; none for a bare repository.
pub(crate) fn file_path(repo: &Repo) -> Option<PathBuf> {
    Some(repo.main_workdir()?.join(FILE_NAME))
}

/// A key only git's configuration sets (`hand.ledger`, `hand.root`, `hand.installHooks`): the
/// file is not even read.
pub(crate) fn git_string(repo: &Repo, name: &str) -> Option<String> {
    debug_assert!(!committable(name), "{name} may come from {FILE_NAME}");
    repo.config_string(name)
}

/// `hand.remoteUrl` on a server's bare repository, as the pre-receive hook reads it: every URL
/// its clients push to it by (only git's configuration sets it; the server hook reads no
/// `.handconfig`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RemoteUrls {
    /// Every value that is not blank, as written, in git's order.
    pub urls: Vec<String>,
    /// How many values were blank (skipped: `git config --add hand.remoteUrl ""` names no
    /// remote).
    pub skipped: usize,
}

/// `hand.remoteUrl`, read ([`RemoteUrls`]): the hook and `git hand config` both read it here,
/// so what the config shows is what the hook fences.
pub(crate) fn remote_urls(repo: &Repo) -> RemoteUrls {
    let mut read = RemoteUrls::default();
    for url in repo.config_strings("hand.remoteUrl") {
        if url.trim().is_empty() {
            read.skipped += 1;
        } else {
            read.urls.push(url);
        }
    }
    read
}

/// `hand.machine`: this machine's id on a team ledger, from git's configuration only (each
/// machine has its own; a committed file would give every clone the same). `None` when unset;
/// a value that is no machine id is an error naming it.
pub fn machine(repo: &Repo) -> Result<Option<String>, ConfigError> {
    const KEY: &str = "hand.machine";
    match git_string(repo, KEY) {
        None => Ok(None),
        Some(name) if crate::ops::repo::names::is_machine_id(&name) => Ok(Some(name)),
        Some(_) => Err(repo.bad_config(
            KEY,
            "a name of letters, digits, '.', '_' and '-' (at most 64)",
            Some(crate::platform::machine::hostname()),
        )),
    }
}

/// `hand.requireLease` on a server's bare repository, as the pre-receive hook reads it: the
/// branch patterns (`main`, `release/*`, `team/**`) a push may update only under a current lease
/// of one of its tasks. Multi-valued; only git's configuration sets it, as `hand.remoteUrl`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequireLease {
    /// Every value, trimmed, empty ones left out, in git's order (the invalid ones included).
    pub patterns: Vec<String>,
    /// How many values were empty (skipped: `git config --add hand.requireLease ""` guards
    /// nothing).
    pub skipped: usize,
    /// The values that can match no branch, and why: while there is one the hook refuses every
    /// push (a typo must never silently unguard `main`).
    pub invalid: Vec<BadPattern>,
}

/// A `hand.requireLease` value that can match no branch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("hand.requireLease={value:?} is not a branch pattern: {why}")]
pub struct BadPattern {
    pub value: String,
    /// The value as written (spaces around it included), which `git config --fixed-value`
    /// matches.
    pub raw: String,
    pub why: String,
}

impl BadPattern {
    /// The command that takes the value away, in the repository at `dir` (every line of it:
    /// `--unset` alone fails on a value given twice).
    pub fn hint(&self, dir: &std::path::Path) -> crate::hint::Hint {
        crate::hint::Hint::run(self.unset_command(dir))
    }

    /// The command line of [`BadPattern::hint`], for a sentence that names it.
    pub(crate) fn unset_command(&self, dir: &std::path::Path) -> String {
        let quote = crate::hooks::shim::sh_quote;
        format!(
            "git -C {} config --fixed-value --unset-all hand.requireLease {}",
            quote(&dir.to_string_lossy()),
            quote(&self.raw)
        )
    }
}

/// `hand.requireLease`, read and judged ([`RequireLease`]).
pub fn require_lease(repo: &Repo) -> RequireLease {
    let mut read = RequireLease::default();
    for raw in repo.config_strings("hand.requireLease") {
        let value = raw.trim();
        if value.is_empty() {
            read.skipped += 1;
            continue;
        }
        if let Some(why) = crate::git::refname::invalid_branch_pattern(value) {
            read.invalid.push(BadPattern {
                value: value.to_string(),
                raw: raw.clone(),
                why,
            });
        }
        read.patterns.push(value.to_string());
    }
    read
}

/// `hand.requireCredential`, for a caller that reads no other setting.
pub(crate) fn require_credential(repo: &Repo) -> Result<bool, ConfigError> {
    Settings::load(repo)?.require_credential()
}

impl<'r> Settings<'r> {
    /// Reads the repository's `.handconfig`, if any. A file that is not in git's config syntax
    /// is an error naming it: a typo must never silently mean the defaults.
    pub fn load(repo: &'r Repo) -> Result<Self, ConfigError> {
        let file = match file_path(repo) {
            Some(path) => repo.committed_config(&path)?,
            None => None,
        };
        Ok(Self { repo, file })
    }

    /// The repository's `.handconfig`, when there is one.
    pub fn file(&self) -> Option<&ConfigFile> {
        self.file
    }

    /// The file, when it is where `name`'s value comes from: git's configuration does not set
    /// it, the key may be committed and the file sets it.
    fn file_setting(&self, name: &str) -> Option<&ConfigFile> {
        let file = self.file?;
        let used = committable(name) && file.has(name) && self.repo.config_origin(name).is_none();
        used.then_some(file)
    }

    /// Where `name`'s value comes from.
    pub fn origin(&self, name: &str) -> Origin {
        if let Some(git) = self.repo.config_origin(name) {
            return Origin::Git(git);
        }
        match self.file_setting(name) {
            Some(file) => Origin::File(file.path().to_path_buf()),
            None => Origin::Default,
        }
    }

    /// Keys the file sets that only git's configuration may set: ignored.
    pub(crate) fn ignored_in_file(&self) -> Vec<&'static str> {
        let Some(file) = &self.file else {
            return vec![];
        };
        KEYS.iter()
            .filter(|k| !k.committable && file.has(k.name))
            .map(|k| k.name)
            .collect()
    }

    /// A boolean with git's rules, `default` when unset.
    pub fn bool(&self, name: &str, default: bool) -> Result<bool, ConfigError> {
        match self.file_setting(name) {
            Some(file) => Ok(file.bool(name, default)?.unwrap_or(default)),
            None => self.repo.config_bool(name, default),
        }
    }

    /// An integer with git's rules, `None` when unset.
    pub fn int(&self, name: &str) -> Result<Option<i64>, ConfigError> {
        match self.file_setting(name) {
            Some(file) => file.int(name),
            None => self.repo.config_int(name),
        }
    }

    /// The value as written, `None` when unset.
    pub fn string(&self, name: &str) -> Option<String> {
        match self.file_setting(name) {
            Some(file) => file.string(name),
            None => self.repo.config_string(name),
        }
    }

    /// Every value of a multi-valued key: git's when git's configuration sets any, else the
    /// file's (the two are not merged: git's configuration replaces the list).
    pub fn strings(&self, name: &str) -> Vec<String> {
        match self.file_setting(name) {
            Some(file) => file.strings(name),
            None => self.repo.config_strings(name),
        }
    }

    /// The error for `name`'s value, wherever it comes from, which is not `expected`.
    pub fn bad(&self, name: &str, expected: &str, fix: Option<String>) -> ConfigError {
        match self.file_setting(name) {
            Some(file) => file.bad(name, expected, fix),
            None => self.repo.bad_config(name, expected, fix),
        }
    }

    /// `hand.maxSlots`, default 16; anything but a positive integer is an error naming the value
    /// (a typo such as `0`, `-1` or `abc` once silently meant 16).
    pub fn max_slots(&self) -> Result<i64, ConfigError> {
        const KEY: &str = "hand.maxSlots";
        let default = DEFAULT_MAX_SLOTS;
        let bad = || self.bad(KEY, "a positive integer", Some(default.to_string()));
        match self.int(KEY).map_err(|_| bad())? {
            None => Ok(default),
            Some(n) if n > 0 => Ok(n),
            Some(_) => Err(bad()),
        }
    }

    pub(crate) fn require_credential(&self) -> Result<bool, ConfigError> {
        self.bool("hand.requireCredential", false)
    }

    pub(crate) fn fence_branches(&self) -> Result<bool, ConfigError> {
        self.fence_switch("hand.fenceBranches")
    }

    pub(crate) fn fence_refs(&self) -> Result<bool, ConfigError> {
        self.fence_switch("hand.fenceRefs")
    }

    /// A switch that turns a fence off (default on). It is turned off only by a file (git's
    /// configuration files, else `.handconfig`), never by `git -c` or the environment
    /// (`GIT_CONFIG_PARAMETERS`, `GIT_CONFIG_COUNT`): those are inherited by everything the
    /// process starts, so an agent started from inside `git -c hand.fenceRefs=false ...` (a hook,
    /// an editor) would carry the fence's "off" into every git it runs (issue 22). Such an "off"
    /// is ignored and the files' value holds; an "on" from there is honoured.
    fn fence_switch(&self, name: &str) -> Result<bool, ConfigError> {
        if self.bool(name, true)? {
            return Ok(true);
        }
        let from_elsewhere = self
            .repo
            .config_origin(name)
            .is_some_and(|o| matches!(o.scope, "command" | "env"));
        if !from_elsewhere {
            return Ok(false);
        }
        if let Some(on) = self.repo.config_bool_in_files(name) {
            return Ok(on);
        }
        match self.file.filter(|f| committable(name) && f.has(name)) {
            Some(file) => Ok(file.bool(name, true).ok().flatten().unwrap_or(true)),
            None => Ok(true),
        }
    }

    /// `hand.remoteFence`: the team's remote checks the lease of every push (its pre-receive
    /// hook), so a credential handed out here also carries the lease as push options. Off by
    /// default: git refuses to send push options to a remote that does not advertise them.
    pub fn remote_fence(&self) -> Result<bool, ConfigError> {
        self.bool("hand.remoteFence", false)
    }

    pub(crate) fn adopt_worktrees(&self) -> Result<bool, ConfigError> {
        self.bool("hand.adoptWorktrees", false)
    }

    /// `hand.installHooks`: only git's configuration sets it (`git hand uninstall` writes it
    /// there), so a committed file can neither opt a clone out of the hooks nor back in.
    pub(crate) fn install_hooks(&self) -> Result<bool, ConfigError> {
        self.repo.config_bool("hand.installHooks", true)
    }

    /// `hand.issueNamespace` as written (the caller judges it).
    pub(crate) fn issue_namespace(&self) -> Option<String> {
        self.string("hand.issueNamespace")
    }

    /// `hand.include`: the patterns copied from the main worktree into a new slot.
    pub fn include(&self) -> Vec<String> {
        self.strings("hand.include")
    }

    /// `hand.setupTimeout`: how long one setup command may run before it is killed.
    pub(crate) fn setup_timeout(&self) -> Result<Duration, ConfigError> {
        const KEY: &str = "hand.setupTimeout";
        let text = self
            .string(KEY)
            .unwrap_or_else(|| DEFAULT_SETUP_TIMEOUT.into());
        match crate::clock::parse_ttl(text.trim()) {
            Ok(ms) => Ok(Duration::from_millis(u64::try_from(ms).unwrap_or(u64::MAX))),
            Err(_) => Err(self.bad(
                KEY,
                "a duration (90s, 10m, 1h)",
                Some(DEFAULT_SETUP_TIMEOUT.into()),
            )),
        }
    }

    /// `hand.claudeTtl`: the TTL of a slot leased to a Claude Code session (`WorktreeCreate`);
    /// unset, or `none`, is open-ended: a session's task ends at `WorktreeRemove` or teardown.
    pub(crate) fn claude_ttl(&self) -> Result<Option<crate::clock::Millis>, ConfigError> {
        const KEY: &str = "hand.claudeTtl";
        match self.string(KEY).as_deref().map(str::trim) {
            None | Some("" | "none") => Ok(None),
            Some(text) => crate::clock::parse_ttl(text)
                .map(Some)
                .map_err(|_| self.bad(KEY, "a duration (90s, 30m, 2h, 1d) or none", None)),
        }
    }

    /// The command `hook` runs, if any: an empty value is none, so `git config hand.onCreate ""`
    /// turns off a command the file sets.
    pub(crate) fn setup_command(&self, hook: Hook) -> Option<SetupCommand> {
        let command = self.string(hook.key())?;
        if command.trim().is_empty() {
            return None;
        }
        Some(SetupCommand {
            hook,
            from_file: self.file_setting(hook.key()).is_some(),
            command,
        })
    }

    /// What a spawn runs: `hand.onCreate` and `hand.onReuse`, and the timeout.
    pub(crate) fn setup_plan(&self) -> Result<crate::ops::repo::setup::Plan, ConfigError> {
        Ok(crate::ops::repo::setup::Plan {
            on_create: self.setup_command(Hook::OnCreate),
            on_reuse: self.setup_command(Hook::OnReuse),
            timeout: self.setup_timeout()?,
        })
    }

    /// The value `name` has, typed and judged as git-hand reads it: `Err` says why it would be
    /// refused. `None`: unset.
    pub fn judged(&self, name: &str) -> Result<Option<String>, ConfigError> {
        let shown = |v: String| Ok(Some(v));
        match name {
            "hand.maxSlots" => shown(self.max_slots()?.to_string()),
            "hand.requireCredential" => shown(self.require_credential()?.to_string()),
            "hand.fenceBranches" => shown(self.fence_branches()?.to_string()),
            "hand.fenceRefs" => shown(self.fence_refs()?.to_string()),
            "hand.remoteFence" => shown(self.remote_fence()?.to_string()),
            "hand.adoptWorktrees" => shown(self.adopt_worktrees()?.to_string()),
            "hand.installHooks" => shown(self.install_hooks()?.to_string()),
            "hand.setupTimeout" => {
                self.setup_timeout()?;
                shown(
                    self.string(name)
                        .unwrap_or_else(|| DEFAULT_SETUP_TIMEOUT.into()),
                )
            }
            "hand.claudeTtl" => {
                self.claude_ttl()?;
                Ok(self.string(name))
            }
            "hand.machine" => machine(self.repo),
            "hand.ledger" | "hand.root" => Ok(git_string(self.repo, name)),
            _ => Ok(self.string(name)),
        }
    }
}
