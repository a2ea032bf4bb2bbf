//! Reaching the team ledger's server (`git_hand::ledger::server`) against a real PostgreSQL: the
//! unix socket and TCP, passwords from the URL and from the password file, a missing database,
//! a server that is down or hung, and `sslmode` against a server without TLS. Each error must
//! name where it was going and never show the password.
//!
//! One shared cluster with a fresh database per test; only the tests that stop or freeze a
//! server make a [`pg::private_cluster`] of their own.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::mpsc::RecvTimeoutError;

use git_hand::ledger::server::{Notice, ServerError, ServerUrl, connect, password_from_file};

use crate::pg::{self, Database, encode, literal};

/// The writers' `lock_timeout` every connection here asks for.
const LOCK: std::time::Duration = std::time::Duration::from_secs(5);

/// Parses `url` with only `vars` as the environment (no HOME: no `~/.pgpass`, no
/// `~/.postgresql/root.crt` of whoever runs the tests).
fn parse(url: &str, vars: &[(&str, &Path)]) -> ServerUrl {
    let vars: Vec<(String, OsString)> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.as_os_str().to_owned()))
        .collect();
    let env = move |k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    ServerUrl::parse_with(url, &env, &|| None).unwrap()
}

/// Connects and runs `SELECT 1` on the connection; panics when either fails.
fn select_one(url: &ServerUrl) -> i32 {
    let mut client = connect(url, &mut Vec::new(), LOCK).unwrap_or_else(|e| panic!("{url}: {e:?}"));
    client.query_typed("SELECT 1", &[]).unwrap()[0].get(0)
}

/// The error a connection to `url` ends in, with the notices it gave.
fn refusal(url: &ServerUrl) -> (ServerError, Vec<Notice>) {
    let mut notices = Vec::new();
    match connect(url, &mut notices, LOCK) {
        Ok(_) => panic!("connected to {url}"),
        Err(e) => (e, notices),
    }
}

/// Everything a user or a log could be shown of an error and its URL.
fn shown(e: &ServerError, url: &ServerUrl) -> String {
    format!("{e}\n{e:?}\n{:?}\n{url}\n{url:?}", e.hint())
}

/// A role of the test's own that may log in with `password`, named after its database (roles
/// belong to the whole cluster, databases' names are unique on it).
fn role(db: &Database, password: &str) -> String {
    let name = format!("{}_role", db.name);
    db.psql(&format!(
        "CREATE ROLE {name} LOGIN PASSWORD {}",
        literal(password)
    ));
    name
}

/// `role` over TCP with no password in the URL.
fn tcp_url_without_password(db: &Database, role: &str) -> String {
    format!(
        "postgres://{}@127.0.0.1:{}/{}",
        encode(role),
        pg::cluster().port,
        db.name
    )
}

#[test]
fn the_superuser_connects_over_the_unix_socket_and_over_tcp() {
    let db = pg::database();
    assert_eq!(select_one(&parse(&db.url(), &[])), 1);
    assert_eq!(select_one(&parse(&db.tcp_url(), &[])), 1);
}

#[test]
fn a_role_connects_with_its_password_and_a_wrong_one_is_refused_without_showing_it() {
    let db = pg::database();
    let right = "right:pw/with@odd%chars";
    let wrong = "wr0ng-Secret-pw";
    let role = role(&db, right);
    let url = parse(&db.url_as(&role, right), &[]);
    assert_eq!(select_one(&url), 1);
    let text = format!("{url} {url:?} {:?}", url.password);
    assert!(
        !text.contains(right) && !text.contains(&encode(right)),
        "{text}"
    );

    let url = parse(&db.url_as(&role, wrong), &[]);
    let (e, notices) = refusal(&url);
    assert!(
        matches!(
            e,
            ServerError::Authentication {
                had_password: true,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(!e.is_unreachable());
    assert_eq!(
        e.to_string(),
        format!(
            "the team ledger at 127.0.0.1:{} (database {}) refused role \"{role}\": password \
             authentication failed for user \"{role}\"",
            pg::cluster().port,
            db.name
        )
    );
    assert!(notices.is_empty(), "{notices:?}");
    let shown = shown(&e, &url);
    assert!(
        !shown.contains(wrong) && !shown.contains(&encode(wrong)),
        "{shown}"
    );
}

#[test]
fn a_private_password_file_gives_the_password_and_an_open_one_is_ignored_with_chmod_600() {
    let db = pg::database();
    let secret = "from-the-passfile-pw";
    let role = role(&db, secret);
    let dir = tempfile::tempdir().unwrap();
    let passfile = dir.path().join("pgpass");
    std::fs::write(
        &passfile,
        format!(
            "# another server first\nelsewhere:5432:*:*:not-this\n127.0.0.1:{}:{}:{role}:{secret}\n",
            pg::cluster().port,
            db.name
        ),
    )
    .unwrap();
    let chmod = |mode| {
        std::fs::set_permissions(&passfile, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    let url = parse(
        &tcp_url_without_password(&db, &role),
        &[("PGPASSFILE", &passfile)],
    );
    assert!(url.password.is_none(), "{url:?}");

    chmod(0o600);
    let found = password_from_file(&url);
    assert!(
        found.password.is_some() && found.notice.is_none(),
        "{found:?}"
    );
    assert!(!format!("{found:?}").contains(secret), "{found:?}");
    let mut notices = Vec::new();
    let mut client = connect(&url, &mut notices, LOCK).unwrap();
    let who: String = client
        .query_typed("SELECT CAST(current_user AS TEXT)", &[])
        .unwrap()[0]
        .get(0);
    assert_eq!(who, role);
    assert!(notices.is_empty(), "{notices:?}");

    chmod(0o644);
    let (e, notices) = refusal(&url);
    assert!(
        matches!(
            &e,
            ServerError::Authentication {
                had_password: false,
                ignored_passfile: Some(p),
                ..
            } if *p == passfile
        ),
        "{e:?}"
    );
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].0.contains(&passfile.display().to_string()) && notices[0].0.contains("0644"),
        "{notices:?}"
    );
    assert_eq!(
        git_hand::cli::hint::line(&e.hint().unwrap()),
        format!(
            "the password file was ignored because others can read it: chmod 600 {}",
            passfile.display()
        )
    );
    let shown = format!("{}\n{notices:?}", shown(&e, &url));
    assert!(!shown.contains(secret), "{shown}");
}

#[test]
fn a_missing_database_is_named_in_the_error() {
    let db = pg::database();
    let missing = format!("{}_missing", db.name);
    let on_socket = db
        .url()
        .replace(&format!("/{}?", db.name), &format!("/{missing}?"));
    let on_tcp = db
        .tcp_url()
        .replace(&format!("/{}", db.name), &format!("/{missing}"));
    for text in [on_socket, on_tcp] {
        let url = parse(&text, &[]);
        assert_eq!(url.dbname, missing);
        let (e, _) = refusal(&url);
        assert!(matches!(e, ServerError::NoDatabase { .. }), "{e:?}");
        assert!(!e.is_unreachable());
        assert_eq!(
            e.to_string(),
            format!(
                "the team ledger server at {} has no database \"{missing}\"",
                url.endpoint()
            )
        );
        assert!(
            git_hand::cli::hint::line(&e.hint().unwrap())
                .contains(&format!("CREATE DATABASE \"{missing}\"")),
            "{:?}",
            e.hint()
        );
    }
}

/// The socket and TCP URLs of the superuser on `cluster`'s `postgres` database, given up on
/// after 2 s.
fn urls_of(cluster: &pg::Cluster) -> [ServerUrl; 2] {
    let dir = cluster.socket_dir.to_str().unwrap();
    [
        format!(
            "postgres://postgres@/postgres?host={}&port={}&connect_timeout=2",
            encode(dir),
            cluster.port
        ),
        format!(
            "postgres://postgres:{}@127.0.0.1:{}/postgres?connect_timeout=2",
            encode(pg::SUPERUSER_PASSWORD),
            cluster.port
        ),
    ]
    .map(|u| parse(&u, &[]))
}

#[test]
fn a_server_that_is_hung_or_stopped_is_unreachable_naming_host_port_and_database() {
    let cluster = pg::private_cluster();
    let urls = urls_of(&cluster);
    for url in &urls {
        assert_eq!(select_one(url), 1);
    }
    // A frozen postmaster: the kernel still accepts connections into its backlog, and nothing
    // ever answers, so only the connect timeout ends the attempt.
    let pid = cluster.pid().unwrap().to_string();
    let signal = |sig: &str| {
        let ok = std::process::Command::new("kill")
            .args([sig, &pid])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill {sig} {pid}");
    };
    signal("-STOP");
    // On a thread, so that a connect that never gives up fails this test instead of hanging it,
    // and the server is thawed (and cleaned up) whatever happened.
    let (tx, rx) = std::sync::mpsc::channel();
    let tries = urls.clone();
    let trying = std::thread::spawn(move || {
        let _ = tx.send(tries.iter().map(refusal).collect::<Vec<_>>());
    });
    let hung = rx.recv_timeout(std::time::Duration::from_secs(60));
    signal("-CONT");
    let hung = match hung {
        Ok(hung) => hung,
        Err(RecvTimeoutError::Timeout) => {
            panic!("connecting to a frozen server did not give up within 60 s (connect_timeout=2)")
        }
        // The thread panicked: show why.
        Err(RecvTimeoutError::Disconnected) => {
            trying.join().unwrap();
            unreachable!("the connecting thread ended without an answer")
        }
    };
    for (url, (e, _)) in urls.iter().zip(&hung) {
        assert!(e.is_unreachable(), "{e:?}");
        assert_eq!(
            e.to_string(),
            format!(
                "cannot reach the team ledger at {} (database postgres): no answer within 2 s \
                 (connect_timeout)",
                url.endpoint()
            )
        );
    }

    cluster.stop();
    let reasons = [
        "no such socket (is the server running?)",
        "connection refused",
    ];
    for (url, reason) in urls.iter().zip(reasons) {
        let (e, _) = refusal(url);
        assert!(e.is_unreachable(), "{e:?}");
        assert_eq!(
            e.to_string(),
            format!(
                "cannot reach the team ledger at {} (database postgres): {reason}",
                url.endpoint()
            )
        );
        assert!(
            git_hand::cli::hint::line(&e.hint().unwrap()).contains("pg_isready"),
            "{:?}",
            e.hint()
        );
        let shown = shown(&e, url);
        assert!(!shown.contains(pg::SUPERUSER_PASSWORD), "{shown}");
    }
    assert!(
        urls[1].endpoint() == format!("127.0.0.1:{}", cluster.port)
            && urls[0]
                .endpoint()
                .ends_with(&format!("sock/.s.PGSQL.{}", cluster.port)),
        "{urls:?}"
    );
}

#[test]
fn sslmode_require_is_refused_by_a_server_without_tls_and_disable_connects() {
    let db = pg::database();
    let url = parse(&format!("{}?sslmode=require", db.tcp_url()), &[]);
    let (e, _) = refusal(&url);
    assert!(matches!(e, ServerError::TlsRefused { .. }), "{e:?}");
    assert!(!e.is_unreachable());
    assert_eq!(
        e.to_string(),
        format!(
            "the team ledger at 127.0.0.1:{} (database {}) does not offer TLS, and sslmode is \
             require",
            pg::cluster().port,
            db.name
        )
    );
    assert!(!shown(&e, &url).contains(pg::SUPERUSER_PASSWORD));

    for mode in ["disable", "allow", "prefer"] {
        let url = parse(&format!("{}?sslmode={mode}", db.tcp_url()), &[]);
        assert_eq!(select_one(&url), 1, "sslmode={mode}");
    }
    // libpq never uses TLS over a unix socket, so require does not stop a socket connection.
    let url = parse(&format!("{}&sslmode=require", db.url()), &[]);
    assert_eq!(select_one(&url), 1);
}

/// Against a server that offers TLS (a certificate for 127.0.0.1, not for `localhost`): the
/// modes that ask for TLS get it, SCRAM runs inside it (bound to the channel: the certificate's
/// signature is ECDSA with SHA-256), and the checks are libpq's: `verify-ca` the chain,
/// `verify-full` the chain and the name, the weak modes the chain once a root certificate is
/// given. A refusal says what failed and never shows the password.
#[test]
fn tls_is_used_and_checked_as_each_sslmode_asks_against_a_server_that_offers_it() {
    let cluster = pg::private_cluster();
    let tls = cluster.serve_tls();
    let db = cluster.database();
    let root = tls.root.display().to_string();
    let other = tls.other_root.display().to_string();
    let by_name = db.tcp_url().replace("@127.0.0.1:", "@localhost:");
    let over_tls = |url: &str| -> bool {
        let url = parse(url, &[]);
        let mut client =
            connect(&url, &mut Vec::new(), LOCK).unwrap_or_else(|e| panic!("{url}: {e:?}"));
        client
            .query_typed(
                "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                &[],
            )
            .unwrap()[0]
            .get(0)
    };
    let tcp = db.tcp_url();
    for (query, tls) in [
        ("sslmode=disable", false),
        // allow tries without TLS first, and the server lets it in.
        ("sslmode=allow", false),
        ("sslmode=prefer", true),
        ("sslmode=require", true),
        (&format!("sslmode=require&sslrootcert={root}"), true),
        (&format!("sslmode=verify-ca&sslrootcert={root}"), true),
        (&format!("sslmode=verify-full&sslrootcert={root}"), true),
    ] {
        assert_eq!(over_tls(&format!("{tcp}?{query}")), tls, "{query}");
    }
    // verify-ca checks no name; verify-full does.
    assert!(over_tls(&format!(
        "{by_name}?sslmode=verify-ca&sslrootcert={root}"
    )));
    for (url, why) in [
        (
            format!("{by_name}?sslmode=verify-full&sslrootcert={root}"),
            "certificate not valid for name",
        ),
        (
            format!("{tcp}?sslmode=verify-full&sslrootcert={other}"),
            "UnknownIssuer",
        ),
        (
            format!("{tcp}?sslmode=verify-ca&sslrootcert={other}"),
            "UnknownIssuer",
        ),
        (
            format!("{tcp}?sslmode=require&sslrootcert={other}"),
            "UnknownIssuer",
        ),
    ] {
        let url = parse(&url, &[]);
        let (e, _) = refusal(&url);
        assert!(matches!(e, ServerError::Tls { .. }), "{url}: {e:?}");
        assert!(e.to_string().contains(why), "{url}: {e}");
        assert!(!shown(&e, &url).contains(pg::SUPERUSER_PASSWORD), "{e:?}");
    }
}

/// Once connected, nothing waits on the server for ever: the server itself ends a statement
/// after 30 s and a transaction left idle after a minute (the client's keepalives and TCP user
/// timeout bound a link gone quiet; they cannot be observed from here).
#[test]
fn the_server_bounds_every_statement_and_idle_transaction() {
    let db = pg::database();
    for url in [db.url(), db.tcp_url()] {
        let mut client = connect(&parse(&url, &[]), &mut Vec::new(), LOCK).unwrap();
        let mut show = |what: &str| -> String {
            client.query_typed(&format!("SHOW {what}"), &[]).unwrap()[0].get(0)
        };
        assert_eq!(show("statement_timeout"), "30s");
        assert_eq!(show("idle_in_transaction_session_timeout"), "1min");
        // Set in the startup packet, not by a statement after connecting.
        assert_eq!(show("lock_timeout"), "5s");
    }
}
