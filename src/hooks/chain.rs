//! Running the foreign hook that `install` kept under `<hook>.git-hand-chained`, the way git would
//! have run it: same arguments, the same stdin bytes, the same working directory and the
//! environment inherited unchanged.
//!
//! This must not scrub `GIT_DIR` and friends (unlike [`crate::git::Git`]): the chained hook is the
//! user's, and it expects exactly what git gives a hook. It never decides a verdict either; the
//! caller combines the status it returns with its own.
//!
//! Everything started from here gets `GIT_HAND_IN_HOOK=<hook>`: a chained hook or a hook manager
//! that calls `git-hand hook <hook>` again (lefthook with git-hand's lines in `lefthook.yml`, a
//! hand-written hook that starts with `git-hand hook pre-push "$@"`) then reaches a git-hand that
//! exits at once instead of running the chained hook again, forever.
//!
//! It also uploads LFS objects when nothing in the chain does ([`run_lfs_pre_push`]): git-lfs
//! refuses to install its hook over git-hand's, and a push that leaves its LFS objects behind
//! publishes pointers nobody can resolve.

use std::ffi::OsString;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

use super::HookName;

/// What follows a hook's name in the name its chained foreign hook is kept under.
pub const CHAINED_SUFFIX: &str = ".git-hand-chained";

/// Exported by the shims: the directory the running shim lives in, so the binary finds the chained
/// hook without asking git (a hook must stay fast, and git may be mid-operation).
pub const HOOK_DIR_ENV: &str = "GIT_HAND_HOOK_DIR";

/// Set to the hook's name for the chained hook and everything it starts: a `git-hand hook` of the
/// same name started under it (a hand-written hook or a manager calling `git-hand hook pre-push`)
/// exits 0 at once, because the outer one judges after the chained hook returns (issue 11).
pub const IN_HOOK_ENV: &str = "GIT_HAND_IN_HOOK";

/// Set beside [`IN_HOOK_ENV`] to the `PATH` the chained hook is started with: the marker holds
/// only where `PATH` is still that (issue 22). git puts its exec path in front of `PATH` in every
/// git process, so a git started below the chained hook (a `git push` from inside it, or an agent
/// started there that inherited the marker) has another `PATH`, and its hooks judge it. The
/// shims compare the two with sh builtins alone.
pub(crate) const IN_HOOK_PATH_ENV: &str = "GIT_HAND_IN_HOOK_PATH";

/// Whether this process runs inside the chain of a `git-hand hook` of the same name, of this
/// same git operation: the marker names `hook` and is bound to this `PATH`.
pub(crate) fn inside_own_chain(hook: HookName) -> bool {
    std::env::var_os(IN_HOOK_ENV).is_some_and(|v| v == hook.to_string().as_str())
        && std::env::var_os(IN_HOOK_PATH_ENV) == Some(std::env::var_os("PATH").unwrap_or_default())
}

/// `<dir>/<hook>.git-hand-chained`.
pub fn chained_path(dir: &Path, hook: HookName) -> PathBuf {
    dir.join(hook.chained_file_name())
}

/// Runs the chained hook of `hook`, if there is one, and returns its exit status.
///
/// `hook_dir` defaults to `$GIT_HAND_HOOK_DIR`; with neither, or with no executable chained file
/// there, this returns `Ok(None)`. (The server's shim exports an empty one when a dispatcher runs
/// it from a `pre-receive.d/`: nothing is chained there; see `hooks/pre-receive`.) A chained file
/// that is not executable is skipped, as git skips a hook that is not executable, and so is one
/// carrying git-hand's own marker. `stdin` is written to the hook in full (the caller buffers
/// git's stdin once and reuses it for its own check); a hook that exits without reading it is
/// fine.
/// stdout and stderr are inherited: git already points a hook's stdout at its stderr.
pub fn run_chained(
    hook: HookName,
    hook_dir: Option<&Path>,
    args: &[OsString],
    stdin: &[u8],
) -> io::Result<Option<ExitStatus>> {
    let from_env = std::env::var_os(HOOK_DIR_ENV)
        .filter(|d| !d.is_empty())
        .map(PathBuf::from);
    let Some(dir) = hook_dir.map(Path::to_path_buf).or(from_env) else {
        return Ok(None);
    };
    let path = chained_path(&dir, hook);
    if !is_executable_file(&path) || is_our_shim(&path) {
        return Ok(None);
    }
    // Below a chain of this hook, not bound to it (a git started inside it, or a chain that
    // changed PATH): this call is judged, but the chained hook already ran for the outer one,
    // and running it again could recurse without bound.
    if std::env::var_os(IN_HOOK_ENV).is_some_and(|v| v == hook.to_string().as_str()) {
        return Ok(None);
    }
    let marker = (IN_HOOK_ENV, hook.to_string());
    let bound = (
        IN_HOOK_PATH_ENV,
        std::env::var_os("PATH").unwrap_or_default(),
    );
    let mut child = match spawn(
        Command::new(&path)
            .args(args)
            .env(marker.0, &marker.1)
            .env(bound.0, &bound.1),
    ) {
        // A hook without a `#!` line: git runs it with sh, and so do we.
        Err(e) if e.raw_os_error() == Some(ENOEXEC) => spawn(
            Command::new("sh")
                .arg(&path)
                .args(args)
                .env(marker.0, &marker.1)
                .env(bound.0, &bound.1),
        )?,
        other => other?,
    };
    feed(&mut child, stdin)?;
    child.wait().map(Some)
}

/// Writes `stdin` to the child in full and closes the pipe, so a child reading to end of input
/// finishes; a child that exits without reading it is fine.
fn feed(child: &mut std::process::Child, stdin: &[u8]) -> io::Result<()> {
    if let Some(mut pipe) = child.stdin.take() {
        match pipe.write_all(stdin) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {}
            other => other?,
        }
        // Dropping the pipe closes it, so a hook reading to end of input finishes.
    }
    Ok(())
}

/// Runs `git lfs pre-push <args>` with git's ref lines, as git-lfs's own hook would, when this
/// push would otherwise leave LFS objects behind: git-hand runs as the hook git called (its shim
/// exported `hook_dir`; a manager that calls git-hand runs git-lfs itself, as lefthook does), the
/// repository has LFS objects (`<common dir>/lfs/objects`: one stat on every push), and the
/// chained hook does not run `git lfs pre-push` already. `Ok(None)`: nothing to do.
///
/// The caller runs this only once its verdict allowed the push, so a stale holder's push is
/// refused before anything of it is uploaded.
pub(crate) fn run_lfs_pre_push(
    hook_dir: Option<&Path>,
    common_dir: &Path,
    args: &[OsString],
    stdin: &[u8],
) -> io::Result<Option<LfsRun>> {
    let from_env = std::env::var_os(HOOK_DIR_ENV)
        .filter(|d| !d.is_empty())
        .map(PathBuf::from);
    let Some(dir) = hook_dir.map(Path::to_path_buf).or(from_env) else {
        return Ok(None);
    };
    if !common_dir.join("lfs").join("objects").is_dir() {
        return Ok(None);
    }
    let chained = chained_path(&dir, HookName::PrePush);
    if is_executable_file(&chained)
        && std::fs::read(&chained).is_ok_and(|b| super::foreign::runs_lfs_pre_push(&b))
    {
        return Ok(None);
    }
    if which::which("git-lfs").is_err() {
        return Ok(Some(LfsRun::Missing));
    }
    let mut cmd = Command::new("git");
    cmd.args(["lfs", "pre-push"])
        .args(args)
        .env(IN_HOOK_ENV, HookName::PrePush.to_string());
    let mut child = spawn(&mut cmd)?;
    feed(&mut child, stdin)?;
    child.wait().map(|s| Some(LfsRun::Ran(s)))
}

/// What [`run_lfs_pre_push`] did.
#[derive(Debug)]
pub(crate) enum LfsRun {
    /// `git lfs pre-push` ran, with this status.
    Ran(ExitStatus),
    /// The repository has LFS objects but `git-lfs` is not on PATH: the push would publish
    /// pointers to objects the remote never gets (git-lfs's own hook refuses it too).
    Missing,
}

/// `ENOEXEC` on Linux and the BSDs: the kernel does not know how to run this file.
const ENOEXEC: i32 = 8;

/// `ETXTBSY`: the file is still open for writing somewhere.
const ETXTBSY: i32 = 26;

fn spawn(cmd: &mut Command) -> io::Result<std::process::Child> {
    cmd.stdin(Stdio::piped());
    // A hook written a moment ago can still be open for writing in a child that another thread
    // forked before it exec'd (the fd closes at exec). The window is short: try a few times.
    let mut tries = 0;
    loop {
        match cmd.spawn() {
            Err(e) if e.raw_os_error() == Some(ETXTBSY) && tries < 20 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            other => return other,
        }
    }
}

/// A copy of our own shim under the chained name (only ever put there by hand) would exec
/// `git-hand hook`, which would run it again, forever.
pub(super) fn is_our_shim(path: &Path) -> bool {
    std::fs::read(path).is_ok_and(|bytes| super::shim::is_ours(&bytes))
}

/// A regular file (through symlinks) with an execute bit: what git accepts as a hook.
pub(super) fn is_executable_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
