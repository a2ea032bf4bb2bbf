//! The ledger's identifiers as types: [`LeaseId`] (a tenure's credential), [`RepoId`] (a
//! registered repository) and [`WorktreeKey`] (a worktree resource's key, its canonical path).
//!
//! Each is stored and printed as the plain text it always was (same column values, same
//! `--json`), but a function taking one cannot be handed another, nor an unchecked `&str`: text
//! from outside (a `--lease` argument, `GIT_HAND_LEASE`, a stamp) becomes a [`LeaseId`] only
//! through [`LeaseId::parse`].

use std::fmt;
use std::path::Path;

use rusqlite::types::{FromSql, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use serde::Serialize;

/// Implements what every id here shares: the text it wraps, `Display`, `Serialize` as a plain
/// string, and the SQL conversions (a `TEXT` column, unchanged).
macro_rules! text_id {
    ($ty:ident) => {
        impl $ty {
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The id as a ledger stored it (a row is trusted as rusqlite's `FromSql` trusts it).
            pub(super) fn from_stored(text: String) -> Self {
                Self(text)
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $ty {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl ToSql for $ty {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                self.0.to_sql()
            }
        }

        impl FromSql for $ty {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
                String::column_result(value).map(Self)
            }
        }
    };
}

/// A lease id: 128 random bits as 32 lower-case hex characters, minted by each acquisition. The
/// holder presents it as a credential.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct LeaseId(String);
text_id!(LeaseId);

impl LeaseId {
    /// A fresh lease id from the operating system's CSPRNG.
    pub(super) fn mint() -> std::io::Result<Self> {
        crate::ids::lease_id().map(Self)
    }

    /// Text from outside the ledger, if it is a lease id as minted (32 lower-case hex
    /// characters). Whoever asks says what was wrong, and where, in its own words.
    pub fn parse(text: &str) -> Option<Self> {
        crate::ids::is_lease_id(text).then(|| Self(text.to_string()))
    }
}

/// A registered repository's id: random, minted when the ledger first sees the repository (a
/// repository is never identified by its remote URL).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct RepoId(String);
text_id!(RepoId);

impl RepoId {
    /// A fresh repository id.
    pub(super) fn mint() -> std::io::Result<Self> {
        crate::ids::random_hex(8).map(Self)
    }

    /// An id known from elsewhere than the ledger: a ledger rebuilt from the pool directories
    /// that carry its first characters, a row a test wrote.
    pub fn new(text: impl Into<String>) -> Self {
        Self(text.into())
    }
}

/// The key of a worktree resource (a pool slot, an adopted worktree): its canonical path as
/// text. Built in one place, from a path the caller has canonicalized, so two spellings of one
/// directory never become two resources.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct WorktreeKey(String);
text_id!(WorktreeKey);

impl WorktreeKey {
    /// The key of the worktree at `path`, which must already be canonical (its realpath). A path
    /// that is not UTF-8 is converted lossily: git-hand refuses to record such paths elsewhere
    /// (`ops::repo::names::path`), so only a read of a foreign directory ever sees the replacement.
    pub fn from_canonical(path: &Path) -> Self {
        Self(path.to_string_lossy().into_owned())
    }

    /// The key of no worktree: what a task row without a slot path (the column allows one)
    /// reads as, so that it matches no slot, as the empty text always did.
    pub(super) fn none() -> Self {
        Self(String::new())
    }

    /// The worktree's path.
    pub fn as_path(&self) -> &Path {
        Path::new(&self.0)
    }
}

/// The key is the worktree's path, so it goes wherever a path does (`Path::new`, `git -C`).
impl AsRef<Path> for WorktreeKey {
    fn as_ref(&self) -> &Path {
        self.as_path()
    }
}

impl AsRef<std::ffi::OsStr> for WorktreeKey {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_id_parses_only_as_minted_and_serializes_as_its_text() {
        let minted = LeaseId::mint().unwrap();
        assert_eq!(LeaseId::parse(minted.as_str()), Some(minted.clone()));
        for bad in ["", "zz", &"AB".repeat(16), &minted.as_str()[..31]] {
            assert_eq!(LeaseId::parse(bad), None, "{bad:?}");
        }
        assert_eq!(
            serde_json::to_string(&minted).unwrap(),
            format!("\"{minted}\"")
        );
    }

    #[test]
    fn ids_are_stored_as_the_same_text() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let key = WorktreeKey::from_canonical(Path::new("/pool/r-1/1"));
        let stored: String = conn.query_row("SELECT ?1", [&key], |r| r.get(0)).unwrap();
        assert_eq!(stored, "/pool/r-1/1");
        let back: WorktreeKey = conn
            .query_row("SELECT ?1", [&stored], |r| r.get(0))
            .unwrap();
        assert_eq!(back, key);
    }
}
