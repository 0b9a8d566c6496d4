//! Stock levels of one store.

use std::collections::BTreeMap;

use super::{Store, StoreError};

/// Units received (`total`) and units that left in completed baskets (`sold`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StockLevel {
    pub total: i64,
    pub sold: i64,
}

impl StockLevel {
    pub fn left(&self) -> i64 {
        self.total - self.sold
    }
}

impl Store {
    /// Every product's stock at a store of a merchant.
    pub async fn load_stock(
        &self,
        merchant_id: i64,
        store_id: i64,
    ) -> Result<BTreeMap<i64, StockLevel>, StoreError> {
        let rows: Vec<(i64, i64, i64)> = sqlx::query_as(
            "SELECT product_id, total_stock, stock_sold FROM stock_levels \
             WHERE merchant_id = $1 AND store_id = $2",
        )
        .bind(merchant_id)
        .bind(store_id)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(product, total, sold)| (product, StockLevel { total, sold }))
            .collect())
    }
}
