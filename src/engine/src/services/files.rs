//! Uploaded files, content-addressed and public.

use crate::services::Services;
use domain::file::{NewFile, StoredFile};
use domain::Failure;

impl Services {
    /// Stores a file unless the same bytes are stored already.
    pub async fn put_file(&self, file: &NewFile<'_>, now: i64) -> Result<(), Failure> {
        Ok(self.storage.put_file(file, now).await?)
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
        let stored = self.storage.put_file_within(file, now, quota).await?;
        Ok(match stored {
            None => Ok(()),
            Some(held) => Err(held),
        })
    }

    pub async fn file(&self, file_name: &str) -> Result<Option<StoredFile>, Failure> {
        Ok(self.storage.file(file_name).await?)
    }
}
