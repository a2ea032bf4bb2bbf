//! The one error type at the edge: a kind (which picks the exit code), a message that says what
//! is still true, and hints: the commands that get the user out of it.

use std::process::ExitCode;

use crate::hint::Hint;
use crate::hooks::HookError;
use crate::ledger::{Fate, LedgerError};
use crate::ops;

pub use crate::ops::Kind;

impl Kind {
    /// The exit code of this kind of failure (docs/cli.md).
    pub fn code(self) -> ExitCode {
        ExitCode::from(self as u8)
    }
}

/// The JSON object every failure prints on stdout under `--json` (docs/cli.md):
/// `{"error": {"kind", "message", "hints"}}`.
#[derive(Debug, serde::Serialize)]
pub(crate) struct ErrorJson<'a> {
    pub error: ErrorBody<'a>,
}

/// The inside of [`ErrorJson`]; also `install --json`'s `error` when it refuses.
#[derive(Debug, serde::Serialize)]
pub(crate) struct ErrorBody<'a> {
    pub kind: Kind,
    pub message: &'a str,
    /// Each hint as the text shows it ([`super::hint::lines`]).
    pub hints: Vec<String>,
}

impl<'a> ErrorJson<'a> {
    pub fn of(f: &'a Failure) -> Self {
        Self {
            error: ErrorBody {
                kind: f.kind,
                message: &f.message,
                hints: super::hint::lines(&f.hints),
            },
        }
    }
}

#[derive(Debug)]
pub struct Failure {
    pub kind: Kind,
    pub message: String,
    pub hints: Vec<Hint>,
}

impl Failure {
    pub fn new(kind: Kind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            hints: vec![],
        }
    }
    pub fn hint(mut self, hint: Hint) -> Self {
        self.hints.push(hint);
        self
    }

    /// The same failure from git-hand's `verb` itself: hints that send the user to it go (a
    /// damaged ledger's doctor must not answer "run git hand doctor").
    pub(crate) fn not_pointing_at(mut self, verb: &str) -> Self {
        self.hints.retain(|h| !h.runs_hand(verb));
        self
    }
}

impl From<ops::Error> for Failure {
    fn from(e: ops::Error) -> Self {
        match e {
            ops::Error::Config(e) => {
                let hint = e.hint();
                let find = match &e.file {
                    None => Hint::run(format!("git config --show-origin --get-all {}", e.key))
                        .why("which file sets it"),
                    Some(_) => {
                        Hint::hand("config").why("each hand.* value and where it comes from")
                    }
                };
                // A file that cannot be read fails `git hand config` as well: only the first
                // hint helps.
                let hints = if e.unreadable {
                    vec![hint]
                } else {
                    vec![hint, find]
                };
                Failure {
                    kind: Kind::Usage,
                    message: format!("{e}; nothing was changed"),
                    hints,
                }
            }
            ops::Error::Ledger(e) => e.into(),
            ops::Error::Git(e) => Failure::new(Kind::Failed, e.to_string()),
            ops::Error::Inspect(e) => Failure::new(Kind::Failed, e.to_string()),
            ops::Error::Task(e) => (*e).into(),
            ops::Error::Teardown(e) => (*e).into(),
            ops::Error::Name(e) => (*e).into(),
            ops::Error::Pool(e) => (*e).into(),
            ops::Error::Spawn(e) => (*e).into(),
            ops::Error::Claude(e) => (*e).into(),
            ops::Error::Doctor(e) => (*e).into(),
            ops::Error::OnHook(e) => (*e).into(),
            ops::Error::Context(e) => (*e).into(),
            ops::Error::Place(e) => (*e).into(),
            ops::Error::Repo(e) => (*e).into(),
            ops::Error::Hinted(hinted) => {
                let ops::Hinted { error, hints } = *hinted;
                let mut failure = Failure::from(error);
                failure.hints.extend(hints);
                failure
            }
        }
    }
}

impl From<LedgerError> for Failure {
    fn from(e: LedgerError) -> Self {
        match e {
            LedgerError::Busy => Failure::new(Kind::Precondition, "ledger busy, retry")
                .hint(Hint::run("another git-hand held the ledger for 5 s; nothing was changed, run the same command again")),
            LedgerError::TooNew { .. } => Failure::new(Kind::Precondition, e.to_string())
                .hint(Hint::run("install a newer git-hand: ./install.sh from an up-to-date checkout")),
            LedgerError::Damaged { ref path, .. } => {
                let path = path.display().to_string();
                Failure::new(Kind::Precondition, e.to_string())
                    .hint(Hint::run(format!("put {path} back from a backup (with its -wal file, if it had one)")))
                    .hint(Hint::hand("doctor").why("says what is there; --repair moves it aside and rebuilds from the slots' stamps"))
            }
            LedgerError::Malformed(_) => Failure::new(Kind::Precondition, e.to_string())
                .hint(Hint::hand("doctor").why("says what is readable and how to take a copy that keeps the WAL")),
            LedgerError::NotPrivate { ref path, .. } => {
                let path = path.display().to_string();
                Failure::new(Kind::Precondition, e.to_string())
                    .hint(Hint::run(format!("chmod 600 {path}")).why("as the file's owner"))
            }
            // The server is not there or will not let us in: nothing was changed, and the fix
            // is the server or the URL (exit 3, as for a ledger file that cannot be used).
            LedgerError::Server(ref server) => {
                let failure = Failure::new(Kind::Precondition, e.to_string());
                match server.hint() {
                    Some(hint) => failure.hint(hint),
                    None => failure,
                }
            }
            // The connection broke and this operation is not one that may run twice: say what
            // may have happened, and where to look (exit 3: nothing git-hand can settle alone).
            LedgerError::ConnectionLost(ref lost) => {
                let failure = Failure::new(Kind::Precondition, e.to_string());
                match lost.fate {
                    Fate::NothingWritten => failure
                        .hint(Hint::run("run the same command again once the server answers")),
                    Fate::Unknown => failure
                        .hint(Hint::hand("list").why("whether the team ledger has the task"))
                        .hint(Hint::hand("status").why("in a slot: whether its lease still holds"))
                        .hint(Hint::hand("lease current <issue>").why("who holds an issue")),
                }
            }
            LedgerError::ServerNeedsMigration { .. } => Failure::new(Kind::Precondition, e.to_string())
                .hint(Hint::hand("doctor").why("with the owner role in GIT_HAND_LEDGER: migrates the schema")),
            LedgerError::ServerTooNew { .. } => Failure::new(Kind::Precondition, e.to_string())
                .hint(Hint::run("install a newer git-hand: ./install.sh from an up-to-date checkout")),
            // The role in the URL may not do this (write, or migrate): nothing was changed, and
            // the fix is the URL's role, not git-hand's state.
            LedgerError::ServerReadOnly(_) | LedgerError::ServerCannotMigrate { .. } => {
                Failure::new(Kind::Precondition, e.to_string()).hint(
                    Hint::run("use the role docs/team.md (Roles) gives this work in GIT_HAND_LEDGER or git config hand.ledger"),
                )
            }
            other => Failure::new(Kind::Failed, other.to_string())
                .hint(Hint::hand("doctor").why("checks the ledger and the pool")),
        }
    }
}

impl From<HookError> for Failure {
    fn from(e: HookError) -> Self {
        let kind = if e.is_precondition() {
            Kind::Precondition
        } else {
            Kind::Failed
        };
        Failure {
            kind,
            hints: e.hints(),
            message: e.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hint_added_to_a_wrapped_error_is_kept_and_so_is_its_kind() {
        let e = ops::Error::from(LedgerError::Busy).with_hint(Hint::hand("list"));
        let f = Failure::from(e);
        assert_eq!(f.kind, Kind::Precondition);
        assert_eq!(f.message, "ledger busy, retry");
        assert_eq!(
            f.hints.last().map(super::super::hint::line).as_deref(),
            Some("git hand list")
        );
    }

    #[test]
    fn a_role_that_may_not_write_or_migrate_is_a_precondition_naming_the_roles() {
        let refusal = || {
            Box::new(crate::ledger::team::Refusal {
                at: "postgres://reader@db:5432/hand".into(),
                user: "reader".into(),
                reason: "permission denied for table clock".into(),
            })
        };
        for e in [
            LedgerError::ServerReadOnly(refusal()),
            LedgerError::ServerCannotMigrate {
                found: 0,
                supported: 1,
                refusal: refusal(),
            },
        ] {
            let f = Failure::from(e);
            assert_eq!(f.kind, Kind::Precondition);
            assert!(
                f.hints
                    .iter()
                    .any(|h| super::super::hint::line(h).contains("docs/team.md (Roles)")),
                "{:?}",
                f.hints
            );
        }
    }

    #[test]
    fn a_busy_ledger_is_a_precondition_that_says_retry() {
        let f = Failure::from(LedgerError::Busy);
        assert_eq!(f.kind, Kind::Precondition);
        assert_eq!(f.message, "ledger busy, retry");
        assert_eq!(f.kind.code(), ExitCode::from(3));
    }
}
