//! A small codec between typed records and their table rows, so each catalogue table is a typed
//! table without hand-written SQL per column. Every row carries `merchant_id`, and every
//! statement filters by it.
//!
//! Reads come back as one JSON array built by the database (`json_group_array` on SQLite,
//! `json_agg` on PostgreSQL) rather than row by row: the driver's per-row cost dominated loading
//! a large catalogue (10,000 products took 137 ms row by row, 63 ms aggregated; commit
//! 69c0fe0). Each row is decoded from its borrowed JSON values.

use rust_decimal::Decimal;
use serde_json::value::RawValue;
use sqlx::AnyConnection;

use crate::{Backend, DbError};
use domain::money;
use domain::record::{Declared, Parent};

/// One column value, in the types the `Any` driver carries on both databases.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    Int(Option<i64>),
    Real(Option<f64>),
    Text(Option<String>),
}

impl From<i64> for Val {
    fn from(v: i64) -> Self {
        Val::Int(Some(v))
    }
}
impl From<Option<i64>> for Val {
    fn from(v: Option<i64>) -> Self {
        Val::Int(v)
    }
}
impl From<bool> for Val {
    fn from(v: bool) -> Self {
        Val::Int(Some(i64::from(v)))
    }
}
impl From<Option<f64>> for Val {
    fn from(v: Option<f64>) -> Self {
        Val::Real(v)
    }
}
impl From<&str> for Val {
    fn from(v: &str) -> Self {
        Val::Text(Some(v.to_owned()))
    }
}
impl From<&String> for Val {
    fn from(v: &String) -> Self {
        Val::Text(Some(v.clone()))
    }
}
impl From<&Decimal> for Val {
    fn from(v: &Decimal) -> Self {
        Val::Text(Some(money::text(v)))
    }
}
impl From<&Option<Decimal>> for Val {
    fn from(v: &Option<Decimal>) -> Self {
        Val::Text(v.as_ref().map(money::text))
    }
}
impl From<&Option<String>> for Val {
    fn from(v: &Option<String>) -> Self {
        Val::Text(v.clone())
    }
}

/// A record stored as one row of `TABLE` keyed by `(merchant_id, id)`.
pub trait TableRow: Sized {
    const TABLE: &'static str;
    /// Every column but `merchant_id`, `id` first.
    const COLUMNS: &'static [&'static str];
    /// Columns holding JSON text (lists, maps), which reads return as JSON.
    const JSON_COLUMNS: &'static [&'static str] = &[];
    /// The values of [`Self::COLUMNS`], in order.
    fn values(&self) -> Vec<Val>;
    fn from_row(row: &Row<'_>) -> Result<Self, sqlx::Error>;
}

/// One row of a read: the values of its columns as JSON text borrowed from the answer.
pub struct Row<'a> {
    columns: &'static [&'static str],
    values: Vec<&'a RawValue>,
}

impl Row<'_> {
    fn value(&self, column: &str) -> Result<&str, sqlx::Error> {
        self.columns
            .iter()
            .position(|c| *c == column)
            .and_then(|i| self.values.get(i))
            .map(|v| v.get())
            .ok_or_else(|| decode_error(column, "no such column in the row"))
    }
}

/// A decode failure naming its column.
pub(crate) fn decode_error(column: &str, why: impl std::fmt::Display) -> sqlx::Error {
    sqlx::Error::Decode(format!("{column}: {why}").into())
}

/// Money and rates are stored as decimal text; read straight from the answer, without an
/// intermediate string (a catalogue load would otherwise leave its memory full of holes).
pub(crate) fn optional_decimal(
    row: &Row<'_>,
    column: &str,
) -> Result<Option<Decimal>, sqlx::Error> {
    let raw = row.value(column)?;
    if raw == "null" {
        return Ok(None);
    }
    let text = raw
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .ok_or_else(|| decode_error(column, format!("not decimal text: {raw}")))?;
    money::parse_stored(text)
        .map(Some)
        .map_err(|e| decode_error(column, e))
}

/// Lists and maps are stored as JSON text. Reads name them in [`TableRow::JSON_COLUMNS`], so
/// the answer carries them as JSON and they are parsed in place.
pub(crate) fn json<T: serde::de::DeserializeOwned>(
    row: &Row<'_>,
    column: &str,
) -> Result<T, sqlx::Error> {
    let raw = row.value(column)?;
    let parsed = if raw.starts_with('"') {
        let text: String = serde_json::from_str(raw).map_err(|e| decode_error(column, e))?;
        serde_json::from_str(&text)
    } else {
        serde_json::from_str(raw)
    };
    parsed.map_err(|e| decode_error(column, format!("{raw}: {e}")))
}

pub(crate) fn get<T: FromJson>(row: &Row<'_>, column: &str) -> Result<T, sqlx::Error> {
    let raw = row.value(column)?;
    T::from_json(raw).ok_or_else(|| decode_error(column, format!("unexpected value {raw}")))
}

/// A column value read from its JSON text. Numbers and plain strings are read directly (a
/// catalogue load reads a hundred thousand of them); anything else goes through serde.
pub(crate) trait FromJson: Sized {
    fn from_json(raw: &str) -> Option<Self>;
}

impl FromJson for i64 {
    fn from_json(raw: &str) -> Option<Self> {
        raw.parse().ok()
    }
}

impl FromJson for f64 {
    fn from_json(raw: &str) -> Option<Self> {
        raw.parse().ok()
    }
}

impl FromJson for String {
    fn from_json(raw: &str) -> Option<Self> {
        let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
        if inner.contains('\\') {
            serde_json::from_str(raw).ok()
        } else {
            Some(inner.to_owned())
        }
    }
}

impl<T: FromJson> FromJson for Option<T> {
    fn from_json(raw: &str) -> Option<Self> {
        if raw == "null" {
            Some(None)
        } else {
            T::from_json(raw).map(Some)
        }
    }
}

/// Runs `SELECT <columns> FROM <from> WHERE merchant_id = $1 <clause> ORDER BY <order>` with the
/// rows aggregated into one JSON array, and decodes each row with `decode`.
pub(crate) async fn select_json<T>(
    conn: &mut AnyConnection,
    backend: Backend,
    query: Select<'_>,
    binds: &[i64],
    decode: impl Fn(&Row<'_>) -> Result<T, sqlx::Error>,
) -> Result<Vec<T>, DbError> {
    let Select {
        columns,
        json_columns,
        from,
        clause,
        order,
    } = query;
    let list: Vec<String> = columns
        .iter()
        .map(|c| match (json_columns.contains(c), backend) {
            (false, _) => (*c).to_owned(),
            (true, Backend::Sqlite) => format!("json({c})"),
            (true, Backend::Postgres) => format!("{c}::json"),
        })
        .collect();
    let list = list.join(", ");
    let sql = match backend {
        // Ordered in a subquery, not in the aggregate: an ORDER BY inside the aggregate makes
        // SQLite copy every row's text into a sorter even when the index already gives that
        // order (12 % of a cold activation's time); a subquery with ORDER BY is never
        // flattened into an aggregate query, so its rows arrive in order.
        Backend::Sqlite => format!(
            "SELECT json_group_array(json_array({list})) FROM (SELECT {} FROM {from} \
             WHERE merchant_id = $1 {clause} ORDER BY {order})",
            columns.join(", ")
        ),
        Backend::Postgres => format!(
            "SELECT COALESCE(json_agg(json_build_array({list}) ORDER BY {order}), '[]')::text \
             FROM {from} WHERE merchant_id = $1 {clause}"
        ),
    };
    let mut q = sqlx::query_as::<_, (String,)>(&sql);
    for b in binds {
        q = q.bind(*b);
    }
    let (text,) = q.fetch_one(&mut *conn).await?;
    // Each row is decoded as soon as it is read, so no row outlives its record's decoding (what
    // loading allocates stays packed, and is returned whole when freed).
    let mut de = serde_json::Deserializer::from_str(&text);
    let rows = serde::Deserializer::deserialize_seq(&mut de, Rows { columns, decode })
        .map_err(|e| DbError::Corrupt(format!("reading {from}: {e}")))?;
    Ok(rows)
}

/// A visitor that decodes the rows of an aggregated read one by one.
struct Rows<F> {
    columns: &'static [&'static str],
    decode: F,
}

impl<'de, T, F> serde::de::Visitor<'de> for Rows<F>
where
    F: Fn(&Row<'_>) -> Result<T, sqlx::Error>,
{
    type Value = Vec<T>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an array of rows")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(values) = seq.next_element::<Vec<&'de RawValue>>()? {
            let row = Row {
                columns: self.columns,
                values,
            };
            out.push((self.decode)(&row).map_err(serde::de::Error::custom)?);
        }
        Ok(out)
    }
}

/// What [`select_json`] reads.
pub(crate) struct Select<'a> {
    pub columns: &'static [&'static str],
    /// Columns of JSON text, returned as JSON.
    pub json_columns: &'static [&'static str],
    pub from: &'a str,
    pub clause: &'a str,
    pub order: &'a str,
}

fn bind<'q>(
    query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    value: Val,
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
    match value {
        Val::Int(v) => query.bind(v),
        Val::Real(Some(v)) => query.bind(v),
        // sqlx-core 0.8.6 swaps the float kinds when it binds a NULL through `Any` on
        // PostgreSQL (a NULL f64 goes out as float4, a NULL f32 as float8). A statement first
        // prepared with a NULL float would then reject every real f64 bound to it later, so
        // NULL floats are bound as f32, which comes out as the float8 the column is.
        Val::Real(None) => query.bind(None::<f32>),
        Val::Text(v) => query.bind(v),
    }
}

/// Rows of a merchant matching `clause` (SQL after `WHERE merchant_id = $1`, its placeholders
/// `$2...` bound to `binds` in order), ordered by id.
pub async fn select<R: TableRow>(
    conn: &mut AnyConnection,
    backend: Backend,
    merchant_id: i64,
    clause: &str,
    binds: &[i64],
) -> Result<Vec<R>, DbError> {
    let mut all = Vec::with_capacity(binds.len() + 1);
    all.push(merchant_id);
    all.extend_from_slice(binds);
    let query = Select {
        columns: R::COLUMNS,
        json_columns: R::JSON_COLUMNS,
        from: R::TABLE,
        clause,
        order: "id",
    };
    select_json(conn, backend, query, &all, R::from_row).await
}

/// `AND <column> IN ($first, ...)` for `n` values.
pub fn in_list(column: &str, first: usize, n: usize) -> String {
    let marks: Vec<String> = (first..first + n).map(|i| format!("${i}")).collect();
    format!(" AND {column} IN ({})", marks.join(", "))
}

pub async fn insert<R: TableRow>(
    conn: &mut AnyConnection,
    merchant_id: i64,
    record: &R,
) -> Result<(), DbError> {
    insert_many(conn, merchant_id, &[record]).await
}

/// Inserts a record's row with columns it does not own (a secret, a cursor), which an update
/// of the record never touches.
pub async fn insert_with<R: TableRow>(
    conn: &mut AnyConnection,
    merchant_id: i64,
    record: &R,
    extra: &[(&str, Val)],
) -> Result<(), DbError> {
    let columns: Vec<&str> = R::COLUMNS
        .iter()
        .copied()
        .chain(extra.iter().map(|(c, _)| *c))
        .collect();
    let sql = format!(
        "INSERT INTO {} (merchant_id, {}) VALUES {}",
        R::TABLE,
        columns.join(", "),
        value_tuples(conn, 1, columns.len() + 1)
    );
    let mut query = sqlx::query(&sql).bind(merchant_id);
    for value in record
        .values()
        .into_iter()
        .chain(extra.iter().map(|(_, v)| v.clone()))
    {
        query = bind(query, value);
    }
    query.execute(&mut *conn).await?;
    Ok(())
}

/// Values bound by one statement at most (SQLite allows 32,766, PostgreSQL 65,535).
const MAX_BINDS: usize = 30_000;

/// Inserts many rows of one table with as few statements as the bind limit allows: a batch of
/// 200 products is two statements, not four hundred.
pub async fn insert_many<R: TableRow>(
    conn: &mut AnyConnection,
    merchant_id: i64,
    records: &[&R],
) -> Result<(), DbError> {
    let width = R::COLUMNS.len() + 1;
    let per_statement = (MAX_BINDS / width).max(1);
    for chunk in records.chunks(per_statement) {
        let sql = format!(
            "INSERT INTO {} (merchant_id, {}) VALUES {}",
            R::TABLE,
            R::COLUMNS.join(", "),
            value_tuples(conn, chunk.len(), width)
        );
        let mut query = sqlx::query(&sql);
        for record in chunk {
            query = query.bind(merchant_id);
            for value in record.values() {
                query = bind(query, value);
            }
        }
        query.execute(&mut *conn).await?;
    }
    Ok(())
}

/// `(?, ?), (?, ?)` for `rows` rows of `width` values: positional `?` on SQLite, which looks a
/// numbered parameter's name up in a list as long as the statement's parameters for every
/// value bound (with thousands of `$N` that was 70 % of seeding); `$1, $2, …` elsewhere.
pub fn value_tuples(conn: &AnyConnection, rows: usize, width: usize) -> String {
    let anonymous = conn.backend_name() == "SQLite";
    let tuples: Vec<String> = (0..rows)
        .map(|row| {
            let marks: Vec<String> = (1..=width)
                .map(|col| match anonymous {
                    true => "?".to_owned(),
                    false => format!("${}", row * width + col),
                })
                .collect();
            format!("({})", marks.join(", "))
        })
        .collect();
    tuples.join(", ")
}

/// Rewrites every column of an existing row (found by merchant and id).
pub async fn update<R: TableRow>(
    conn: &mut AnyConnection,
    merchant_id: i64,
    record: &R,
) -> Result<(), DbError> {
    let sets: Vec<String> = R::COLUMNS
        .iter()
        .enumerate()
        .skip(1)
        .map(|(i, c)| format!("{c} = ${}", i + 2))
        .collect();
    let sql = format!(
        "UPDATE {} SET {} WHERE merchant_id = $1 AND id = $2",
        R::TABLE,
        sets.join(", ")
    );
    let mut query = sqlx::query(&sql).bind(merchant_id);
    for value in record.values() {
        query = bind(query, value);
    }
    let done = query.execute(&mut *conn).await?;
    if done.rows_affected() != 1 {
        return Err(DbError::Corrupt(format!(
            "{} row of merchant {merchant_id} is missing",
            R::TABLE
        )));
    }
    Ok(())
}

/// A record stored as a row with child rows in another table (a basket and its lines).
pub trait WithChildren: TableRow {
    type Child: TableRow;
    /// The child table's column that names the parent.
    const PARENT_COLUMN: &'static str;
    fn id(&self) -> i64;
    fn parent_of(child: &Self::Child) -> i64;
    fn children(&self) -> &[Self::Child];
    fn set_children(&mut self, children: Vec<Self::Child>);
}

/// Every declared parent (`#[field(children, stored)]`): its children's declaration names the
/// column that points back.
impl<P: Parent> WithChildren for P {
    type Child = P::Child;
    const PARENT_COLUMN: &'static str = match <P::Child as Declared>::DECL.parent_column {
        Some(column) => column,
        None => panic!("a stored child declares its parent column"),
    };

    fn id(&self) -> i64 {
        self.key()
    }

    fn parent_of(child: &P::Child) -> i64 {
        child.parent_id()
    }

    fn children(&self) -> &[P::Child] {
        Parent::children(self)
    }

    fn set_children(&mut self, children: Vec<P::Child>) {
        Parent::set_children(self, children)
    }
}

/// The parents matching `clause` (as for [`select`]) with their children attached (two
/// queries).
pub async fn select_with_children<P: WithChildren>(
    conn: &mut AnyConnection,
    backend: Backend,
    merchant_id: i64,
    clause: &str,
    binds: &[i64],
) -> Result<Vec<P>, DbError> {
    let mut parents: Vec<P> = select(conn, backend, merchant_id, clause, binds).await?;
    if parents.is_empty() {
        return Ok(parents);
    }
    let child_clause = format!(
        "AND {} IN (SELECT id FROM {} WHERE merchant_id = $1 {clause})",
        P::PARENT_COLUMN,
        P::TABLE
    );
    let children: Vec<P::Child> = select(conn, backend, merchant_id, &child_clause, binds).await?;
    let mut by_parent: std::collections::HashMap<i64, Vec<P::Child>> = Default::default();
    for child in children {
        by_parent
            .entry(P::parent_of(&child))
            .or_default()
            .push(child);
    }
    for parent in &mut parents {
        let mut children = by_parent.remove(&parent.id()).unwrap_or_default();
        // A Vec grown by pushes keeps room for four; a cached product keeps its instances
        // for as long as it is cached.
        children.shrink_to_fit();
        parent.set_children(children);
    }
    Ok(parents)
}

/// Writes a parent and replaces all its children (for drafts, which change as a whole).
pub async fn persist_replacing_children<P: WithChildren>(
    conn: &mut AnyConnection,
    merchant_id: i64,
    parent: &P,
    is_new: bool,
) -> Result<(), DbError> {
    if is_new {
        insert(conn, merchant_id, parent).await?;
    } else {
        update(conn, merchant_id, parent).await?;
        let sql = format!(
            "DELETE FROM {} WHERE merchant_id = $1 AND {} = $2",
            P::Child::TABLE,
            P::PARENT_COLUMN
        );
        sqlx::query(&sql)
            .bind(merchant_id)
            .bind(parent.id())
            .execute(&mut *conn)
            .await?;
    }
    for child in parent.children() {
        insert(conn, merchant_id, child).await?;
    }
    Ok(())
}

impl crate::Tx {
    /// Inserts a record's row, or rewrites every column of it.
    pub(crate) async fn write_row<R: TableRow>(
        &mut self,
        merchant_id: i64,
        record: &R,
        is_new: bool,
    ) -> Result<(), DbError> {
        let conn = self.conn()?;
        if is_new {
            insert(conn, merchant_id, record).await
        } else {
            update(conn, merchant_id, record).await
        }
    }

    /// Inserts new rows in as few statements as possible.
    pub(crate) async fn insert_rows<R: TableRow>(
        &mut self,
        merchant_id: i64,
        records: &[&R],
    ) -> Result<(), DbError> {
        if records.is_empty() {
            return Ok(());
        }
        insert_many(self.conn()?, merchant_id, records).await
    }

    /// Writes a parent and replaces its children.
    pub(crate) async fn write_with_children<P: WithChildren>(
        &mut self,
        merchant_id: i64,
        parent: &P,
        is_new: bool,
    ) -> Result<(), DbError> {
        persist_replacing_children(self.conn()?, merchant_id, parent, is_new).await
    }
}
