//! Merchants and their employees as the token's user sees them (`/merchant`, `/user`).

use super::{Store, StoreError};

#[derive(Debug, Clone)]
pub struct MerchantRecord {
    pub id: i64,
    pub name: String,
}

#[derive(Debug, Clone)]
pub struct EmployeeRecord {
    pub id: i64,
    pub merchant_id: i64,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub email: String,
    pub role_id: i64,
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

    /// An employee of `merchant_id` (never of another merchant).
    pub async fn employee(
        &self,
        merchant_id: i64,
        id: i64,
    ) -> Result<Option<EmployeeRecord>, StoreError> {
        type Row = (i64, i64, Option<String>, Option<String>, String, i64);
        let row: Option<Row> = sqlx::query_as(
            "SELECT id, merchant_id, first_name, last_name, email, role_id FROM employees \
             WHERE merchant_id = $1 AND id = $2",
        )
        .bind(merchant_id)
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(
            |(id, merchant_id, first_name, last_name, email, role_id)| EmployeeRecord {
                id,
                merchant_id,
                first_name,
                last_name,
                email,
                role_id,
            },
        ))
    }
}
