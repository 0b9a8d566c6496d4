//! Reconciliation digests (docs/digest.md): each record's last change sequence and its hash,
//! kept in `record_digests` from the merchant's event log and summed per bucket of ids by
//! `GET /digest`. The log is followed when a digest is read (and before retention prunes it),
//! not by the write that appends the events: a write pays nothing for digests, and a digest
//! pays for the changes since the last one.

use std::collections::BTreeMap;

use crate::{rows, Db, DbError, Tx};
use domain::offline::digest::{record_hash, record_object, Bucket};

/// The ids per row of `digest_buckets`, which triggers keep as `record_digests` changes.
const KEPT_BUCKET: i64 = 1_000;

/// Rows upserted by one statement at most (five values each).
const ROWS_PER_STATEMENT: usize = 1_000;

/// Events taken in by one transaction of a catch-up, so that a long one never holds the
/// database (SQLite's single writer) for long.
const EVENTS_PER_CATCH_UP: i64 = 5_000;

impl Tx {
    /// Brings the merchant's `record_digests` up to its log, through `through` at most:
    /// each record its events changed since the watermark, at its last sequence among them.
    /// Returns whether events remain after what this transaction took in.
    pub(crate) async fn catch_up_digests(
        &mut self,
        merchant_id: i64,
        through: i64,
    ) -> Result<bool, DbError> {
        sqlx::query(
            "INSERT INTO digest_watermarks (merchant_id, seq) VALUES ($1, 0) \
             ON CONFLICT (merchant_id) DO NOTHING",
        )
        .bind(merchant_id)
        .execute(self.conn()?)
        .await?;
        // The update takes the row's lock: two catch-ups of one merchant (two replicas)
        // follow each other instead of both upserting the same events.
        let (from,): (i64,) = sqlx::query_as(
            "UPDATE digest_watermarks SET seq = seq WHERE merchant_id = $1 RETURNING seq",
        )
        .bind(merchant_id)
        .fetch_one(self.conn()?)
        .await?;
        if from >= through {
            return Ok(false);
        }
        let events: Vec<(i64, String, i64)> = sqlx::query_as(
            "SELECT seq, event_type, object_id FROM events \
             WHERE merchant_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq LIMIT $4",
        )
        .bind(merchant_id)
        .bind(from)
        .bind(through)
        .bind(EVENTS_PER_CATCH_UP)
        .fetch_all(self.conn()?)
        .await?;
        let Some(&(last, _, _)) = events.last() else {
            return Ok(false);
        };
        self.keep_digests(merchant_id, &events).await?;
        sqlx::query("UPDATE digest_watermarks SET seq = $2 WHERE merchant_id = $1")
            .bind(merchant_id)
            .bind(last)
            .execute(self.conn()?)
            .await?;
        Ok(events.len() as i64 == EVENTS_PER_CATCH_UP && last < through)
    }

    /// Each record the events (sequence, type, record id) change, at its last sequence among
    /// them: one upsert statement per thousand records.
    async fn keep_digests(
        &mut self,
        merchant_id: i64,
        events: &[(i64, String, i64)],
    ) -> Result<(), DbError> {
        // One row per record (PostgreSQL refuses to upsert a row twice in one statement).
        let mut last: BTreeMap<(&str, i64), i64> = BTreeMap::new();
        for (seq, kind, id) in events {
            if let Some(object) = record_object(kind) {
                last.insert((object, *id), *seq);
            }
        }
        if last.is_empty() {
            return Ok(());
        }
        let all: Vec<_> = last.into_iter().collect();
        let conn = self.conn()?;
        for chunk in all.chunks(ROWS_PER_STATEMENT) {
            let sql = format!(
                "INSERT INTO record_digests (merchant_id, object, id, seq, h) VALUES {} \
                 ON CONFLICT (merchant_id, object, id) DO UPDATE SET seq = excluded.seq, \
                 h = excluded.h WHERE excluded.seq > record_digests.seq",
                rows::value_tuples(conn, chunk.len(), 5)
            );
            let mut query = sqlx::query(&sql);
            for ((object, id), seq) in chunk {
                query = query
                    .bind(merchant_id)
                    .bind(*object)
                    .bind(*id)
                    .bind(*seq)
                    .bind(record_hash(object, *id, *seq));
            }
            query.execute(&mut *conn).await?;
        }
        Ok(())
    }
}

impl Db {
    /// Brings the merchant's digests up to its log as it stands (through `through` at most),
    /// a transaction per [`EVENTS_PER_CATCH_UP`] events; nothing is written when they are.
    pub async fn catch_up_digests(&self, merchant_id: i64, through: i64) -> Result<(), DbError> {
        let (kept, last): (Option<i64>, Option<i64>) = sqlx::query_as(
            "SELECT (SELECT seq FROM digest_watermarks WHERE merchant_id = $1), \
                    (SELECT MAX(seq) FROM events WHERE merchant_id = $1)",
        )
        .bind(merchant_id)
        .fetch_one(self.pool())
        .await?;
        if kept.unwrap_or(0) >= last.unwrap_or(0).min(through) {
            return Ok(());
        }
        loop {
            let mut tx = self.begin().await?;
            let more = tx.catch_up_digests(merchant_id, through).await?;
            tx.commit().await?;
            if !more {
                return Ok(());
            }
        }
    }

    /// Per bucket of `size` ids holding records of `object`: how many, and Σ hash, summed by
    /// the database: from a row per thousand ids when `size` allows, else from every record.
    pub async fn digest(
        &self,
        merchant_id: i64,
        object: &str,
        size: i64,
    ) -> Result<Vec<Bucket>, DbError> {
        self.catch_up_digests(merchant_id, i64::MAX).await?;
        // By 1,000 ids or more, the triggers' per-thousand rows; below, every record.
        let (sql, per) = if size >= KEPT_BUCKET {
            (
                "SELECT bucket / $3, CAST(SUM(records) AS BIGINT), CAST(SUM(total) AS BIGINT) \
                 FROM digest_buckets WHERE merchant_id = $1 AND object = $2 AND records > 0 \
                 GROUP BY 1 ORDER BY 1",
                size / KEPT_BUCKET,
            )
        } else {
            (
                "SELECT id / $3, COUNT(*), CAST(SUM(h) AS BIGINT) FROM record_digests \
                 WHERE merchant_id = $1 AND object = $2 GROUP BY 1 ORDER BY 1",
                size,
            )
        };
        let rows: Vec<(i64, i64, i64)> = sqlx::query_as(sql)
            .bind(merchant_id)
            .bind(object)
            .bind(per)
            .fetch_all(self.pool())
            .await?;
        Ok(rows
            .into_iter()
            .map(|(bucket, count, sum)| Bucket {
                first_id: bucket * size,
                count,
                sum,
            })
            .collect())
    }
}
