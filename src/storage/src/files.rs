//! Uploaded files (`/uploader`, `GET /files/{fileName}`), content-addressed by SHA-256.
//!
//! Each merchant's files are its own rows: the same bytes uploaded again by the same merchant
//! change nothing, and uploaded by another are that merchant's row under the same name (either
//! serves it), so deleting, moving or counting one merchant's files never touches another's
//! (migration 0033). Files are public by design (their names are unguessable hashes), so
//! reading one needs no merchant.

use std::time::Instant;

use crate::{Db, DbError, Tx};

use domain::file::{NewFile, StoredFile};

impl Db {
    /// Stores a file unless the merchant stored the same bytes already (then nothing changes).
    pub async fn put_file(&self, file: &NewFile<'_>, now: i64) -> Result<(), DbError> {
        let mut tx = self.begin().await?;
        tx.stay_with(file.merchant_id).await?;
        tx.put_file(file, now).await?;
        tx.commit().await
    }

    /// Like [`Db::put_file`], unless the merchant's files would then hold more than `quota`
    /// bytes: `Ok(Some(held))`, what they hold now, and nothing is stored. Bytes the merchant
    /// stored already add nothing. The check and the insert are one transaction that no other
    /// upload of the merchant runs beside: SQLite's one writer runs it alone, and on
    /// PostgreSQL it holds a lock of the merchant's uploads (a transaction-scoped advisory lock
    /// keyed by the merchant's id, the only advisory lock merchantd takes) until it commits.
    /// So uploads at once never take a merchant past its quota together.
    pub async fn put_file_within(
        &self,
        file: &NewFile<'_>,
        now: i64,
        quota: u64,
    ) -> Result<Option<u64>, DbError> {
        let mut tx = self.begin().await?;
        tx.stay_with(file.merchant_id).await?;
        let stored: Option<(i64,)> =
            sqlx::query_as("SELECT size FROM files WHERE merchant_id = $1 AND sha256 = $2")
                .bind(file.merchant_id)
                .bind(file.sha256)
                .fetch_optional(tx.conn()?)
                .await?;
        if stored.is_none() {
            let (held,): (i64,) = sqlx::query_as(
                "SELECT CAST(COALESCE(SUM(size), 0) AS BIGINT) FROM files WHERE merchant_id = $1",
            )
            .bind(file.merchant_id)
            .fetch_one(tx.conn()?)
            .await?;
            let held = u64::try_from(held).unwrap_or(0);
            if held.saturating_add(file.data.len() as u64) > quota {
                tx.rollback().await?;
                return Ok(Some(held));
            }
        }
        tx.put_file(file, now).await?;
        tx.commit().await?;
        Ok(None)
    }

    /// The file stored under `file_name`, if any.
    pub async fn file(&self, file_name: &str) -> Result<Option<StoredFile>, DbError> {
        let started = Instant::now();
        let row: Option<(String, Vec<u8>)> =
            sqlx::query_as("SELECT content_type, data FROM files WHERE file_name = $1 LIMIT 1")
                .bind(file_name)
                .fetch_optional(self.pool())
                .await?;
        self.observe("file", started);
        Ok(row.map(|(content_type, data)| StoredFile { content_type, data }))
    }
}

impl Tx {
    pub async fn put_file(&mut self, file: &NewFile<'_>, now: i64) -> Result<(), DbError> {
        let started = Instant::now();
        sqlx::query(
            "INSERT INTO files (sha256, file_name, content_type, size, data, merchant_id, purpose, \
             created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
             ON CONFLICT (merchant_id, sha256) DO NOTHING",
        )
        .bind(file.sha256)
        .bind(file.file_name)
        .bind(file.content_type)
        .bind(file.data.len() as i64)
        .bind(file.data)
        .bind(file.merchant_id)
        .bind(file.purpose)
        .bind(now)
        .execute(self.conn()?)
        .await?;
        self.db().observe("put_file", started);
        Ok(())
    }
}
