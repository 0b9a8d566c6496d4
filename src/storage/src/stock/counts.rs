//! Stock counts with their counted products and surplus entries, and the wastage basket a
//! completing count books (written in the same transaction).

use std::collections::HashMap;

use sqlx::AnyConnection;

use crate::rows::{self, TableRow};
use crate::{Backend, DbError, Tx};
use domain::stock::count::{CountLine, StockReconciliation, SurplusEntry};

/// The counts matching `clause` (as for `rows::select`) with their lines and surplus entries.
pub async fn select_counts(
    conn: &mut AnyConnection,
    backend: Backend,
    merchant_id: i64,
    clause: &str,
    binds: &[i64],
) -> Result<Vec<StockReconciliation>, DbError> {
    let mut counts: Vec<StockReconciliation> =
        rows::select(conn, backend, merchant_id, clause, binds).await?;
    if counts.is_empty() {
        return Ok(counts);
    }
    let of_counts = format!(
        "reconciliation_id IN (SELECT id FROM stock_reconciliations WHERE merchant_id = $1 {clause})"
    );
    let line_clause = format!("AND {of_counts}");
    let query = rows::Select {
        columns: CountLine::COLUMNS,
        json_columns: &[],
        from: CountLine::TABLE,
        clause: &line_clause,
        order: "reconciliation_id, product_id",
    };
    let mut all = vec![merchant_id];
    all.extend_from_slice(binds);
    let lines = rows::select_json(conn, backend, query, &all, CountLine::from_row).await?;
    let mut lines_of = by_count(lines, |l| l.reconciliation_id);
    let entries: Vec<SurplusEntry> =
        rows::select(conn, backend, merchant_id, &line_clause, binds).await?;
    let mut entries_of = by_count(entries, |e| e.reconciliation_id);
    for c in &mut counts {
        c.lines = lines_of.remove(&c.id).unwrap_or_default();
        c.surplus_entries = entries_of.remove(&c.id).unwrap_or_default();
    }
    Ok(counts)
}

/// `items` grouped by the count they belong to (`count_of`), in their order.
fn by_count<T>(items: Vec<T>, count_of: impl Fn(&T) -> i64) -> HashMap<i64, Vec<T>> {
    let mut of: HashMap<i64, Vec<T>> = HashMap::new();
    for item in items {
        of.entry(count_of(&item)).or_default().push(item);
    }
    of
}

/// Writes a count and replaces its lines. A count is written completed exactly once (it never
/// changes afterwards), so that write also stores the surplus entries it booked (its wastage
/// basket is a basket of the same write, stored before it: the count refers to it).
impl Tx {
    pub(crate) async fn persist_count(
        &mut self,
        merchant_id: i64,
        count: &StockReconciliation,
        is_new: bool,
    ) -> Result<(), DbError> {
        self.write_row(merchant_id, count, is_new).await?;
        let conn = self.conn()?;
        if !is_new {
            sqlx::query(
            "DELETE FROM stock_reconciliation_lines WHERE merchant_id = $1 AND reconciliation_id = $2",
        )
        .bind(merchant_id)
        .bind(count.id)
        .execute(&mut *conn)
        .await?;
        }
        let lines: Vec<_> = count.lines.iter().collect();
        rows::insert_many(conn, merchant_id, &lines).await?;
        if count.completed {
            let entries: Vec<_> = count.surplus_entries.iter().collect();
            rows::insert_many(conn, merchant_id, &entries).await?;
        }
        Ok(())
    }
}
