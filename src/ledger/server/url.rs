//! A team ledger's address: a `postgres://` or `postgresql://` URL read as libpq reads it, with
//! the part of libpq's environment that fills what the URL leaves out.
//!
//! It owns parsing and printing only: no file is read and nothing connects here. The password is
//! kept in a [`Password`] that prints as `***`, and the URL prints without it, so that no
//! message built from a [`ServerUrl`] can show it.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// The port libpq uses when neither the URL nor `?port=` names one.
pub const DEFAULT_PORT: u16 = 5432;
/// How long a connection attempt may take when `connect_timeout` does not say.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// libpq's floor: a `connect_timeout` of 1 s is taken as 2 s.
const MIN_CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long the server lets one statement run (`statement_timeout`, set at connecting); the
/// client's deadline for an answer, [`DEFAULT_READ_TIMEOUT`], is this and a margin.
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long git-hand waits for each answer of the server when `read_timeout` does not say: the
/// server's own `statement_timeout` (30 s, which also bounds a writer's `lock_timeout` wait)
/// and 10 s for its answer to arrive, so a statement the server would still run to its end is
/// never cut short by the client.
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(STATEMENT_TIMEOUT.as_secs() + 10);
/// What the server shows in `pg_stat_activity` unless `application_name` says otherwise.
pub const DEFAULT_APPLICATION_NAME: &str = "git-hand";

/// Says whether a ledger setting (`GIT_HAND_LEDGER`, `hand.ledger`) names a server rather than a
/// SQLite file: it starts with `postgres://` or `postgresql://`.
pub fn is_server_url(setting: &str) -> bool {
    scheme_rest(setting).is_some()
}

fn scheme_rest(url: &str) -> Option<&str> {
    ["postgresql://", "postgres://"].iter().find_map(|scheme| {
        let head = url.get(..scheme.len())?;
        head.eq_ignore_ascii_case(scheme)
            .then(|| &url[scheme.len()..])
    })
}

/// A URL that could not be read. It names the part or the parameter, never its value when the
/// part is the password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("a team ledger URL starts with postgres:// or postgresql://")]
    Scheme,
    #[error("the URL has an unknown parameter \"{0}\"")]
    UnknownParameter(String),
    /// `value` is `None` where the text may hold the password (a password with an unescaped `/`
    /// makes libpq's reading put part of it in the host or port).
    #[error("the URL's {what} has a bad value{}: {why}", shown(value))]
    BadValue {
        what: String,
        value: Option<String>,
        why: &'static str,
    },
    /// Percent-decoding failed. `what` names the part; the text is not kept, as it may be the
    /// password.
    #[error("the URL's {0} has a bad percent-escape or is not UTF-8")]
    BadEscape(&'static str),
    #[error("the URL names several hosts; a team ledger has one")]
    SeveralHosts,
    #[error("the URL's parameter \"{0}\" has no '='")]
    NoValue(String),
    /// An `@` after the host part: most likely a password with an unescaped `/` or `?`, which
    /// libpq's reading splits into host, port, database or parameters. Nothing of the URL is
    /// repeated, as any of it may be the password.
    #[error(
        "the URL has an '@' after its host part: percent-encode '/', '?' and '@' in the \
         password (%2F, %3F, %40), and '@' anywhere else"
    )]
    AtAfterHost,
    #[error("no user name: the URL has none and the system user cannot be found")]
    NoUser,
}

fn shown(value: &Option<String>) -> String {
    value
        .as_ref()
        .map(|v| format!(" \"{v}\""))
        .unwrap_or_default()
}

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Allow => "allow",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }

    fn parse(s: &str) -> Option<SslMode> {
        [
            SslMode::Disable,
            SslMode::Allow,
            SslMode::Prefer,
            SslMode::Require,
            SslMode::VerifyCa,
            SslMode::VerifyFull,
        ]
        .into_iter()
        .find(|m| m.as_str() == s)
    }
}

/// Where the server is: a TCP host (name or address) or the directory of its unix socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    Tcp(String),
    Socket(PathBuf),
}

impl Host {
    /// A host that starts with `/` is a socket directory, as in libpq.
    fn from_text(text: String) -> Host {
        if text.starts_with('/') {
            Host::Socket(PathBuf::from(text))
        } else {
            Host::Tcp(text)
        }
    }

    /// The default when the URL names no host: the unix socket in Debian's directory when it
    /// exists (where Debian's and Red Hat's libpq look), else libpq's compiled default `/tmp`.
    fn default_socket() -> Host {
        let debian = Path::new("/var/run/postgresql");
        Host::Socket(if debian.is_dir() {
            debian.to_path_buf()
        } else {
            PathBuf::from("/tmp")
        })
    }
}

/// A password that prints as `***` in `Debug` and has no `Display`.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl Password {
    pub fn new(text: String) -> Password {
        Password(text)
    }

    /// The password itself, for the one place that hands it to the server.
    pub(crate) fn reveal(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// A parsed team-ledger URL with libpq's environment applied.
#[derive(Clone, PartialEq, Eq)]
pub struct ServerUrl {
    pub user: String,
    /// From the URL or `PGPASSWORD`; the password file is read when connecting.
    pub password: Option<Password>,
    pub host: Host,
    pub port: u16,
    pub dbname: String,
    pub sslmode: SslMode,
    /// `None`: `connect_timeout=0`, which libpq reads as "wait as long as it takes".
    pub connect_timeout: Option<Duration>,
    /// `read_timeout` in whole seconds, 0 for none: see [`ServerUrl::read_timeout`]. (Seconds
    /// in a `u32`, so the URL stays small enough to sit in a [`super::super::Place`] unboxed.)
    read_timeout_secs: u32,
    /// `passfile` / `PGPASSFILE`, else `~/.pgpass`; `None` when there is no home directory.
    pub passfile: Option<PathBuf>,
    /// `sslrootcert` / `PGSSLROOTCERT` when set.
    pub sslrootcert: Option<PathBuf>,
    /// `~/.postgresql/root.crt`, used when [`ServerUrl::sslrootcert`] is unset and it exists.
    pub default_rootcert: Option<PathBuf>,
    pub application_name: String,
}

/// The parts as the URL and its query spell them, before the environment and defaults.
#[derive(Default)]
struct Parts {
    user: Option<String>,
    password: Option<String>,
    host: Option<String>,
    port: Option<String>,
    dbname: Option<String>,
    sslmode: Option<String>,
    connect_timeout: Option<String>,
    read_timeout: Option<String>,
    passfile: Option<String>,
    sslrootcert: Option<String>,
    application_name: Option<String>,
}

impl ServerUrl {
    /// Parses `url` with the process environment and the system user name.
    pub fn parse(url: &str) -> Result<ServerUrl, UrlError> {
        ServerUrl::parse_with(url, &|k| std::env::var_os(k), &|| whoami::username().ok())
    }

    /// Parses `url`; `env` reads the environment (`PGPASSWORD`, `PGSSLMODE`, ..., `HOME`) and
    /// `system_user` gives the user name libpq uses when the URL names none.
    pub fn parse_with(
        url: &str,
        env: &dyn Fn(&str) -> Option<OsString>,
        system_user: &dyn Fn() -> Option<String>,
    ) -> Result<ServerUrl, UrlError> {
        let mut parts = split(url)?;
        let from_env = |name: &'static str| -> Result<Option<String>, UrlError> {
            match env(name).filter(|v| !v.is_empty()) {
                None => Ok(None),
                Some(v) => v.into_string().map(Some).map_err(|_| UrlError::BadValue {
                    what: format!("environment variable {name}"),
                    value: None,
                    why: "not UTF-8",
                }),
            }
        };
        // The environment only fills what the URL left out (libpq: the URL wins).
        for (slot, name) in [
            (&mut parts.password, "PGPASSWORD"),
            (&mut parts.sslmode, "PGSSLMODE"),
            (&mut parts.connect_timeout, "PGCONNECT_TIMEOUT"),
            (&mut parts.passfile, "PGPASSFILE"),
            (&mut parts.sslrootcert, "PGSSLROOTCERT"),
            (&mut parts.application_name, "PGAPPNAME"),
        ] {
            if slot.is_none() {
                *slot = from_env(name)?;
            }
        }
        let home = env("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        let user = match parts.user.filter(|u| !u.is_empty()) {
            Some(u) => u,
            None => system_user().ok_or(UrlError::NoUser)?,
        };
        let host = match parts.host.filter(|h| !h.is_empty()) {
            Some(h) => Host::from_text(h),
            None => Host::default_socket(),
        };
        Ok(ServerUrl {
            port: parts
                .port
                .as_deref()
                .map(parse_port)
                .transpose()?
                .unwrap_or(DEFAULT_PORT),
            dbname: parts
                .dbname
                .filter(|d| !d.is_empty())
                .unwrap_or_else(|| user.clone()),
            user,
            password: parts.password.filter(|p| !p.is_empty()).map(Password),
            host,
            sslmode: match parts.sslmode {
                None => SslMode::Prefer,
                Some(s) => SslMode::parse(&s).ok_or_else(|| UrlError::BadValue {
                    what: "sslmode".into(),
                    value: Some(s.clone()),
                    why: "expected disable, allow, prefer, require, verify-ca or verify-full",
                })?,
            },
            connect_timeout: match parts.connect_timeout {
                None => Some(DEFAULT_CONNECT_TIMEOUT),
                Some(s) => parse_timeout(&s, "connect_timeout")?,
            },
            read_timeout_secs: match parts.read_timeout {
                None => Some(DEFAULT_READ_TIMEOUT),
                Some(s) => parse_timeout(&s, "read_timeout")?,
            }
            .map_or(0, |t| u32::try_from(t.as_secs()).unwrap_or(u32::MAX)),
            passfile: match parts.passfile {
                Some(p) => Some(PathBuf::from(p)),
                None => home.as_ref().map(|h| h.join(".pgpass")),
            },
            sslrootcert: match parts.sslrootcert {
                // libpq 16's "use the system's store": not something this build can read.
                Some(s) if s == "system" => {
                    return Err(UrlError::BadValue {
                        what: "sslrootcert".into(),
                        value: Some(s),
                        why: "the system certificate store is not supported; name a PEM file",
                    });
                }
                s => s.map(PathBuf::from),
            },
            default_rootcert: home.map(|h| h.join(".postgresql/root.crt")),
            application_name: parts
                .application_name
                .unwrap_or_else(|| DEFAULT_APPLICATION_NAME.to_string()),
        })
    }

    /// `read_timeout`, git-hand's own parameter (libpq has none): how long each wait for the
    /// server's answer may take once connected (default [`DEFAULT_READ_TIMEOUT`]); `None`:
    /// `read_timeout=0`, wait as long as it takes. A server that stops answering (its processes
    /// stopped) ends the verb by it.
    pub fn read_timeout(&self) -> Option<Duration> {
        (self.read_timeout_secs > 0).then(|| Duration::from_secs(self.read_timeout_secs.into()))
    }

    /// `host:port` for a TCP host, the socket file for a unix socket: where a connection goes.
    pub fn endpoint(&self) -> String {
        match &self.host {
            Host::Tcp(h) if h.contains(':') => format!("[{h}]:{}", self.port),
            Host::Tcp(h) => format!("{h}:{}", self.port),
            Host::Socket(dir) => {
                format!("{}", dir.join(format!(".s.PGSQL.{}", self.port)).display())
            }
        }
    }

    /// The root certificate to verify the server against: `sslrootcert`, else
    /// `~/.postgresql/root.crt` when that file exists (libpq's rule).
    pub(crate) fn root_certificate(&self) -> Option<PathBuf> {
        self.sslrootcert
            .clone()
            .or_else(|| self.default_rootcert.clone().filter(|p| p.is_file()))
    }
}

fn parse_port(s: &str) -> Result<u16, UrlError> {
    s.parse::<u16>()
        .ok()
        .filter(|p| *p != 0)
        .ok_or_else(|| UrlError::BadValue {
            what: "port".into(),
            // Digits only: anything else may be a piece of a password that held a '/'.
            value: s.bytes().all(|b| b.is_ascii_digit()).then(|| s.to_string()),
            why: "expected a number from 1 to 65535",
        })
}

/// libpq's reading of `connect_timeout` (`what`), and git-hand's of `read_timeout` alike:
/// whole seconds; 0 or less waits forever; 1 is raised to 2.
fn parse_timeout(s: &str, what: &str) -> Result<Option<Duration>, UrlError> {
    let secs: i64 = s.trim().parse().map_err(|_| UrlError::BadValue {
        what: what.into(),
        value: Some(s.to_string()),
        why: "expected whole seconds",
    })?;
    Ok(u64::try_from(secs)
        .ok()
        .filter(|s| *s > 0)
        .map(|s| Duration::from_secs(s).max(MIN_CONNECT_TIMEOUT)))
}

/// Splits a URL into its parts, percent-decoded, as libpq's `conninfo_uri_parse_options` does.
fn split(url: &str) -> Result<Parts, UrlError> {
    let rest = scheme_rest(url).ok_or(UrlError::Scheme)?;
    let (before_query, query) = match rest.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (rest, None),
    };
    let (authority, path) = match before_query.split_once('/') {
        Some((a, p)) => (a, Some(p)),
        None => (before_query, None),
    };
    // A user info ends at the host; an '@' further on is a password cut by a '/' or '?' (or an
    // unescaped '@' elsewhere). Refused before any part is read, so no error repeats a piece of
    // the password as a database or parameter name.
    if path.is_some_and(|p| p.contains('@')) || query.is_some_and(|q| q.contains('@')) {
        return Err(UrlError::AtAfterHost);
    }
    let mut parts = Parts::default();
    // The user info ends at the last '@' of the authority (a password may hold an '@').
    let hostport = match authority.rsplit_once('@') {
        Some((userinfo, hostport)) => {
            let (user, password) = match userinfo.split_once(':') {
                Some((u, p)) => (u, Some(p)),
                None => (userinfo, None),
            };
            parts.user = Some(decode(user, "user name")?);
            parts.password = password.map(|p| decode(p, "password")).transpose()?;
            hostport
        }
        None => authority,
    };
    if hostport.contains(',') {
        return Err(UrlError::SeveralHosts);
    }
    let (host, port) = split_host_port(hostport)?;
    parts.host = Some(decode(host, "host")?);
    parts.port = port.map(|p| decode(p, "port")).transpose()?;
    parts.dbname = path.map(|d| decode(d, "database name")).transpose()?;
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| UrlError::NoValue(pair.to_string()))?;
        let key = decode(key, "parameter name")?;
        let value = decode(value, "parameter value")?;
        let slot = match key.as_str() {
            "host" => &mut parts.host,
            "port" => &mut parts.port,
            "user" => &mut parts.user,
            "password" => &mut parts.password,
            "dbname" => &mut parts.dbname,
            "sslmode" => &mut parts.sslmode,
            "connect_timeout" => &mut parts.connect_timeout,
            "read_timeout" => &mut parts.read_timeout,
            "passfile" => &mut parts.passfile,
            "sslrootcert" => &mut parts.sslrootcert,
            "application_name" => &mut parts.application_name,
            _ => return Err(UrlError::UnknownParameter(key)),
        };
        if key == "host" && value.contains(',') {
            return Err(UrlError::SeveralHosts);
        }
        *slot = Some(value);
    }
    Ok(parts)
}

/// `host`, `host:port`, `[v6]`, `[v6]:port`.
fn split_host_port(s: &str) -> Result<(&str, Option<&str>), UrlError> {
    if let Some(inner) = s.strip_prefix('[') {
        let (addr, after) = inner.split_once(']').ok_or_else(|| UrlError::BadValue {
            what: "host".into(),
            value: None,
            why: "an IPv6 address in '[' has no ']'",
        })?;
        return match after {
            "" => Ok((addr, None)),
            _ => match after.strip_prefix(':') {
                Some(port) => Ok((addr, Some(port))),
                None => Err(UrlError::BadValue {
                    what: "host".into(),
                    value: None,
                    why: "expected ':' and a port after ']'",
                }),
            },
        };
    }
    Ok(match s.split_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (s, None),
    })
}

/// Percent-decodes one part (libpq decodes `%XX` only; `+` stays `+`).
fn decode(s: &str, what: &'static str) -> Result<String, UrlError> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3).ok_or(UrlError::BadEscape(what))?;
            let byte = u8::from_str_radix(hex, 16).map_err(|_| UrlError::BadEscape(what))?;
            // libpq refuses %00: it would end the C string.
            if byte == 0 {
                return Err(UrlError::BadEscape(what));
            }
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| UrlError::BadEscape(what))
}

/// What a URL part keeps as it is: ASCII letters, digits and RFC 3986's unreserved marks.
const PART: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// What a socket directory keeps as it is: a part's, and its `/`s.
const SOCKET_DIR: &AsciiSet = &PART.remove(b'/');

/// Percent-encodes what would end or split a URL part.
fn encode(s: &str) -> String {
    utf8_percent_encode(s, PART).to_string()
}

/// `postgres://user@host:port/db`, `?sslmode=` when not libpq's default; never the password.
impl fmt::Display for ServerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (user, db) = (encode(&self.user), encode(&self.dbname));
        let mut query = Vec::new();
        match &self.host {
            Host::Tcp(h) if h.contains(':') => {
                write!(f, "postgres://{user}@[{h}]:{}/{db}", self.port)?
            }
            Host::Tcp(h) => write!(f, "postgres://{user}@{}:{}/{db}", encode(h), self.port)?,
            Host::Socket(dir) => {
                write!(f, "postgres://{user}@/{db}")?;
                // Readable ('/' kept), and read back the same: a stamp records this text.
                let dir = utf8_percent_encode(&dir.to_string_lossy(), SOCKET_DIR).to_string();
                query.push(format!("host={dir}"));
                query.push(format!("port={}", self.port));
            }
        }
        if self.sslmode != SslMode::Prefer {
            query.push(format!("sslmode={}", self.sslmode.as_str()));
        }
        if !query.is_empty() {
            write!(f, "?{}", query.join("&"))?;
        }
        Ok(())
    }
}

/// The same text as `Display`: a `{:?}` in a log or a panic must not show the password either.
impl fmt::Debug for ServerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ServerUrl({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> + use<> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).map(Into::into)
    }

    fn parse_in(url: &str, pairs: &[(&str, &str)]) -> Result<ServerUrl, UrlError> {
        ServerUrl::parse_with(url, &env(pairs), &|| Some("sysuser".into()))
    }

    fn parse(url: &str) -> ServerUrl {
        parse_in(url, &[("HOME", "/home/u")]).unwrap()
    }

    #[test]
    fn a_full_url_gives_every_part_percent_decoded() {
        let u = parse("postgresql://hand%40team:p%3Ass%40w@db.example:6543/led%2Fger");
        assert_eq!(u.user, "hand@team");
        assert_eq!(u.password.as_ref().map(Password::reveal), Some("p:ss@w"));
        assert_eq!(u.host, Host::Tcp("db.example".into()));
        assert_eq!((u.port, u.dbname.as_str()), (6543, "led/ger"));
        assert_eq!(u.sslmode, SslMode::Prefer);
        assert_eq!(u.connect_timeout, Some(DEFAULT_CONNECT_TIMEOUT));
        assert_eq!(u.application_name, "git-hand");
        assert_eq!(u.passfile, Some(PathBuf::from("/home/u/.pgpass")));
        assert_eq!(
            u.default_rootcert,
            Some(PathBuf::from("/home/u/.postgresql/root.crt"))
        );
    }

    #[test]
    fn port_defaults_to_5432_and_database_to_the_user_as_in_libpq() {
        let u = parse("postgres://hand@db.example");
        assert_eq!((u.port, u.dbname.as_str()), (5432, "hand"));
        let u = parse("postgres://db.example/");
        assert_eq!((u.user.as_str(), u.dbname.as_str()), ("sysuser", "sysuser"));
    }

    #[test]
    fn ipv4_and_bracketed_ipv6_hosts_are_read_with_their_ports() {
        assert_eq!(
            parse("postgres://u@10.0.0.7:5433/d").host,
            Host::Tcp("10.0.0.7".into())
        );
        let u = parse("postgres://u@[::1]:5433/d");
        assert_eq!((u.host, u.port), (Host::Tcp("::1".into()), 5433));
        let u = parse("postgres://u@[fe80::1]/d");
        assert_eq!(
            (u.host.clone(), u.port),
            (Host::Tcp("fe80::1".into()), 5432)
        );
        assert_eq!(u.endpoint(), "[fe80::1]:5432");
        assert_eq!(u.to_string(), "postgres://u@[fe80::1]:5432/d");
    }

    #[test]
    fn a_socket_directory_comes_percent_encoded_as_host_or_as_the_host_parameter() {
        let u = parse("postgres://u@%2Ftmp%2Fpg%20sock:5444/d");
        assert_eq!(u.host, Host::Socket(PathBuf::from("/tmp/pg sock")));
        assert_eq!(u.endpoint(), "/tmp/pg sock/.s.PGSQL.5444");
        let u = parse("postgres://postgres@/hand_1?host=/tmp/x&port=5999");
        assert_eq!(u.host, Host::Socket(PathBuf::from("/tmp/x")));
        assert_eq!((u.port, u.dbname.as_str()), (5999, "hand_1"));
        assert_eq!(
            u.to_string(),
            "postgres://postgres@/hand_1?host=/tmp/x&port=5999"
        );
        // What a stamp records reads back as the same place, whatever the directory holds.
        let odd = parse("postgres://u@/d?host=/tmp/a%26b%23c%25d%20e&port=5999");
        assert_eq!(odd.host, Host::Socket(PathBuf::from("/tmp/a&b#c%d e")));
        assert_eq!(parse(&odd.to_string()).host, odd.host);
    }

    #[test]
    fn read_timeout_is_forty_seconds_unless_the_url_says_and_zero_waits_forever() {
        let t = |q: &str| parse(&format!("postgres://u@h/d{q}")).read_timeout();
        assert_eq!(t(""), Some(Duration::from_secs(40)));
        assert_eq!(t("?read_timeout=3"), Some(Duration::from_secs(3)));
        assert_eq!(t("?read_timeout=1"), Some(Duration::from_secs(2)));
        assert_eq!(t("?read_timeout=0"), None);
        let e = ServerUrl::parse_with("postgres://u@h/d?read_timeout=soon", &|_| None, &|| None)
            .unwrap_err();
        assert!(e.to_string().contains("read_timeout"), "{e}");
    }

    #[test]
    fn query_parameters_override_the_url_parts() {
        let u = parse(
            "postgres://a:pw@h1:1/d1?user=b&password=pw2&host=h2&port=2&dbname=d2\
             &sslmode=verify-full&connect_timeout=9&passfile=/p&sslrootcert=/r\
             &application_name=ci",
        );
        assert_eq!((u.user.as_str(), u.dbname.as_str()), ("b", "d2"));
        assert_eq!(u.password.as_ref().map(Password::reveal), Some("pw2"));
        assert_eq!((u.host, u.port), (Host::Tcp("h2".into()), 2));
        assert_eq!(u.sslmode, SslMode::VerifyFull);
        assert_eq!(u.connect_timeout, Some(Duration::from_secs(9)));
        assert_eq!(u.passfile, Some(PathBuf::from("/p")));
        assert_eq!(u.sslrootcert, Some(PathBuf::from("/r")));
        assert_eq!(u.application_name, "ci");
    }

    #[test]
    fn connect_timeout_has_libpqs_floor_of_two_seconds_and_zero_waits_forever() {
        let t = |v: &str| parse(&format!("postgres://u@h/d?connect_timeout={v}")).connect_timeout;
        assert_eq!(t("1"), Some(Duration::from_secs(2)));
        assert_eq!(t("3"), Some(Duration::from_secs(3)));
        assert_eq!(t("0"), None);
        assert_eq!(t("-4"), None);
    }

    #[test]
    fn an_unknown_parameter_or_bad_value_is_an_error_naming_it() {
        let err = |url: &str| parse_in(url, &[]).unwrap_err().to_string();
        assert_eq!(
            err("postgres://u@h/d?sslmod=require"),
            "the URL has an unknown parameter \"sslmod\""
        );
        assert!(err("postgres://u@h/d?sslmode=always").contains("sslmode"));
        assert!(err("postgres://u@h/d?sslmode=always").contains("always"));
        assert!(err("postgres://u@h/d?connect_timeout=soon").contains("connect_timeout"));
        assert!(err("postgres://u@h:99999/d").contains("port"));
        assert!(err("postgres://u@h/d?port=0").contains("port"));
        assert!(err("postgres://u@h/d?sslrootcert=system").contains("sslrootcert"));
        assert!(err("postgres://u@h/d?sslmode").contains("sslmode"));
        assert_eq!(
            parse_in("postgres://u@h1,h2/d", &[]).unwrap_err(),
            UrlError::SeveralHosts
        );
        assert_eq!(
            parse_in("mysql://u@h/d", &[]).unwrap_err(),
            UrlError::Scheme
        );
    }

    #[test]
    fn the_environment_fills_only_what_the_url_leaves_out() {
        let all = [
            ("PGPASSWORD", "envpw"),
            ("PGSSLMODE", "require"),
            ("PGCONNECT_TIMEOUT", "7"),
            ("PGPASSFILE", "/etc/pgpass"),
            ("PGSSLROOTCERT", "/etc/root.crt"),
            ("PGAPPNAME", "bot"),
        ];
        let u = parse_in("postgres://u@h/d", &all).unwrap();
        assert_eq!(u.password.as_ref().map(Password::reveal), Some("envpw"));
        assert_eq!(u.sslmode, SslMode::Require);
        assert_eq!(u.connect_timeout, Some(Duration::from_secs(7)));
        assert_eq!(u.passfile, Some(PathBuf::from("/etc/pgpass")));
        assert_eq!(u.sslrootcert, Some(PathBuf::from("/etc/root.crt")));
        assert_eq!(u.application_name, "bot");
        let u = parse_in(
            "postgres://u:urlpw@h/d?sslmode=disable&connect_timeout=3&passfile=/p\
             &sslrootcert=/r&application_name=x",
            &all,
        )
        .unwrap();
        assert_eq!(u.password.as_ref().map(Password::reveal), Some("urlpw"));
        assert_eq!(u.sslmode, SslMode::Disable);
        assert_eq!(u.connect_timeout, Some(Duration::from_secs(3)));
        assert_eq!(u.passfile, Some(PathBuf::from("/p")));
        assert_eq!(u.sslrootcert, Some(PathBuf::from("/r")));
        assert_eq!(u.application_name, "x");
    }

    #[test]
    fn a_bad_value_in_the_environment_names_the_variable() {
        let e = parse_in("postgres://u@h/d", &[("PGSSLMODE", "maybe")]).unwrap_err();
        assert!(e.to_string().contains("sslmode"), "{e}");
        let e = parse_in("postgres://u@h/d", &[("PGCONNECT_TIMEOUT", "x")]).unwrap_err();
        assert!(e.to_string().contains("connect_timeout"), "{e}");
    }

    #[test]
    fn without_home_there_is_no_default_password_file() {
        let u = parse_in("postgres://u@h/d", &[]).unwrap();
        assert_eq!((u.passfile, u.default_rootcert), (None, None));
    }

    #[test]
    fn is_server_url_knows_both_schemes_and_nothing_else() {
        assert!(is_server_url("postgres://h/d"));
        assert!(is_server_url("postgresql://h/d"));
        assert!(is_server_url("PostgreSQL://h/d"));
        assert!(!is_server_url("/home/u/ledger.sqlite"));
        assert!(!is_server_url("postgres:/h"));
        assert!(!is_server_url("ledger.sqlite"));
        assert!(!is_server_url("pg"));
    }

    #[test]
    fn display_and_debug_show_where_and_never_the_password() {
        let u = parse("postgres://hand:s3cr%3At@db.example/team?sslmode=verify-full");
        assert_eq!(
            u.to_string(),
            "postgres://hand@db.example:5432/team?sslmode=verify-full"
        );
        assert_eq!(
            format!("{u:?}"),
            "ServerUrl(postgres://hand@db.example:5432/team?sslmode=verify-full)"
        );
        assert_eq!(format!("{:?}", u.password), "Some(***)");
        assert_eq!(
            parse("postgres://hand@db.example/team").to_string(),
            "postgres://hand@db.example:5432/team"
        );
    }

    #[test]
    fn no_url_error_carries_the_password() {
        for url in [
            "postgres://u:S3CRET%zz@h/d",
            "postgres://u:S3CRET%00@h/d",
            "postgres://u:S3CRET%C3@h/d",
            "postgres://u:S3CRET@h/d?nope=1",
            "postgres://u:S3CRET@h:port/d",
            "postgres://u:S3CRET@h1,h2/d",
            "postgres://u:S3CRET@[::1/d",
            "postgres://u:S3CRET@[::1]x/d",
            "postgres://u:S3/CRET@h/d",
            "postgres://u:S3CRET/x@h/d",
            "postgres://u:pa?S3CRET@h/d",
            "postgres://u:x?S3CRET=1@h/d",
            "postgres://u:123/S3CRET@h/d",
            "postgres://u:123?S3CRET@h/d",
        ] {
            let e = parse_in(url, &[]).unwrap_err();
            let shown = format!("{e} {e:?}");
            assert!(!shown.contains("S3CRET"), "{url}: {shown}");
        }
    }
}
