//! The basket report's indexed queries (the figures are computed in `domain::sales::report`):
//! completed `sale` baskets of the range (`baskets_store_completed`, or `baskets_completed`
//! over every store) with their lines, completed payments and frozen receipts.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use rust_decimal::Decimal;
use sqlx::AnyConnection;

use crate::{Db, DbError};
use domain::money;
use domain::sales::report::{
    BasketReport, BasketRow, LineRow, PaymentRow, ReceiptFigures, ReportRange,
};

fn stored_decimal(text: &str) -> Result<Decimal, DbError> {
    money::parse_stored(text).map_err(DbError::Corrupt)
}

/// The SQL of a report's range: its completed sale baskets (the type itself is the domain's
/// question).
#[allow(async_fn_in_trait)]
trait RangeSql {
    fn filter(&self) -> String;
    fn bind<'q, O>(
        &self,
        query: sqlx::query::QueryAs<'q, sqlx::Any, O, sqlx::any::AnyArguments<'q>>,
    ) -> sqlx::query::QueryAs<'q, sqlx::Any, O, sqlx::any::AnyArguments<'q>>;
    async fn baskets(&self, conn: &mut AnyConnection) -> Result<Vec<BasketRow>, DbError>;
    async fn lines(&self, conn: &mut AnyConnection) -> Result<Vec<LineRow>, DbError>;
    async fn payments(&self, conn: &mut AnyConnection) -> Result<Vec<PaymentRow>, DbError>;
}

impl RangeSql for ReportRange<'_> {
    /// The WHERE clause over `baskets b`; its placeholders are bound by [`Range::bind`].
    fn filter(&self) -> String {
        let mut sql = String::from(
            "b.merchant_id = $1 AND b.basket_type = 'sale' AND b.completed = 1 \
             AND b.complete_date >= $2 AND b.complete_date < $3",
        );
        if let Some(stores) = self.stores {
            let marks: Vec<String> = (0..stores.len()).map(|i| format!("${}", i + 4)).collect();
            sql.push_str(&format!(" AND b.store_id IN ({})", marks.join(", ")));
        }
        sql
    }

    fn bind<'q, O>(
        &self,
        mut query: sqlx::query::QueryAs<'q, sqlx::Any, O, sqlx::any::AnyArguments<'q>>,
    ) -> sqlx::query::QueryAs<'q, sqlx::Any, O, sqlx::any::AnyArguments<'q>> {
        query = query.bind(self.merchant_id).bind(self.from).bind(self.to);
        for store in self.stores.into_iter().flatten() {
            query = query.bind(*store);
        }
        query
    }

    async fn baskets(&self, conn: &mut AnyConnection) -> Result<Vec<BasketRow>, DbError> {
        let sql = format!(
            "SELECT b.id, b.store_id, b.complete_date, b.total, b.total_tax, b.receipt \
             FROM baskets b WHERE {}",
            self.filter()
        );
        let rows: Vec<(i64, i64, i64, String, String, Option<String>)> = self
            .bind(sqlx::query_as(&sql))
            .fetch_all(&mut *conn)
            .await?;
        rows.into_iter()
            .map(|(id, store_id, complete_date, total, tax, receipt)| {
                let receipt = receipt
                    .map(|json| {
                        serde_json::from_str::<ReceiptFigures>(&json)
                            .map_err(|e| DbError::Corrupt(format!("basket {id}: its receipt: {e}")))
                    })
                    .transpose()?;
                Ok(BasketRow {
                    id,
                    store_id,
                    complete_date,
                    total: stored_decimal(&total)?,
                    total_tax: stored_decimal(&tax)?,
                    receipt,
                })
            })
            .collect()
    }

    async fn lines(&self, conn: &mut AnyConnection) -> Result<Vec<LineRow>, DbError> {
        let sql = format!(
            "SELECT l.basket_id, l.product_id, l.quantity, l.price, \
             CAST(CASE WHEN l.return_of IS NULL THEN 0 ELSE 1 END AS BIGINT) FROM baskets b \
             JOIN basket_lines l ON l.merchant_id = b.merchant_id AND l.basket_id = b.id \
             WHERE {}",
            self.filter()
        );
        let rows: Vec<(i64, i64, i64, String, i64)> = self
            .bind(sqlx::query_as(&sql))
            .fetch_all(&mut *conn)
            .await?;
        rows.into_iter()
            .map(|(basket_id, product_id, quantity, price, linked)| {
                Ok(LineRow {
                    basket_id,
                    product_id,
                    quantity,
                    price: stored_decimal(&price)?,
                    linked: linked != 0,
                })
            })
            .collect()
    }

    async fn payments(&self, conn: &mut AnyConnection) -> Result<Vec<PaymentRow>, DbError> {
        let sql = format!(
            // A linked refund gives its amount back: it counts against its type.
            "SELECT t.basket_id, t.payment_type, \
             CASE WHEN t.refund_of IS NULL THEN t.amount ELSE -t.amount END, t.tip, \
             CAST(CASE WHEN t.refund_of IS NULL THEN 0 ELSE 1 END AS BIGINT) FROM baskets b \
             JOIN transactions t ON t.merchant_id = b.merchant_id AND t.basket_id = b.id \
             WHERE {} AND t.completed = 1 AND t.delete_date IS NULL",
            self.filter()
        );
        let rows: Vec<(i64, String, i64, i64, i64)> = self
            .bind(sqlx::query_as(&sql))
            .fetch_all(&mut *conn)
            .await?;
        Ok(rows
            .into_iter()
            .map(
                |(basket_id, payment_type, amount, tip, refund)| PaymentRow {
                    basket_id,
                    payment_type,
                    amount,
                    tip,
                    refund: refund != 0,
                },
            )
            .collect())
    }
}

impl Db {
    /// The basket report of a merchant over `[from, to)` (epoch milliseconds), at `stores`
    /// when given, else at every store.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn basket_report(&self, range: &ReportRange<'_>) -> Result<BasketReport, DbError> {
        let started = Instant::now();
        let mut conn = self.pool().acquire().await?;
        let baskets = range.baskets(&mut conn).await?;
        let (lines, payments) = if baskets.is_empty() {
            (Vec::new(), Vec::new())
        } else {
            (
                range.lines(&mut conn).await?,
                range.payments(&mut conn).await?,
            )
        };
        let wanted: HashSet<i64> = baskets.iter().map(|b| b.store_id).collect();
        let zones: Vec<(i64, String)> =
            sqlx::query_as("SELECT id, timezone FROM stores WHERE merchant_id = $1")
                .bind(range.merchant_id)
                .fetch_all(&mut *conn)
                .await?;
        let timezones: HashMap<i64, String> = zones
            .into_iter()
            .filter(|(id, _)| wanted.contains(id))
            .collect();
        self.observe("basket_report", started);
        Ok(BasketReport::from_rows(
            &baskets, &lines, &payments, &timezones,
        ))
    }
}
