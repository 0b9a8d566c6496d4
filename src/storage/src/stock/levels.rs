//! Stock levels of one store.

use std::collections::BTreeMap;

use crate::{rows, Db, DbError, Tx};

pub use domain::stock::levels::{Ledger, Movement, StockLevel, StockMove, MAX_MOVEMENTS};

/// Stock rows upserted by one statement at most (five values each).
const MOVES_PER_STATEMENT: usize = 1_000;

impl Tx {
    /// Adds moves to the stored levels: one upsert per product and store, as few statements as
    /// the bind limit allows (a stock count of thousands of products is a few statements, not
    /// thousands).
    pub async fn apply_stock_moves(
        &mut self,
        merchant_id: i64,
        moves: &[StockMove],
        now: i64,
    ) -> Result<(), DbError> {
        self.record_movements(merchant_id, moves, now).await?;
        // One row per key: PostgreSQL refuses to upsert a row twice in one statement.
        let mut summed: BTreeMap<(i64, i64), StockLevel> = BTreeMap::new();
        for m in moves {
            let level = summed.entry((m.store_id, m.product_id)).or_default();
            level.total += m.total;
            level.sold += m.sold;
        }
        let summed: Vec<_> = summed.into_iter().collect();
        let conn = self.conn()?;
        for chunk in summed.chunks(MOVES_PER_STATEMENT) {
            let sql = format!(
                "INSERT INTO stock_levels (merchant_id, store_id, product_id, total_stock, stock_sold) \
                 VALUES {} \
                 ON CONFLICT (merchant_id, store_id, product_id) DO UPDATE SET \
                 total_stock = stock_levels.total_stock + excluded.total_stock, \
                 stock_sold = stock_levels.stock_sold + excluded.stock_sold",
                rows::value_tuples(conn, chunk.len(), 5)
            );
            let mut query = sqlx::query(&sql);
            for ((store_id, product_id), level) in chunk {
                query = query
                    .bind(merchant_id)
                    .bind(*store_id)
                    .bind(*product_id)
                    .bind(level.total)
                    .bind(level.sold);
            }
            query.execute(&mut *conn).await?;
        }
        Ok(())
    }
}

impl Tx {
    /// The ledger's rows of these moves, each as it happened (`at`) and arrived (`now`): one
    /// multi-row insert per statement's worth.
    async fn record_movements(
        &mut self,
        merchant_id: i64,
        moves: &[StockMove],
        now: i64,
    ) -> Result<(), DbError> {
        let conn = self.conn()?;
        for chunk in moves.chunks(MOVES_PER_STATEMENT) {
            let sql = format!(
                "INSERT INTO stock_movements (merchant_id, store_id, product_id, occurred_at, \
                 arrived_at, reason, source_id, quantity) VALUES {}",
                rows::value_tuples(conn, chunk.len(), 8)
            );
            let mut query = sqlx::query(&sql);
            for m in chunk {
                query = query
                    .bind(merchant_id)
                    .bind(m.store_id)
                    .bind(m.product_id)
                    .bind(m.at)
                    .bind(now)
                    .bind(m.reason.as_str())
                    .bind(m.source_id)
                    .bind(m.quantity());
            }
            query.execute(&mut *conn).await?;
        }
        Ok(())
    }
}

impl Db {
    /// The ledger of `products` over `[from, to)`: each (store, product)'s level at `from`,
    /// and the movements between in the order they happened. `None` when more than
    /// [`MAX_MOVEMENTS`] fall in the range.
    pub async fn stock_ledger(
        &self,
        merchant_id: i64,
        products: &[i64],
        (from, to): (i64, i64),
    ) -> Result<Option<Ledger>, DbError> {
        let mut ledger = Ledger::default();
        for chunk in products.chunks(500) {
            let marks: Vec<String> = (0..chunk.len()).map(|i| format!("${}", i + 3)).collect();
            let sql = format!(
                "SELECT store_id, product_id, CAST(SUM(quantity) AS BIGINT) FROM stock_movements \
                 WHERE merchant_id = $1 AND occurred_at < $2 AND product_id IN ({}) \
                 GROUP BY store_id, product_id",
                marks.join(", ")
            );
            let mut query = sqlx::query_as::<_, (i64, i64, i64)>(&sql)
                .bind(merchant_id)
                .bind(from);
            for p in chunk {
                query = query.bind(*p);
            }
            ledger.opening.extend(query.fetch_all(self.pool()).await?);
            let marks: Vec<String> = (0..chunk.len()).map(|i| format!("${}", i + 4)).collect();
            let sql = format!(
                "SELECT store_id, product_id, occurred_at, arrived_at, reason, source_id, quantity \
                 FROM stock_movements WHERE merchant_id = $1 AND occurred_at >= $2 \
                 AND occurred_at < $3 AND product_id IN ({}) \
                 ORDER BY occurred_at, arrived_at, source_id LIMIT {}",
                marks.join(", "),
                MAX_MOVEMENTS + 1
            );
            let mut query = sqlx::query_as::<_, (i64, i64, i64, i64, String, i64, i64)>(&sql)
                .bind(merchant_id)
                .bind(from)
                .bind(to);
            for p in chunk {
                query = query.bind(*p);
            }
            for (store_id, product_id, occurred_at, arrived_at, reason, source_id, quantity) in
                query.fetch_all(self.pool()).await?
            {
                ledger.movements.push(Movement {
                    store_id,
                    product_id,
                    occurred_at,
                    arrived_at,
                    reason,
                    source_id,
                    quantity,
                });
            }
            if ledger.movements.len() > MAX_MOVEMENTS {
                return Ok(None);
            }
        }
        ledger
            .movements
            .sort_by_key(|m| (m.occurred_at, m.arrived_at, m.source_id));
        Ok(Some(ledger))
    }

    /// Every store's stock of a merchant, by store and product (one query at activation).
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn load_merchant_stock(
        &self,
        merchant_id: i64,
    ) -> Result<BTreeMap<i64, BTreeMap<i64, StockLevel>>, DbError> {
        let mut by_store: BTreeMap<i64, BTreeMap<i64, StockLevel>> = BTreeMap::new();
        for (store, product, level) in self.stock_rows(merchant_id, "", &[]).await? {
            by_store.entry(store).or_default().insert(product, level);
        }
        Ok(by_store)
    }

    /// Every product's stock at a store of a merchant.
    pub async fn load_stock(
        &self,
        merchant_id: i64,
        store_id: i64,
    ) -> Result<BTreeMap<i64, StockLevel>, DbError> {
        let rows = self
            .stock_rows(merchant_id, "AND store_id = $2", &[store_id])
            .await?;
        Ok(rows
            .into_iter()
            .map(|(_, product, level)| (product, level))
            .collect())
    }

    /// (store, product, level) of the stock rows matching `clause`, in one aggregated read.
    async fn stock_rows(
        &self,
        merchant_id: i64,
        clause: &str,
        binds: &[i64],
    ) -> Result<Vec<(i64, i64, StockLevel)>, DbError> {
        const COLUMNS: &[&str] = &["store_id", "product_id", "total_stock", "stock_sold"];
        let query = rows::Select {
            columns: COLUMNS,
            json_columns: &[],
            from: "stock_levels",
            clause,
            order: "store_id, product_id",
        };
        let mut all = vec![merchant_id];
        all.extend_from_slice(binds);
        let mut conn = self.pool().acquire().await?;
        rows::select_json(&mut conn, self.backend(), query, &all, |row| {
            Ok((
                rows::get(row, "store_id")?,
                rows::get(row, "product_id")?,
                StockLevel {
                    total: rows::get(row, "total_stock")?,
                    sold: rows::get(row, "stock_sold")?,
                },
            ))
        })
        .await
    }
}
