//! A repository's committed settings file (`.handconfig`), read with gix's config parser in
//! git's config syntax (as git reads `.gitmodules` and git-lfs `.lfsconfig`), and where a value
//! of git's own configuration comes from (`--show-scope`). `ops/repo/settings/` decides which wins;
//! nothing outside this directory sees a gix type.

use std::path::{Path, PathBuf};

use gix::bstr::ByteSlice;

use super::{ConfigError, Repo};

/// A settings file, parsed. Includes are never followed: a committed file must not pull in
/// another file the user never saw (nor one outside the repository).
pub struct ConfigFile {
    path: PathBuf,
    /// The file's blob id, as `git hash-object <path>` prints it: what `git hand trust` approves.
    hash: String,
    /// The content read, as read: what was hashed and parsed.
    bytes: Vec<u8>,
    file: gix::config::File,
}

impl ConfigFile {
    /// Reads and parses the file at `path`: `Ok(None)` when there is none; an error (naming the
    /// file) when it cannot be read or is not in git's config syntax.
    pub fn read(path: &Path) -> Result<Option<Self>, ConfigError> {
        let unusable = |why: String, unreadable: bool| ConfigError {
            key: String::new(),
            value: String::new(),
            expected: why,
            fix: None,
            file: Some(path.to_path_buf()),
            unreadable,
        };
        // Only a regular file, never through a symlink, at most 1 MiB (`repo_file`).
        let bytes = match crate::repo_file::read_regular(path, crate::repo_file::SETTINGS_CAP) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok(None),
            Err(e) => return Err(unusable(e.to_string(), true)),
        };
        // One read: the content hashed is the content parsed, so what the user approved is what
        // runs.
        let hash = gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, &bytes)
            .map_err(|e| unusable(e.to_string(), false))?
            .to_string();
        let meta = gix::config::file::Metadata::api().at(path);
        let file = gix::config::File::from_bytes_no_includes(&bytes, meta, Default::default())
            .map_err(|e| unusable(e.to_string(), false))?;
        Ok(Some(Self {
            path: path.to_path_buf(),
            hash,
            bytes,
            file,
        }))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The content read (the one read that was hashed and parsed).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The blob id of the content read (`git hash-object`).
    pub fn hash(&self) -> &str {
        &self.hash
    }

    /// Whether the file sets `key` at all (a value-less `key` included).
    pub fn has(&self, key: &str) -> bool {
        self.file.strings(key).is_some()
            || self.file.boolean(key).is_ok_and(|value| value.is_some())
    }

    /// The last value of `key`, as written.
    pub fn string(&self, key: &str) -> Option<String> {
        Some(self.file.string(key)?.to_str_lossy().into_owned())
    }

    /// Every value of `key`, in order.
    pub fn strings(&self, key: &str) -> Vec<String> {
        self.file
            .strings(key)
            .unwrap_or_default()
            .iter()
            .map(|v| v.to_str_lossy().into_owned())
            .collect()
    }

    /// A boolean with git's rules (a key with no `=` is true); `None` when unset.
    pub fn bool(&self, key: &str, default: bool) -> Result<Option<bool>, ConfigError> {
        self.file
            .boolean(key)
            .map_err(|_| self.bad(key, "a boolean (true or false)", Some(default.to_string())))
    }

    /// An integer with git's rules (`16`, `1k`); `None` when unset.
    pub fn int(&self, key: &str) -> Result<Option<i64>, ConfigError> {
        self.file
            .integer(key)
            .map_err(|_| self.bad(key, "an integer", None))
    }

    /// The error for `key`'s value in this file, which is not `expected`.
    pub fn bad(&self, key: &str, expected: &str, fix: Option<String>) -> ConfigError {
        ConfigError {
            key: key.to_string(),
            value: self.string(key).unwrap_or_default(),
            expected: expected.to_string(),
            fix: fix.map(Into::into),
            file: Some(self.path.clone()),
            unreadable: false,
        }
    }
}

/// Where git's configuration sets a key: its scope, as `git config --show-scope` names it, and
/// its file (none for `git -c`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigOrigin {
    pub scope: &'static str,
    pub file: Option<PathBuf>,
}

/// A settings file read once: the path asked for, and what reading it gave.
pub(super) type ReadOnce = std::cell::OnceCell<(PathBuf, Result<Option<ConfigFile>, ConfigError>)>;

impl Repo {
    /// The settings file at `path` ([`ConfigFile::read`]), read and parsed the first time it is
    /// asked for and kept for the life of this opened repository: every setting a command (or a
    /// hook) reads comes from the one read. A repository has one such file, so a later call
    /// with another path is a bug.
    pub(crate) fn committed_config(&self, path: &Path) -> Result<Option<&ConfigFile>, ConfigError> {
        let (read_from, read) = self
            .committed
            .get_or_init(|| (path.to_path_buf(), ConfigFile::read(path)));
        debug_assert_eq!(read_from, path, "one settings file per repository");
        read.as_ref().map(Option::as_ref).map_err(Clone::clone)
    }

    /// Where the value git would use for `key` (a `section.name` key) is set, or `None` when no
    /// scope of git's configuration sets it.
    pub(crate) fn config_origin(&self, key: &str) -> Option<ConfigOrigin> {
        let (section, name) = key.split_once('.')?;
        let config = self.gix().config_snapshot();
        let meta = config
            .plumbing()
            .sections_by_name(section)?
            .filter(|s| s.header().subsection_name().is_none())
            .filter(|s| s.value_implicit(name).is_some())
            .last()?
            .meta()
            .clone();
        Some(ConfigOrigin {
            scope: scope_word(meta.source),
            file: meta.path,
        })
    }
}

impl Repo {
    /// `key` (a `section.name` boolean) as git's configuration files alone set it, without what
    /// `git -c` and the environment (`GIT_CONFIG_PARAMETERS`, `GIT_CONFIG_COUNT`) add: `None` when
    /// no file sets it. A value that is no boolean counts as `true` (the caller reads the key
    /// with [`Repo::config_bool`] first, which names a bad value).
    pub(crate) fn config_bool_in_files(&self, key: &str) -> Option<bool> {
        use gix::config::Source;
        let (section, name) = key.split_once('.')?;
        let config = self.gix().config_snapshot();
        let value = config
            .plumbing()
            .sections_by_name(section)?
            .filter(|s| s.header().subsection_name().is_none())
            .filter(|s| {
                !matches!(
                    s.meta().source,
                    Source::Cli | Source::Api | Source::Env | Source::EnvOverride
                )
            })
            .filter_map(|s| s.value_implicit(name))
            .last()?;
        Some(match value {
            None => true,
            Some(v) => gix::config::Boolean::try_from(v.as_bstr())
                .map(|b| b.0)
                .unwrap_or_else(|_| {
                    v.to_str().ok().and_then(|t| t.trim().parse::<i64>().ok()) != Some(0)
                }),
        })
    }
}

/// `git config --show-scope`'s word for a source.
fn scope_word(source: gix::config::Source) -> &'static str {
    use gix::config::Source;
    match source {
        Source::GitInstallation | Source::System => "system",
        Source::Git | Source::User => "global",
        Source::Local => "local",
        Source::Worktree => "worktree",
        Source::Env | Source::EnvOverride => "env",
        Source::Cli | Source::Api => "command",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> (tempfile::TempDir, Result<Option<ConfigFile>, ConfigError>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".handconfig");
        std::fs::write(&path, text).unwrap();
        let read = ConfigFile::read(&path);
        (dir, read)
    }

    #[test]
    fn a_settings_file_reads_as_git_reads_its_config() {
        let (_dir, read) = file(
            "[hand]\n\tmaxSlots = 1k\n\tfenceRefs\n\tinclude = .env\n\tinclude = target/\n\
             \tonCreate = \"npm ci && echo done\"\n",
        );
        let f = read.unwrap().unwrap();
        assert_eq!(f.int("hand.maxslots").unwrap(), Some(1024));
        assert_eq!(f.bool("hand.fenceRefs", false).unwrap(), Some(true));
        assert!(f.has("hand.fenceRefs"));
        assert!(!f.has("hand.fenceBranches"));
        assert_eq!(f.strings("hand.include"), [".env", "target/"]);
        assert_eq!(f.string("hand.onCreate").unwrap(), "npm ci && echo done");
        // `printf '...' | git hash-object --stdin`
        assert_eq!(f.hash().len(), 40);
    }

    #[test]
    fn a_bad_value_or_a_bad_file_names_the_file() {
        let (_dir, read) = file("[hand]\n\tmaxSlots = many\n");
        let f = read.unwrap().unwrap();
        let e = f.int("hand.maxSlots").unwrap_err();
        assert!(
            e.to_string()
                .ends_with(".handconfig sets hand.maxSlots to \"many\", which is not an integer"),
            "{e}"
        );
        let (_dir, read) = file("[hand\n");
        let e = read.err().unwrap();
        assert!(
            e.to_string().contains("is not in git's config syntax"),
            "{e}"
        );
        let missing = ConfigFile::read(Path::new("/nonexistent/.handconfig"));
        assert!(matches!(missing, Ok(None)));
    }

    #[test]
    fn the_hash_is_gits_blob_id() {
        let (_dir, read) = file("");
        // `git hash-object /dev/null`
        assert_eq!(
            read.unwrap().unwrap().hash(),
            "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
        );
    }
}
