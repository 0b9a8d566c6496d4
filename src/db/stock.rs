//! Stock levels of one store.

use std::collections::BTreeMap;

use super::{Db, DbError, Tx};

pub use crate::domain::stock::{StockLevel, StockMove};

impl Tx {
    /// Adds moves to the stored levels.
    pub async fn apply_stock_moves(
        &mut self,
        merchant_id: i64,
        moves: &[StockMove],
    ) -> Result<(), DbError> {
        let conn = self.conn()?;
        for m in moves {
            sqlx::query(
            "INSERT INTO stock_levels (merchant_id, store_id, product_id, total_stock, stock_sold) \
             VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (merchant_id, store_id, product_id) DO UPDATE SET \
             total_stock = stock_levels.total_stock + excluded.total_stock, \
             stock_sold = stock_levels.stock_sold + excluded.stock_sold",
        )
        .bind(merchant_id)
        .bind(m.store_id)
        .bind(m.product_id)
        .bind(m.total)
        .bind(m.sold)
        .execute(&mut *conn)
        .await?;
        }
        Ok(())
    }
}

impl Db {
    /// Every store's stock of a merchant, by store and product (one query at activation).
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn load_merchant_stock(
        &self,
        merchant_id: i64,
    ) -> Result<BTreeMap<i64, BTreeMap<i64, StockLevel>>, DbError> {
        let rows: Vec<(i64, i64, i64, i64)> = sqlx::query_as(
            "SELECT store_id, product_id, total_stock, stock_sold FROM stock_levels \
             WHERE merchant_id = $1",
        )
        .bind(merchant_id)
        .fetch_all(self.pool())
        .await?;
        let mut by_store: BTreeMap<i64, BTreeMap<i64, StockLevel>> = BTreeMap::new();
        for (store, product, total, sold) in rows {
            by_store
                .entry(store)
                .or_default()
                .insert(product, StockLevel { total, sold });
        }
        Ok(by_store)
    }

    /// Every product's stock at a store of a merchant.
    pub async fn load_stock(
        &self,
        merchant_id: i64,
        store_id: i64,
    ) -> Result<BTreeMap<i64, StockLevel>, DbError> {
        let rows: Vec<(i64, i64, i64)> = sqlx::query_as(
            "SELECT product_id, total_stock, stock_sold FROM stock_levels \
             WHERE merchant_id = $1 AND store_id = $2",
        )
        .bind(merchant_id)
        .bind(store_id)
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(|(product, total, sold)| (product, StockLevel { total, sold }))
            .collect())
    }
}
