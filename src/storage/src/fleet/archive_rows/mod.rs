//! A merchant's rows out of one database and into another (docs/operator.md, "Export and
//! import"): the archive's storage side. The export reads every archived table of the merchant
//! in one read transaction (one consistent moment); the import writes them in one write
//! transaction, keeping every id, so each answer the merchant's data gives is the same after.

use std::sync::LazyLock;

use futures_util::TryStreamExt;
use sqlx::{AnyConnection, Connection, Row};
use tokio::sync::mpsc;

use crate::{Backend, Db, DbError, Tx};
use domain::dates::to_iso;
use domain::fleet::archive::{Cell, Header, Kind, Totals, FORMAT, VERSION};
use domain::now_millis;

/// The tables an archive holds, parents before children (the order their foreign keys
/// follow): the merchant's own row, every record type's table in the registry's order with its
/// nested records' tables after it, then the tables that hold no record of the registry. Each
/// names its merchant in `merchant_id`, but `merchants`, whose row is the merchant's own.
pub static TABLES: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    let mut tables = vec!["merchants"];
    for decl in domain::registry::declarations() {
        tables.push(decl.table);
        for field in decl.fields {
            if let domain::record::Kind::Children(child) = field.kind {
                tables.push(child.table);
            }
        }
    }
    tables.extend(NOT_RECORDS);
    tables
});

/// Tables an archive holds beside the records' own, in their foreign keys' order.
const NOT_RECORDS: [&str; 13] = [
    "stock_levels",
    "log_counters",
    "logs",
    "files",
    "stock_surplus_entries",
    "idempotency_keys",
    "events",
    "webhook_deliveries",
    "webhook_attempts",
    "sales_totals",
    "record_digests",
    "stock_movements",
    "digest_watermarks",
];

/// Tables with merchants' rows that an archive leaves out, and why.
pub const LEFT_OUT: [(&str, &str); 8] = [
    (
        "oauth_families",
        "sign-ins in flight: applications authorize again",
    ),
    ("oauth_codes", "sign-ins in flight"),
    ("oauth_sessions", "sign-ins in flight"),
    ("access_tokens", "credentials: applications authorize again"),
    (
        "refresh_tokens",
        "credentials: applications authorize again",
    ),
    (
        "digest_buckets",
        "kept by a trigger as record_digests rows arrive",
    ),
    (
        "merchants_moved_in",
        "where a move brought the merchant from: the receiving database's record",
    ),
    (
        "merchant_placements",
        "the home database's directory of pods: where the merchant lives, not what it holds",
    ),
];

/// What a move carries beyond an archive (docs/operations.md, "From SQLite to PostgreSQL"):
/// the merchant's sign-ins, so that every token its applications hold keeps working. Sessions
/// of a sign-in page still open are left: the person signs in again.
pub const CREDENTIALS: [&str; 4] = [
    "oauth_families",
    "oauth_codes",
    "access_tokens",
    "refresh_tokens",
];

/// A move's facts an import keeps with the merchant (see [`Db::check_move_target`]).
#[derive(Debug, Clone)]
pub struct MoveFrom {
    /// The source database's identity.
    pub source: String,
    /// The source allocator's last id handed out: the target's next is past it.
    pub ids_through: i64,
    /// Between pods of one fleet: each pod hands out ids from its own range, so the target's
    /// allocator stays where it is, and nothing is recorded of the source.
    pub between_pods: bool,
}

/// Cells per INSERT statement: well under SQLite's 32,766 bound parameters and PostgreSQL's
/// 65,535.
pub(crate) const CELLS_PER_STATEMENT: usize = 8_000;

/// Why an import stopped. Nothing of it is stored.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The archive is not one this database can take as it is.
    #[error("{0}")]
    Invalid(String),
    /// The archive is sound, but something it holds is taken here.
    #[error("{0}")]
    Conflict(String),
    #[error(transparent)]
    Db(#[from] DbError),
}

impl From<sqlx::Error> for ImportError {
    fn from(error: sqlx::Error) -> Self {
        ImportError::Db(error.into())
    }
}

/// How an export ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exported {
    /// Every line was sent.
    Whole(Totals),
    NoSuchMerchant,
    /// The reader went away.
    Abandoned,
}

/// The merchant's column of a table.
pub(crate) fn owner_column(table: &str) -> &'static str {
    match table {
        "merchants" => "id",
        t if BY_FAMILY.contains(&t) => "family_id",
        _ => "merchant_id",
    }
}

/// The condition that picks merchant `$1`'s rows of a table.
pub(crate) fn owner_filter(table: &str) -> String {
    match BY_FAMILY.contains(&table) {
        true => "family_id IN (SELECT id FROM oauth_families WHERE merchant_id = $1)".into(),
        false => format!("{} = $1", owner_column(table)),
    }
}

/// A table's columns in this database, in their stored order.
pub(crate) async fn columns(
    conn: &mut AnyConnection,
    backend: Backend,
    table: &str,
) -> Result<Vec<(String, Kind)>, DbError> {
    let rows: Vec<(String, String)> = match backend {
        Backend::Sqlite => {
            sqlx::query_as("SELECT name, type FROM pragma_table_info($1) ORDER BY cid")
                .bind(table)
                .fetch_all(&mut *conn)
                .await?
        }
        Backend::Postgres => {
            sqlx::query_as(
                "SELECT column_name::text, data_type::text FROM information_schema.columns \
                 WHERE table_schema = current_schema() AND table_name = $1 \
                 ORDER BY ordinal_position",
            )
            .bind(table)
            .fetch_all(&mut *conn)
            .await?
        }
    };
    Ok(rows
        .into_iter()
        .map(|(name, declared)| (name, Kind::of_declared(&declared)))
        .collect())
}

/// A cell's JSON form in an archive (module docs of `domain::fleet::archive`).
fn cell_json(cell: &Cell) -> serde_json::Value {
    use base64::Engine as _;
    match cell {
        Cell::Null => serde_json::Value::Null,
        Cell::Int(n) => (*n).into(),
        Cell::Real(x) => x.to_string().into(),
        Cell::Text(s) => s.clone().into(),
        Cell::Bytes(b) => base64::engine::general_purpose::STANDARD.encode(b).into(),
    }
}

/// The cell a column of `kind` holds, from its JSON form; `Err` says what was expected.
pub(crate) fn cell_from_json(kind: Kind, value: &serde_json::Value) -> Result<Cell, &'static str> {
    use base64::Engine as _;
    use serde_json::Value;
    Ok(match (kind, value) {
        (_, Value::Null) => Cell::Null,
        (Kind::Int, Value::Number(n)) => Cell::Int(n.as_i64().ok_or("an integer")?),
        (Kind::Int, _) => return Err("an integer"),
        (Kind::Real, Value::String(s)) => Cell::Real(s.parse().map_err(|_| "a number")?),
        (Kind::Real, Value::Number(n)) => Cell::Real(n.as_f64().ok_or("a number")?),
        (Kind::Real, _) => return Err("a number"),
        (Kind::Text, Value::String(s)) => Cell::Text(s.clone()),
        (Kind::Text, _) => return Err("a string"),
        (Kind::Bytes, Value::String(s)) => Cell::Bytes(
            base64::engine::general_purpose::STANDARD
                .decode(s)
                .map_err(|_| "base64 data")?,
        ),
        (Kind::Bytes, _) => return Err("base64 data"),
    })
}

fn table_line(table: &str, columns: &[String]) -> String {
    serde_json::json!({"table": table, "columns": columns}).to_string()
}

fn end_line(totals: Totals) -> String {
    serde_json::json!({ "end": totals }).to_string()
}

pub(crate) fn cell(row: &sqlx::any::AnyRow, i: usize, kind: Kind) -> Result<Cell, DbError> {
    let cell = match kind {
        Kind::Int => row.try_get::<Option<i64>, _>(i)?.map(Cell::Int),
        Kind::Real => row.try_get::<Option<f64>, _>(i)?.map(Cell::Real),
        Kind::Text => row.try_get::<Option<String>, _>(i)?.map(Cell::Text),
        Kind::Bytes => row.try_get::<Option<Vec<u8>>, _>(i)?.map(Cell::Bytes),
    };
    Ok(cell.unwrap_or(Cell::Null))
}

/// Binds a cell of a column of `kind` (a NULL keeps its column's type).
pub(crate) fn bind_cell<'q>(
    query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    cell: &Cell,
    kind: Kind,
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
    match (cell, kind) {
        (Cell::Int(n), _) => query.bind(*n),
        (Cell::Real(x), _) => query.bind(*x),
        (Cell::Text(s), _) => query.bind(s.clone()),
        (Cell::Bytes(b), _) => query.bind(b.clone()),
        (Cell::Null, Kind::Int) => query.bind(None::<i64>),
        (Cell::Null, Kind::Real) => query.bind(None::<f64>),
        (Cell::Null, Kind::Text) => query.bind(None::<String>),
        (Cell::Null, Kind::Bytes) => query.bind(None::<Vec<u8>>),
    }
}

/// Lines gathered into chunks of about this many bytes before they are sent.
const CHUNK: usize = 64 * 1024;

struct Sink<'a> {
    out: &'a mpsc::Sender<Vec<u8>>,
    buf: Vec<u8>,
}

impl Sink<'_> {
    /// Adds a line; false when the reader went away.
    async fn line(&mut self, text: &str) -> bool {
        self.buf.extend_from_slice(text.as_bytes());
        self.buf.push(b'\n');
        if self.buf.len() < CHUNK {
            return true;
        }
        self.flush().await
    }

    async fn flush(&mut self) -> bool {
        let chunk = std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK + 1024));
        chunk.is_empty() || self.out.send(chunk).await.is_ok()
    }
}

/// Rows of a merchant's in tables without its id, by the sign-in they belong to.
pub(crate) const BY_FAMILY: [&str; 2] = ["oauth_codes", "refresh_tokens"];

/// The id this database's allocator hands out next.
pub(crate) async fn allocator_next(
    conn: &mut AnyConnection,
    backend: Backend,
) -> Result<i64, DbError> {
    Ok(match backend {
        Backend::Postgres => {
            let (last, called): (i64, bool) =
                sqlx::query_as("SELECT last_value, is_called FROM global_id_seq")
                    .fetch_one(&mut *conn)
                    .await?;
            if called {
                last + 1
            } else {
                last
            }
        }
        Backend::Sqlite => {
            sqlx::query_as::<_, (i64,)>("SELECT next_id FROM id_allocator WHERE k = 1")
                .fetch_one(&mut *conn)
                .await?
                .0
        }
    })
}

/// Deletes every row of merchant `merchant_id` in `tx`; every replica forgets the tokens it
/// cached once `tx` commits.
async fn remove_rows(tx: &mut Tx, merchant_id: i64) -> Result<(), DbError> {
    let conn = tx.conn()?;
    // Sign-ins' children first, then children before parents: the reverse of the order rows
    // are created in.
    // The directory says where the merchant lives; a move removes it from the pod it left
    // after writing the directory, so the directory is written by its own steps only.
    let left_out = LEFT_OUT
        .iter()
        .map(|(table, _)| *table)
        .filter(|t| *t != "merchant_placements");
    let tables = left_out.filter(|t| !BY_FAMILY.contains(t)).rev();
    let all = BY_FAMILY
        .into_iter()
        .chain(tables)
        .chain(TABLES.iter().rev().copied());
    for table in all {
        sqlx::query(&format!(
            "DELETE FROM {table} WHERE {}",
            owner_filter(table)
        ))
        .bind(merchant_id)
        .execute(&mut *conn)
        .await?;
    }
    tx.note_write();
    tx.announce(crate::Announcement::TokensRevoked(None));
    Ok(())
}

impl Db {
    /// Removes every row of merchant `merchant_id`, in one transaction, if its deletion time
    /// has passed by `now` (a resume in between cancels it); whether it was removed. Every
    /// replica forgets the tokens it cached.
    pub async fn delete_merchant(&self, merchant_id: i64, now: i64) -> Result<bool, DbError> {
        let mut tx = self.begin().await?;
        // Takes the merchant's row (on PostgreSQL, its lock): a resume either committed before
        // and the row no longer qualifies, or waits and finds no merchant.
        let due: Option<(i64,)> = sqlx::query_as(
            "UPDATE merchants SET updated_at = $1 \
             WHERE id = $2 AND delete_after IS NOT NULL AND delete_after <= $1 RETURNING id",
        )
        .bind(now)
        .bind(merchant_id)
        .fetch_optional(tx.conn()?)
        .await?;
        if due.is_none() {
            tx.rollback().await?;
            return Ok(false);
        }
        remove_rows(&mut tx, merchant_id).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Removes every row of merchant `merchant_id` now, in one transaction: the source's copy
    /// once a move has verified the target's.
    pub async fn remove_merchant(&self, merchant_id: i64) -> Result<(), DbError> {
        let mut tx = self.begin().await?;
        remove_rows(&mut tx, merchant_id).await?;
        tx.commit().await
    }

    /// The newest migration applied to this database.
    pub async fn schema_version(&self) -> Result<i64, DbError> {
        let (version,): (Option<i64>,) =
            sqlx::query_as("SELECT MAX(version) FROM _sqlx_migrations")
                .fetch_one(self.pool())
                .await?;
        Ok(version.unwrap_or(0))
    }

    /// Sends merchant `merchant_id`'s archive to `out` in chunks of lines, read in one
    /// transaction, with its [`CREDENTIALS`] when `credentials` (a move's). Streams each table:
    /// memory stays flat in the merchant's size.
    pub async fn export_merchant(
        &self,
        merchant_id: i64,
        out: &mpsc::Sender<Vec<u8>>,
        credentials: bool,
    ) -> Result<Exported, DbError> {
        let schema = self.schema_version().await?;
        let mut conn = self.pool().acquire().await?;
        let mut tx = conn.begin().await?;
        if self.backend() == Backend::Postgres {
            sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                .execute(&mut *tx)
                .await?;
        }
        let key: Option<(String,)> =
            sqlx::query_as("SELECT manifest_key FROM merchants WHERE id = $1")
                .bind(merchant_id)
                .fetch_optional(&mut *tx)
                .await?;
        let Some((key,)) = key else {
            return Ok(Exported::NoSuchMerchant);
        };
        let header = Header {
            format: FORMAT.into(),
            version: VERSION,
            schema,
            merchant_id,
            key,
            export_date: to_iso(now_millis()).unwrap_or_default(),
        };
        let mut sink = Sink {
            out,
            buf: Vec::with_capacity(CHUNK + 1024),
        };
        let header = serde_json::to_string(&header).map_err(|e| DbError::Corrupt(e.to_string()))?;
        if !sink.line(&header).await {
            return Ok(Exported::Abandoned);
        }
        let mut totals = Totals::default();
        let extra: &[&str] = if credentials { &CREDENTIALS } else { &[] };
        for &table in TABLES.iter().chain(extra) {
            let columns = columns(&mut tx, self.backend(), table).await?;
            let names: Vec<String> = columns.iter().map(|(n, _)| n.clone()).collect();
            if !sink.line(&table_line(table, &names)).await {
                return Ok(Exported::Abandoned);
            }
            totals.tables += 1;
            // In a stable order, so that two archives of unchanged data are the same bytes.
            let order = match names.iter().any(|n| n == "id") {
                true => "id".to_owned(),
                false => (1..=names.len())
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            let sql = format!(
                "SELECT {} FROM {table} WHERE {} ORDER BY {order}",
                names.join(", "),
                owner_filter(table)
            );
            let mut rows = sqlx::query(&sql).bind(merchant_id).fetch(&mut *tx);
            while let Some(row) = rows.try_next().await? {
                let mut cells = Vec::with_capacity(columns.len());
                for (i, (_, kind)) in columns.iter().enumerate() {
                    cells.push(cell_json(&cell(&row, i, *kind)?));
                }
                let line = serde_json::Value::Array(cells).to_string();
                if !sink.line(&line).await {
                    return Ok(Exported::Abandoned);
                }
                totals.rows += 1;
            }
        }
        tx.rollback().await?;
        if !sink.line(&end_line(totals)).await || !sink.flush().await {
            return Ok(Exported::Abandoned);
        }
        Ok(Exported::Whole(totals))
    }
}

mod import;

pub use import::Importer;

#[cfg(test)]
mod tests;
