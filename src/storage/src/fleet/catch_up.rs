//! A move's catch-up between pods (PostgreSQL only): the rows of a merchant that changed in
//! the source since a copy was taken, written into the target's copy, so the move's write hold
//! lasts as long as the changes take, not the whole merchant.
//!
//! A row changed since the copy is one whose version was written by a transaction the copy's
//! snapshot did not see: its `xmin`, widened to 64 bits, is not visible in the snapshot taken
//! before the copy began (`txid_visible_in_snapshot`). Those rows are upserted by primary key,
//! parents first. Rows deleted since show as a count that differs: the target's rows the
//! source no longer has are deleted, children first. Then every table's count must match, and
//! each row written must read back as sent.

use std::collections::HashSet;

use sqlx::Row;

use crate::fleet::archive_rows::{bind_cell, cell, columns, owner_filter, CREDENTIALS, TABLES};
use crate::{Db, DbError, Tx};
use domain::fleet::archive::{Cell, Kind};

/// `xmin` as a 64-bit transaction id (`txid`), from the current epoch: an id above the
/// snapshot's horizon's low 32 bits belongs to the epoch before. The horizon is a subquery,
/// read once per statement rather than three times per row (a sixth of a count's time).
const XMIN64: &str = "(CASE WHEN xmin::text::bigint <= \
     ((SELECT txid_snapshot_xmax(txid_current_snapshot())) & 4294967295) \
     THEN (((SELECT txid_snapshot_xmax(txid_current_snapshot())) >> 32) << 32) \
          | xmin::text::bigint \
     ELSE ((((SELECT txid_snapshot_xmax(txid_current_snapshot())) >> 32) - 1) << 32) \
          | xmin::text::bigint END)";

/// What a catch-up wrote.
#[derive(Debug, Clone, Copy, Default)]
pub struct CaughtUp {
    /// Rows written (inserted or updated).
    pub written: u64,
    /// Rows deleted.
    pub deleted: u64,
}

impl Db {
    /// Where the database stands now, for [`Db::catch_up_into`]: every transaction committed
    /// after this mark is one the mark does not see.
    pub async fn change_mark(&self) -> Result<String, DbError> {
        let (mark,): (String,) = sqlx::query_as("SELECT txid_current_snapshot()::text")
            .fetch_one(self.pool())
            .await?;
        Ok(mark)
    }

    /// The tables a catch-up follows, with their columns and keys: read before the hold.
    pub async fn catch_up_plan(&self) -> Result<Plan, DbError> {
        let mut shapes = Vec::with_capacity(TABLES.len() + CREDENTIALS.len());
        for &table in TABLES.iter().chain(CREDENTIALS.iter()) {
            shapes.push(Shape::of(self, table).await?);
        }
        Ok(Plan { shapes })
    }

    /// Writes into `target` the merchant's rows that changed here since `mark`, while it is
    /// written as usual, so that the catch-up under the hold has only what changed during
    /// this one to write. Read in one snapshot (a row's parent is there with it); returns
    /// that snapshot, the mark for the next catch-up, and how many rows were written.
    /// Deletions and counts are left to [`Db::catch_up_into`], which must follow.
    pub async fn catch_up_ahead(
        &self,
        target: &Db,
        merchant_id: i64,
        mark: &str,
        plan: &Plan,
    ) -> Result<(String, u64), DbError> {
        let shapes = &plan.shapes;
        let mut conn = self.pool().acquire().await?;
        let mut snapshot = sqlx::Connection::begin(&mut *conn).await?;
        sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            .execute(&mut *snapshot)
            .await?;
        // The snapshot's first statement fixes it: what it does not see, the next mark does not.
        let (next,): (String,) = sqlx::query_as("SELECT txid_current_snapshot()::text")
            .fetch_one(&mut *snapshot)
            .await?;
        let (_, changed) = counts(&mut snapshot, shapes, merchant_id, Some(mark)).await?;
        let mut tx = target.begin().await?;
        let written = write_changed(
            &mut snapshot,
            &mut tx,
            shapes,
            &changed,
            (merchant_id, mark),
        )
        .await?;
        for (shape, rows) in shapes.iter().zip(&written) {
            check_written(&mut tx, shape, rows).await?;
        }
        tx.commit().await?;
        snapshot.rollback().await?;
        Ok((next, written.iter().map(|rows| rows.len() as u64).sum()))
    }

    /// Writes into `target` (one transaction) the merchant's rows that changed here since
    /// `mark`, and deletes there the rows deleted here; then checks that every table holds as
    /// many rows on both sides and that each written row reads back as sent. The tables
    /// without changes cost one counting query for all of them.
    pub async fn catch_up_into(
        &self,
        target: &Db,
        merchant_id: i64,
        mark: &str,
        plan: &Plan,
    ) -> Result<CaughtUp, DbError> {
        let shapes = &plan.shapes;
        let mut conn = self.pool().acquire().await?;
        // Held, the merchant's rows stay as counted here (one scan finds both).
        let (here, changed) = counts(&mut conn, shapes, merchant_id, Some(mark)).await?;
        let mut tx = target.begin().await?;
        let written =
            write_changed(&mut conn, &mut tx, shapes, &changed, (merchant_id, mark)).await?;
        let mut done = CaughtUp {
            written: written.iter().map(|rows| rows.len() as u64).sum(),
            deleted: 0,
        };
        let (there, _) = counts(tx.conn()?, shapes, merchant_id, None).await?;
        for i in (0..shapes.len()).rev() {
            if here[i] != there[i] {
                done.deleted += self
                    .delete_gone(&mut tx, &shapes[i], merchant_id, here[i])
                    .await?;
            }
            check_written(&mut tx, &shapes[i], &written[i]).await?;
        }
        tx.commit().await?;
        Ok(done)
    }

    /// Deletes from the target's copy of the table the rows this database no longer has (it
    /// holds `here` of them); how many. Only called when the counts differ.
    async fn delete_gone(
        &self,
        tx: &mut Tx,
        shape: &Shape,
        merchant_id: i64,
        here: i64,
    ) -> Result<u64, DbError> {
        let count = format!(
            "SELECT COUNT(*) FROM {} WHERE {}",
            shape.table,
            owner_filter(shape.table)
        );
        if shape.key.is_empty() {
            return self.replace_all(tx, shape, merchant_id, here).await;
        }
        let keys = format!(
            "SELECT {} FROM {} WHERE {}",
            shape.key_names().join(", "),
            shape.table,
            owner_filter(shape.table)
        );
        let kept: HashSet<Vec<KeyCell>> = sqlx::query(&keys)
            .bind(merchant_id)
            .fetch_all(self.pool())
            .await?
            .iter()
            .map(|row| shape.key_of(row))
            .collect::<Result<_, _>>()?;
        let theirs: Vec<Vec<KeyCell>> = sqlx::query(&keys)
            .bind(merchant_id)
            .fetch_all(tx.conn()?)
            .await?
            .iter()
            .map(|row| shape.key_of(row))
            .collect::<Result<_, _>>()?;
        let mut deleted = 0;
        for key in theirs.into_iter().filter(|k| !kept.contains(k)) {
            let sql = format!(
                "DELETE FROM {} WHERE {}",
                shape.table,
                shape.key_condition(1)
            );
            let mut query = sqlx::query(&sql);
            for part in &key {
                query = part.bind(query);
            }
            deleted += query.execute(tx.conn()?).await?.rows_affected();
        }
        let (after,): (i64,) = sqlx::query_as(&count)
            .bind(merchant_id)
            .fetch_one(tx.conn()?)
            .await?;
        if after != here {
            return Err(DbError::Corrupt(format!(
                "{}: {here} rows in the source, {after} in the copy after the catch-up",
                shape.table
            )));
        }
        Ok(deleted)
    }
}

impl Db {
    /// A table without a key (an append-only ledger) whose rows differ in number: the copy's
    /// rows of the merchant are replaced by this database's.
    async fn replace_all(
        &self,
        tx: &mut Tx,
        shape: &Shape,
        merchant_id: i64,
        here: i64,
    ) -> Result<u64, DbError> {
        let filter = owner_filter(shape.table);
        let deleted = sqlx::query(&format!("DELETE FROM {} WHERE {filter}", shape.table))
            .bind(merchant_id)
            .execute(tx.conn()?)
            .await?
            .rows_affected();
        let sql = format!(
            "SELECT {} FROM {} WHERE {filter}",
            shape.names().join(", "),
            shape.table
        );
        let rows = sqlx::query(&sql)
            .bind(merchant_id)
            .fetch_all(self.pool())
            .await?;
        for row in &rows {
            upsert(tx, shape, &shape.cells(row)?).await?;
        }
        if rows.len() as i64 != here {
            return Err(DbError::Corrupt(format!(
                "{}: {here} rows counted, {} read",
                shape.table,
                rows.len()
            )));
        }
        Ok(deleted)
    }
}

/// Writes into `tx` the rows of each table that `changed` counts any of, read through `conn`:
/// the merchant's rows written since the mark; the rows written, table by table.
async fn write_changed(
    conn: &mut sqlx::AnyConnection,
    tx: &mut Tx,
    shapes: &[Shape],
    changed: &[i64],
    (merchant_id, mark): (i64, &str),
) -> Result<Vec<Vec<Vec<Cell>>>, DbError> {
    let mut written = vec![Vec::new(); shapes.len()];
    for ((shape, &n), slot) in shapes.iter().zip(changed).zip(written.iter_mut()) {
        if n == 0 {
            continue;
        }
        let rows = changed_rows(conn, shape, merchant_id, mark).await?;
        for row in &rows {
            upsert(tx, shape, row).await?;
        }
        *slot = rows;
    }
    Ok(written)
}

/// The merchant's rows of the table written since `mark`.
async fn changed_rows(
    conn: &mut sqlx::AnyConnection,
    shape: &Shape,
    merchant_id: i64,
    mark: &str,
) -> Result<Vec<Vec<Cell>>, DbError> {
    let sql = format!(
        "SELECT {} FROM {} WHERE {} AND NOT txid_visible_in_snapshot({XMIN64}, \
         CAST($2 AS txid_snapshot))",
        shape.names().join(", "),
        shape.table,
        owner_filter(shape.table)
    );
    let rows = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(mark)
        .fetch_all(&mut *conn)
        .await?;
    rows.iter().map(|row| shape.cells(row)).collect()
}

/// What [`Db::catch_up_into`] follows: each table's shape.
pub struct Plan {
    shapes: Vec<Shape>,
}

/// The merchant's rows in each table and, of those, the rows written since `mark` (all of
/// them without one), in one query that reads each table's rows once.
async fn counts(
    conn: &mut sqlx::AnyConnection,
    shapes: &[Shape],
    merchant_id: i64,
    since: Option<&str>,
) -> Result<(Vec<i64>, Vec<i64>), DbError> {
    let changed = match since {
        Some(_) => format!(
            "COUNT(*) FILTER (WHERE NOT txid_visible_in_snapshot({XMIN64}, \
             CAST($2 AS txid_snapshot)))"
        ),
        None => "COUNT(*)".to_owned(),
    };
    let parts: Vec<String> = shapes
        .iter()
        .enumerate()
        .map(|(i, shape)| {
            format!(
                "SELECT CAST({i} AS BIGINT), COUNT(*), {changed} FROM {} WHERE {}",
                shape.table,
                owner_filter(shape.table)
            )
        })
        .collect();
    let sql = parts.join(" UNION ALL ");
    let mut query = sqlx::query_as::<_, (i64, i64, i64)>(&sql).bind(merchant_id);
    if let Some(mark) = since {
        query = query.bind(mark);
    }
    let mut all = vec![0; shapes.len()];
    let mut since_mark = vec![0; shapes.len()];
    for (i, n, changed) in query.fetch_all(&mut *conn).await? {
        if let Ok(i) = usize::try_from(i) {
            if let (Some(a), Some(c)) = (all.get_mut(i), since_mark.get_mut(i)) {
                (*a, *c) = (n, changed);
            }
        }
    }
    Ok((all, since_mark))
}

/// A table's columns and primary key (none for an append-only ledger).
struct Shape {
    table: &'static str,
    columns: Vec<(String, Kind)>,
    /// Positions of the primary key's columns in `columns`.
    key: Vec<usize>,
    /// The statement that writes one row (see [`upsert`]).
    upsert: String,
}

impl Shape {
    async fn of(db: &Db, table: &'static str) -> Result<Self, DbError> {
        let mut conn = db.pool().acquire().await?;
        let columns = columns(&mut conn, db.backend(), table).await?;
        let key_names: Vec<(String,)> = sqlx::query_as(
            "SELECT a.attname::text FROM pg_index i JOIN pg_attribute a \
             ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) \
             WHERE i.indrelid = CAST($1 AS regclass) AND i.indisprimary",
        )
        .bind(table)
        .fetch_all(&mut *conn)
        .await?;
        let key: Vec<usize> = key_names
            .iter()
            .filter_map(|(name,)| columns.iter().position(|(c, _)| c == name))
            .collect();
        if key.len() != key_names.len() {
            return Err(DbError::Corrupt(format!(
                "{table}: a primary key column is not among its columns"
            )));
        }
        let mut shape = Self {
            table,
            columns,
            key,
            upsert: String::new(),
        };
        shape.upsert = upsert_sql(table, &shape.names(), &shape.key_names());
        Ok(shape)
    }

    fn names(&self) -> Vec<&str> {
        self.columns.iter().map(|(n, _)| n.as_str()).collect()
    }

    fn key_names(&self) -> Vec<&str> {
        self.key
            .iter()
            .map(|&i| self.columns[i].0.as_str())
            .collect()
    }

    fn cells(&self, row: &sqlx::any::AnyRow) -> Result<Vec<Cell>, DbError> {
        (0..self.columns.len())
            .map(|i| cell(row, i, self.columns[i].1))
            .collect()
    }

    /// The key of a row read with only the key's columns.
    fn key_of(&self, row: &sqlx::any::AnyRow) -> Result<Vec<KeyCell>, DbError> {
        self.key
            .iter()
            .enumerate()
            .map(|(at, &i)| KeyCell::read(row, at, self.columns[i].1))
            .collect()
    }

    /// `k1 = $first AND k2 = $first+1 ...`
    fn key_condition(&self, first: usize) -> String {
        self.key_names()
            .iter()
            .enumerate()
            .map(|(n, name)| format!("{name} = ${}", first + n))
            .collect::<Vec<_>>()
            .join(" AND ")
    }
}

/// A primary key's cell: keys are integers or text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum KeyCell {
    Int(i64),
    Text(String),
}

impl KeyCell {
    fn read(row: &sqlx::any::AnyRow, i: usize, kind: Kind) -> Result<Self, DbError> {
        Ok(match kind {
            Kind::Int => KeyCell::Int(row.try_get(i)?),
            _ => KeyCell::Text(row.try_get(i)?),
        })
    }

    fn of(cell: &Cell) -> Result<Self, DbError> {
        match cell {
            Cell::Int(n) => Ok(KeyCell::Int(*n)),
            Cell::Text(s) => Ok(KeyCell::Text(s.clone())),
            other => Err(DbError::Corrupt(format!("a key cell of {other:?}"))),
        }
    }

    fn bind<'q>(
        &self,
        query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    ) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
        match self {
            KeyCell::Int(n) => query.bind(*n),
            KeyCell::Text(s) => query.bind(s.clone()),
        }
    }
}

/// Inserts the row, or updates the row with its key (a table without one only gains rows).
async fn upsert(tx: &mut Tx, shape: &Shape, row: &[Cell]) -> Result<(), DbError> {
    let mut query = sqlx::query(&shape.upsert);
    for (value, (_, kind)) in row.iter().zip(&shape.columns) {
        query = bind_cell(query, value, *kind);
    }
    query.execute(tx.conn()?).await?;
    Ok(())
}

/// The statement [`upsert`] runs for a table's rows.
fn upsert_sql(table: &str, names: &[&str], keys: &[&str]) -> String {
    let placeholders: Vec<String> = (1..=names.len()).map(|i| format!("${i}")).collect();
    let updates: Vec<String> = names
        .iter()
        .filter(|n| !keys.contains(n))
        .map(|n| format!("{n} = excluded.{n}"))
        .collect();
    let on_conflict = match (keys.is_empty(), updates.is_empty()) {
        (true, _) => String::new(),
        (false, true) => format!(" ON CONFLICT ({}) DO NOTHING", keys.join(", ")),
        (false, false) => format!(
            " ON CONFLICT ({}) DO UPDATE SET {}",
            keys.join(", "),
            updates.join(", ")
        ),
    };
    format!(
        "INSERT INTO {table} ({}) VALUES ({}){on_conflict}",
        names.join(", "),
        placeholders.join(", ")
    )
}

/// Reads each written row back from the target by its key: it must be as sent.
async fn check_written(tx: &mut Tx, shape: &Shape, written: &[Vec<Cell>]) -> Result<(), DbError> {
    if shape.key.is_empty() {
        // Found by the count, checked in `delete_gone`.
        return Ok(());
    }
    let sql = format!(
        "SELECT {} FROM {} WHERE {}",
        shape.names().join(", "),
        shape.table,
        shape.key_condition(1)
    );
    for row in written {
        let mut query = sqlx::query(&sql);
        for &i in &shape.key {
            query = KeyCell::of(&row[i])?.bind(query);
        }
        let back = query.fetch_optional(tx.conn()?).await?;
        let same = match back {
            Some(back) => shape.cells(&back)? == *row,
            None => false,
        };
        if !same {
            return Err(DbError::Corrupt(format!(
                "{}: a row caught up reads back differently",
                shape.table
            )));
        }
    }
    Ok(())
}
