//! What `git hand install` does in a repository beyond the hook files ([`crate::hooks`] writes
//! those): the slots marked for `hand.requireCredential` after an install, and for the server's
//! install, the ledger the pre-receive hook reads written as the repository's own `hand.ledger`,
//! and whether the hook, run as another user, may not read the ledger found here. Facts only:
//! the words are `cli`'s.

use crate::git::{Git, Repo};
use crate::ledger::{LedgerLocation, Place};
use crate::ops::pool::stamp;
use crate::ops::repo::RepoError;
use crate::ops::repo::settings::require_credential;
use crate::ops::{Context, Result};

/// Marks (or unmarks) every slot's admin dir for `hand.requireCredential`, as the setting now
/// says, so a slot's reference-transaction shim knows without reading git's configuration.
pub(crate) fn mark_slots_for_required_credential(repo: &Repo) -> Result<()> {
    let required = require_credential(repo).map_err(RepoError::RequireCredentialUnread)?;
    stamp::refresh_required(&repo.loc.common_dir, required).map_err(|e| {
        RepoError::CannotMarkSlots {
            reason: e.to_string(),
        }
        .into()
    })
}

/// Writes the ledger just opened as the repository's own `hand.ledger` (its config file), the
/// only place the pre-receive hook takes its ledger from (issue 22), unless that file already
/// names it. The setting is written as given (a URL with its password and options, as the hook
/// needs it to connect); a path absolute. Whether it wrote.
pub(crate) fn write_server_ledger(
    ctx: &Context,
    git: &Git,
    ledger: &LedgerLocation,
) -> Result<bool> {
    let setting = match (&ledger.place, ledger.source) {
        (Place::Server(_), "GIT_HAND_LEDGER") => ctx.env().var("GIT_HAND_LEDGER"),
        (Place::Server(_), _) => ctx.repo()?.config_string("hand.ledger"),
        (Place::File(path), _) => Some(path.display().to_string()),
    }
    .unwrap_or_else(|| ledger.place.to_string());
    let own = Repo::open_isolated(git.dir())
        .ok()
        .and_then(|r| r.config_string("hand.ledger"));
    if own.as_deref() == Some(setting.as_str()) {
        return Ok(false);
    }
    git.run(&["config", "--local", "hand.ledger", &setting])?;
    Ok(true)
}

/// The repository belongs to another user than this process's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OwnedByAnother {
    pub owner: u32,
    pub me: u32,
}

/// When the hook will likely not read the ledger just opened: the repository belongs to another
/// user (the one the git server runs hooks as; an admin as root for a repository of `git` is the
/// usual case), and the ledger was found where only this user looks (`GIT_HAND_LEDGER` in this
/// shell, this user's default place or global configuration), not in the repository's own or
/// the system's configuration, which the hook reads too.
pub(crate) fn ledger_another_user_may_miss(
    repo: &Repo,
    git: &Git,
    ledger: &LedgerLocation,
) -> Option<OwnedByAnother> {
    use std::os::unix::fs::MetadataExt;
    let me = crate::platform::procs::effective_uid()?;
    let owner = std::fs::metadata(git.dir()).ok()?.uid();
    if me == owner {
        return None;
    }
    let shared = repo
        .config_origin("hand.ledger")
        .is_some_and(|o| matches!(o.scope, "local" | "system"));
    (!(shared && ledger.source == "git config hand.ledger")).then_some(OwnedByAnother { owner, me })
}
