//! The sales running totals (docs/sales-report.md): rows added to by each completing
//! transaction, and read by `GET /report/sales` over a range of local days or hours.

use crate::{rows, Db, DbError, Tx};
use domain::sales::totals::{Deltas, GroupColumn, Totals, TotalsKey, TotalsRange};

fn column(by: GroupColumn) -> &'static str {
    match by {
        GroupColumn::Store => "store_id",
        GroupColumn::Register => "register_id",
        GroupColumn::Employee => "employee_id",
        GroupColumn::Item => "item",
    }
}

/// Rows upserted by one statement at most (thirteen values each).
const ROWS_PER_STATEMENT: usize = 500;

impl Tx {
    /// Adds the deltas to their rows: one upsert per row, as few statements as binds allow.
    pub async fn add_sales_totals(
        &mut self,
        merchant_id: i64,
        deltas: &Deltas,
    ) -> Result<(), DbError> {
        if deltas.is_empty() {
            return Ok(());
        }
        let all: Vec<(&TotalsKey, &Totals)> = deltas.iter().collect();
        let conn = self.conn()?;
        for chunk in all.chunks(ROWS_PER_STATEMENT) {
            let sql = format!(
                "INSERT INTO sales_totals (merchant_id, hourly, dimension, bucket, store_id, item, \
                 register_id, employee_id, count, quantity, amount, tax, discount) VALUES {} \
                 ON CONFLICT (merchant_id, hourly, dimension, bucket, store_id, item, register_id, \
                 employee_id) DO UPDATE SET count = sales_totals.count + excluded.count, \
                 quantity = sales_totals.quantity + excluded.quantity, \
                 amount = sales_totals.amount + excluded.amount, \
                 tax = sales_totals.tax + excluded.tax, \
                 discount = sales_totals.discount + excluded.discount",
                rows::value_tuples(conn, chunk.len(), 13)
            );
            let mut query = sqlx::query(&sql);
            for (k, t) in chunk {
                query = query
                    .bind(merchant_id)
                    .bind(i64::from(k.hourly))
                    .bind(k.dimension.as_str())
                    .bind(k.bucket)
                    .bind(k.store_id)
                    .bind(k.item.as_str())
                    .bind(k.register_id)
                    .bind(k.employee_id)
                    .bind(t.count)
                    .bind(t.quantity)
                    .bind(t.amount)
                    .bind(t.tax)
                    .bind(t.discount);
            }
            query.execute(&mut *conn).await?;
        }
        Ok(())
    }
}

type Row = (i64, i64, String, i64, i64, i64, i64, i64, i64, i64);

impl Db {
    /// The rows of one dimension over a range of buckets, for the stores named (every store
    /// when none), summed by bucket and the range's column: an index range, whatever the
    /// history holds outside it. Columns not grouped by hold one of the summed rows' values.
    pub async fn sales_totals(
        &self,
        range: &TotalsRange<'_>,
    ) -> Result<Vec<(TotalsKey, Totals)>, DbError> {
        let sum = |c: &str| format!("CAST(SUM({c}) AS BIGINT)");
        let mut sql = format!(
            "SELECT bucket, MIN(store_id), MIN(item), MIN(register_id), MIN(employee_id), {}, {}, \
             {}, {}, {} FROM sales_totals WHERE merchant_id = $1 AND hourly = $2 \
             AND dimension = $3 AND bucket >= $4 AND bucket < $5",
            sum("count"),
            sum("quantity"),
            sum("amount"),
            sum("tax"),
            sum("discount")
        );
        if let Some(stores) = range.stores {
            let list: Vec<String> = stores.iter().map(i64::to_string).collect();
            sql.push_str(&format!(" AND store_id IN ({})", list.join(",")));
        }
        sql.push_str(&format!(" GROUP BY bucket, {}", column(range.by)));
        let rows: Vec<Row> = sqlx::query_as(&sql)
            .bind(range.merchant_id)
            .bind(i64::from(range.hourly))
            .bind(range.dimension.as_str())
            .bind(range.from)
            .bind(range.to)
            .fetch_all(self.pool())
            .await?;
        Ok(rows
            .into_iter()
            .map(
                |(
                    bucket,
                    store_id,
                    item,
                    register_id,
                    employee_id,
                    count,
                    quantity,
                    amount,
                    tax,
                    discount,
                )| {
                    let key = TotalsKey {
                        hourly: range.hourly,
                        dimension: range.dimension,
                        bucket,
                        store_id,
                        item,
                        register_id,
                        employee_id,
                    };
                    (
                        key,
                        Totals {
                            count,
                            quantity,
                            amount,
                            tax,
                            discount,
                        },
                    )
                },
            )
            .collect())
    }
}
