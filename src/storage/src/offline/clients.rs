//! Look-ups for sales tills made offline (docs/offline.md).

use crate::{Db, DbError};

/// `clientId`s bound per statement.
const CHUNK: usize = 200;

impl Db {
    /// The records of `table` (baskets or transactions) whose `clientId` is one of
    /// `client_ids`: one seek each in the unique index `(merchant_id, client_id)`, however
    /// long the history.
    pub async fn made_by_clients(
        &self,
        table: &'static str,
        merchant_id: i64,
        client_ids: &[String],
    ) -> Result<Vec<i64>, DbError> {
        let mut found = Vec::new();
        for chunk in client_ids.chunks(CHUNK) {
            let marks: Vec<String> = (0..chunk.len()).map(|i| format!("${}", i + 2)).collect();
            let sql = format!(
                "SELECT id FROM {table} WHERE merchant_id = $1 AND client_id IN ({})",
                marks.join(", ")
            );
            let mut query = sqlx::query_scalar::<_, i64>(&sql).bind(merchant_id);
            for client in chunk {
                query = query.bind(client.as_str());
            }
            found.extend(query.fetch_all(self.pool()).await?);
        }
        Ok(found)
    }
}
