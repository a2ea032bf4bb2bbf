//! Where the ledger lives: `GIT_HAND_LEDGER`, else `git config hand.ledger`, else
//! `$XDG_STATE_HOME/git-hand/ledger.sqlite` (`~/.local/state/git-hand/ledger.sqlite` when unset).
//!
//! A setting that starts with `postgres://` or `postgresql://` names a team ledger on a
//! PostgreSQL server ([`Place::Server`]); anything else is the path of a SQLite file.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

use super::server::{ServerUrl, UrlError, is_server_url};

/// Where a ledger is: a SQLite file, or a team ledger on a PostgreSQL server. It prints as the
/// path or as the URL without its password, the text stamps record and messages show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    File(PathBuf),
    Server(ServerUrl),
}

impl Place {
    /// The file, for what only a SQLite ledger has (evidence of a lost one, a backup).
    pub fn file(&self) -> Option<&Path> {
        match self {
            Place::File(path) => Some(path),
            Place::Server(_) => None,
        }
    }

    /// Reads a setting as git-hand does: a `postgres://` URL (with libpq's environment, as `env`
    /// reads it), else a path.
    pub(crate) fn from_setting(
        setting: OsString,
        env: &dyn Fn(&str) -> Option<OsString>,
    ) -> Result<Place, UrlError> {
        match setting.to_str() {
            Some(text) if is_server_url(text) => {
                Ok(Place::Server(ServerUrl::parse_with(text, env, &|| {
                    whoami::username().ok()
                })?))
            }
            _ => Ok(Place::File(PathBuf::from(setting))),
        }
    }

    /// Whether this is the SQLite file at `path`, however either is spelled ([`same_file`]).
    pub fn is_file(&self, path: &Path) -> bool {
        self.file().is_some_and(|f| same_file(f, path))
    }

    /// Whether `self` and `other` are the same team ledger (server and database), whatever
    /// user, password or options each names.
    pub(crate) fn same_database(&self, other: &Place) -> bool {
        match (self, other) {
            (Place::Server(a), Place::Server(b)) => {
                a.host == b.host && a.port == b.port && a.dbname == b.dbname
            }
            _ => false,
        }
    }
}

/// Whether two spellings of a file's path name one file: equal, or equal once their directories
/// are resolved (the file itself may be gone). A stamp holds the ledger's path as the
/// environment of the spawn that wrote it spelled it (`HOME`, `XDG_STATE_HOME`,
/// `GIT_HAND_LEDGER`), and a later command may reach the same file another way: through a
/// symlink, as macOS reaches its temporary directory (`/var` is `/private/var`), or not.
pub fn same_file(a: &Path, b: &Path) -> bool {
    if a == b {
        return true;
    }
    let resolve = |p: &Path| {
        let dir = std::fs::canonicalize(p.parent()?).ok()?;
        Some(dir.join(p.file_name()?))
    };
    resolve(a).is_some_and(|ra| Some(ra) == resolve(b))
}

/// What [`super::Ledger::open`] takes: a file's path, a server's URL, or a place itself.
impl From<PathBuf> for Place {
    fn from(path: PathBuf) -> Self {
        Place::File(path)
    }
}

impl From<&Path> for Place {
    fn from(path: &Path) -> Self {
        Place::File(path.to_path_buf())
    }
}

impl From<&PathBuf> for Place {
    fn from(path: &PathBuf) -> Self {
        Place::File(path.clone())
    }
}

impl From<ServerUrl> for Place {
    fn from(url: ServerUrl) -> Self {
        Place::Server(url)
    }
}

impl From<&ServerUrl> for Place {
    fn from(url: &ServerUrl) -> Self {
        Place::Server(url.clone())
    }
}

impl From<&Place> for Place {
    fn from(place: &Place) -> Self {
        place.clone()
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::File(path) => write!(f, "{}", path.display()),
            Place::Server(url) => write!(f, "{url}"),
        }
    }
}

/// A place prints as text in JSON too (a path as its string, a URL without its password).
impl serde::Serialize for Place {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// The ledger's place and where it came from (shown by `status` and in errors).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerLocation {
    pub place: Place,
    pub source: &'static str,
}

/// Resolves the ledger location. `config` is the value of `hand.ledger`, read by the caller
/// (this module does not know git); `env` reads the environment. `Ok(None)` when neither HOME
/// nor XDG_STATE_HOME is set and nothing names the ledger; a URL that does not parse is an
/// error.
pub fn default_location(
    env: impl Fn(&str) -> Option<OsString>,
    config: Option<OsString>,
) -> Result<Option<LedgerLocation>, UrlError> {
    let Some((setting, source)) = locate(&env, config) else {
        return Ok(None);
    };
    let place = match Place::from_setting(setting, &env)? {
        // The path ends up in stamps that hooks read from other directories: make it absolute.
        Place::File(path) => Place::File(std::path::absolute(&path).unwrap_or(path)),
        server => server,
    };
    Ok(Some(LedgerLocation { place, source }))
}

fn locate(
    env: &impl Fn(&str) -> Option<OsString>,
    config: Option<OsString>,
) -> Option<(OsString, &'static str)> {
    let nonempty = |k: &str| env(k).filter(|v| !v.is_empty());
    if let Some(setting) = nonempty("GIT_HAND_LEDGER") {
        return Some((setting, "GIT_HAND_LEDGER"));
    }
    if let Some(setting) = config {
        return Some((setting, "git config hand.ledger"));
    }
    let path = state_dir(env)?.join("git-hand/ledger.sqlite");
    Some((path.into_os_string(), "default"))
}

/// The user's state directory: `$XDG_STATE_HOME` when it is an absolute path, else
/// `$HOME/.local/state` (the XDG default); `None` when neither is set. git-hand keeps the default
/// ledger there, and the approvals of `.handconfig` files (`ops/repo/trust.rs`).
pub fn state_dir(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let nonempty = |k: &str| env(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    nonempty("XDG_STATE_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| nonempty("HOME").map(|h| h.join(".local/state")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<std::ffi::OsString> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).map(Into::into)
    }

    fn place(env_pairs: &[(&str, &str)], config: Option<&str>) -> Option<Place> {
        default_location(env(env_pairs), config.map(Into::into))
            .unwrap()
            .map(|l| l.place)
    }

    fn file(p: &str) -> Option<Place> {
        Some(Place::File(PathBuf::from(p)))
    }

    #[test]
    fn env_beats_config_beats_xdg_beats_home() {
        let all = [
            ("GIT_HAND_LEDGER", "/l"),
            ("XDG_STATE_HOME", "/x"),
            ("HOME", "/h"),
        ];
        assert_eq!(place(&all, Some("/c")), file("/l"));
        assert_eq!(place(&all[1..], Some("/c")), file("/c"));
        assert_eq!(place(&all[1..], None), file("/x/git-hand/ledger.sqlite"));
        assert_eq!(
            place(&all[2..], None),
            file("/h/.local/state/git-hand/ledger.sqlite")
        );
        assert_eq!(place(&[], None), None);
    }

    #[test]
    fn a_postgres_url_names_a_team_ledger_and_prints_without_its_password() {
        for (env_pairs, config) in [
            (
                vec![("GIT_HAND_LEDGER", "postgresql://hand:s3cret@db:6543/team")],
                None,
            ),
            (
                vec![("HOME", "/h")],
                Some("postgres://hand:s3cret@db:6543/team"),
            ),
        ] {
            let Some(Place::Server(url)) = place(&env_pairs, config) else {
                panic!("not a server: {env_pairs:?} {config:?}");
            };
            assert_eq!(
                (url.host.clone(), url.port),
                (crate::ledger::server::Host::Tcp("db".into()), 6543)
            );
            let shown = Place::Server(url).to_string();
            assert_eq!(shown, "postgres://hand@db:6543/team");
        }
    }

    #[test]
    fn a_bad_url_is_an_error_not_a_path() {
        let bad = [("GIT_HAND_LEDGER", "postgres://u@h:notaport/db")];
        assert!(default_location(env(&bad), None).is_err());
    }

    #[test]
    fn the_same_database_is_host_port_and_name_whatever_the_user() {
        let env = env(&[("HOME", "/h")]);
        let at = |s: &str| Place::from_setting(s.into(), &env).unwrap();
        let a = at("postgres://alice:pw@db:5432/team");
        assert!(a.same_database(&at("postgres://bob@db/team?sslmode=require")));
        assert!(!a.same_database(&at("postgres://alice@db:5433/team")));
        assert!(!a.same_database(&at("postgres://alice@db/other")));
        assert!(!a.same_database(&at("/db/team")));
    }
}
