//! Uploaded files, content-addressed and public.

use super::Services;
use crate::domain::file::{NewFile, StoredFile};
use crate::domain::Failure;

impl Services {
    /// Stores a file unless the same bytes are stored already.
    pub async fn put_file(&self, file: &NewFile<'_>, now: i64) -> Result<(), Failure> {
        Ok(self.db.put_file(file, now).await?)
    }

    pub async fn file(&self, file_name: &str) -> Result<Option<StoredFile>, Failure> {
        Ok(self.db.file(file_name).await?)
    }
}
