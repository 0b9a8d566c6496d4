//! Uploaded files (`/uploader`, `GET /files/{fileName}`), content-addressed by SHA-256.
//!
//! The same bytes are stored once, whoever uploads them; the row keeps the merchant of the first
//! upload for accounting. Files are public by design (their names are unguessable hashes), so
//! reading one needs no merchant.

use std::time::Instant;

use super::{Db, DbError};

/// A file to store. `file_name` is `<sha256>.<ext>`.
#[derive(Clone, Debug)]
pub struct NewFile<'a> {
    pub sha256: &'a str,
    pub file_name: &'a str,
    pub content_type: &'a str,
    pub data: &'a [u8],
    pub merchant_id: i64,
    /// The use the uploader named (`contentType` header), if any.
    pub purpose: Option<&'a str>,
}

/// A stored file as served.
#[derive(Clone, Debug)]
pub struct StoredFile {
    pub content_type: String,
    pub data: Vec<u8>,
}

impl Db {
    /// Stores a file unless the same bytes are already stored (then nothing changes).
    pub async fn put_file(&self, file: &NewFile<'_>, now: i64) -> Result<(), DbError> {
        let started = Instant::now();
        sqlx::query(
            "INSERT INTO files (sha256, file_name, content_type, size, data, merchant_id, purpose, \
             created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
             ON CONFLICT (sha256) DO NOTHING",
        )
        .bind(file.sha256)
        .bind(file.file_name)
        .bind(file.content_type)
        .bind(file.data.len() as i64)
        .bind(file.data)
        .bind(file.merchant_id)
        .bind(file.purpose)
        .bind(now)
        .execute(&self.pool)
        .await?;
        self.observe("put_file", started);
        Ok(())
    }

    /// The file stored under `file_name`, if any.
    pub async fn file(&self, file_name: &str) -> Result<Option<StoredFile>, DbError> {
        let started = Instant::now();
        let row: Option<(String, Vec<u8>)> =
            sqlx::query_as("SELECT content_type, data FROM files WHERE file_name = $1")
                .bind(file_name)
                .fetch_optional(&self.pool)
                .await?;
        self.observe("file", started);
        Ok(row.map(|(content_type, data)| StoredFile { content_type, data }))
    }
}
