//! Connecting to the team ledger: libpq's `sslmode` as a sequence of attempts, the whole of it
//! bounded by the connect timeout, and the client library's errors turned into [`ServerError`]s
//! that name where and never the password.

use std::sync::mpsc;
use std::time::Duration;

use postgres::config::SslMode as WireMode;
use postgres::error::SqlState;

use super::ServerError;
use super::client::Client;
use super::passfile::{self, Notice};
use super::tls::{Check, Connector};
use super::url::{Host, STATEMENT_TIMEOUT, ServerUrl, SslMode};

/// How long a session may sit idle inside a transaction before the server ends it.
const IDLE_IN_TRANSACTION_TIMEOUT: Duration = Duration::from_secs(60);

/// Opens a connection to the team ledger, whose writers wait at most `lock_timeout` for another's
/// lock.
///
/// `notices` receives what the caller should show whatever the outcome (a password file that
/// was ignored). The whole attempt, name lookup, TLS and authentication included, ends within
/// the URL's connect timeout: the client library bounds only the socket's connect, so the rest
/// runs on a thread that is abandoned when the time is up.
pub fn connect(
    url: &ServerUrl,
    notices: &mut Vec<Notice>,
    lock_timeout: Duration,
) -> Result<Client, ServerError> {
    let found = passfile::lookup(url);
    notices.extend(found.notice.clone());
    let password = url.password.clone().or(found.password);
    let had_password = password.is_some();
    let mut config = tokio_postgres::Config::new();
    config
        .user(&url.user)
        .dbname(&url.dbname)
        .port(url.port)
        .application_name(&url.application_name);
    if let Some(timeout) = url.connect_timeout {
        config.connect_timeout(timeout);
    }
    // Once connected, a link that goes quiet (a cut network, a machine gone) must not hang a
    // verb or a hook for the kernel's two hours: keepalives probe an idle link and
    // `tcp_user_timeout` ends one whose data goes unacknowledged (TCP only). On the server, a
    // statement or an idle transaction that waits longer than any ledger operation ever should
    // is ended there and reported, not waited for. A server that is there and does not answer
    // at all (its processes stopped) is the client's own deadline's (`read_timeout`,
    // `client.rs`). `lock_timeout` rides along in the startup packet too: one round trip less
    // than a `SET` after connecting.
    config
        .keepalives_idle(Duration::from_secs(5))
        .keepalives_interval(Duration::from_secs(2))
        .keepalives_retries(3)
        .tcp_user_timeout(Duration::from_secs(15))
        .options(format!(
            "-c statement_timeout={}ms -c idle_in_transaction_session_timeout={}ms \
             -c lock_timeout={}ms",
            STATEMENT_TIMEOUT.as_millis(),
            IDLE_IN_TRANSACTION_TIMEOUT.as_millis(),
            lock_timeout.as_millis().max(1)
        ));
    if let Some(p) = &password {
        config.password(p.reveal());
    }
    match &url.host {
        Host::Tcp(h) => config.host(h),
        Host::Socket(dir) => config.host_path(dir),
    };
    let plan = plan(url)?;
    let ignored_passfile = found.notice.and(url.passfile.clone());
    let timeout = url.connect_timeout;
    let deadline = url.read_timeout();
    let attempt = move || -> Result<Client, Failure> {
        // One runtime on this thread, as the `postgres` crate makes for each connection.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Failure::Other(format!("cannot start the client's runtime: {e}")))?;
        let mut last = None;
        for (mode, connector) in plan {
            config.ssl_mode(mode);
            match runtime.block_on(config.connect(connector)) {
                Ok((client, connection)) => {
                    return Ok(Client::new(runtime, client, connection, deadline));
                }
                Err(e) => {
                    let failure = Failure::of(&e);
                    // Try the next mode only where libpq would: allow's plain attempt refused
                    // for want of TLS, prefer's TLS attempt failing in the handshake.
                    let next = matches!(
                        (mode, &failure),
                        (
                            WireMode::Disable,
                            Failure::Db {
                                tls_wanted: true,
                                ..
                            }
                        ) | (WireMode::Prefer, Failure::Tls(_))
                    );
                    last = Some(failure);
                    if !next {
                        break;
                    }
                }
            }
        }
        Err(last.unwrap_or(Failure::Other("no connection was attempted".into())))
    };
    match within(timeout, attempt) {
        Some(Ok(client)) => Ok(client),
        Some(Err(failure)) => Err(failure.into_error(url, had_password, &ignored_passfile)),
        None => Err(ServerError::Unreachable {
            endpoint: url.endpoint(),
            dbname: url.dbname.clone(),
            reason: format!(
                "no answer within {} s (connect_timeout)",
                timeout.map_or(0, |t| t.as_secs())
            ),
        }),
    }
}

/// The attempts `sslmode` asks for, in order, each with its connector.
fn plan(url: &ServerUrl) -> Result<Vec<(WireMode, Connector)>, ServerError> {
    // libpq never uses TLS over a unix socket, whatever sslmode says.
    let sslmode = match url.host {
        Host::Socket(_) => SslMode::Disable,
        Host::Tcp(_) => url.sslmode,
    };
    let root = url.root_certificate();
    let verify = |check: Check| -> Result<Connector, ServerError> {
        match &root {
            Some(_) => connector(check, url),
            None => Err(ServerError::NoRootCertificate {
                sslmode: url.sslmode.as_str(),
                path: url.default_rootcert.clone().unwrap_or_default(),
            }),
        }
    };
    // With a root certificate at hand libpq checks the chain even in the weak modes.
    let weak = if root.is_some() {
        Check::Chain
    } else {
        Check::Nothing
    };
    Ok(match sslmode {
        SslMode::Disable => vec![(WireMode::Disable, connector(Check::Nothing, url)?)],
        SslMode::Allow => vec![
            (WireMode::Disable, connector(weak, url)?),
            (WireMode::Require, connector(weak, url)?),
        ],
        SslMode::Prefer => vec![
            (WireMode::Prefer, connector(weak, url)?),
            (WireMode::Disable, connector(weak, url)?),
        ],
        SslMode::Require => vec![(WireMode::Require, connector(weak, url)?)],
        SslMode::VerifyCa => vec![(WireMode::Require, verify(Check::Chain)?)],
        SslMode::VerifyFull => vec![(WireMode::Require, verify(Check::Full)?)],
    })
}

fn connector(check: Check, url: &ServerUrl) -> Result<Connector, ServerError> {
    super::tls::connector(check, url.root_certificate().as_deref())
        .map_err(|e| ServerError::TlsSetup(e.to_string()))
}

/// Runs `f`, giving up after `limit` (never, when `None`). A thread that is given up on is left
/// to finish alone; what it returns is dropped.
fn within<T: Send + 'static>(
    limit: Option<Duration>,
    f: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let Some(limit) = limit else {
        return Some(f());
    };
    let (tx, rx) = mpsc::sync_channel(1);
    let work = std::thread::Builder::new()
        .name("git-hand-connect".into())
        .spawn(move || {
            let _ = tx.send(f());
        });
    match work {
        Ok(_) => rx.recv_timeout(limit).ok(),
        Err(_) => None,
    }
}

/// A failed attempt, reduced to what decides the message and the next attempt. Only text the
/// client library or the server wrote goes in; neither ever includes the password.
#[derive(Debug)]
enum Failure {
    /// The server answered with an error.
    Db {
        code: SqlState,
        message: String,
        /// pg_hba.conf has no entry for an unencrypted connection (`hostssl` only).
        tls_wanted: bool,
    },
    Unreachable(String),
    Tls(String),
    TlsRefused,
    NoPassword,
    Other(String),
}

impl Failure {
    fn of(e: &postgres::Error) -> Failure {
        if let Some(db) = e.as_db_error() {
            let message = db.message().to_string();
            return Failure::Db {
                tls_wanted: *db.code() == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
                    && message.contains("no encryption"),
                code: db.code().clone(),
                message,
            };
        }
        // tokio-postgres keeps its error kinds private; the texts it prints for them are stable.
        let kind = e.to_string();
        let cause = source_text(e).unwrap_or_default();
        if kind.starts_with("error performing TLS handshake") {
            return if cause.contains("server does not support TLS") {
                Failure::TlsRefused
            } else {
                Failure::Tls(cause)
            };
        }
        if kind.starts_with("timeout") {
            return Failure::Unreachable("timed out".into());
        }
        if cause.contains("password missing") {
            return Failure::NoPassword;
        }
        let io = std::error::Error::source(e).and_then(|s| s.downcast_ref::<std::io::Error>());
        if let Some(io) = io {
            return Failure::Unreachable(match kind.starts_with("error communicating") {
                // Connected, then cut off before the server said anything we could read.
                true => format!("the connection broke before the server answered ({io})"),
                false => io_reason(io),
            });
        }
        if kind == "connection closed" {
            return Failure::Unreachable("the server closed the connection".into());
        }
        let text = match cause.is_empty() {
            true => kind,
            false => format!("{kind}: {cause}"),
        };
        Failure::Other(text)
    }

    fn into_error(
        self,
        url: &ServerUrl,
        had_password: bool,
        ignored_passfile: &Option<std::path::PathBuf>,
    ) -> ServerError {
        let endpoint = url.endpoint();
        let dbname = url.dbname.clone();
        let auth = |reason: String| ServerError::Authentication {
            endpoint: endpoint.clone(),
            dbname: dbname.clone(),
            user: url.user.clone(),
            reason,
            had_password,
            ignored_passfile: ignored_passfile.clone(),
        };
        match self {
            Failure::Db {
                tls_wanted: true, ..
            } => ServerError::TlsRequired { endpoint, dbname },
            Failure::Db { code, message, .. } => {
                if code == SqlState::INVALID_PASSWORD
                    || code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
                {
                    auth(message)
                } else if code == SqlState::INVALID_CATALOG_NAME {
                    ServerError::NoDatabase {
                        endpoint,
                        dbname,
                        user: url.user.clone(),
                    }
                } else if code == SqlState::CANNOT_CONNECT_NOW {
                    ServerError::Unreachable {
                        endpoint,
                        dbname,
                        reason: message,
                    }
                } else {
                    ServerError::Refused {
                        endpoint,
                        dbname,
                        reason: message,
                    }
                }
            }
            Failure::NoPassword => auth("the server asks for a password and none was given".into()),
            Failure::Unreachable(reason) => ServerError::Unreachable {
                endpoint,
                dbname,
                reason,
            },
            Failure::Tls(reason) => ServerError::Tls {
                endpoint,
                dbname,
                reason,
            },
            Failure::TlsRefused => ServerError::TlsRefused {
                endpoint,
                dbname,
                sslmode: url.sslmode.as_str(),
            },
            Failure::Other(reason) => ServerError::Refused {
                endpoint,
                dbname,
                reason,
            },
        }
    }
}

fn source_text(e: &postgres::Error) -> Option<String> {
    std::error::Error::source(e).map(|s| s.to_string())
}

/// An I/O failure in the words a user looks for.
fn io_reason(e: &std::io::Error) -> String {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::ConnectionRefused => "connection refused".into(),
        K::NotFound => "no such socket (is the server running?)".into(),
        K::TimedOut => "timed out".into(),
        K::PermissionDenied => "permission denied".into(),
        K::ConnectionReset | K::UnexpectedEof => "the server closed the connection".into(),
        _ => {
            let text = e.to_string();
            if text.contains("lookup address") || text.contains("resolve") {
                format!("cannot resolve the host name ({text})")
            } else {
                text
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::server::UrlError;
    use std::net::TcpListener;

    fn refused(u: &ServerUrl) -> ServerError {
        match connect(u, &mut Vec::new(), Duration::from_secs(5)) {
            Ok(_) => panic!("connected to {u}"),
            Err(e) => e,
        }
    }

    const SECRET: &str = "S3CRET-pw";

    fn url(text: &str) -> ServerUrl {
        ServerUrl::parse_with(text, &|_| None, &|| Some("sysuser".into())).unwrap()
    }

    fn every_failure() -> Vec<Failure> {
        let db = |code: SqlState, message: &str, tls_wanted| Failure::Db {
            code,
            message: message.into(),
            tls_wanted,
        };
        vec![
            db(
                SqlState::INVALID_PASSWORD,
                "password authentication failed for user \"u\"",
                false,
            ),
            db(
                SqlState::INVALID_AUTHORIZATION_SPECIFICATION,
                "role \"u\" does not exist",
                false,
            ),
            db(
                SqlState::INVALID_AUTHORIZATION_SPECIFICATION,
                "no pg_hba.conf entry, no encryption",
                true,
            ),
            db(
                SqlState::INVALID_CATALOG_NAME,
                "database \"d\" does not exist",
                false,
            ),
            db(
                SqlState::CANNOT_CONNECT_NOW,
                "the database system is starting up",
                false,
            ),
            db(
                SqlState::TOO_MANY_CONNECTIONS,
                "sorry, too many clients already",
                false,
            ),
            Failure::Unreachable("connection refused".into()),
            Failure::Tls("invalid peer certificate: UnknownIssuer".into()),
            Failure::TlsRefused,
            Failure::NoPassword,
            Failure::Other("unexpected message from server".into()),
        ]
    }

    #[test]
    fn no_error_shows_the_password_in_display_debug_or_hint() {
        let u = url(&format!(
            "postgres://u:{SECRET}@db.example:6000/d?sslmode=require"
        ));
        let ignored = Some(std::path::PathBuf::from("/home/u/.pgpass"));
        let mut errors: Vec<ServerError> = every_failure()
            .into_iter()
            .map(|f| f.into_error(&u, true, &ignored))
            .collect();
        errors.push(ServerError::NoRootCertificate {
            sslmode: "verify-full",
            path: "/home/u/.postgresql/root.crt".into(),
        });
        errors.push(ServerError::TlsSetup("no certificate".into()));
        errors.push(ServerError::Url(UrlError::NoUser));
        for e in &errors {
            let shown = format!("{e} {e:?} {:?} {u} {u:?}", e.hint());
            assert!(!shown.contains(SECRET), "{shown}");
        }
        assert!(
            !format!("{:?}", url(&format!("postgres://u@h/d?password={SECRET}"))).contains(SECRET)
        );
    }

    #[test]
    fn each_failure_becomes_the_error_that_names_it() {
        let u = url("postgres://hand@db.example:6000/team");
        let errors: Vec<String> = every_failure()
            .into_iter()
            .map(|f| f.into_error(&u, false, &None).to_string())
            .collect();
        assert_eq!(
            errors[0],
            "the team ledger at db.example:6000 (database team) refused role \"hand\": password \
             authentication failed for user \"u\""
        );
        assert_eq!(
            errors[2],
            "the team ledger at db.example:6000 (database team) accepts only TLS connections, and \
             sslmode is disable"
        );
        assert_eq!(
            errors[3],
            "the team ledger server at db.example:6000 has no database \"team\""
        );
        assert_eq!(
            errors[6],
            "cannot reach the team ledger at db.example:6000 (database team): connection refused"
        );
        let unreachable = |f: Failure| f.into_error(&u, false, &None).is_unreachable();
        assert!(unreachable(Failure::Unreachable("timed out".into())));
        assert!(unreachable(Failure::Db {
            code: SqlState::CANNOT_CONNECT_NOW,
            message: "starting up".into(),
            tls_wanted: false
        }));
        assert!(!unreachable(Failure::NoPassword));
    }

    #[test]
    fn an_authentication_hint_points_at_the_password_file_that_was_ignored() {
        let u = url("postgres://hand@db.example/team");
        let hint = |had, ignored: Option<&str>| {
            Failure::NoPassword
                .into_error(&u, had, &ignored.map(Into::into))
                .hint()
                .map(|h| crate::cli::hint::line(&h))
                .unwrap_or_default()
        };
        assert!(hint(false, Some("/h/.pgpass")).contains("chmod 600 /h/.pgpass"));
        assert!(hint(false, None).contains("~/.pgpass"));
        assert!(hint(true, None).contains("role \"hand\""));
    }

    #[test]
    fn a_port_nobody_listens_on_is_unreachable_naming_host_port_and_database() {
        // A port that was free a moment ago: bind, note, release.
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let u = url(&format!(
            "postgres://hand:{SECRET}@127.0.0.1:{port}/team?sslmode=disable"
        ));
        let e = refused(&u);
        assert!(e.is_unreachable(), "{e:?}");
        assert_eq!(
            e.to_string(),
            format!(
                "cannot reach the team ledger at 127.0.0.1:{port} (database team): connection refused"
            )
        );
    }

    #[test]
    fn a_server_that_accepts_and_never_answers_fails_within_the_connect_timeout() {
        // The kernel completes the handshake for the listener's backlog; nothing ever replies.
        let silent = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = silent.local_addr().unwrap().port();
        let u = url(&format!(
            "postgres://hand@127.0.0.1:{port}/team?connect_timeout=2"
        ));
        let e = refused(&u);
        assert!(e.is_unreachable(), "{e:?}");
        assert_eq!(
            e.to_string(),
            format!(
                "cannot reach the team ledger at 127.0.0.1:{port} (database team): no answer \
                 within 2 s (connect_timeout)"
            )
        );
    }

    #[test]
    fn a_socket_directory_without_a_server_is_unreachable() {
        let dir = tempfile::tempdir().unwrap();
        let u = url(&format!(
            "postgres://hand@/team?host={}&port=5999",
            dir.path().display()
        ));
        let e = refused(&u);
        assert!(e.is_unreachable(), "{e:?}");
        let shown = e.to_string();
        assert!(
            shown.contains(".s.PGSQL.5999") && shown.contains("no such socket"),
            "{shown}"
        );
    }

    #[test]
    fn verify_modes_without_a_root_certificate_fail_before_connecting() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().as_os_str().to_owned();
        let env = move |k: &str| (k == "HOME").then(|| home.clone());
        for mode in ["verify-ca", "verify-full"] {
            let u = ServerUrl::parse_with(
                &format!("postgres://u@127.0.0.1:1/d?sslmode={mode}"),
                &env,
                &|| None,
            )
            .unwrap();
            let e = refused(&u);
            assert!(matches!(e, ServerError::NoRootCertificate { .. }), "{e:?}");
            assert!(e.to_string().contains("root.crt"), "{e}");
        }
    }

    #[test]
    fn within_gives_up_after_the_limit() {
        let slow = within(Some(Duration::from_millis(50)), || {
            std::thread::sleep(Duration::from_secs(2));
        });
        assert_eq!(slow, None);
        assert_eq!(within(Some(Duration::from_secs(5)), || 7), Some(7));
        assert_eq!(within(None, || 8), Some(8));
    }
}
