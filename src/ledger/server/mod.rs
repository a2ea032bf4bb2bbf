//! The team ledger's server connection: reading a `postgres://` URL as libpq does, the password
//! file, `sslmode`, and connecting within a bounded time with errors that name host, port and
//! database.
//!
//! It owns the way to the server and nothing past it: no SQL of the ledger, no git, no printing
//! (notices are handed back for the caller to show). The password never leaves
//! [`url::Password`]: no type here prints it and no error carries it.

mod client;
mod connect;
mod passfile;
mod tls;
mod url;

use crate::hint::Hint;
use std::path::PathBuf;

pub use client::{Client, ClientError, NoAnswer, Transaction};
pub use connect::connect;
pub use passfile::{Lookup, Notice, lookup as password_from_file};
pub use url::{
    DEFAULT_APPLICATION_NAME, DEFAULT_CONNECT_TIMEOUT, DEFAULT_PORT, DEFAULT_READ_TIMEOUT, Host,
    Password, STATEMENT_TIMEOUT, ServerUrl, SslMode, UrlError, is_server_url,
};

/// Everything that can go wrong reaching the team ledger. Each variant names where (host and
/// port or socket, and the database) and none carries the password.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("bad team ledger URL: {0}")]
    Url(#[from] UrlError),
    /// Nothing answered: refused, timed out, no such socket, no such host.
    #[error("cannot reach the team ledger at {endpoint} (database {dbname}): {reason}")]
    Unreachable {
        endpoint: String,
        dbname: String,
        reason: String,
    },
    #[error("the team ledger at {endpoint} (database {dbname}) refused role \"{user}\": {reason}")]
    Authentication {
        endpoint: String,
        dbname: String,
        user: String,
        reason: String,
        /// Whether a password was sent (from the URL, `PGPASSWORD` or the password file).
        had_password: bool,
        /// The password file, when it exists and was ignored for its permissions.
        ignored_passfile: Option<PathBuf>,
    },
    #[error("the team ledger server at {endpoint} has no database \"{dbname}\"")]
    NoDatabase {
        endpoint: String,
        dbname: String,
        user: String,
    },
    /// The server accepts only encrypted connections and `sslmode=disable` forbids them.
    #[error(
        "the team ledger at {endpoint} (database {dbname}) accepts only TLS connections, and \
         sslmode is disable"
    )]
    TlsRequired { endpoint: String, dbname: String },
    /// `sslmode` requires TLS and the server does not offer it.
    #[error(
        "the team ledger at {endpoint} (database {dbname}) does not offer TLS, and sslmode is \
         {sslmode}"
    )]
    TlsRefused {
        endpoint: String,
        dbname: String,
        sslmode: &'static str,
    },
    /// The handshake failed: most often the certificate did not verify.
    #[error("TLS with the team ledger at {endpoint} (database {dbname}) failed: {reason}")]
    Tls {
        endpoint: String,
        dbname: String,
        reason: String,
    },
    #[error("sslmode is {sslmode}, and the root certificate {} does not exist", path.display())]
    NoRootCertificate {
        sslmode: &'static str,
        path: PathBuf,
    },
    #[error("cannot set up TLS for the team ledger: {0}")]
    TlsSetup(String),
    /// The server answered with an error none of the above describes.
    #[error("the team ledger at {endpoint} (database {dbname}) refused the connection: {reason}")]
    Refused {
        endpoint: String,
        dbname: String,
        reason: String,
    },
}

impl ServerError {
    /// Nothing answered at the address: the CLI exits 3 (a precondition), as for a missing file.
    pub fn is_unreachable(&self) -> bool {
        matches!(self, ServerError::Unreachable { .. })
    }

    /// The next step, where there is one.
    pub fn hint(&self) -> Option<crate::hint::Hint> {
        Some(match self {
            ServerError::Url(_) => Hint::run(
                "the URL is GIT_HAND_LEDGER or git config hand.ledger; its form is \
                 postgres://user@host:port/database?sslmode=...",
            ),
            ServerError::Unreachable { .. } => Hint::run(
                "check that the server runs and listens there (pg_isready), or fix the host and \
                 port in GIT_HAND_LEDGER or git config hand.ledger",
            ),
            ServerError::Authentication {
                ignored_passfile: Some(path),
                ..
            } => Hint::run(format!(
                "the password file was ignored because others can read it: chmod 600 {}",
                path.display()
            )),
            ServerError::Authentication {
                had_password: false,
                ..
            } => Hint::run(
                "put the password in ~/.pgpass (a line host:port:database:user:password, mode \
                  0600) or in PGPASSWORD",
            ),
            ServerError::Authentication { user, .. } => Hint::run(format!(
                "check role \"{user}\"'s password in ~/.pgpass or the URL, and that the server \
                 lets the role in (pg_hba.conf)"
            )),
            ServerError::NoDatabase { dbname, .. } => Hint::run(format!(
                "create it (CREATE DATABASE \"{dbname}\"), or name another database in the URL"
            )),
            ServerError::TlsRequired { .. } => {
                Hint::run("set sslmode=require (or verify-full) in the URL")
            }
            ServerError::TlsRefused { .. } => Hint::run(
                "turn on ssl in the server's postgresql.conf, or set sslmode=prefer in the URL",
            ),
            ServerError::Tls { .. } => Hint::run(
                "check sslrootcert (or ~/.postgresql/root.crt) against the server's certificate",
            ),
            ServerError::NoRootCertificate { .. } => Hint::run(
                "put the server's CA certificate there, name it with sslrootcert=FILE, or use \
                 sslmode=require",
            ),
            ServerError::TlsSetup(_) | ServerError::Refused { .. } => return None,
        })
    }
}

/// What the server said, not only "db error" (the client library's own text for every error
/// the server sent): its message and SQLSTATE, or the client's error and its cause (a closed
/// connection, an I/O error). Server messages never carry the URL's password.
pub(in crate::ledger) fn pg_message(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{} ({})", db.message(), db.code().code());
    }
    match std::error::Error::source(e) {
        Some(cause) => format!("{e}: {cause}"),
        None => e.to_string(),
    }
}
