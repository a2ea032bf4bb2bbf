//! The one way the ledger's operations reach a database: [`Db`], a backend-neutral facade over
//! the driver. Every operation in `leases`, `tasks`, `events`, `lifecycle`, `repos`, the
//! rebuilding half of `recovery`, and the clock's high-water mark runs its SQL through it, so the
//! same Rust code and the same SQL text serve every backend and one engine test suite proves
//! them all: SQLite ([`Db::Sqlite`]) and the team ledger's PostgreSQL ([`Db::Pg`], `db/pg.rs`).
//! What stays SQLite's own (creating the file whole, migrations, pragmas, the WAL and its fsyncs,
//! the backup) lives in `file.rs`, `schema.rs`, `recovery.rs` and `mod.rs`, outside it; the team
//! ledger's own (its schema, transactions and clock) in `team/`.
//!
//! # What SQL the operations may use
//! The common ground of SQLite (3.39 and later) and PostgreSQL, written once:
//! - Placeholders `?1`, `?2`, ... (a number may repeat). SQLite reads them as they are; for
//!   PostgreSQL [`dollar_placeholders`] turns them into `$1`, `$2`, ... when a statement is
//!   prepared. No bare `?`, no `:name`.
//! - `INSERT ... ON CONFLICT (cols) DO NOTHING` and `... DO UPDATE SET col = excluded.col WHERE
//!   ...` (not `INSERT OR IGNORE`/`OR REPLACE`). A new row is read back by a unique key it was
//!   given, never by `last_insert_rowid()`; `INSERT ... RETURNING` is common ground too, but
//!   SQLite compiles and runs it at a higher cost (docs/performance.md), so no hot path uses it.
//! - `coalesce` (not `ifnull`); `CASE`; aggregate `max`/`min`/`count` over rows, never the
//!   two-argument scalar `max(a, b)`/`min(a, b)` (PostgreSQL spells those `greatest`/`least`,
//!   SQLite does not have them): take the aggregate over a `UNION ALL`, or a `CASE`, or an upsert's
//!   `WHERE`.
//! - `a IS DISTINCT FROM ?N` (not SQLite's `a IS NOT ?N`) to compare with a value that may be
//!   NULL; `x IS NULL`, `x IS NOT NULL`.
//! - `substr(s, 1, length(?N)) = ?N` for a prefix (not `LIKE`, which folds case in SQLite and not
//!   in PostgreSQL, and not `||` on anything but text).
//! - `LIMIT ?N` and `LIMIT 1` with a non-negative count (no `LIMIT -1`); a boolean expression
//!   only in `WHERE`, `CASE WHEN` and `ORDER BY` (false orders before true in both); integers and
//!   text never compared or mixed with each other: every column is bound and read as its own
//!   type (see [`Param`] and [`Column`]), and counts and ids are 64-bit integers.
//! - No `rowid`, no `json_*`, no `PRAGMA`, no `ATTACH`, no date functions (times are
//!   milliseconds the caller binds). A list of values bound as one parameter goes through the
//!   one dialect hook, [`Db::each_text`].
//!
//! On SQLite, statements are compiled once per connection and kept (`prepare_cached`), so a
//! process that runs one twice compiles it once; a statement a process runs once goes through
//! [`Db::once`], which SQLite compiles more cheaply. On PostgreSQL every statement is sent with
//! its parameters' types in one round trip and nothing is kept on the server (`db/pg.rs`).

use std::cell::RefCell;

use rusqlite::ToSql;

mod pg;

pub(crate) use pg::PgTx;
use pg::{PgNull, PgParam};

use super::ids::{LeaseId, RepoId, WorktreeKey};
use super::{LedgerError, Result};

/// A database connection (inside its transaction) as the ledger's operations see it. Copied
/// freely: it is a reference.
#[derive(Clone, Copy)]
pub(crate) enum Db<'c> {
    Sqlite(&'c rusqlite::Connection),
    /// The team ledger's open transaction (see `team/`).
    Pg(&'c RefCell<dyn PgTx + 'c>),
}

impl std::fmt::Debug for Db<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Db::Sqlite(_) => f.write_str("Db::Sqlite"),
            Db::Pg(_) => f.write_str("Db::Pg"),
        }
    }
}

/// A value bound to a placeholder. Implemented for the types the ledger stores (64-bit
/// integers, text, booleans, the ids as their text, and `Option`s of them for NULL); not for
/// `u32`/`usize` and the like, which not every backend can bind: convert to `i64` first.
pub(crate) trait Param: ToSql + PgParam {}

/// A value read from a column: the same types as [`Param`].
pub(crate) trait Column: Sized {
    fn from_sqlite(row: &rusqlite::Row<'_>, idx: usize) -> rusqlite::Result<Self>;
    /// The column as PostgreSQL returned it; `None` for NULL.
    fn from_pg(row: &postgres::Row, idx: usize) -> Result<Option<Self>>;
}

macro_rules! sql_types {
    ($($ty:ty => $read:expr),* $(,)?) => {$(
        impl Param for $ty {}
        impl Column for $ty {
            fn from_sqlite(row: &rusqlite::Row<'_>, idx: usize) -> rusqlite::Result<Self> {
                row.get(idx)
            }
            fn from_pg(row: &postgres::Row, idx: usize) -> Result<Option<Self>> {
                ($read)(row, idx)
            }
        }
        impl Column for Option<$ty> {
            fn from_sqlite(row: &rusqlite::Row<'_>, idx: usize) -> rusqlite::Result<Self> {
                row.get(idx)
            }
            fn from_pg(row: &postgres::Row, idx: usize) -> Result<Option<Self>> {
                <$ty as Column>::from_pg(row, idx).map(Some)
            }
        }
    )*};
}

sql_types!(
    i64 => pg::column_i64,
    bool => pg::column_bool,
    String => pg::column_text,
    LeaseId => |r, i| Ok(pg::column_text(r, i)?.map(LeaseId::from_stored)),
    RepoId => |r, i| Ok(pg::column_text(r, i)?.map(RepoId::from_stored)),
    WorktreeKey => |r, i| Ok(pg::column_text(r, i)?.map(WorktreeKey::from_stored)),
);

impl Param for str {}
impl Param for std::borrow::Cow<'_, str> {}
impl<T: Param + ?Sized> Param for &T {}
impl<T: Param + PgNull> Param for Option<T> {}

/// One row of a result, read column by column with [`Row::get`].
pub(crate) enum Row<'r> {
    Sqlite(&'r rusqlite::Row<'r>),
    Pg(&'r postgres::Row),
}

impl Row<'_> {
    /// Column `idx` (from 0) as a `T`.
    pub(crate) fn get<T: Column>(&self, idx: usize) -> Result<T> {
        match self {
            Row::Sqlite(r) => Ok(T::from_sqlite(r, idx)?),
            // `Option<T>` reads NULL as `None`; any other type finds NULL only in a damaged row.
            Row::Pg(r) => pg::required(T::from_pg(r, idx)?, idx),
        }
    }
}

/// The bound values of one statement, for rusqlite.
fn sqlite_params<'p>(
    params: &'p [&'p dyn Param],
) -> rusqlite::ParamsFromIter<impl Iterator<Item = &'p dyn ToSql>> {
    rusqlite::params_from_iter(params.iter().map(|&p| p as &dyn ToSql))
}

/// Whether a statement is kept for the rest of the connection's life once compiled.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// Kept (`prepare_cached`): compiled once per process however often it runs.
    Cached,
    /// Compiled for one run and dropped: see [`Db::once`].
    Once,
}

impl<'c> Db<'c> {
    /// The same operations for statements a process runs once (most writes, one-off reads):
    /// SQLite compiles them without keeping them, in its lookaside memory, where a kept
    /// (`SQLITE_PREPARE_PERSISTENT`) statement is built with `malloc`: keeping every statement
    /// cost a spawn 2% more instructions, though it compiled ten fewer (docs/performance.md).
    pub(crate) fn once(self) -> Once<'c> {
        Once(self)
    }

    /// The first row of `sql`'s result read by `f`, or `None` when there is none.
    pub(crate) fn row<T>(
        self,
        sql: &str,
        params: &[&dyn Param],
        f: impl FnOnce(&Row<'_>) -> Result<T>,
    ) -> Result<Option<T>> {
        self.row_kept(Keep::Cached, sql, params, f)
    }

    /// Every row of `sql`'s result, each read by `f`, in the order the statement gives.
    pub(crate) fn rows<T>(
        self,
        sql: &str,
        params: &[&dyn Param],
        f: impl FnMut(&Row<'_>) -> Result<T>,
    ) -> Result<Vec<T>> {
        self.rows_kept(Keep::Cached, sql, params, f)
    }

    /// The dialect hook: a subquery giving, one row each, the texts of a JSON array of strings
    /// bound to placeholder `?{param}` (the one way to bind a list of any length as one value).
    /// Use it as `x IN ({})`.
    pub(crate) fn each_text(self, param: usize) -> String {
        match self {
            Db::Sqlite(_) => format!("SELECT value FROM json_each(?{param})"),
            Db::Pg(_) => format!("SELECT json_array_elements_text(CAST(?{param} AS json))"),
        }
    }

    fn row_kept<T>(
        self,
        keep: Keep,
        sql: &str,
        params: &[&dyn Param],
        f: impl FnOnce(&Row<'_>) -> Result<T>,
    ) -> Result<Option<T>> {
        match self {
            Db::Sqlite(conn) => sqlite_statement(conn, keep, sql, |stmt| {
                let mut rows = stmt.query(sqlite_params(params))?;
                match rows.next()? {
                    Some(r) => f(&Row::Sqlite(r)).map(Some),
                    None => Ok(None),
                }
            }),
            Db::Pg(tx) => {
                let rows = pg::query(&mut *tx.borrow_mut(), sql, params)?;
                rows.first().map(|r| f(&Row::Pg(r))).transpose()
            }
        }
    }

    fn rows_kept<T>(
        self,
        keep: Keep,
        sql: &str,
        params: &[&dyn Param],
        mut f: impl FnMut(&Row<'_>) -> Result<T>,
    ) -> Result<Vec<T>> {
        match self {
            Db::Sqlite(conn) => sqlite_statement(conn, keep, sql, |stmt| {
                let mut rows = stmt.query(sqlite_params(params))?;
                let mut out = Vec::new();
                while let Some(r) = rows.next()? {
                    out.push(f(&Row::Sqlite(r))?);
                }
                Ok(out)
            }),
            Db::Pg(tx) => {
                let rows = pg::query(&mut *tx.borrow_mut(), sql, params)?;
                rows.iter().map(|r| f(&Row::Pg(r))).collect()
            }
        }
    }

    fn exec_kept(self, keep: Keep, sql: &str, params: &[&dyn Param]) -> Result<usize> {
        match self {
            Db::Sqlite(conn) => sqlite_statement(conn, keep, sql, |stmt| {
                Ok(stmt.execute(sqlite_params(params))?)
            }),
            Db::Pg(tx) => pg::execute(&mut *tx.borrow_mut(), sql, params),
        }
    }
}

/// [`Db`]'s operations for statements a process runs once (see [`Db::once`]).
#[derive(Clone, Copy)]
pub(crate) struct Once<'c>(Db<'c>);

impl Once<'_> {
    /// As [`Db::row`].
    pub(crate) fn row<T>(
        self,
        sql: &str,
        params: &[&dyn Param],
        f: impl FnOnce(&Row<'_>) -> Result<T>,
    ) -> Result<Option<T>> {
        self.0.row_kept(Keep::Once, sql, params, f)
    }

    /// The first row of `sql`'s result read by `f`; a statement that returns none (an aggregate,
    /// a row the transaction just wrote) is an error.
    pub(crate) fn one<T>(
        self,
        sql: &str,
        params: &[&dyn Param],
        f: impl FnOnce(&Row<'_>) -> Result<T>,
    ) -> Result<T> {
        self.row(sql, params, f)?.ok_or_else(no_row)
    }

    /// As [`Db::rows`].
    pub(crate) fn rows<T>(
        self,
        sql: &str,
        params: &[&dyn Param],
        f: impl FnMut(&Row<'_>) -> Result<T>,
    ) -> Result<Vec<T>> {
        self.0.rows_kept(Keep::Once, sql, params, f)
    }

    /// Runs a statement that returns no rows; how many rows it changed.
    pub(crate) fn exec(self, sql: &str, params: &[&dyn Param]) -> Result<usize> {
        self.0.exec_kept(Keep::Once, sql, params)
    }
}

/// What [`Once::one`] reports when the statement returned no row (as rusqlite's `query_row`).
fn no_row() -> LedgerError {
    LedgerError::Sql(rusqlite::Error::QueryReturnedNoRows)
}

/// Runs `f` on `sql` compiled on `conn`, kept or not.
fn sqlite_statement<T>(
    conn: &rusqlite::Connection,
    keep: Keep,
    sql: &str,
    f: impl FnOnce(&mut rusqlite::Statement<'_>) -> Result<T>,
) -> Result<T> {
    match keep {
        Keep::Cached => f(&mut *conn.prepare_cached(sql)?),
        Keep::Once => f(&mut conn.prepare(sql)?),
    }
}

/// The statement `sql` with its SQLite placeholders (`?N`, and a bare `?`, which SQLite numbers
/// one past the largest so far) written as PostgreSQL's `$N`. Placeholders inside string
/// literals, quoted identifiers and comments are text, and left as they are.
pub(crate) fn dollar_placeholders(sql: &str) -> String {
    let bytes = sql.as_bytes();
    let mut out = String::with_capacity(sql.len() + 8);
    let mut largest = 0u32;
    let mut i = 0;
    while i < bytes.len() {
        let skip_to = match bytes[i] {
            b'\'' | b'"' => closing_quote(bytes, i),
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                sql[i..].find('\n').map_or(bytes.len(), |n| i + n)
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => sql[i + 2..]
                .find("*/")
                .map_or(bytes.len(), |n| i + 2 + n + 2),
            b'?' => {
                let digits = bytes[i + 1..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit())
                    .count();
                let n = match sql[i + 1..i + 1 + digits].parse::<u32>() {
                    Ok(n) => n,
                    Err(_) => largest + 1,
                };
                largest = largest.max(n);
                out.push('$');
                out.push_str(&n.to_string());
                i += 1 + digits;
                continue;
            }
            _ => {
                let next = i + sql[i..].chars().next().map_or(1, char::len_utf8);
                out.push_str(&sql[i..next]);
                i = next;
                continue;
            }
        };
        out.push_str(&sql[i..skip_to]);
        i = skip_to;
    }
    out
}

/// Where the literal or quoted identifier opening at `open` ends (past its closing quote; a
/// doubled quote is one quote inside it), or the end of the text.
fn closing_quote(bytes: &[u8], open: usize) -> usize {
    let quote = bytes[open];
    let mut i = open + 1;
    while i < bytes.len() {
        if bytes[i] == quote {
            if bytes.get(i + 1) == Some(&quote) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The operations' SQL stays on the common ground the module doc lists: a construct only
    /// SQLite accepts fails here before it reaches the PostgreSQL backend.
    #[test]
    fn the_operations_use_no_sqlite_only_sql() {
        let files = [
            ("leases.rs", include_str!("leases.rs")),
            ("tasks.rs", include_str!("tasks.rs")),
            ("lifecycle.rs", include_str!("lifecycle.rs")),
            ("events.rs", include_str!("events.rs")),
            ("repos.rs", include_str!("repos.rs")),
        ];
        let sqlite_only = [
            "INSERT OR",
            "REPLACE INTO",
            "IFNULL(",
            "ROWID",
            "JSON_",
            "LIMIT -",
            "IS NOT ?",
            "PRAGMA",
            "GLOB ",
            "RUSQLITE",
            "STRFTIME(",
        ];
        for (file, text) in files {
            let text = text.to_uppercase();
            for construct in sqlite_only {
                assert!(!text.contains(construct), "{file} uses {construct}");
            }
        }
    }

    #[test]
    fn numbered_placeholders_become_dollars_and_may_repeat() {
        assert_eq!(
            dollar_placeholders("UPDATE t SET a = ?1, b = ?10 WHERE c = ?1 OR d = ?2"),
            "UPDATE t SET a = $1, b = $10 WHERE c = $1 OR d = $2"
        );
    }

    #[test]
    fn bare_placeholders_are_numbered_as_sqlite_numbers_them() {
        assert_eq!(
            dollar_placeholders("VALUES (?, ?3, ?, ?1, ?)"),
            "VALUES ($1, $3, $4, $1, $5)"
        );
    }

    #[test]
    fn placeholders_in_literals_identifiers_and_comments_stay_text() {
        let sql =
            "SELECT '?1', 'it''s ?2', \"col?3\" -- ?4 here\n, ?1 /* ?5 */ FROM t WHERE x = ?2";
        assert_eq!(
            dollar_placeholders(sql),
            "SELECT '?1', 'it''s ?2', \"col?3\" -- ?4 here\n, $1 /* ?5 */ FROM t WHERE x = $2"
        );
    }

    #[test]
    fn unterminated_quotes_and_comments_and_non_ascii_text_are_kept() {
        assert_eq!(dollar_placeholders("SELECT 'é?1"), "SELECT 'é?1");
        assert_eq!(dollar_placeholders("SELECT ?1 /* ?2"), "SELECT $1 /* ?2");
        assert_eq!(dollar_placeholders("SELECT ?1 -- ?2"), "SELECT $1 -- ?2");
        assert_eq!(
            dollar_placeholders("SELECT 'ü' || ?1, \"é\""),
            "SELECT 'ü' || $1, \"é\""
        );
    }
}
