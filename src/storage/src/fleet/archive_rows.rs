//! A merchant's rows out of one database and into another (docs/operator.md, "Export and
//! import"): the archive's storage side. The export reads every archived table of the merchant
//! in one read transaction (one consistent moment); the import writes them in one write
//! transaction, keeping every id, so each answer the merchant's data gives is the same after.

use futures_util::TryStreamExt;
use sqlx::{AnyConnection, Connection, Row};
use tokio::sync::mpsc;

use crate::rows::value_tuples;
use crate::{Backend, Db, DbError, Tx};
use domain::dates::to_iso;
use domain::fleet::archive::{Cell, Header, Kind, Totals, FORMAT, VERSION};
use domain::now_millis;

/// The tables an archive holds, parents before children (the order their migrations made
/// them, which their foreign keys follow). Each names its merchant in `merchant_id`, but
/// `merchants`, whose row is the merchant's own.
pub const TABLES: [&str; 36] = [
    "merchants",
    "stores",
    "employees",
    "applications",
    "categories",
    "products",
    "product_instances",
    "suppliers",
    "supplier_stores",
    "promotions",
    "stock_levels",
    "baskets",
    "basket_lines",
    "transactions",
    "orders",
    "invoices",
    "invoice_items",
    "log_counters",
    "logs",
    "files",
    "stock_reconciliations",
    "stock_reconciliation_lines",
    "stock_surplus_entries",
    "idempotency_keys",
    "events",
    "webhooks",
    "webhook_deliveries",
    "webhook_attempts",
    "customers",
    "registers",
    "register_sessions",
    "cash_movements",
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
const CELLS_PER_STATEMENT: usize = 8_000;

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
fn owner_column(table: &str) -> &'static str {
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
fn cell_from_json(kind: Kind, value: &serde_json::Value) -> Result<Cell, &'static str> {
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
const BY_FAMILY: [&str; 2] = ["oauth_codes", "refresh_tokens"];

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

    /// Starts importing an archive whose header is `header`: refused when the archive's schema
    /// is not this database's, or the merchant's id or key is already here. A move's archive
    /// (`moving`) may also hold the merchant's [`CREDENTIALS`].
    pub async fn begin_import(
        &self,
        header: &Header,
        moving: Option<MoveFrom>,
    ) -> Result<Importer, ImportError> {
        let schema = self.schema_version().await?;
        if header.schema != schema {
            return Err(ImportError::Invalid(format!(
                "the archive is of schema {}, this database's is {schema}: import into a server \
                 of the version that exported it",
                header.schema
            )));
        }
        let taken: Option<(i64,)> =
            sqlx::query_as("SELECT id FROM merchants WHERE id = $1 OR manifest_key = $2")
                .bind(header.merchant_id)
                .bind(&header.key)
                .fetch_optional(self.pool())
                .await?;
        if let Some((id,)) = taken {
            return Err(ImportError::Conflict(format!(
                "merchant {id} here already has the archive's id {} or key {}",
                header.merchant_id, header.key
            )));
        }
        let tx = self.begin().await?;
        Ok(Importer {
            tx,
            merchant_id: header.merchant_id,
            pending: None,
            seen: Vec::new(),
            totals: Totals::default(),
            ids: None,
            moving,
            families: std::collections::HashSet::new(),
            own_range: None,
        })
    }
}

/// An import under way: one write transaction, rows inserted in multi-row statements as they
/// come. Dropped or [`Importer::abandon`]ed, nothing of it stays.
pub struct Importer {
    tx: Tx,
    merchant_id: i64,
    pending: Option<Pending>,
    /// Tables begun so far.
    seen: Vec<&'static str>,
    totals: Totals,
    /// The least and greatest `id` of every row.
    ids: Option<(i64, i64)>,
    moving: Option<MoveFrom>,
    /// The sign-ins imported so far (a move's), which the rows of `BY_FAMILY` must name.
    families: std::collections::HashSet<String>,
    /// In a fleet, the ids this pod hands out (`from..to`).
    own_range: Option<(i64, i64)>,
}

struct Pending {
    table: &'static str,
    columns: Vec<(String, Kind)>,
    /// Where the merchant's id is, which every row must hold.
    owner: usize,
    id: Option<usize>,
    rows: Vec<Vec<Cell>>,
}

impl Importer {
    /// The next table's rows follow, in these columns: each of the table's columns here, once.
    pub async fn table(&mut self, table: &str, names: &[String]) -> Result<(), ImportError> {
        self.flush().await?;
        let extra: &[&str] = match self.moving {
            Some(_) => &CREDENTIALS,
            None => &[],
        };
        let Some(table) = TABLES.iter().chain(extra).copied().find(|t| *t == table) else {
            return Err(ImportError::Invalid(format!(
                "{table} is not a table an archive holds"
            )));
        };
        if self.seen.contains(&table) {
            return Err(ImportError::Invalid(format!("{table} comes twice")));
        }
        if self.seen.is_empty() && table != "merchants" {
            return Err(ImportError::Invalid(
                "the first table must be merchants".into(),
            ));
        }
        let backend = self.tx.backend();
        let here = columns(self.tx.conn()?, backend, table).await?;
        let mut ordered = Vec::with_capacity(names.len());
        for name in names {
            match here.iter().find(|(n, _)| n == name) {
                Some(column) if !ordered.contains(column) => ordered.push(column.clone()),
                Some(_) => {
                    return Err(ImportError::Invalid(format!("{table}: {name} comes twice")))
                }
                None => {
                    return Err(ImportError::Invalid(format!(
                        "{table}: this database has no column {name}"
                    )))
                }
            }
        }
        if let Some((missing, _)) = here.iter().find(|c| !ordered.contains(*c)) {
            return Err(ImportError::Invalid(format!(
                "{table}: the archive has no column {missing}"
            )));
        }
        let position = |name: &str| ordered.iter().position(|(n, _)| n == name);
        let owner = position(owner_column(table))
            .ok_or_else(|| ImportError::Invalid(format!("{table} names no merchant")))?;
        let id = position("id");
        self.seen.push(table);
        self.totals.tables += 1;
        self.pending = Some(Pending {
            table,
            columns: ordered,
            owner,
            id,
            rows: Vec::new(),
        });
        Ok(())
    }

    /// A row of the current table, its cells in the order its table line named the columns.
    pub async fn row(&mut self, values: &[serde_json::Value]) -> Result<(), ImportError> {
        let Some(pending) = &mut self.pending else {
            return Err(ImportError::Invalid("a row before any table".into()));
        };
        let table = pending.table;
        if values.len() != pending.columns.len() {
            return Err(ImportError::Invalid(format!(
                "{table}: a row of {} cells for {} columns",
                values.len(),
                pending.columns.len()
            )));
        }
        let mut cells = Vec::with_capacity(values.len());
        for ((name, kind), value) in pending.columns.iter().zip(values) {
            cells.push(cell_from_json(*kind, value).map_err(|expected| {
                ImportError::Invalid(format!("{table}: {name}: expected {expected}"))
            })?);
        }
        // Every row is the archive's merchant's: an archive never writes another merchant's.
        let owned = match (&cells[pending.owner], BY_FAMILY.contains(&table)) {
            (Cell::Text(family), true) => self.families.contains(family),
            (owner, _) => *owner == Cell::Int(self.merchant_id),
        };
        if table == "oauth_families" {
            if let Some(Cell::Text(family)) = pending.id.map(|i| &cells[i]) {
                self.families.insert(family.clone());
            }
        }
        if !owned {
            return Err(ImportError::Invalid(format!(
                "{table}: a row of another merchant than the header's {}",
                self.merchant_id
            )));
        }
        if let Some(Cell::Int(id)) = pending.id.map(|i| &cells[i]) {
            let (low, high) = self.ids.unwrap_or((*id, *id));
            self.ids = Some((low.min(*id), high.max(*id)));
        }
        pending.rows.push(cells);
        self.totals.rows += 1;
        if pending.rows.len() * pending.columns.len() >= CELLS_PER_STATEMENT {
            self.flush().await?;
        }
        Ok(())
    }

    /// Ends the import: the end line's counts must be those read. Moves this database's id
    /// allocator past the archive's ids, and commits.
    pub async fn finish(mut self, sent: Totals) -> Result<Totals, ImportError> {
        self.flush().await?;
        if sent != self.totals {
            return Err(ImportError::Invalid(format!(
                "the end line counts {} tables and {} rows; the archive held {} and {}",
                sent.tables, sent.rows, self.totals.tables, self.totals.rows
            )));
        }
        if !self.seen.contains(&"merchants") {
            return Err(ImportError::Invalid("the archive holds no merchant".into()));
        }
        if let Some((low, high)) = self.ids {
            self.reserve_ids(low, high).await?;
        }
        if let Some(moving) = self.moving.as_ref().filter(|m| !m.between_pods) {
            sqlx::query(
                "INSERT INTO merchants_moved_in (merchant_id, source, ids_through, moved_at) \
                 VALUES ($1, $2, $3, $4)",
            )
            .bind(self.merchant_id)
            .bind(&moving.source)
            .bind(moving.ids_through)
            .bind(now_millis())
            .execute(self.tx.conn()?)
            .await?;
        }
        self.tx.note_write();
        let totals = self.totals;
        self.tx.commit().await?;
        Ok(totals)
    }

    /// In a fleet: this pod hands out ids `from..to`, and other pods' ids are theirs alone, so
    /// an archive of another pod's ids leaves this pod's allocator where it is.
    pub fn ids_of_pod(&mut self, from: i64, to: i64) {
        self.own_range = Some((from, to));
    }

    /// Undoes everything imported so far.
    pub async fn abandon(self) -> Result<(), DbError> {
        self.tx.rollback().await
    }

    /// Ids are unique across the database and kept by the import, so every id the archive
    /// holds must be one this database has not handed out (blocks of it may be held unused by
    /// any replica): the archive's least id at or past the allocator's next. The allocator
    /// then moves past its greatest. A move checked its target before it began
    /// ([`Db::check_move_target`]); its allocator moves past every id the source handed out.
    async fn reserve_ids(&mut self, low: i64, high: i64) -> Result<(), ImportError> {
        if self.moving.as_ref().is_some_and(|m| m.between_pods) {
            return Ok(());
        }
        if let Some((from, to)) = self.own_range {
            if high < from || low >= to {
                // Another pod's ids: this pod's allocator never hands them out.
                return Ok(());
            }
            if low < from || high >= to {
                return Err(ImportError::Conflict(format!(
                    "the archive's ids run from {low} to {high}, across this pod's range from \
                     {from} to {}: import it into another pod",
                    to - 1
                )));
            }
        }
        let backend = self.tx.backend();
        let conn = self.tx.conn()?;
        let next = allocator_next(conn, backend).await?;
        if self.moving.is_none() && low < next {
            return Err(ImportError::Conflict(format!(
                "the archive's ids run from {low} to {high}, and this database has handed out \
                 ids up to {}: import into a database whose ids are all below the archive's \
                 (an empty one)",
                next - 1
            )));
        }
        let high = match &self.moving {
            Some(moving) => high.max(moving.ids_through),
            None => high,
        };
        if high < next {
            return Ok(());
        }
        match backend {
            Backend::Postgres => {
                sqlx::query("SELECT setval('global_id_seq', $1, true)")
                    .bind(high)
                    .execute(&mut *conn)
                    .await?;
            }
            Backend::Sqlite => {
                // An archive's id is its sender's word: the greatest possible one has no next.
                let next = high.checked_add(1).ok_or_else(|| {
                    ImportError::Invalid(format!("an id of {high} leaves no id after it"))
                })?;
                sqlx::query("UPDATE id_allocator SET next_id = $1 WHERE k = 1")
                    .bind(next)
                    .execute(&mut *conn)
                    .await?;
            }
        }
        Ok(())
    }

    /// Inserts the current table's gathered rows in one statement. A row a unique key of this
    /// database already has (an application's client id, a file's name) is a conflict.
    async fn flush(&mut self) -> Result<(), ImportError> {
        let Some(pending) = &mut self.pending else {
            return Ok(());
        };
        if pending.rows.is_empty() {
            return Ok(());
        }
        let width = pending.columns.len();
        let names: Vec<&str> = pending.columns.iter().map(|(n, _)| n.as_str()).collect();
        // Positional `?` on SQLite (see `value_tuples`): a statement here binds thousands.
        let sql = format!(
            "INSERT INTO {} ({}) VALUES {}",
            pending.table,
            names.join(", "),
            value_tuples(self.tx.conn()?, pending.rows.len(), width)
        );
        let mut query = sqlx::query(&sql);
        for row in &pending.rows {
            for (cell, (_, kind)) in row.iter().zip(&pending.columns) {
                query = bind_cell(query, cell, *kind);
            }
        }
        let table = pending.table;
        pending.rows.clear();
        match query.execute(self.tx.conn()?).await {
            Ok(_) => Ok(()),
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                Err(ImportError::Conflict(format!(
                    "{table}: a row holds a key this database already has ({})",
                    e.message()
                )))
            }
            Err(e) => Err(ImportError::Db(e.into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_survive_their_json_form_exactly() {
        let cells = [
            (Kind::Int, Cell::Int(i64::MIN)),
            (Kind::Real, Cell::Real(0.1 + 0.2)),
            (Kind::Real, Cell::Real(f64::MAX)),
            (Kind::Text, Cell::Text("é \"quoted\"\n".into())),
            (Kind::Bytes, Cell::Bytes(vec![0, 255, 10, 13])),
            (Kind::Text, Cell::Null),
        ];
        for (kind, cell) in cells {
            assert_eq!(cell_from_json(kind, &cell_json(&cell)), Ok(cell));
        }
        let text = serde_json::json!("1");
        assert_eq!(cell_from_json(Kind::Int, &text), Err("an integer"));
        let bad = serde_json::json!("not base64!");
        assert_eq!(cell_from_json(Kind::Bytes, &bad), Err("base64 data"));
    }

    #[test]
    fn lines_written_are_lines_read() {
        use domain::fleet::archive::Line;
        let names = vec!["id".to_owned(), "name".to_owned()];
        let table = Line::parse(&table_line("products", &names));
        assert_eq!(
            table,
            Ok(Line::Table {
                table: "products".into(),
                columns: names
            })
        );
        let totals = Totals { tables: 2, rows: 5 };
        assert_eq!(Line::parse(&end_line(totals)), Ok(Line::End(totals)));
    }
}
