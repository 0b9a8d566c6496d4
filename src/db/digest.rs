//! Reconciliation digests (docs/digest.md): each record's last change sequence and its hash,
//! kept in `record_digests` by the transaction that appends the change's events, and summed
//! per bucket of ids by `GET /digest`.

use std::collections::BTreeMap;

use super::{rows, Db, DbError, Tx};
use crate::domain::digest::{record_hash, record_object, Bucket};
use crate::domain::event::Event;

/// The ids per row of `digest_buckets`, which triggers keep as `record_digests` changes.
const KEPT_BUCKET: i64 = 1_000;

/// Rows upserted by one statement at most (five values each).
const ROWS_PER_STATEMENT: usize = 1_000;

impl Tx {
    /// Each record the events change, at its last sequence among them: one upsert statement.
    pub(super) async fn keep_digests(
        &mut self,
        merchant_id: i64,
        events: &[Event],
    ) -> Result<(), DbError> {
        // One row per record (PostgreSQL refuses to upsert a row twice in one statement).
        let mut last: BTreeMap<(&str, i64), i64> = BTreeMap::new();
        for e in events {
            if let Some(object) = record_object(&e.kind) {
                last.insert((object, e.object_id), e.seq);
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
                 h = excluded.h",
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
    /// Per bucket of `size` ids holding records of `object`: how many, and Σ hash, summed by
    /// the database: from a row per thousand ids when `size` allows, else from every record.
    pub async fn digest(
        &self,
        merchant_id: i64,
        object: &str,
        size: i64,
    ) -> Result<Vec<Bucket>, DbError> {
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
