//! An archive into this database: one write transaction, every id kept, rows inserted in
//! multi-row statements as the lines come.

use super::{
    allocator_next, bind_cell, cell_from_json, columns, owner_column, ImportError, MoveFrom,
    BY_FAMILY, CELLS_PER_STATEMENT, CREDENTIALS, TABLES,
};

use crate::rows::value_tuples;
use crate::{Backend, Db, DbError, Tx};
use domain::fleet::archive::{Cell, Header, Kind, Totals};
use domain::now_millis;

impl Db {
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
