//! Products with their instances: two tables written in the caller's transaction.

use crate::rows;
use crate::{DbError, Tx};
use domain::catalogue::product::ProductRecord;

impl Tx {
    /// Writes a product row and its instances (new ones inserted, dropped ones marked deleted).
    pub(crate) async fn persist_product(
        &mut self,
        merchant_id: i64,
        product: &ProductRecord,
        is_new: bool,
    ) -> Result<(), DbError> {
        self.write_row(merchant_id, product, is_new).await?;
        let conn = self.conn()?;
        let stored: std::collections::HashMap<i64, Option<i64>> = if is_new {
            Default::default()
        } else {
            sqlx::query_as::<_, (i64, Option<i64>)>(
            "SELECT id, delete_date FROM product_instances WHERE merchant_id = $1 AND product_id = $2",
        )
        .bind(merchant_id)
        .bind(product.id)
        .fetch_all(&mut *conn)
        .await?
        .into_iter()
        .collect()
        };
        for instance in &product.instances {
            match stored.get(&instance.id) {
                None => rows::insert(conn, merchant_id, instance).await?,
                Some(deleted) if *deleted != instance.delete_date => {
                    rows::update(conn, merchant_id, instance).await?
                }
                Some(_) => {}
            }
        }
        Ok(())
    }
}
