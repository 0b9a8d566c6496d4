//! Logs (`/log`): small JSON documents an application files under an object key.
//!
//! A log is keyed by `(merchant_id, log_id)`; every statement filters by the merchant, so another
//! merchant's log id is an id that does not exist. The id is `"<object>-<identifier>:<n>"`, with
//! `n` taken from the merchant's row in `log_counters` in the same transaction as the insert.

use std::time::Instant;

use crate::{Db, DbError, Tx};
use domain::log::{LogChange, LogRecord, NewLog};

const COLUMNS: &str = "log_id, n, object, identifier, tags, data, added_date, complete_date";

pub(crate) type Row = (
    String,
    i64,
    String,
    String,
    String,
    String,
    i64,
    Option<i64>,
);

pub(crate) fn record(row: Row) -> LogRecord {
    let (log_id, n, object, identifier, tags, data, added_date, complete_date) = row;
    LogRecord {
        log_id,
        n,
        object,
        identifier,
        tags,
        data,
        added_date,
        complete_date,
    }
}

impl Db {
    /// One log of `merchant_id` (never another merchant's).
    pub async fn log(&self, merchant_id: i64, log_id: &str) -> Result<Option<LogRecord>, DbError> {
        let started = Instant::now();
        let row: Option<Row> = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM logs WHERE merchant_id = $1 AND log_id = $2"
        ))
        .bind(merchant_id)
        .bind(log_id)
        .fetch_optional(self.pool())
        .await?;
        self.observe("log", started);
        Ok(row.map(record))
    }

    /// The logs of `merchant_id` filed under `object` and `identifier`, oldest first.
    pub async fn logs_of(
        &self,
        merchant_id: i64,
        object: &str,
        identifier: &str,
    ) -> Result<Vec<LogRecord>, DbError> {
        let started = Instant::now();
        let rows: Vec<Row> = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM logs WHERE merchant_id = $1 AND object = $2 \
             AND identifier = $3 ORDER BY n"
        ))
        .bind(merchant_id)
        .bind(object)
        .bind(identifier)
        .fetch_all(self.pool())
        .await?;
        self.observe("logs_of", started);
        Ok(rows.into_iter().map(record).collect())
    }
}

impl Tx {
    /// Files a new log for `merchant_id`; the counter and the row are written in one transaction.
    pub async fn insert_log(
        &mut self,
        merchant_id: i64,
        log: &NewLog<'_>,
        now: i64,
    ) -> Result<LogRecord, DbError> {
        let started = Instant::now();
        let (n,): (i64,) = sqlx::query_as(
            "INSERT INTO log_counters (merchant_id, last_n) VALUES ($1, 1) \
             ON CONFLICT (merchant_id) DO UPDATE SET last_n = log_counters.last_n + 1 \
             RETURNING last_n",
        )
        .bind(merchant_id)
        .fetch_one(self.conn()?)
        .await?;
        let record = LogRecord {
            log_id: format!("{}-{}:{n}", log.object, log.identifier),
            n,
            object: log.object.to_owned(),
            identifier: log.identifier.to_owned(),
            tags: log.tags.to_owned(),
            data: log.data.to_owned(),
            added_date: now,
            complete_date: log.completed.then_some(now),
        };
        sqlx::query(
            "INSERT INTO logs (merchant_id, log_id, n, object, identifier, tags, data, added_date, \
             complete_date, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        )
        .bind(merchant_id)
        .bind(&record.log_id)
        .bind(n)
        .bind(&record.object)
        .bind(&record.identifier)
        .bind(&record.tags)
        .bind(&record.data)
        .bind(now)
        .bind(record.complete_date)
        .bind(now)
        .execute(self.conn()?)
        .await?;
        self.db().observe("insert_log", started);
        Ok(record)
    }

    /// Changes a log of `merchant_id` in one statement; `None` when it has no such log.
    pub async fn update_log(
        &mut self,
        merchant_id: i64,
        log_id: &str,
        change: &LogChange<'_>,
        now: i64,
    ) -> Result<Option<LogRecord>, DbError> {
        let started = Instant::now();
        let completed = change.completed.map(i64::from);
        let row: Option<Row> = sqlx::query_as(&format!(
            "UPDATE logs SET tags = COALESCE($3, tags), data = COALESCE($4, data), \
             complete_date = CASE WHEN $5 = 1 THEN COALESCE(complete_date, $6) \
             WHEN $5 = 0 THEN NULL ELSE complete_date END, updated_at = $6 \
             WHERE merchant_id = $1 AND log_id = $2 RETURNING {COLUMNS}"
        ))
        .bind(merchant_id)
        .bind(log_id)
        .bind(change.tags)
        .bind(change.data)
        .bind(completed)
        .bind(now)
        .fetch_optional(self.conn()?)
        .await?;
        self.db().observe("update_log", started);
        Ok(row.map(record))
    }

    /// Deletes a log of `merchant_id`; false when it has no such log.
    pub async fn delete_log(&mut self, merchant_id: i64, log_id: &str) -> Result<bool, DbError> {
        let started = Instant::now();
        let done = sqlx::query("DELETE FROM logs WHERE merchant_id = $1 AND log_id = $2")
            .bind(merchant_id)
            .bind(log_id)
            .execute(self.conn()?)
            .await?;
        self.db().observe("delete_log", started);
        Ok(done.rows_affected() > 0)
    }
}
