//! Merchants as the token's user sees them (`/merchant`).

use crate::{Db, DbError};

use domain::fleet::merchant::MerchantRecord;
use domain::sales::pricing::SaleSettings;

impl Db {
    /// The version of the merchant's data: the number of write transactions committed for it.
    /// Read before the rest of a load, so a load is never labelled newer than what it read.
    /// [`DbError::Moved`] once it moved to another pod (a load then follows it there).
    pub async fn merchant_version(&self, id: i64) -> Result<i64, DbError> {
        let row: Option<(i64, Option<String>)> =
            sqlx::query_as("SELECT version, moved_to FROM merchants WHERE id = $1")
                .bind(id)
                .fetch_optional(self.pool())
                .await?;
        match row {
            Some((version, None)) => Ok(version),
            Some((_, Some(pod))) => Err(DbError::Moved(pod)),
            None => Err(DbError::Conflict(format!("merchant {id} does not exist"))),
        }
    }

    /// How the merchant's sales are priced (its manifest's `[sales]`, as JSON).
    pub async fn merchant_sales(&self, id: i64) -> Result<SaleSettings, DbError> {
        let row: Option<(String,)> = sqlx::query_as("SELECT sales FROM merchants WHERE id = $1")
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        let (text,) =
            row.ok_or_else(|| DbError::Conflict(format!("merchant {id} does not exist")))?;
        serde_json::from_str(&text)
            .map_err(|e| DbError::Corrupt(format!("merchant {id}'s sales settings: {e}")))
    }

    /// The id of the merchant a manifest key names (the command line names merchants so).
    pub async fn merchant_id_by_key(&self, key: &str) -> Result<i64, DbError> {
        let row: Option<(i64,)> =
            sqlx::query_as("SELECT id FROM merchants WHERE manifest_key = $1")
                .bind(key)
                .fetch_optional(self.pool())
                .await?;
        row.map(|(id,)| id)
            .ok_or_else(|| DbError::Conflict(format!("no merchant has the key {key}")))
    }

    /// The manifest key of merchant `id`, if there is one.
    pub async fn merchant_key(&self, id: i64) -> Result<Option<String>, DbError> {
        let row: Option<(String,)> =
            sqlx::query_as("SELECT manifest_key FROM merchants WHERE id = $1")
                .bind(id)
                .fetch_optional(self.pool())
                .await?;
        Ok(row.map(|(key,)| key))
    }

    /// Every merchant's id, in order.
    pub async fn merchant_ids(&self) -> Result<Vec<i64>, DbError> {
        let rows: Vec<(i64,)> = sqlx::query_as("SELECT id FROM merchants ORDER BY id")
            .fetch_all(self.pool())
            .await?;
        Ok(rows.into_iter().map(|(id,)| id).collect())
    }

    pub async fn merchant(&self, id: i64) -> Result<Option<MerchantRecord>, DbError> {
        let row: Option<(i64, String)> =
            sqlx::query_as("SELECT id, name FROM merchants WHERE id = $1")
                .bind(id)
                .fetch_optional(self.pool())
                .await?;
        Ok(row.map(|(id, name)| MerchantRecord { id, name }))
    }

    /// Sets the password hash of the live employee with this email (of the merchant with this
    /// manifest key, when given). Refuses an email that names no one, or several merchants'
    /// employees without a key.
    pub async fn set_password(
        &self,
        email: &str,
        merchant_key: Option<&str>,
        hash: &str,
    ) -> Result<i64, DbError> {
        let mut tx = self.begin().await?;
        let candidates: Vec<(i64, i64, String)> = sqlx::query_as(
            "SELECT e.merchant_id, e.id, m.manifest_key FROM employees e \
             JOIN merchants m ON m.id = e.merchant_id \
             WHERE e.email = $1 AND e.delete_date IS NULL",
        )
        .bind(email)
        .fetch_all(tx.conn()?)
        .await?;
        let chosen: Vec<_> = candidates
            .into_iter()
            .filter(|(_, _, key)| merchant_key.is_none_or(|k| k == key))
            .collect();
        let (merchant_id, id) = match chosen.as_slice() {
            [(merchant_id, id, _)] => (*merchant_id, *id),
            [] => {
                return Err(DbError::Conflict(format!(
                    "no live employee has the email {email}"
                )))
            }
            _ => {
                return Err(DbError::Conflict(format!(
                    "{email} belongs to employees of several merchants; name one with --merchant"
                )))
            }
        };
        sqlx::query("UPDATE employees SET password_hash = $1 WHERE merchant_id = $2 AND id = $3")
            .bind(hash)
            .bind(merchant_id)
            .bind(id)
            .execute(tx.conn()?)
            .await?;
        tx.commit().await?;
        Ok(id)
    }
}
