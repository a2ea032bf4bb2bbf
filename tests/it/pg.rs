//! A private PostgreSQL cluster for the integration tests: one per test process, in a temporary
//! directory under the system's temporary directory (`std::env::temp_dir`, `/tmp`), listening on
//! a unix socket in that directory and on 127.0.0.1 at a free port. [`database`] gives each test
//! a fresh empty database on it. Not under `target/tmp`: as root the server runs as nobody, who
//! cannot reach a checkout under a 0700 home (issue 22 item 14).
//!
//! The server binaries are Debian's (`/usr/lib/postgresql/<version>/bin`, the newest, off `PATH`);
//! `build-support/test-tools` installs the `postgresql` package when no `initdb` is found. A
//! server that cannot be installed or started fails the test with the command that fixes it:
//! never a skip.
//!
//! `initdb` and `postgres` refuse to run as root, so when the tests run as root the server tools
//! run as `nobody` (`setpriv`), which owns the cluster's directory; clients (`psql`, git-hand)
//! still run as the test's user. As any other user everything runs as that user.
//!
//! Cleanup does not depend on the test process ending well: a watchdog (`sh`, in its own process
//! group so a Ctrl-C of the run does not reach it) blocks reading a pipe whose write end only this
//! process holds (close-on-exec: no child inherits it). When this process ends, however it ends,
//! the kernel closes that end; the watchdog reads EOF, stops the server (`pg_ctl stop -m
//! immediate`, then `kill -9` if it still runs 30 s later) and deletes the directory, a few tens
//! of milliseconds after the process has ended. A [`private_cluster`] is cleaned up the same way
//! when it is dropped, and the drop waits for it.

#![allow(dead_code)]

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::io::Write as _;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::support::killed_after;

/// How long one server tool or `psql` may run before it is killed: far beyond any real run.
const TIMEOUT: &str = "120";

/// What follows the time and process id on each line a session writes to the server's log:
/// `db=<database> app=<application_name> session=<session id> ` (see
/// [`Database::logged_statements`]).
pub const SESSION_PREFIX: &str = "db=%d app=%a session=%c ";

/// The superuser `initdb` makes; it connects over the socket without a password (trust) and over
/// TCP with [`SUPERUSER_PASSWORD`] (scram-sha-256).
pub const SUPERUSER: &str = "postgres";
pub const SUPERUSER_PASSWORD: &str = "harness-superuser-pw";

/// The shared cluster of this test process, made and started on first use.
pub fn cluster() -> &'static Cluster {
    static CLUSTER: OnceLock<Cluster> = OnceLock::new();
    CLUSTER.get_or_init(Cluster::create)
}

/// A fresh empty database on the shared cluster.
pub fn database() -> Database {
    cluster().database()
}

/// A cluster of the caller's own, for tests that stop, start or kill the server (stopping the
/// shared [`cluster`] would fail every other test running at the time). Dropping it stops the
/// server and deletes its directory.
pub fn private_cluster() -> Cluster {
    Cluster::create()
}

/// One PostgreSQL cluster: its data directory, socket directory and TCP port.
pub struct Cluster {
    /// The directory of the unix socket (`host=` in a URL).
    pub socket_dir: PathBuf,
    /// The port, on 127.0.0.1 and in the socket's name.
    pub port: u16,
    /// Where `initdb`, `pg_ctl`, `postgres` and `psql` are.
    pub bin_dir: PathBuf,
    /// The temporary directory holding everything; deleted at the end.
    root: PathBuf,
    data: PathBuf,
    log: PathBuf,
    /// The unprivileged uid and gid the server tools run as when the tests run as root.
    run_as: Option<(u32, u32)>,
    watchdog: Child,
    databases: AtomicU32,
}

/// What a cluster serving TLS ([`Cluster::serve_tls`]) was given.
pub struct Tls {
    /// The certificate authority that signed the server's certificate.
    pub root: PathBuf,
    /// A certificate authority that signed nothing the server has.
    pub other_root: PathBuf,
}

/// A database of its own on a cluster; the superuser reaches it with [`Database::url`].
#[derive(Clone, Debug)]
pub struct Database {
    pub name: String,
    socket_dir: PathBuf,
    port: u16,
    psql: PathBuf,
    root: PathBuf,
}

impl Cluster {
    /// Installs the server if need be, makes a cluster in a new directory, starts it and arms the
    /// watchdog that stops and deletes it when this process ends.
    fn create() -> Cluster {
        let bin_dir = server_bin_dir();
        let tmp = std::env::temp_dir();
        let root = tempfile::Builder::new()
            .prefix("git-hand-pg-")
            .tempdir_in(&tmp)
            .unwrap()
            .keep();
        // The real path: the server's processes are found by their working directory.
        let root = std::fs::canonicalize(root).unwrap();
        let socket_dir = root.join("sock");
        std::fs::create_dir(&socket_dir).unwrap();
        // A unix socket's path holds at most 107 bytes.
        let socket = socket_dir.join(".s.PGSQL.65535");
        assert!(
            socket.as_os_str().len() < 108,
            "the test cluster's socket path {} is too long for a unix socket: point TMPDIR at a \
             shorter directory",
            socket.display()
        );
        // The directory is ours: its owner is who this process runs as.
        let run_as = (std::fs::metadata(&root).unwrap().uid() == 0).then(nobody);
        if let Some((uid, gid)) = run_as {
            for dir in [&root, &socket_dir] {
                std::os::unix::fs::chown(dir, Some(uid), Some(gid)).unwrap();
            }
        }
        let mut cluster = Cluster {
            port: 0,
            data: root.join("data"),
            log: root.join("server.log"),
            watchdog: watchdog(&root, &root.join("data"), &bin_dir, run_as),
            socket_dir,
            bin_dir,
            root,
            run_as,
            databases: AtomicU32::new(0),
        };
        cluster.check_reachable();
        cluster.initdb();
        cluster.first_start();
        cluster.psql_in(
            "postgres",
            &format!(
                "ALTER ROLE {SUPERUSER} PASSWORD {}",
                literal(SUPERUSER_PASSWORD)
            ),
        );
        cluster
    }

    /// A fresh empty database (unique name), created by the superuser.
    pub fn database(&self) -> Database {
        let n = self.databases.fetch_add(1, Ordering::Relaxed) + 1;
        let name = format!("test_{n}");
        self.psql_in("postgres", &format!("CREATE DATABASE {name}"));
        Database {
            name,
            socket_dir: self.socket_dir.clone(),
            port: self.port,
            psql: self.bin_dir.join("psql"),
            root: self.root.clone(),
        }
    }

    /// Stops the server (`pg_ctl stop -m fast`), keeping its data. For fault tests: on the shared
    /// [`cluster`] this fails every test running at the time; prefer a [`private_cluster`].
    pub fn stop(&self) {
        let out = self
            .server_tool("pg_ctl")
            .arg("stop")
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "fast", "-w", "-t", "60", "-s"])
            .output()
            .unwrap();
        self.must(out, "pg_ctl stop");
    }

    /// Starts the server again on the same data directory, socket and port, and returns once it
    /// accepts connections (`pg_ctl -w`).
    ///
    /// After `kill -9` of the postmaster, the start first waits until it and the processes it
    /// left (they exit when they see it gone, and hold its shared memory) have exited, then
    /// removes its pid file and its socket's lock file: a killed postmaster may stay a zombie a
    /// while (its parent is init), and a zombie's lock files look live to `postgres`.
    pub fn start(&self) {
        self.wait_for_no_server_process();
        let socket_lock = self.socket_dir.join(format!(".s.PGSQL.{}.lock", self.port));
        for lock in [self.data.join("postmaster.pid"), socket_lock] {
            if let Err(e) = std::fs::remove_file(&lock) {
                assert_eq!(
                    e.kind(),
                    std::io::ErrorKind::NotFound,
                    "{}: {e}",
                    lock.display()
                );
            }
        }
        let out = self.pg_ctl_start();
        self.must(out, "pg_ctl start");
    }

    /// The postmaster's process id while it runs (the first line of `postmaster.pid`).
    pub fn pid(&self) -> Option<u32> {
        self.pidfile_pid().filter(|&pid| running(pid))
    }

    fn pidfile_pid(&self) -> Option<u32> {
        let text = std::fs::read_to_string(self.data.join("postmaster.pid")).ok()?;
        text.lines().next()?.trim().parse().ok()
    }

    /// Waits until no running process works in the data directory (every `postgres` process
    /// does): a bounded poll, as nothing signals another process's exit.
    fn wait_for_no_server_process(&self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let left = self.server_processes();
            if left.is_empty() {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "processes {left:?} of a server on {} still run after 60 s: start() needs it \
                 stopped (stop()) or killed",
                self.data.display()
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// The running processes whose working directory is the data directory: the postmaster and
    /// every process it started (backends included).
    pub fn server_processes(&self) -> Vec<u32> {
        crate::processes::running_in(&self.data)
    }

    /// Runs `sql` as the superuser in database `dbname` over the socket; see [`Database::psql`].
    pub fn psql_in(&self, dbname: &str, sql: &str) -> String {
        psql(
            &self.bin_dir.join("psql"),
            &self.root,
            &socket_url(&self.socket_dir, self.port, dbname),
            sql,
        )
    }

    /// The unprivileged user must be able to reach and write the cluster's directory: every
    /// directory above it must be searchable by others.
    fn check_reachable(&self) {
        if self.run_as.is_none() {
            return;
        }
        let ok = self
            .as_owner("test")
            .arg("-w")
            .arg(&self.root)
            .status()
            .unwrap()
            .success();
        assert!(
            ok,
            "the tests run as root, so the PostgreSQL server runs as nobody, who cannot reach {}\n\
             fix: make every directory above it searchable by others (chmod o+x DIR), point \
             TMPDIR at a directory nobody can reach (e.g. /tmp), or run the tests as a normal user",
            self.root.display()
        );
    }

    fn initdb(&self) {
        let out = self
            .server_tool("initdb")
            .arg("-D")
            .arg(&self.data)
            .args(["-U", SUPERUSER, "-E", "UTF8", "--locale=C", "--no-sync"])
            .args(["--auth-local=trust", "--auth-host=scram-sha-256"])
            .output()
            .unwrap();
        self.must(out, "initdb");
        let mut conf = std::fs::OpenOptions::new()
            .append(true)
            .open(self.data.join("postgresql.conf"))
            .unwrap();
        writeln!(
            conf,
            "\n# The test harness's settings (tests/it/pg.rs)\ninclude 'harness.conf'"
        )
        .unwrap();
    }

    /// Starts the server for the first time on a free port, trying another when the one chosen
    /// was taken meanwhile (by another process on this machine).
    fn first_start(&mut self) {
        for attempt in 1.. {
            self.port = free_port();
            self.write_settings();
            let out = self.pg_ctl_start();
            let taken = std::fs::read_to_string(&self.log)
                .unwrap_or_default()
                .contains("Address already in use");
            if out.status.success() || !taken || attempt == 5 {
                self.must(out, "pg_ctl start");
                return;
            }
        }
    }

    /// The settings the harness needs, in `harness.conf` (included by `postgresql.conf`).
    /// fsync is off for speed; synchronous_commit stays on, so a commit acknowledged to a client
    /// is in the WAL (the OS's cache) and survives `kill -9` of the server. Each line a session
    /// logs names its database, application and session ([`SESSION_PREFIX`]), so a test can
    /// read its own database's statements out of the log every test shares
    /// ([`Database::log_statements`]).
    fn write_settings(&self) {
        let socket = self.socket_dir.to_str().unwrap().replace('\'', "''");
        let settings = format!(
            "listen_addresses = '127.0.0.1'\n\
             port = {}\n\
             unix_socket_directories = '{socket}'\n\
             fsync = off\n\
             synchronous_commit = on\n\
             max_connections = 200\n\
             shared_buffers = 32MB\n\
             timezone = 'UTC'\n\
             log_timezone = 'UTC'\n\
             log_line_prefix = '%m [%p] %q{SESSION_PREFIX}'\n",
            self.port
        );
        std::fs::write(self.data.join("harness.conf"), settings).unwrap();
    }

    fn pg_ctl_start(&self) -> Output {
        self.server_tool("pg_ctl")
            .arg("start")
            .arg("-D")
            .arg(&self.data)
            .arg("-l")
            .arg(&self.log)
            .args(["-w", "-t", "60", "-s"])
            .output()
            .unwrap()
    }

    /// Makes the server offer TLS with a certificate for the address 127.0.0.1 (not for the name
    /// `localhost`), signed by a certificate authority of this cluster's own, and restarts it.
    /// Every kind of client connection the harness allows over TCP is still allowed without TLS.
    /// The certificates are made with `openssl`, as a team makes its server's.
    pub fn serve_tls(&self) -> Tls {
        let dir = self.root.join("tls");
        std::fs::create_dir(&dir).unwrap();
        let openssl = |args: &[&str]| {
            let out = killed_after(Command::new, TIMEOUT)
                .arg("openssl")
                .args(args)
                .current_dir(&dir)
                .stdin(Stdio::null())
                .output()
                .unwrap_or_else(|e| {
                    panic!("openssl: {e}: install it with `apt-get install -y openssl`")
                });
            assert!(
                out.status.success(),
                "openssl {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        for ca in ["ca", "other-ca"] {
            let (key, crt, subj) = (
                format!("{ca}.key"),
                format!("{ca}.crt"),
                format!("/CN=git-hand test {ca}"),
            );
            let mut args = vec![
                "req", "-x509", "-days", "2", "-subj", &subj, "-keyout", &key, "-out", &crt,
            ];
            args.extend(ec);
            args.extend([
                "-addext",
                "basicConstraints=critical,CA:TRUE",
                "-addext",
                "keyUsage=critical,keyCertSign",
            ]);
            openssl(&args);
        }
        let mut args = vec![
            "req",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
        ];
        args.extend(ec);
        openssl(&args);
        std::fs::write(dir.join("server.ext"), "subjectAltName=IP:127.0.0.1\n").unwrap();
        openssl(&[
            "x509",
            "-req",
            "-days",
            "2",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-extfile",
            "server.ext",
            "-out",
            "server.crt",
        ]);
        // The server refuses a key others may read, and reads it as the cluster's owner.
        let key = dir.join("server.key");
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        if let Some((uid, gid)) = self.run_as {
            for file in [&dir, &key, &dir.join("server.crt")] {
                std::os::unix::fs::chown(file, Some(uid), Some(gid)).unwrap();
            }
        }
        let mut conf = std::fs::OpenOptions::new()
            .append(true)
            .open(self.data.join("harness.conf"))
            .unwrap();
        write!(
            conf,
            "ssl = on\nssl_cert_file = '{}'\nssl_key_file = '{}'\n",
            dir.join("server.crt").display(),
            key.display()
        )
        .unwrap();
        self.stop();
        self.start();
        Tls {
            root: dir.join("ca.crt"),
            other_root: dir.join("other-ca.crt"),
        }
    }

    /// Asserts a server tool succeeded, else panics with its output and the server's log.
    #[track_caller]
    fn must(&self, out: Output, what: &str) {
        if out.status.success() {
            return;
        }
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(20).collect::<Vec<_>>();
        let mut tail_text = String::new();
        for line in tail.iter().rev() {
            let _ = writeln!(tail_text, "{line}");
        }
        panic!(
            "{what} failed ({}) for the test cluster in {}\nstdout:\n{}\nstderr:\n{}\nserver log \
             (last lines):\n{tail_text}",
            out.status,
            self.root.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
    }

    /// A server tool from [`Cluster::bin_dir`], as the cluster's owner, killed after
    /// [`TIMEOUT`].
    fn server_tool(&self, tool: &str) -> Command {
        self.as_owner(self.bin_dir.join(tool))
    }

    /// `program` as the cluster's owner (through `setpriv` when the tests run as root), in the
    /// cluster's directory, with a hermetic environment, killed after [`TIMEOUT`].
    fn as_owner(&self, program: impl AsRef<OsStr>) -> Command {
        let mut cmd = killed_after(Command::new, TIMEOUT);
        if let Some((uid, gid)) = self.run_as {
            cmd.arg("setpriv")
                .arg(format!("--reuid={uid}"))
                .arg(format!("--regid={gid}"))
                .arg("--clear-groups");
        }
        cmd.arg(program)
            .current_dir(&self.root)
            .stdin(Stdio::null());
        hermetic(&mut cmd, &self.root);
        cmd
    }
}

impl Drop for Cluster {
    /// Closing the watchdog's pipe is what stops the server and deletes the directory; waiting
    /// for it makes that done when the drop returns. (The shared cluster is never dropped: its
    /// watchdog acts when the process ends.)
    fn drop(&mut self) {
        drop(self.watchdog.stdin.take());
        let _ = self.watchdog.wait();
    }
}

impl Database {
    /// The superuser over the unix socket:
    /// `postgres://postgres@/NAME?host=SOCKDIR&port=PORT`.
    pub fn url(&self) -> String {
        socket_url(&self.socket_dir, self.port, &self.name)
    }

    /// The superuser over TCP on 127.0.0.1, with its password.
    pub fn tcp_url(&self) -> String {
        self.url_as(SUPERUSER, SUPERUSER_PASSWORD)
    }

    /// `role` over TCP on 127.0.0.1 with `password` (percent-encoded) in the URL.
    pub fn url_as(&self, role: &str, password: &str) -> String {
        format!(
            "postgres://{}:{}@127.0.0.1:{}/{}",
            encode(role),
            encode(password),
            self.port,
            self.name
        )
    }

    /// Makes the server log every statement each later session on this database runs
    /// (`log_statement = 'all'`, for this database only: the others' tests log nothing more).
    pub fn log_statements(&self) {
        self.psql(&format!(
            "ALTER DATABASE {} SET log_statement = 'all'",
            self.name
        ));
    }

    /// The statements this database's sessions of application `app` logged
    /// ([`Database::log_statements`]), in order, from byte `from` of the server's log on (its
    /// [`Database::log_len`] before the run in question): (session id, the statement's first
    /// line without the `statement: ` or `execute <name>: ` of the log). Every session writes
    /// its log lines itself, before it answers, so a client that has had its answer finds its
    /// statements here.
    pub fn logged_statements(&self, from: u64, app: &str) -> Vec<(String, String)> {
        let log = std::fs::read(self.root.join("server.log")).unwrap();
        let log = String::from_utf8_lossy(&log[usize::try_from(from).unwrap()..]).into_owned();
        let ours = format!("db={} app={app} session=", self.name);
        log.lines()
            .filter_map(|line| {
                let (_, rest) = line.split_once(&ours)?;
                let (session, message) = rest.split_once(' ')?;
                let text = message.strip_prefix("LOG:  ")?;
                let statement = match text.strip_prefix("statement: ") {
                    Some(simple) => simple,
                    None => text.strip_prefix("execute ")?.split_once(": ")?.1,
                };
                Some((session.to_owned(), statement.to_owned()))
            })
            .collect()
    }

    /// The length of the server's log now, for [`Database::logged_statements`].
    pub fn log_len(&self) -> u64 {
        std::fs::metadata(self.root.join("server.log"))
            .unwrap()
            .len()
    }

    /// Runs `sql` (any number of statements) as the superuser over the socket with `psql -X -q
    /// -A -t -v ON_ERROR_STOP=1` and returns its output without the last newline: one line per
    /// row, columns separated by `|`. Panics with psql's stderr when a statement fails.
    pub fn psql(&self, sql: &str) -> String {
        psql(&self.psql, &self.root, &self.url(), sql)
    }

    /// Runs `sql` with `psql` on any `url` (another role's [`Database::url_as`], the TCP URL):
    /// its output without the last newline, or psql's stderr when it failed.
    pub fn psql_on(&self, url: &str, sql: &str) -> Result<String, String> {
        try_psql(&self.psql, &self.root, url, sql)
    }
}

/// Runs `sql` through `psql` on `url`; panics with psql's stderr when it fails.
fn psql(psql: &Path, root: &Path, url: &str, sql: &str) -> String {
    try_psql(psql, root, url, sql)
        .unwrap_or_else(|stderr| panic!("psql failed on {url}\nsql:\n{sql}\nstderr:\n{stderr}"))
}

/// Runs `sql` through `psql` on `url`, fed on its stdin, killed after [`TIMEOUT`]: its output
/// without the last newline, or its stderr when it failed.
fn try_psql(psql: &Path, root: &Path, url: &str, sql: &str) -> Result<String, String> {
    let mut cmd = killed_after(Command::new, TIMEOUT);
    cmd.arg(psql)
        .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", url])
        .args(["-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    hermetic(&mut cmd, root);
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = sql.to_owned();
    // From a thread: psql may fill its output pipe before it has read all the input.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    if !out.status.success() {
        return Err(format!(
            "{}({})",
            String::from_utf8_lossy(&out.stderr),
            out.status
        ));
    }
    let stdout = String::from_utf8(out.stdout).unwrap();
    Ok(stdout.strip_suffix('\n').unwrap_or(&stdout).to_owned())
}

/// The libpq environment of a child: none of the caller's `PG*` variables (host, port, user,
/// database, password, service...), and the password and service files pointed at paths in the
/// cluster's directory that do not exist, so nobody's `~/.pgpass` or `pg_service.conf` is read.
fn hermetic(cmd: &mut Command, root: &Path) {
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("PG") {
            cmd.env_remove(key);
        }
    }
    cmd.env("PGPASSFILE", root.join("no-pgpass"))
        .env("PGSERVICEFILE", root.join("no-pg_service.conf"))
        .env("PGSYSCONFDIR", root.join("no-sysconfdir"))
        .env("PGCONNECT_TIMEOUT", "10")
        .env("LC_ALL", "C")
        .env("TZ", "UTC");
}

/// Starts the watchdog that, once this process has ended (its pipe reads EOF), stops the server
/// in `data` and deletes `root`. Its own process group: a Ctrl-C of the test run reaches the
/// tests, not it. It holds no other file of ours: its output goes nowhere.
fn watchdog(root: &Path, data: &Path, bin_dir: &Path, run_as: Option<(u32, u32)>) -> Child {
    // `pg_ctl stop -W` sends the signal (SIGQUIT: immediate) to a server that runs; the
    // postmaster exits once its children have (a zombie, its parent being init, counts as gone).
    // pg_ctl's own wait polls every 100 ms, this every 10 ms: cleanup ends a moment after the
    // tests do. A process's state is `ps`'s (`-o stat= -p`: procps and BSD `ps` alike), and
    // pg_ctl is bounded by the same poll (it only sends the signal, `-W`, but a stuck one must
    // not keep the server running), not by GNU `timeout`, which macOS has not.
    const SCRIPT: &str = r#"
trap '' INT TERM HUP PIPE
root=$1 data=$2
shift 2
while IFS= read -r _; do :; done
running() {
	stat=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
	case $stat in '' | *Z*) return 1 ;; esac
}
if pid=$(head -n 1 "$data/postmaster.pid" 2>/dev/null) && [ -n "$pid" ] && running "$pid"; then
	"$@" stop -D "$data" -m immediate -W -s &
	stopper=$!
	tries=0
	while running "$stopper" && [ "$tries" -lt 3000 ]; do
		sleep 0.01
		tries=$((tries + 1))
	done
	kill -9 "$stopper" 2>/dev/null
	wait "$stopper"
	tries=0
	while running "$pid" && [ "$tries" -lt 3000 ]; do
		sleep 0.01
		tries=$((tries + 1))
	done
	if running "$pid"; then
		kill -9 "$pid"
	fi
fi
rm -rf "$root"
"#;
    let mut cmd = Command::new("sh");
    cmd.args(["-c", SCRIPT, "pg-watchdog"]).arg(root).arg(data);
    if let Some((uid, gid)) = run_as {
        cmd.arg("setpriv")
            .arg(format!("--reuid={uid}"))
            .arg(format!("--regid={gid}"))
            .arg("--clear-groups");
    }
    cmd.arg(bin_dir.join("pg_ctl"))
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    hermetic(&mut cmd, root);
    cmd.spawn().unwrap()
}

/// The directory of the server binaries: the newest `/usr/lib/postgresql/<version>/bin` (Debian),
/// else the newest keg-only `postgresql@<version>/bin` of Homebrew's, else the one `initdb` on
/// `PATH` resolves to. When there is neither, `build-support/test-tools`
/// installs the `postgresql` package (once per process) and the search runs again.
fn server_bin_dir() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(found) = find_server() {
            return found;
        }
        crate::support::run_test_tools("the PostgreSQL server the tests need");
        find_server().expect(
            "no PostgreSQL server (initdb) found after build-support/test-tools ran\n\
             fix: apt-get install -y postgresql",
        )
    })
    .clone()
}

/// See [`server_bin_dir`].
fn find_server() -> Option<PathBuf> {
    newest_debian_bin_dir()
        .or_else(newest_homebrew_bin_dir)
        .or_else(|| {
            let initdb = which::which("initdb").ok()?;
            Some(std::fs::canonicalize(initdb).ok()?.parent()?.to_owned())
        })
}

/// The newest `/usr/lib/postgresql/<version>/bin` that has `initdb`, by numeric version.
fn newest_debian_bin_dir() -> Option<PathBuf> {
    std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let version: u32 = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .max()
        .map(|(_, bin)| bin)
}

/// The newest `<prefix>/opt/postgresql@<version>/bin` that has `initdb`: Homebrew keeps its
/// PostgreSQL off `PATH` (keg-only). The prefix is `$HOMEBREW_PREFIX`, else Homebrew's defaults
/// (`/opt/homebrew` on Apple silicon, `/usr/local` on Intel). Written from Homebrew's
/// documentation, not yet run on a Mac; on Linux there is none and this finds nothing.
fn newest_homebrew_bin_dir() -> Option<PathBuf> {
    let prefixes = std::env::var_os("HOMEBREW_PREFIX")
        .map(PathBuf::from)
        .into_iter()
        .chain(["/opt/homebrew", "/usr/local"].map(PathBuf::from));
    prefixes
        .filter_map(|prefix| std::fs::read_dir(prefix.join("opt")).ok())
        .flatten()
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let name = entry.file_name();
            let version: u32 = name.to_str()?.strip_prefix("postgresql@")?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .max()
        .map(|(_, bin)| bin)
}

/// The uid and gid of `nobody`, whom the server runs as when the tests run as root.
fn nobody() -> (u32, u32) {
    let id = |flag: &str| -> u32 {
        let out = Command::new("id").args([flag, "nobody"]).output().unwrap();
        assert!(
            out.status.success(),
            "the tests run as root and PostgreSQL refuses root, but there is no user nobody to \
             run it as: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
    };
    (id("-u"), id("-g"))
}

/// A port on 127.0.0.1 that was free a moment ago.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The superuser's libpq URL over the socket in `socket_dir`.
fn socket_url(socket_dir: &Path, port: u16, dbname: &str) -> String {
    format!(
        "postgres://{SUPERUSER}@/{dbname}?host={}&port={port}",
        encode_keeping_slashes(socket_dir.to_str().unwrap())
    )
}

/// Percent-encodes everything but RFC 3986's unreserved characters (a password's `@`, `:`, `/`,
/// `%`...).
pub fn encode(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

/// [`encode`], keeping `/` (a socket directory in a query value).
fn encode_keeping_slashes(path: &str) -> String {
    path.split('/').map(encode).collect::<Vec<_>>().join("/")
}

/// `text` as an SQL string literal.
pub fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

#[test]
fn each_database_is_fresh_and_its_own() {
    let (one, other) = (database(), database());
    assert_ne!(one.name, other.name);
    let user_tables = "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'";
    assert_eq!(one.psql(user_tables), "0");
    one.psql("CREATE TABLE only_here (id int); INSERT INTO only_here VALUES (7)");
    assert_eq!(one.psql("SELECT id FROM only_here"), "7");
    assert_eq!(other.psql(user_tables), "0");
    assert_eq!(other.psql("SELECT to_regclass('only_here') IS NULL"), "t");
}

#[test]
fn databases_made_at_once_are_all_made_and_distinct() {
    let names: std::collections::BTreeSet<String> = std::thread::scope(|scope| {
        let made: Vec<_> = (0..8).map(|_| scope.spawn(database)).collect();
        made.into_iter()
            .map(|db| {
                let db = db.join().unwrap();
                assert_eq!(db.psql("SELECT current_database()"), db.name);
                db.name
            })
            .collect()
    });
    assert_eq!(names.len(), 8, "{names:?}");
}

#[test]
fn url_is_the_socket_and_tcp_url_is_localhost() {
    let db = database();
    assert!(
        db.url()
            .contains(&format!("host={}", cluster().socket_dir.display()))
    );
    let whoami =
        "SELECT current_user, current_database(), coalesce(host(inet_server_addr()), 'socket')";
    assert_eq!(db.psql(whoami), format!("postgres|{}|socket", db.name));
    assert_eq!(
        db.psql_on(&db.tcp_url(), whoami).unwrap(),
        format!("postgres|{}|127.0.0.1", db.name)
    );
}

#[test]
fn a_role_connects_over_tcp_with_its_password_and_a_wrong_one_is_refused() {
    let db = database();
    let role = format!("{}_user", db.name);
    let password = "p@ss:w/rd %?&#'";
    db.psql(&format!(
        "CREATE ROLE {role} LOGIN PASSWORD {}",
        literal(password)
    ));
    let stored = format!(
        "SELECT rolpassword LIKE 'SCRAM-SHA-256$%' FROM pg_authid WHERE rolname = '{role}'"
    );
    assert_eq!(db.psql(&stored), "t");
    let url = db.url_as(&role, password);
    assert!(!url.contains(password), "{url}");
    assert_eq!(db.psql_on(&url, "SELECT current_user").unwrap(), role);
    let refused = db
        .psql_on(&db.url_as(&role, "not-the-password"), "SELECT 1")
        .unwrap_err();
    assert!(
        refused.contains(&format!(
            "password authentication failed for user \"{role}\""
        )),
        "{refused}"
    );
}

#[test]
fn a_cluster_stopped_and_started_again_keeps_its_data_and_is_deleted_when_dropped() {
    let cluster = private_cluster();
    let db = cluster.database();
    db.psql("CREATE TABLE kept (id int); INSERT INTO kept VALUES (1), (2)");
    let (port, first_pid) = (cluster.port, cluster.pid().unwrap());
    cluster.stop();
    assert_eq!(cluster.pid(), None);
    let down = db.psql_on(&db.url(), "SELECT 1").unwrap_err();
    assert!(down.contains("No such file or directory"), "{down}");
    cluster.start();
    assert_eq!(cluster.port, port);
    assert_ne!(cluster.pid(), Some(first_pid));
    assert_eq!(db.psql("SELECT sum(id) FROM kept"), "3");
    assert_eq!(
        db.psql_on(&db.tcp_url(), "SELECT count(*) FROM kept")
            .unwrap(),
        "2"
    );

    let (root, pid) = (cluster.root.clone(), cluster.pid().unwrap());
    drop(cluster);
    assert!(!root.exists(), "{} is left behind", root.display());
    assert!(!running(pid), "postgres {pid} is left running");
}

#[test]
fn a_server_killed_with_sigkill_starts_again_with_every_acknowledged_commit() {
    let cluster = private_cluster();
    let db = cluster.database();
    db.psql("CREATE TABLE acked (id int)");
    for id in 1..=20 {
        db.psql(&format!("INSERT INTO acked VALUES ({id})"));
    }
    let pid = cluster.pid().unwrap();
    let killed = Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    cluster.start();
    assert_eq!(db.psql("SELECT count(*), sum(id) FROM acked"), "20|210");
}

/// Set in the child process of [`a_test_process_killed_with_sigkill_leaves_no_server_behind`].
const KILLED_CHILD: &str = "GIT_HAND_PG_HARNESS_KILLED_CHILD";

#[test]
fn a_test_process_killed_with_sigkill_leaves_no_server_behind() {
    let out = killed_after(Command::new, TIMEOUT)
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", "pg::killed_child", "--ignored", "--nocapture"])
        .env(KILLED_CHILD, "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let field = |key: &str| -> String {
        stdout
            .lines()
            .find_map(|line| line.strip_prefix(key))
            .unwrap_or_else(|| {
                panic!(
                    "no {key} from the child\n{stdout}\n{}",
                    String::from_utf8_lossy(&out.stderr)
                )
            })
            .to_owned()
    };
    let (root, pid) = (PathBuf::from(field("root=")), field("pid="));
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(9), "{stdout}");
    // The watchdog cleans up once the kernel has closed the child's end of its pipe: another
    // process, so this waits for it (a bounded wait, not an assumed speed).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let pid: u32 = pid.parse().unwrap();
    while (root.exists() || running(pid)) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(!running(pid), "postgres {pid} is left running");
    assert!(!root.exists(), "{} is left behind", root.display());
}

/// The child of [`a_test_process_killed_with_sigkill_leaves_no_server_behind`]: starts its
/// process's cluster, says where it is, and kills its own process with SIGKILL.
#[test]
#[ignore = "the child process of a_test_process_killed_with_sigkill_leaves_no_server_behind"]
fn killed_child() {
    if std::env::var_os(KILLED_CHILD).is_none() {
        return;
    }
    let cluster = cluster();
    database().psql("SELECT 1");
    println!(
        "root={}\npid={}",
        cluster.root.display(),
        cluster.pid().unwrap()
    );
    std::io::stdout().flush().unwrap();
    Command::new("kill")
        .args(["-9", &std::process::id().to_string()])
        .status()
        .unwrap();
    unreachable!("SIGKILL did not end the process");
}

/// Whether process `pid` runs: it exists and is not a zombie waiting for its parent (the
/// postmaster's parent is init, which may reap late: on some machines it does only now and then).
fn running(pid: u32) -> bool {
    crate::processes::running(pid)
}
