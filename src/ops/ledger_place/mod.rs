//! A room of `ops` (issue 26): where a ledger is and what may move it, beyond opening it (which
//! [`super::Context`] does): what the disk says of a ledger that is not there before one is
//! created in its place (`evidence`), and `git hand ledger copy`, moving a file ledger into a
//! team ledger (`ledger_copy`).

mod error;
pub mod evidence;
pub mod ledger_copy;

pub use error::PlaceError;
pub(crate) use error::worktree_of;
