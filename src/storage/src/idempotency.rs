//! Stored answers of writes sent with an `Idempotency-Key` (migration 0014).

use sqlx::AnyConnection;

use crate::{Db, DbError, Tx};
use domain::batch::{Idempotency, StoredAnswer, IDEMPOTENCY_TTL_MILLIS};

async fn find(
    conn: &mut AnyConnection,
    merchant_id: i64,
    key: &Idempotency,
    now: i64,
) -> Result<Option<StoredAnswer>, DbError> {
    let row: Option<(String, String)> = sqlx::query_as(
        "SELECT fingerprint, answer FROM idempotency_keys \
         WHERE merchant_id = $1 AND application_id = $2 AND idem_key = $3 AND expires_at > $4",
    )
    .bind(merchant_id)
    .bind(key.application_id)
    .bind(&key.key)
    .bind(now)
    .fetch_optional(conn)
    .await?;
    Ok(row.map(|(fingerprint, answer)| StoredAnswer {
        fingerprint,
        answer,
    }))
}

impl Db {
    /// The live answer stored for a key, if any.
    pub async fn stored_answer(
        &self,
        merchant_id: i64,
        key: &Idempotency,
        now: i64,
    ) -> Result<Option<StoredAnswer>, DbError> {
        let mut conn = self.pool().acquire().await?;
        find(&mut conn, merchant_id, key, now).await
    }

    /// Deletes the answers that expired before `now`.
    pub async fn prune_idempotency_keys(&self, now: i64) -> Result<u64, DbError> {
        let mut tx = self.begin().await?;
        let done = sqlx::query("DELETE FROM idempotency_keys WHERE expires_at <= $1")
            .bind(now)
            .execute(tx.conn()?)
            .await?;
        tx.commit().await?;
        Ok(done.rows_affected())
    }
}

impl Tx {
    /// As [`Db::stored_answer`], inside this transaction (under the merchant's claim).
    pub async fn stored_answer(
        &mut self,
        merchant_id: i64,
        key: &Idempotency,
        now: i64,
    ) -> Result<Option<StoredAnswer>, DbError> {
        find(self.conn()?, merchant_id, key, now).await
    }

    /// Keeps a write's answer with the write. An expired answer under the same key is
    /// replaced.
    pub async fn store_answer(
        &mut self,
        merchant_id: i64,
        key: &Idempotency,
        answer: &str,
        now: i64,
    ) -> Result<(), DbError> {
        sqlx::query(
            "INSERT INTO idempotency_keys \
             (merchant_id, application_id, idem_key, fingerprint, answer, created_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) \
             ON CONFLICT (merchant_id, application_id, idem_key) DO UPDATE SET \
             fingerprint = excluded.fingerprint, answer = excluded.answer, \
             created_at = excluded.created_at, expires_at = excluded.expires_at",
        )
        .bind(merchant_id)
        .bind(key.application_id)
        .bind(&key.key)
        .bind(&key.fingerprint)
        .bind(answer)
        .bind(now)
        .bind(now + IDEMPOTENCY_TTL_MILLIS)
        .execute(self.conn()?)
        .await?;
        Ok(())
    }
}
