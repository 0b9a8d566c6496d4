//! The ledgers a merchant's state keeps over all its history: units given back per sale line,
//! money given back per payment,
//! the last receipt number per register.

use std::collections::BTreeMap;

use crate::{Db, DbError};
use domain::sales::basket::ReturnOf;

impl Db {
    /// Sale line → units the return lines of live baskets (open or completed) give back.
    pub async fn returned_units(&self, merchant_id: i64) -> Result<BTreeMap<i64, i64>, DbError> {
        let rows: Vec<(String, i64)> = sqlx::query_as(
            "SELECT l.return_of, l.quantity FROM basket_lines l \
             JOIN baskets b ON b.merchant_id = l.merchant_id AND b.id = l.basket_id \
             WHERE l.merchant_id = $1 AND l.return_of IS NOT NULL AND b.delete_date IS NULL",
        )
        .bind(merchant_id)
        .fetch_all(self.pool())
        .await?;
        let mut returned = BTreeMap::new();
        for (text, quantity) in rows {
            let of: ReturnOf = serde_json::from_str(&text)
                .map_err(|e| DbError::Corrupt(format!("basket line return_of {text}: {e}")))?;
            *returned.entry(of.line_id).or_insert(0) -= quantity;
        }
        Ok(returned)
    }

    /// Payment → what the live refunds naming it give back.
    pub async fn refunded_amounts(&self, merchant_id: i64) -> Result<Vec<(i64, i64)>, DbError> {
        let rows: Vec<(i64, i64)> = sqlx::query_as(
            "SELECT refund_of, CAST(SUM(amount) AS BIGINT) FROM transactions \
             WHERE merchant_id = $1 AND refund_of IS NOT NULL AND delete_date IS NULL \
             GROUP BY refund_of",
        )
        .bind(merchant_id)
        .fetch_all(self.pool())
        .await?;
        Ok(rows)
    }

    /// The last receipt number each of `registers` gave (registers without a sale left out):
    /// one index seek per register, however long the history.
    pub async fn last_receipts(
        &self,
        merchant_id: i64,
        registers: &[i64],
    ) -> Result<Vec<(i64, i64)>, DbError> {
        let mut last = Vec::new();
        for &register in registers {
            let number: Option<i64> = sqlx::query_scalar(
                "SELECT MAX(receipt_number) FROM baskets \
                 WHERE merchant_id = $1 AND register_id = $2 AND receipt_number IS NOT NULL",
            )
            .bind(merchant_id)
            .bind(register)
            .fetch_one(self.pool())
            .await?;
            if let Some(n) = number {
                last.push((register, n));
            }
        }
        Ok(last)
    }
}
