//! Why doctor could not back up, rebuild or repair: the facts of each case. The message says
//! what is still true; the exit code is the error's [`kind`](DoctorError::kind), the commands
//! that get the user out of it are `cli`'s (`cli::way_out`).

use std::path::PathBuf;

use crate::ops::Kind;

#[derive(Debug, thiserror::Error)]
pub enum DoctorError {
    /// A ledger appeared at `path` while doctor rebuilt one there: doctor wrote nothing.
    #[error(
        "a ledger appeared at {} while doctor was rebuilding it; doctor wrote nothing",
        path.display()
    )]
    LedgerAppeared { path: PathBuf },
    /// `--backup` of a team ledger (`url`, without its password): it has no file to copy.
    #[error("the ledger is the team ledger {url}, which has no file to copy")]
    BackupOfServer { url: String },
    /// `--backup`'s target exists: a backup never replaces a file.
    #[error("{} exists; nothing was written (a backup never replaces a file)", to.display())]
    BackupTargetExists { to: PathBuf },
    /// There is no ledger file to back up.
    #[error("there is no ledger at {} to copy", path.display())]
    NoLedgerToBackUp { path: PathBuf },
    /// A slot that is not itself could not be set aside (`path`, as recorded).
    #[error("cannot set {path} aside: {reason}")]
    CannotSetAside { path: String, reason: String },
    /// The slots' marker for `hand.requireCredential` could not be written.
    #[error("cannot mark the slots for hand.requireCredential: {reason}")]
    CannotMarkSlots { reason: String },
}

impl DoctorError {
    pub fn kind(&self) -> Kind {
        match self {
            DoctorError::BackupOfServer { .. } | DoctorError::BackupTargetExists { .. } => {
                Kind::Usage
            }
            DoctorError::LedgerAppeared { .. }
            | DoctorError::NoLedgerToBackUp { .. }
            | DoctorError::CannotSetAside { .. }
            | DoctorError::CannotMarkSlots { .. } => Kind::Failed,
        }
    }
}
