//! `git hand install --server`: the `pre-receive` shim in a repository clients push to (a bare
//! repository on the team's server), chained with a `pre-receive` hook already there under the
//! same rules as the client hooks ([`super::install`]), and `receive.advertisePushOptions=true`,
//! without which git refuses a push that carries the push options the fence reads.
//!
//! It writes where git runs that repository's hooks from (`core.hooksPath` included: on a server
//! that is the directory whose hooks actually run). Like the rest of [`super`], it never reads
//! the ledger and never prints.

use std::path::PathBuf;

use super::install::{HookChange, Rewrite, install_hooks_into};
use super::locate::{HooksLocation, locate};
use super::{HookError, HookName};
use crate::git::Git;

/// The setting that makes `git receive-pack` accept push options (git >= 2.10).
pub const ADVERTISE_PUSH_OPTIONS: &str = "receive.advertisePushOptions";

/// What `install --server` did.
#[derive(Debug, Clone)]
pub struct ServerReport {
    pub location: HooksLocation,
    /// The directory written to.
    pub dir: PathBuf,
    pub hooks: Vec<HookChange>,
    /// Whether [`ADVERTISE_PUSH_OPTIONS`] was set by this call (false: it was already true).
    pub advertised: bool,
}

/// Installs the server's shims where `git.dir()` runs hooks from and turns push options on.
pub fn install_server(git: &Git, rewrite: Rewrite) -> Result<ServerReport, HookError> {
    let location = locate(git)?;
    let dir = location.active.clone();
    let hooks = install_hooks_into(&dir, &HookName::SERVER, rewrite)?;
    let was_on = git
        .run(&["config", "--type=bool", "--get", ADVERTISE_PUSH_OPTIONS])
        .is_ok_and(|v| v.trim() == "true");
    if !was_on {
        git.run(&["config", "--local", ADVERTISE_PUSH_OPTIONS, "true"])
            .map_err(|source| HookError::Configure {
                key: ADVERTISE_PUSH_OPTIONS,
                dir: git.dir().to_path_buf(),
                source,
            })?;
    }
    Ok(ServerReport {
        location,
        dir,
        hooks,
        advertised: !was_on,
    })
}
