//! Merchants as the token's user sees them (`/merchant`).

use super::{Store, StoreError};

#[derive(Debug, Clone)]
pub struct MerchantRecord {
    pub id: i64,
    pub name: String,
}

impl Store {
    pub async fn merchant(&self, id: i64) -> Result<Option<MerchantRecord>, StoreError> {
        let row: Option<(i64, String)> =
            sqlx::query_as("SELECT id, name FROM merchants WHERE id = $1")
                .bind(id)
                .fetch_optional(&self.pool)
                .await?;
        Ok(row.map(|(id, name)| MerchantRecord { id, name }))
    }
}
