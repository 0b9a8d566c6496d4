//! Logs (`/log`), always within one merchant.

use crate::services::Services;
use domain::log::{LogChange, LogRecord, NewLog};
use domain::Failure;

impl Services {
    /// Files a new log.
    pub async fn insert_log(
        &self,
        merchant_id: i64,
        log: &NewLog<'_>,
        now: i64,
    ) -> Result<LogRecord, Failure> {
        Ok(self.storage.insert_log(merchant_id, log, now).await?)
    }

    /// Changes a log; `None` when the merchant has no such log.
    pub async fn update_log(
        &self,
        merchant_id: i64,
        log_id: &str,
        change: &LogChange<'_>,
        now: i64,
    ) -> Result<Option<LogRecord>, Failure> {
        Ok(self
            .storage
            .update_log(merchant_id, log_id, change, now)
            .await?)
    }

    /// Deletes a log; false when the merchant has no such log.
    pub async fn delete_log(&self, merchant_id: i64, log_id: &str) -> Result<bool, Failure> {
        Ok(self.storage.delete_log(merchant_id, log_id).await?)
    }

    pub async fn log(&self, merchant_id: i64, log_id: &str) -> Result<Option<LogRecord>, Failure> {
        Ok(self.storage.log(merchant_id, log_id).await?)
    }

    pub async fn logs_of(
        &self,
        merchant_id: i64,
        object: &str,
        identifier: &str,
    ) -> Result<Vec<LogRecord>, Failure> {
        Ok(self
            .storage
            .logs_of(merchant_id, object, identifier)
            .await?)
    }
}
