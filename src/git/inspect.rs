//! Reading a repository with gix: where it is (common dir, this worktree's admin dir, its work
//! tree), its configuration, its HEAD and its linked worktrees. Nothing here writes.
//!
//! gix returns paths as git wrote them (`.git/worktrees/x/../..`); everything leaving this module
//! is canonicalized, because these paths become ledger keys.

use std::path::{Path, PathBuf};

use crate::hint::Hint;
use gix::bstr::ByteSlice;

#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    #[error("{} is not in a git repository ({message})", dir.display())]
    NotARepo { dir: PathBuf, message: String },
    #[error("cannot resolve {}: {source}", path.display())]
    Path {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read the repository: {0}")]
    Read(String),
    /// git reads the repository but its objects are not SHA-1 (`git init --object-format=sha256`):
    /// gix is built here for SHA-1 only, and ids are 40 hex digits throughout (issue 22 item 10).
    #[error(
        "{} is a {format} repository (extensions.objectFormat), which git-hand does not support yet: only sha1 repositories can be leased",
        dir.display()
    )]
    ObjectFormat { dir: PathBuf, format: String },
    /// git reads the repository but gix does not (a setting git takes and gix refuses): never
    /// "not in a git repository", which sends the user looking for the wrong thing.
    #[error("git-hand cannot read the repository at {} that git reads: {message}", dir.display())]
    Unreadable { dir: PathBuf, message: String },
}

impl InspectError {
    /// The command that gets out of it.
    pub fn hint(&self) -> crate::hint::Hint {
        match self {
            InspectError::ObjectFormat { .. } => {
                Hint::run("use git-hand in a sha1 repository (git init --object-format=sha1)")
            }
            InspectError::Unreadable { .. } => Hint::run("git config --list --show-origin")
                .why("look for the setting git-hand cannot read"),
            _ => Hint::run("run it inside a repository, or pass -C <path>"),
        }
    }
}

/// A configuration value git-hand cannot use. Its message names the key and the value, so the
/// user can find the typo; [`ConfigError::hint`] is the command that fixes it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.describe())]
pub struct ConfigError {
    pub key: String,
    pub value: String,
    /// What the value must be: "a boolean (true or false)".
    pub expected: String,
    /// A value that works (the default), when there is one to suggest (boxed: the error stays
    /// small enough to return by value).
    pub fix: Option<Box<str>>,
    /// The repository's `.handconfig` when the value was read there, not from git config
    /// (`ops/repo/settings/`); with an empty `key`, the file itself does not parse and `expected`
    /// says why.
    pub file: Option<PathBuf>,
    /// With an empty `key`: the file was not even read (a symlink, a FIFO, too large:
    /// `repo_file`), and `expected` is why, naming the file.
    pub unreadable: bool,
}

impl ConfigError {
    fn describe(&self) -> String {
        let (key, value, expected) = (&self.key, &self.value, &self.expected);
        match &self.file {
            None => format!("git config {key} is {value:?}, which is not {expected}"),
            Some(_) if key.is_empty() && self.unreadable => expected.clone(),
            Some(file) if key.is_empty() => {
                format!(
                    "{} is not in git's config syntax: {expected}",
                    crate::shown::path(file)
                )
            }
            Some(file) => format!(
                "{} sets {key} to {value:?}, which is not {expected}",
                crate::shown::path(file)
            ),
        }
    }

    /// The command that replaces the bad value.
    pub fn hint(&self) -> crate::hint::Hint {
        match (&self.file, &self.fix) {
            (Some(file), _) if self.key.is_empty() && self.unreadable => {
                Hint::run(format!("ls -l {}", crate::shown::path(file))).why(
                    "it must be a regular file of at most 1 MiB, not a link; \
                 or set the hand.* values in git config",
                )
            }
            (Some(file), _) if self.key.is_empty() => Hint::run(format!(
                "git config --file {} --list",
                crate::shown::path(file)
            ))
            .why("where it goes wrong"),
            (Some(file), Some(value)) => Hint::run(format!(
                "git config --file {} {} {value}",
                crate::shown::path(file),
                self.key
            ))
            .why("the default (or set it in git config, which wins)"),
            (Some(file), None) => Hint::run(format!(
                "git config --file {} --unset {}",
                crate::shown::path(file),
                self.key
            ))
            .why("back to the default"),
            (None, Some(value)) => {
                Hint::run(format!("git config {} {value}", self.key)).why("the default")
            }
            (None, None) => {
                Hint::run(format!("git config --unset {}", self.key)).why("back to the default")
            }
        }
    }
}

/// Where a repository and the current worktree are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The shared git dir (realpath).
    pub common_dir: PathBuf,
    /// This worktree's private admin dir (realpath): `<common>/worktrees/<id>` in a linked
    /// worktree, the common dir in the main one.
    pub admin_dir: PathBuf,
    /// The top of this worktree (realpath), if there is one.
    pub workdir: Option<PathBuf>,
}

impl Location {
    pub(crate) fn is_linked(&self) -> bool {
        self.admin_dir != self.common_dir
    }
}

/// A linked worktree as git records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkedWorktree {
    pub admin_dir: PathBuf,
    /// Where the work tree is (canonical when it exists).
    pub path: PathBuf,
    pub exists: bool,
    pub lock_reason: Option<String>,
}

/// An opened repository.
pub struct Repo {
    repo: gix::Repository,
    pub loc: Location,
    /// The committed settings file, read and parsed at most once per opened repository
    /// (`config_file.rs`, [`Repo::committed_config`]).
    pub(super) committed: super::config_file::ReadOnce,
}

/// Whether git reads `url` as a local path relative to the worktree (`../origin.git`, `.`):
/// no `<scheme>://`, no `host:` before the first `/` (git's scp-like ssh form), not absolute.
pub(crate) fn is_relative_path_url(url: &str) -> bool {
    if url.is_empty() || url.starts_with('/') || url.starts_with('~') || url.contains("://") {
        return false;
    }
    match (url.find(':'), url.find('/')) {
        (Some(colon), Some(slash)) => slash < colon,
        (Some(_), None) => false,
        (None, _) => true,
    }
}

/// Why gix could not open the repository around `dir`, asked of git itself (this path only):
/// a repository git reads is never reported as "not in a git repository". The environment is
/// inherited, so git honours `GIT_DIR` as discovery did.
fn why_not_a_repo(dir: &Path, message: String) -> InspectError {
    let dir = dir.to_path_buf();
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(&dir)
        .args(["rev-parse", "--show-object-format"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    match out {
        Ok(out) if out.status.success() => {
            let format = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if format.is_empty() || format == "sha1" {
                InspectError::Unreadable { dir, message }
            } else {
                InspectError::ObjectFormat { dir, format }
            }
        }
        _ => InspectError::NotARepo { dir, message },
    }
}

pub fn canonical(path: &Path) -> Result<PathBuf, InspectError> {
    std::fs::canonicalize(path).map_err(|source| InspectError::Path {
        path: path.to_path_buf(),
        source,
    })
}

impl Repo {
    /// Finds the repository containing `dir`, honouring `GIT_DIR` and `GIT_WORK_TREE` the way git
    /// does (git exports `GIT_DIR` to hooks).
    pub fn discover(dir: &Path) -> Result<Self, InspectError> {
        // `git -c key=value hand ...` reaches us as GIT_CONFIG_PARAMETERS, which gix does not
        // read by itself: hand the values to it as the command-line overrides they are.
        let overrides = std::env::var("GIT_CONFIG_PARAMETERS")
            .map(|p| parse_config_parameters(&p))
            .unwrap_or_default();
        let mut opts = gix::open::Options::default().cli_overrides(overrides);
        // git reads an empty `GIT_CONFIG_COUNT` as no entries, gix refuses to open any
        // repository over it (issue 22 item 10): with no entries there is nothing to read.
        if std::env::var_os("GIT_CONFIG_COUNT").is_some_and(|count| count.is_empty()) {
            let mut permissions = gix::open::Permissions::default();
            permissions.config.env = false;
            opts = opts.permissions(permissions);
        }
        let trust = gix::sec::trust::Mapping {
            full: opts.clone(),
            reduced: opts,
        };
        let repo = gix::ThreadSafeRepository::discover_with_environment_overrides_opts(
            dir,
            Default::default(),
            trust,
        )
        .map(gix::Repository::from)
        .map_err(|e| why_not_a_repo(dir, e.to_string()))?;
        Self::located(repo)
    }

    /// The repository at `dir` with nothing but its own configuration file: no system or global
    /// file, no environment variable, no `-c`. A server's pre-receive hook opens its repository so
    /// (issue 22): over a local path or `file://` git hands the hook the pusher's `HOME`,
    /// `XDG_CONFIG_HOME` and `GIT_CONFIG_GLOBAL`, and nothing the pusher carries may choose what
    /// the server judges with.
    pub(crate) fn open_isolated(dir: &Path) -> Result<Self, InspectError> {
        let repo = gix::ThreadSafeRepository::open_opts(dir, gix::open::Options::isolated())
            .map(gix::Repository::from)
            .map_err(|e| why_not_a_repo(dir, e.to_string()))?;
        Self::located(repo)
    }

    fn located(repo: gix::Repository) -> Result<Self, InspectError> {
        let cwd = repo.current_dir().to_path_buf();
        let abs = |p: &Path| canonical(&cwd.join(p));
        let loc = Location {
            common_dir: abs(repo.common_dir())?,
            admin_dir: abs(repo.git_dir())?,
            workdir: repo.workdir().map(abs).transpose()?,
        };
        Ok(Self {
            repo,
            loc,
            committed: Default::default(),
        })
    }

    /// The git CLI bound to this worktree's top, or to the common dir of a bare repository:
    /// where a command about the whole repository runs.
    pub fn git(&self) -> super::Git {
        super::Git::new(
            self.loc
                .workdir
                .clone()
                .unwrap_or_else(|| self.loc.common_dir.clone()),
        )
    }

    /// The gix repository, for the other readers of this module's directory (`config_file.rs`).
    pub(super) fn gix(&self) -> &gix::Repository {
        &self.repo
    }

    pub(crate) fn config_string(&self, key: &str) -> Option<String> {
        let value = self.repo.config_snapshot().string(key)?;
        Some(value.to_str_lossy().into_owned())
    }

    /// Every remote URL (`remote.<name>.url` and `.pushurl`) that is a relative path, as
    /// `(key, url)`, leaving out those some `url.<base>.insteadOf` (or `pushInsteadOf`) already
    /// rewrites. git resolves such a path against the top of the worktree it runs in, so from a
    /// slot under the pool it names another place (issue 22 item 11).
    pub(crate) fn relative_remote_urls(&self) -> Vec<(String, String)> {
        let snapshot = self.repo.config_snapshot();
        let file = snapshot.plumbing();
        let rewritten: Vec<String> = file
            .sections_by_name("url")
            .into_iter()
            .flatten()
            .flat_map(|section| {
                let mut v = section.values("insteadOf");
                v.extend(section.values("pushInsteadOf"));
                v
            })
            .map(|v| v.to_str_lossy().into_owned())
            .collect();
        let mut found = vec![];
        for section in file.sections_by_name("remote").into_iter().flatten() {
            let Some(name) = section.header().subsection_name() else {
                continue;
            };
            for key in ["url", "pushurl"] {
                for url in section.values(key) {
                    let url = url.to_str_lossy().into_owned();
                    if is_relative_path_url(&url)
                        && !rewritten.iter().any(|r| url.starts_with(r.as_str()))
                    {
                        found.push((format!("remote.{name}.{key}"), url));
                    }
                }
            }
        }
        found
    }

    /// Every value of a multi-valued key, in git's order (system, global, local, `-c`); empty
    /// when unset.
    pub(crate) fn config_strings(&self, key: &str) -> Vec<String> {
        let snapshot = self.repo.config_snapshot();
        let values = snapshot.plumbing().strings(key).unwrap_or_default();
        values
            .iter()
            .map(|v| v.to_str_lossy().into_owned())
            .collect()
    }

    /// A boolean, with git's rules (`true`/`yes`/`on`/`1`, `false`/`no`/`off`/`0`/empty, any
    /// other integer), `default` when unset. A value git would call a bad boolean is an error
    /// naming the key and the value: a typo must never silently mean the default (issue 10).
    pub fn config_bool(&self, key: &str, default: bool) -> Result<bool, ConfigError> {
        match self.repo.config_snapshot().try_boolean(key) {
            Ok(value) => Ok(value.unwrap_or(default)),
            Err(_) => match self.config_string(key).as_deref().and_then(git_integer) {
                Some(n) => Ok(n != 0),
                None => Err(self.bad_config(
                    key,
                    "a boolean (true or false)",
                    Some(default.to_string()),
                )),
            },
        }
    }

    /// An integer, with git's rules (`16`, `1k`); `None` when unset, an error naming the key and
    /// the value when it does not parse or does not fit. The caller checks the range.
    pub fn config_int(&self, key: &str) -> Result<Option<i64>, ConfigError> {
        match self.repo.config_snapshot().try_integer(key) {
            Ok(value) => Ok(value),
            Err(_) => match self.config_string(key).as_deref().and_then(git_integer) {
                Some(n) => Ok(Some(n)),
                None => Err(self.bad_config(key, "an integer", None)),
            },
        }
    }

    /// The error for `key`'s current value, which is not `expected`; `fix` is a value that
    /// works (else the hint unsets the key).
    pub(crate) fn bad_config(&self, key: &str, expected: &str, fix: Option<String>) -> ConfigError {
        ConfigError {
            key: key.to_string(),
            value: self.config_string(key).unwrap_or_default(),
            expected: expected.to_string(),
            fix: fix.map(Into::into),
            file: None,
            unreadable: false,
        }
    }

    /// `remote.origin.url`, with a local relative path made absolute against the work tree so
    /// two clones of one local remote agree.
    pub(crate) fn origin_url(&self) -> Option<String> {
        let url = self.config_string("remote.origin.url")?;
        if url.starts_with('.')
            && let Ok(abs) = std::fs::canonicalize(self.main_dir().join(&url))
        {
            return Some(abs.to_string_lossy().into_owned());
        }
        Some(url)
    }

    /// The URL `git push <remote>` pushes to, as configured: `remote.<name>.pushurl`, else its
    /// url, with git's `insteadOf`/`pushInsteadOf` rewrites applied (gix applies them as git
    /// does). A relative local path stays relative.
    pub(crate) fn push_url(&self, remote: &str) -> Option<String> {
        let remote = self.repo.try_find_remote(remote)?.ok()?;
        let url = remote.url(gix::remote::Direction::Push)?;
        Some(url.to_bstring().to_string())
    }

    /// The directory that stands for the whole repository, whichever worktree git-hand runs in:
    /// the main worktree's top, else (a bare repository) the common dir. The repository is named
    /// after it, and a relative local remote URL is resolved from it, so every worktree agrees.
    pub(crate) fn main_dir(&self) -> PathBuf {
        self.main_workdir()
            .unwrap_or_else(|| self.loc.common_dir.clone())
    }

    /// The main worktree's top directory (none for a bare repository).
    pub(crate) fn main_workdir(&self) -> Option<PathBuf> {
        if self.repo.is_bare() && !self.loc.is_linked() {
            return None;
        }
        let parent = self.loc.common_dir.parent()?;
        (self.loc.common_dir.file_name()? == ".git").then(|| parent.to_path_buf())
    }

    /// A short name for the repository: its main worktree's directory name, or the common dir's
    /// name without `.git` for a bare repository.
    pub fn name(&self) -> String {
        let name = self
            .main_dir()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = name.strip_suffix(".git").unwrap_or(&name).to_string();
        let clean: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._-".contains(c) {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        if clean.is_empty() || clean.starts_with('.') {
            format!("repo{clean}")
        } else {
            clean
        }
    }

    /// The branch HEAD points at (`main`, not `refs/heads/main`), if HEAD is not detached.
    pub(crate) fn head_branch(&self) -> Option<String> {
        let name = self.repo.head_name().ok()??;
        Some(name.shorten().to_str_lossy().into_owned())
    }

    /// The commit HEAD points at, if it is born.
    pub(crate) fn head_oid(&self) -> Option<String> {
        self.repo.head_id().ok().map(|id| id.to_string())
    }

    /// The commit a full reference name (`refs/heads/main`) points at, if it exists.
    pub(crate) fn ref_oid(&self, name: &str) -> Option<String> {
        let reference = self.repo.try_find_reference(name).ok()??;
        reference
            .into_fully_peeled_id()
            .ok()
            .map(|id| id.to_string())
    }

    /// The local branches whose names are `branch`'s but for case (`hand/fix` for `hand/Fix`),
    /// `branch` itself left out. On a case-insensitive filesystem (macOS's default) such a pair
    /// is one loose ref file, so git there reads one as the other: spawn refuses the pair on
    /// every platform. One listing of `refs/heads/`, no git process.
    pub(crate) fn branches_differing_in_case(&self, branch: &str) -> Vec<String> {
        let folded = branch.to_lowercase();
        let Ok(platform) = self.repo.references() else {
            return Vec::new();
        };
        let Ok(refs) = platform.local_branches() else {
            return Vec::new();
        };
        refs.flatten()
            .filter_map(|r| {
                let name = r.name().as_bstr().to_str_lossy();
                name.strip_prefix("refs/heads/").map(str::to_string)
            })
            .filter(|name| name != branch && name.to_lowercase() == folded)
            .collect()
    }

    /// When the commit `oid` was made (its committer time, seconds since the epoch), read from
    /// the object database without a git process; `None` when it is not a commit here.
    pub(crate) fn commit_time(&self, oid: &str) -> Option<i64> {
        let id = gix::ObjectId::from_hex(oid.as_bytes()).ok()?;
        let commit = self.repo.find_commit(id).ok()?;
        Some(commit.time().ok()?.seconds)
    }

    /// The commit the HEAD of `worktree` (a linked worktree of this repository) points at,
    /// read from its admin dir without a git process.
    pub(crate) fn worktree_head_oid(&self, worktree: &Path) -> Option<String> {
        let head = super::link::head_of(worktree)?;
        match head.strip_prefix("ref: ") {
            Some(name) => self.ref_oid(name),
            None => Some(head),
        }
    }

    /// Whether everything the HEAD of `worktree` reaches is on some branch, remote-tracking
    /// branch or tag, proven without a git process: HEAD names an existing branch, or is the
    /// tip of a ref. `false` proves nothing; the caller then walks the history with git.
    pub(crate) fn worktree_head_is_on_a_ref(&self, worktree: &Path) -> bool {
        match super::link::head_of(worktree) {
            Some(head) => match head.strip_prefix("ref: ") {
                Some(name) => name.starts_with("refs/heads/") && self.ref_oid(name).is_some(),
                None => self.is_tip_under(&head, &["refs/heads/", "refs/remotes/", "refs/tags/"]),
            },
            None => false,
        }
    }

    /// Whether `oid` is the commit that some reference under one of `prefixes` (`refs/heads/`,
    /// `refs/remotes/`, `refs/tags/`) points at, tags peeled. A cheap proof that the commit, and
    /// everything behind it, is on a ref; `false` proves nothing (the caller then asks git).
    pub(crate) fn is_tip_under(&self, oid: &str, prefixes: &[&str]) -> bool {
        let Ok(want) = gix::ObjectId::from_hex(oid.as_bytes()) else {
            return false;
        };
        let Ok(platform) = self.repo.references() else {
            return false;
        };
        let Ok(refs) = platform.all() else {
            return false;
        };
        refs.flatten()
            .filter(|r| {
                let name = r.name().as_bstr();
                prefixes.iter().any(|p| name.starts_with(p.as_bytes()))
            })
            .any(|r| r.into_fully_peeled_id().is_ok_and(|id| id.detach() == want))
    }

    /// Where a symbolic reference (`refs/remotes/origin/HEAD`) points, as a full name.
    pub(crate) fn symref_target(&self, name: &str) -> Option<String> {
        let reference = self.repo.try_find_reference(name).ok()??;
        let target = reference.target();
        Some(target.try_name()?.as_bstr().to_str_lossy().into_owned())
    }

    /// The branch each worktree has checked out (main worktree included) and where that
    /// worktree is, read from the HEAD and gitdir files in the admin dirs: no process, no object
    /// access.
    pub(crate) fn checked_out_branches(&self) -> Vec<(PathBuf, String)> {
        let main = self.main_dir();
        let mut admin_dirs = vec![(self.loc.common_dir.clone(), main)];
        if let Ok(entries) = std::fs::read_dir(self.loc.common_dir.join("worktrees")) {
            for admin in entries.flatten().map(|e| e.path()) {
                // `gitdir` holds the path of the worktree's `.git` file.
                let top = std::fs::read_to_string(admin.join("gitdir"))
                    .ok()
                    .and_then(|g| Path::new(g.trim()).parent().map(Path::to_path_buf))
                    .unwrap_or_else(|| admin.clone());
                admin_dirs.push((admin, top));
            }
        }
        admin_dirs
            .into_iter()
            .filter_map(|(admin, top)| {
                let head = std::fs::read_to_string(admin.join("HEAD")).ok()?;
                let branch = head.trim().strip_prefix("ref: refs/heads/")?.to_string();
                Some((top, branch))
            })
            .collect()
    }

    /// Every linked worktree git knows about. An admin dir whose `gitdir` file does not name a
    /// place (empty or unreadable: a `git worktree add` killed before writing it) is no worktree
    /// to git: `git worktree list` leaves it out, and so it is left out here, instead of failing
    /// every verb that lists. `git worktree prune` removes it ("invalid gitdir file") unless it
    /// is locked, which a slot's is (`--lock` is written first): such debris then stays, harmless.
    pub(crate) fn linked_worktrees(&self) -> Result<Vec<LinkedWorktree>, InspectError> {
        let proxies = self
            .repo
            .worktrees()
            .map_err(|e| InspectError::Read(e.to_string()))?;
        let mut out = Vec::with_capacity(proxies.len());
        for proxy in proxies {
            let Ok(raw) = proxy.base() else {
                continue;
            };
            let (path, exists) = match std::fs::canonicalize(&raw) {
                Ok(p) => (p, true),
                Err(_) => (raw, false),
            };
            out.push(LinkedWorktree {
                admin_dir: canonical(proxy.git_dir())?,
                path,
                exists,
                lock_reason: proxy
                    .lock_reason()
                    .map(|r| r.to_str_lossy().trim().to_string()),
            });
        }
        Ok(out)
    }
}

/// An integer as git reads one (`strtoimax`, which skips leading white space, then an optional
/// k/m/g unit), where gix is stricter: so a value git accepts is never an error here.
fn git_integer(raw: &str) -> Option<i64> {
    gix::config::Integer::try_from(raw.trim_start())
        .ok()?
        .to_decimal()
}

/// Parses `GIT_CONFIG_PARAMETERS` (git's shell-quoted list of `-c` values, either
/// `'key'='value'` or the older `'key=value'`) into `key=value` strings.
fn parse_config_parameters(text: &str) -> Vec<String> {
    let mut out = vec![];
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        out.push(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::parse_config_parameters as parse;

    #[test]
    fn relative_path_urls_are_told_apart_from_every_other_spelling_git_reads() {
        for url in ["../origin.git", "origin.git", ".", "sub/dir:x"] {
            assert!(super::is_relative_path_url(url), "{url}");
        }
        for url in [
            "/srv/origin.git",
            "file:///srv/o.git",
            "ssh://h/o.git",
            "git@github.com:o/r.git",
            "host:repo",
            "~/o.git",
            "",
        ] {
            assert!(!super::is_relative_path_url(url), "{url}");
        }
    }

    #[test]
    fn git_c_values_are_read_in_both_of_gits_formats() {
        assert_eq!(parse("'color.ui'='never'"), ["color.ui=never"]);
        assert_eq!(
            parse("'color.ui=never' 'hand.requirecredential'='true'"),
            ["color.ui=never", "hand.requirecredential=true"]
        );
        assert_eq!(parse("'a.b'='it'\\''s'"), ["a.b=it's"]);
        assert_eq!(parse("'core.bare'"), ["core.bare"]);
        assert!(parse("").is_empty());
    }
}
