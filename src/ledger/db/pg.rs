//! [`Db`](super::Db)'s PostgreSQL half: binding the ledger's values, reading its columns, and
//! running a statement in the team ledger's transaction.
//!
//! Statements are sent with their parameter types (`query_typed`): one round trip each, no
//! statement prepared on the server first, so a short-lived git-hand process pays no prepare and
//! close per statement. Integers are `BIGINT` in the schema and bound as `INT8`; a column read as
//! an `i64` may come back narrower (a literal, a `count`) or as a boolean, and is widened here.

use postgres::types::{ToSql, Type};

use super::super::ids::{LeaseId, RepoId, WorktreeKey};
use super::super::server::ClientError;
use super::super::{LedgerError, Result};
use super::Param;

/// The open transaction of a team ledger, as [`Db::Pg`](super::Db) reaches it. A trait object,
/// so `Db` can hold it behind a shared `RefCell` whatever the lifetime of the client it borrows.
pub(crate) trait PgTx {
    fn query_typed(
        &mut self,
        sql: &str,
        params: &[(&(dyn ToSql + Sync), Type)],
    ) -> std::result::Result<Vec<postgres::Row>, ClientError>;
    fn execute_typed(
        &mut self,
        sql: &str,
        params: &[(&(dyn ToSql + Sync), Type)],
    ) -> std::result::Result<u64, ClientError>;
}

impl PgTx for crate::ledger::server::Transaction<'_> {
    fn query_typed(
        &mut self,
        sql: &str,
        params: &[(&(dyn ToSql + Sync), Type)],
    ) -> std::result::Result<Vec<postgres::Row>, ClientError> {
        crate::ledger::server::Transaction::query_typed(self, sql, params)
    }
    fn execute_typed(
        &mut self,
        sql: &str,
        params: &[(&(dyn ToSql + Sync), Type)],
    ) -> std::result::Result<u64, ClientError> {
        crate::ledger::server::Transaction::execute_typed(self, sql, params)
    }
}

/// A bound value as PostgreSQL gets it: every value the ledger binds is one of these three.
#[derive(Debug, Clone, Copy)]
pub(crate) enum PgValue<'a> {
    Int(Option<i64>),
    Bool(Option<bool>),
    Text(Option<&'a str>),
}

impl PgValue<'_> {
    fn pg_type(&self) -> Type {
        match self {
            PgValue::Int(_) => Type::INT8,
            PgValue::Bool(_) => Type::BOOL,
            PgValue::Text(_) => Type::TEXT,
        }
    }

    fn as_sql(&self) -> &(dyn ToSql + Sync) {
        match self {
            PgValue::Int(v) => v,
            PgValue::Bool(v) => v,
            PgValue::Text(v) => v,
        }
    }
}

/// How a [`Param`] is bound on PostgreSQL.
pub(crate) trait PgParam {
    fn pg_value(&self) -> PgValue<'_>;
}

/// The typed NULL a `None` of a type is bound as: PostgreSQL types every parameter, and a NULL
/// declared as text beside a `BIGINT` column would not compare. Apart from [`PgParam`] so that
/// `dyn Param` stays possible.
pub(crate) trait PgNull {
    const NULL: PgValue<'static>;
}

macro_rules! pg_params {
    ($($ty:ty => $variant:ident($value:expr)),* $(,)?) => {$(
        impl PgParam for $ty {
            #[allow(clippy::redundant_closure_call)]
            fn pg_value(&self) -> PgValue<'_> {
                PgValue::$variant(Some(($value)(self)))
            }
        }
        impl PgNull for $ty {
            const NULL: PgValue<'static> = PgValue::$variant(None);
        }
    )*};
}

pg_params!(
    i64 => Int(|v: &i64| *v),
    bool => Bool(|v: &bool| *v),
    str => Text(AsRef::<str>::as_ref),
    String => Text(String::as_str),
    std::borrow::Cow<'_, str> => Text(AsRef::<str>::as_ref),
    LeaseId => Text(LeaseId::as_str),
    RepoId => Text(RepoId::as_str),
    WorktreeKey => Text(WorktreeKey::as_str),
);

impl<T: PgParam + ?Sized> PgParam for &T {
    fn pg_value(&self) -> PgValue<'_> {
        (**self).pg_value()
    }
}
impl<T: PgNull + ?Sized> PgNull for &T {
    const NULL: PgValue<'static> = T::NULL;
}
impl<T: PgParam + PgNull> PgParam for Option<T> {
    fn pg_value(&self) -> PgValue<'_> {
        self.as_ref().map_or(T::NULL, PgParam::pg_value)
    }
}

/// Runs `sql` (with SQLite's `?N` placeholders) in `tx` and returns its rows.
pub(crate) fn query(
    tx: &mut dyn PgTx,
    sql: &str,
    params: &[&dyn Param],
) -> Result<Vec<postgres::Row>> {
    typed(sql, params, |sql, params| tx.query_typed(sql, params))
}

/// Runs `sql` in `tx`; how many rows it changed.
pub(crate) fn execute(tx: &mut dyn PgTx, sql: &str, params: &[&dyn Param]) -> Result<usize> {
    let n = typed(sql, params, |sql, params| tx.execute_typed(sql, params))?;
    Ok(usize::try_from(n).unwrap_or(usize::MAX))
}

/// `run` with `sql`'s placeholders as PostgreSQL's and `params` bound with their types.
fn typed<T>(
    sql: &str,
    params: &[&dyn Param],
    run: impl FnOnce(&str, &[(&(dyn ToSql + Sync), Type)]) -> std::result::Result<T, ClientError>,
) -> Result<T> {
    let sql = super::dollar_placeholders(sql);
    let values: Vec<PgValue<'_>> = params.iter().map(|p| p.pg_value()).collect();
    let typed: Vec<(&(dyn ToSql + Sync), Type)> =
        values.iter().map(|v| (v.as_sql(), v.pg_type())).collect();
    Ok(run(&sql, &typed)?)
}

/// How a [`Column`](super::Column) is read from a PostgreSQL row.
pub(crate) fn column_i64(row: &postgres::Row, idx: usize) -> Result<Option<i64>> {
    let ty = row.columns().get(idx).map(|c| c.type_().clone());
    let wrong = |e: postgres::Error| LedgerError::Corrupt(format!("column {idx}: {e}"));
    match ty {
        Some(Type::INT2) => Ok(row
            .try_get::<_, Option<i16>>(idx)
            .map_err(wrong)?
            .map(i64::from)),
        Some(Type::INT4) => Ok(row
            .try_get::<_, Option<i32>>(idx)
            .map_err(wrong)?
            .map(i64::from)),
        Some(Type::BOOL) => Ok(row
            .try_get::<_, Option<bool>>(idx)
            .map_err(wrong)?
            .map(i64::from)),
        _ => row.try_get::<_, Option<i64>>(idx).map_err(wrong),
    }
}

pub(crate) fn column_bool(row: &postgres::Row, idx: usize) -> Result<Option<bool>> {
    match row.columns().get(idx).map(|c| c.type_()) {
        Some(&Type::BOOL) => row
            .try_get::<_, Option<bool>>(idx)
            .map_err(|e| LedgerError::Corrupt(format!("column {idx}: {e}"))),
        _ => Ok(column_i64(row, idx)?.map(|n| n != 0)),
    }
}

pub(crate) fn column_text(row: &postgres::Row, idx: usize) -> Result<Option<String>> {
    row.try_get::<_, Option<String>>(idx)
        .map_err(|e| LedgerError::Corrupt(format!("column {idx}: {e}")))
}

/// A missing value where the type has none.
pub(crate) fn required<T>(v: Option<T>, idx: usize) -> Result<T> {
    v.ok_or_else(|| LedgerError::Corrupt(format!("column {idx} is NULL")))
}
