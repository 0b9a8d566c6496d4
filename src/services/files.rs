//! Uploaded files, content-addressed and public.

use super::Services;
use crate::domain::file::{NewFile, StoredFile};
use crate::domain::Failure;

impl Services {
    /// Stores a file unless the same bytes are stored already.
    pub async fn put_file(&self, file: &NewFile<'_>, now: i64) -> Result<(), Failure> {
        Ok(self.db.put_file(file, now).await?)
    }

    /// Stores a file within the merchant's storage quota (`0`: none); `Err` with the bytes its
    /// files hold when this one would take it past the quota, nothing stored.
    pub async fn put_file_within(
        &self,
        file: &NewFile<'_>,
        now: i64,
        quota: u64,
    ) -> Result<Result<(), u64>, Failure> {
        if quota == 0 {
            self.put_file(file, now).await?;
            return Ok(Ok(()));
        }
        Ok(match self.db.put_file_within(file, now, quota).await? {
            None => Ok(()),
            Some(held) => Err(held),
        })
    }

    pub async fn file(&self, file_name: &str) -> Result<Option<StoredFile>, Failure> {
        Ok(self.db.file(file_name).await?)
    }
}
