//! Webhooks (migration 0016): the endpoint records the merchant's writer stores, their signing
//! secrets, and the dispatcher's queue: per endpoint a cursor over the event log, deliveries
//! and their attempts, and a lease one replica holds while it delivers.

use sqlx::{AnyConnection, Row};

use crate::rows;
use crate::{Backend, Db, DbError, Tx};
use domain::event::{Event, TypeFilter};
use domain::webhooks::webhook::{
    Attempt, AttemptOutcome, AttemptRecord, Delivery, DeliveryQuery, DeliveryStatus, Endpoint,
    PendingDelivery, QueueDepth, Recorded, Resend, WebhookRecord, ROTATION_OVERLAP_MS,
};

impl Tx {
    /// Writes an endpoint. A new secret is stored with it; on an existing endpoint the old
    /// secret keeps signing beside the new one for the overlap.
    pub(crate) async fn persist_webhook(
        &mut self,
        merchant_id: i64,
        record: &WebhookRecord,
        is_new: bool,
    ) -> Result<(), DbError> {
        let now = domain::now_millis();
        let conn = self.conn()?;
        if is_new {
            let secret = record
                .new_secret
                .as_deref()
                .ok_or_else(|| DbError::Corrupt(format!("webhook {} has no secret", record.id)))?;
            let cursor = log_head(conn, merchant_id).await?;
            // Its secret, and where its deliveries start: the log's position when it was
            // created (it gets the events after it).
            let extra = [("secret", secret.into()), ("cursor_seq", cursor.into())];
            return rows::insert_with(conn, merchant_id, record, &extra).await;
        }
        rows::update(conn, merchant_id, record).await?;
        if let Some(secret) = &record.new_secret {
            sqlx::query(
                "UPDATE webhooks SET previous_secret = secret, previous_secret_until = $1, \
                 secret = $2 WHERE merchant_id = $3 AND id = $4",
            )
            .bind(now + ROTATION_OVERLAP_MS)
            .bind(secret)
            .bind(merchant_id)
            .bind(record.id)
            .execute(&mut *conn)
            .await?;
        }
        Ok(())
    }
}

/// The last event of a merchant's log, pruned or not.
async fn log_head(conn: &mut AnyConnection, merchant_id: i64) -> Result<i64, DbError> {
    let (head,): (i64,) = sqlx::query_as(
        "SELECT COALESCE((SELECT MAX(seq) FROM events WHERE merchant_id = $1), \
                         (SELECT events_pruned_through FROM merchants WHERE id = $1), 0)",
    )
    .bind(merchant_id)
    .fetch_one(&mut *conn)
    .await?;
    Ok(head)
}

/// Endpoints with work due: on, not leased, due, of a merchant that is not suspended (its
/// deliveries wait, and resume from the cursor), and with events past the cursor or pending
/// deliveries (`$1`: now).
const DUE: &str = "FROM webhooks w \
     WHERE w.active = 1 AND w.delete_date IS NULL AND w.lease_until < $1 \
       AND w.paused_by IS NULL \
       AND w.next_attempt_at <= $1 \
       AND NOT EXISTS (SELECT 1 FROM merchants m WHERE m.id = w.merchant_id \
                       AND (m.suspend_date IS NOT NULL OR m.moved_to IS NOT NULL)) \
       AND (w.cursor_seq < COALESCE((SELECT MAX(e.seq) FROM events e \
                                     WHERE e.merchant_id = w.merchant_id), 0) \
            OR EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.merchant_id = w.merchant_id \
                       AND d.webhook_id = w.id AND d.status = 'pending'))";

const CLAIM: &str = "UPDATE webhooks SET lease_owner = $2, lease_until = $3 \
     WHERE (merchant_id, id) IN ( \
       SELECT w.merchant_id, w.id {DUE} ORDER BY w.next_attempt_at LIMIT $4 {LOCK}) \
     RETURNING merchant_id, id, url, events, secret, previous_secret, previous_secret_until, \
       cursor_seq";

impl Db {
    /// Takes up to `limit` endpoints with work due, for `owner` until `lease_until`. Another
    /// replica's claim skips the rows this one is taking (`FOR UPDATE SKIP LOCKED`), and a
    /// leased endpoint is nobody else's until its lease runs out; on SQLite the one writer
    /// serializes claims.
    pub async fn claim_webhooks(
        &self,
        owner: &str,
        now: i64,
        lease_until: i64,
        limit: i64,
    ) -> Result<Vec<Endpoint>, DbError> {
        // A read first: most polls find nothing, and a write transaction each time would
        // take SQLite's one write lock from the merchants' writers for nothing.
        let due: Option<(i64,)> = sqlx::query_as(&format!("SELECT 1 {DUE} LIMIT 1"))
            .bind(now)
            .fetch_optional(self.pool())
            .await?;
        if due.is_none() {
            return Ok(Vec::new());
        }
        let lock = match self.backend() {
            Backend::Postgres => "FOR UPDATE OF w SKIP LOCKED",
            Backend::Sqlite => "",
        };
        let sql = CLAIM.replace("{DUE}", DUE).replace("{LOCK}", lock);
        let mut tx = self.begin().await?;
        let rows = sqlx::query(&sql)
            .bind(now)
            .bind(owner)
            .bind(lease_until)
            .bind(limit)
            .fetch_all(tx.conn()?)
            .await?;
        tx.commit().await?;
        // One endpoint that does not decode is left out (and logged), not every other one.
        Ok(rows
            .iter()
            .filter_map(|row| match endpoint(row, now) {
                Ok(endpoint) => Some(endpoint),
                Err(e) => {
                    tracing::warn!(error = %e, "a webhook endpoint's row does not decode; skipped");
                    None
                }
            })
            .collect())
    }

    /// An endpoint as it is now, if it is on and not deleted (the dispatcher reloads it when
    /// the log says it changed).
    pub async fn webhook_endpoint(
        &self,
        merchant_id: i64,
        id: i64,
        now: i64,
    ) -> Result<Option<Endpoint>, DbError> {
        let row = sqlx::query(
            "SELECT merchant_id, id, url, events, secret, previous_secret, previous_secret_until, \
               cursor_seq FROM webhooks \
             WHERE merchant_id = $1 AND id = $2 AND active = 1 AND delete_date IS NULL",
        )
        .bind(merchant_id)
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(|row| endpoint(&row, now)).transpose()?)
    }

    /// The endpoint's oldest pending deliveries, in sequence order, at most `limit`.
    pub async fn pending_deliveries(
        &self,
        endpoint: &Endpoint,
        limit: i64,
    ) -> Result<Vec<PendingDelivery>, DbError> {
        let rows: Vec<(i64, i64, Option<i64>, i64)> = sqlx::query_as(
            "SELECT seq, attempts, first_attempt_at, next_attempt_at FROM webhook_deliveries \
             WHERE merchant_id = $1 AND webhook_id = $2 AND status = 'pending' \
             ORDER BY seq LIMIT $3",
        )
        .bind(endpoint.merchant_id)
        .bind(endpoint.id)
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(|(seq, attempts, first_attempt_at, due)| PendingDelivery {
                seq,
                attempts,
                first_attempt_at,
                due,
            })
            .collect())
    }

    /// The events of the endpoint's oldest pending deliveries (the same `limit` as
    /// [`Db::pending_deliveries`]), oldest first: read by sequence, however far apart.
    pub async fn events_pending(
        &self,
        endpoint: &Endpoint,
        limit: i64,
    ) -> Result<Vec<Event>, DbError> {
        self.read_events(
            "JOIN (SELECT seq FROM webhook_deliveries WHERE merchant_id = $1 AND webhook_id = $2 \
                   AND status = 'pending' ORDER BY seq LIMIT $3) d ON d.seq = e.seq \
             WHERE e.merchant_id = $1 ORDER BY e.seq",
            &[endpoint.merchant_id, endpoint.id, limit],
        )
        .await
    }

    /// Extends a claim's lease; false when the claim no longer holds it.
    pub async fn renew_lease(
        &self,
        endpoint: &Endpoint,
        token: &str,
        until: i64,
    ) -> Result<bool, DbError> {
        let done = sqlx::query(
            "UPDATE webhooks SET lease_until = $1 WHERE merchant_id = $2 AND id = $3 AND lease_owner = $4",
        )
        .bind(until)
        .bind(endpoint.merchant_id)
        .bind(endpoint.id)
        .bind(token)
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Records attempts at one endpoint and what they leave their deliveries as, moves its
    /// cursor to `cursor` (the last event of the log it has handled, delivered or filtered
    /// out), and renews the lease, in one transaction. [`Recorded::Lost`] (nothing recorded)
    /// when the lease was lost.
    pub async fn record_attempts(
        &self,
        endpoint: &Endpoint,
        attempts: &[AttemptRecord],
        cursor: i64,
        (owner, lease_until): (&str, i64),
    ) -> Result<Recorded, DbError> {
        let mut tx = self.begin().await?;
        let renewed: Option<(Option<String>,)> = sqlx::query_as(
            "UPDATE webhooks SET lease_until = $1, \
               cursor_seq = CASE WHEN cursor_seq < $5 THEN $5 ELSE cursor_seq END \
             WHERE merchant_id = $2 AND id = $3 AND lease_owner = $4 RETURNING paused_by",
        )
        .bind(lease_until)
        .bind(endpoint.merchant_id)
        .bind(endpoint.id)
        .bind(owner)
        .bind(cursor)
        .fetch_optional(tx.conn()?)
        .await?;
        let Some((paused_by,)) = renewed else {
            tx.rollback().await?;
            return Ok(Recorded::Lost);
        };
        for record in attempts {
            record_one(tx.conn()?, endpoint, record).await?;
        }
        tx.commit().await?;
        Ok(match paused_by {
            Some(_) => Recorded::Paused,
            None => Recorded::Kept,
        })
    }

    /// Gives the endpoint back, to be claimed again from `next_attempt_at`.
    pub async fn release_webhook(
        &self,
        endpoint: &Endpoint,
        owner: &str,
        next_attempt_at: i64,
    ) -> Result<(), DbError> {
        sqlx::query(
            "UPDATE webhooks SET lease_owner = NULL, lease_until = 0, next_attempt_at = $1 \
             WHERE merchant_id = $2 AND id = $3 AND lease_owner = $4",
        )
        .bind(next_attempt_at)
        .bind(endpoint.merchant_id)
        .bind(endpoint.id)
        .bind(owner)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// An endpoint's deliveries, newest first, with their attempts.
    pub async fn webhook_deliveries(
        &self,
        query: &DeliveryQuery,
    ) -> Result<Vec<Delivery>, DbError> {
        let DeliveryQuery {
            merchant_id,
            webhook_id,
            status,
            limit,
        } = *query;
        let rows = sqlx::query(
            "SELECT seq, event_type, status, attempts, created_at, next_attempt_at, \
               first_attempt_at, completed_at FROM webhook_deliveries \
             WHERE merchant_id = $1 AND webhook_id = $2 AND ($3 = '' OR status = $3) \
             ORDER BY seq DESC LIMIT $4",
        )
        .bind(merchant_id)
        .bind(webhook_id)
        .bind(status.map_or("", DeliveryStatus::as_str))
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        let mut deliveries = rows
            .iter()
            .map(|row| delivery(row, webhook_id))
            .collect::<Result<Vec<_>, sqlx::Error>>()?;
        if deliveries.is_empty() {
            return Ok(deliveries);
        }
        // The listed sequences only (numbers read from the database, not text from a client).
        let listed: Vec<String> = deliveries.iter().map(|d| d.seq.to_string()).collect();
        let attempts = sqlx::query(&format!(
            "SELECT seq, attempt, attempted_at, status_code, duration_ms, response, error \
             FROM webhook_attempts WHERE merchant_id = $1 AND webhook_id = $2 \
               AND seq IN ({}) ORDER BY seq, attempt",
            listed.join(",")
        ))
        .bind(merchant_id)
        .bind(webhook_id)
        .fetch_all(self.pool())
        .await?;
        for row in &attempts {
            let seq: i64 = row.try_get("seq")?;
            if let Some(d) = deliveries.iter_mut().find(|d| d.seq == seq) {
                d.attempts.push(attempt(row)?);
            }
        }
        Ok(deliveries)
    }

    /// Puts finished deliveries back in the queue, due now. Gives the sequences it found
    /// finished (pending and unknown ones are left as they are).
    pub async fn resend_deliveries(&self, resend: Resend<'_>) -> Result<Vec<i64>, DbError> {
        let Resend {
            merchant_id,
            webhook_id,
            seqs,
            now,
        } = resend;
        let mut tx = self.begin().await?;
        let mut resent = Vec::new();
        for seq in seqs {
            let done = sqlx::query(
                "UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $1, \
                   completed_at = NULL, first_attempt_at = NULL \
                 WHERE merchant_id = $2 AND webhook_id = $3 AND seq = $4 AND status <> 'pending'",
            )
            .bind(now)
            .bind(merchant_id)
            .bind(webhook_id)
            .bind(seq)
            .execute(tx.conn()?)
            .await?;
            if done.rows_affected() > 0 {
                resent.push(*seq);
            }
        }
        if !resent.is_empty() {
            sqlx::query(
                "UPDATE webhooks SET next_attempt_at = $1 WHERE merchant_id = $2 AND id = $3",
            )
            .bind(now)
            .bind(merchant_id)
            .bind(webhook_id)
            .execute(tx.conn()?)
            .await?;
        }
        tx.commit().await?;
        Ok(resent)
    }

    /// How many deliveries wait, and since when the oldest, for live endpoints that are on:
    /// rows waiting for a retry, and the events of the log after each cursor (before its type
    /// filter; sequences have no gaps, so the count is a subtraction).
    pub async fn webhook_queue_depth(&self) -> Result<QueueDepth, DbError> {
        let (rows, oldest_row): (i64, Option<i64>) = sqlx::query_as(
            "SELECT COUNT(*), MIN(d.created_at) FROM webhook_deliveries d \
             JOIN webhooks w ON w.merchant_id = d.merchant_id AND w.id = d.webhook_id \
             WHERE d.status = 'pending' AND w.active = 1 AND w.delete_date IS NULL",
        )
        .fetch_one(self.pool())
        .await?;
        let (logged, oldest_event): (Option<i64>, Option<i64>) = sqlx::query_as(
            "SELECT CAST(SUM(head - cursor_seq) AS BIGINT), MIN(next_at) FROM ( \
               SELECT w.cursor_seq, \
                 COALESCE((SELECT MAX(e.seq) FROM events e WHERE e.merchant_id = w.merchant_id), \
                          w.cursor_seq) AS head, \
                 (SELECT e.occurred_at FROM events e \
                  WHERE e.merchant_id = w.merchant_id AND e.seq = w.cursor_seq + 1) AS next_at \
               FROM webhooks w WHERE w.active = 1 AND w.delete_date IS NULL) AS behind",
        )
        .fetch_one(self.pool())
        .await?;
        Ok(QueueDepth {
            pending: rows + logged.unwrap_or(0).max(0),
            oldest_created_at: match (oldest_row, oldest_event) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
        })
    }

    /// Removes finished deliveries (and their attempts) completed before `before`.
    pub async fn prune_webhook_deliveries(&self, before: i64) -> Result<u64, DbError> {
        let mut tx = self.begin().await?;
        sqlx::query(
            "DELETE FROM webhook_attempts WHERE (merchant_id, webhook_id, seq) IN ( \
               SELECT merchant_id, webhook_id, seq FROM webhook_deliveries \
               WHERE status <> 'pending' AND completed_at < $1)",
        )
        .bind(before)
        .execute(tx.conn()?)
        .await?;
        let done = sqlx::query(
            "DELETE FROM webhook_deliveries WHERE status <> 'pending' AND completed_at < $1",
        )
        .bind(before)
        .execute(tx.conn()?)
        .await?;
        tx.commit().await?;
        Ok(done.rows_affected())
    }
}

async fn record_one(
    conn: &mut AnyConnection,
    endpoint: &Endpoint,
    record: &AttemptRecord,
) -> Result<(), DbError> {
    let AttemptRecord {
        seq,
        event_type,
        fresh,
        attempt,
        outcome,
    } = record;
    let seq = *seq;
    if *fresh {
        sqlx::query(
            "INSERT INTO webhook_deliveries (merchant_id, webhook_id, seq, event_type, status, \
               created_at, next_attempt_at) VALUES ($1, $2, $3, $4, 'pending', $5, $5)",
        )
        .bind(endpoint.merchant_id)
        .bind(endpoint.id)
        .bind(seq)
        .bind(event_type)
        .bind(attempt.attempted_at)
        .execute(&mut *conn)
        .await?;
    }
    sqlx::query(
        "INSERT INTO webhook_attempts (merchant_id, webhook_id, seq, attempt, attempted_at, \
           status_code, duration_ms, response, error) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(endpoint.merchant_id)
    .bind(endpoint.id)
    .bind(seq)
    .bind(attempt.attempt)
    .bind(attempt.attempted_at)
    .bind(attempt.status_code)
    .bind(attempt.duration_ms)
    .bind(attempt.response.as_deref())
    .bind(attempt.error.as_deref())
    .execute(&mut *conn)
    .await?;
    let (status, next, completed) = match *outcome {
        AttemptOutcome::Succeeded => (
            "succeeded",
            attempt.attempted_at,
            Some(attempt.attempted_at),
        ),
        AttemptOutcome::RetryAt(at) => ("pending", at, None),
        AttemptOutcome::GaveUp => ("failed", attempt.attempted_at, Some(attempt.attempted_at)),
    };
    sqlx::query(
        "UPDATE webhook_deliveries SET status = $1, attempts = $2, next_attempt_at = $3, \
           completed_at = $4, first_attempt_at = COALESCE(first_attempt_at, $5) \
         WHERE merchant_id = $6 AND webhook_id = $7 AND seq = $8",
    )
    .bind(status)
    .bind(attempt.attempt)
    .bind(next)
    .bind(completed)
    .bind(attempt.attempted_at)
    .bind(endpoint.merchant_id)
    .bind(endpoint.id)
    .bind(seq)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

fn endpoint(row: &sqlx::any::AnyRow, now: i64) -> Result<Endpoint, sqlx::Error> {
    let events: String = row.try_get("events")?;
    let entries: Vec<String> =
        serde_json::from_str(&events).map_err(|e| rows::decode_error("events", e))?;
    let mut secrets = vec![row.try_get::<String, _>("secret")?];
    let previous: Option<String> = row.try_get("previous_secret")?;
    let until: Option<i64> = row.try_get("previous_secret_until")?;
    if let (Some(previous), Some(until)) = (previous, until) {
        if until > now {
            secrets.push(previous);
        }
    }
    Ok(Endpoint {
        merchant_id: row.try_get("merchant_id")?,
        id: row.try_get("id")?,
        url: row.try_get("url")?,
        // A filter stored by this server always parses; one that does not is refused rather
        // than read as "every event".
        filter: TypeFilter::from_entries(&entries).map_err(|e| rows::decode_error("events", e))?,
        secrets,
        cursor: row.try_get("cursor_seq")?,
    })
}

fn delivery(row: &sqlx::any::AnyRow, webhook_id: i64) -> Result<Delivery, sqlx::Error> {
    let status: String = row.try_get("status")?;
    Ok(Delivery {
        webhook_id,
        seq: row.try_get("seq")?,
        event_type: row.try_get("event_type")?,
        status: DeliveryStatus::parse(&status)
            .ok_or_else(|| rows::decode_error("status", status))?,
        attempt_count: row.try_get("attempts")?,
        created_at: row.try_get("created_at")?,
        next_attempt_at: row.try_get("next_attempt_at")?,
        first_attempt_at: row.try_get("first_attempt_at")?,
        completed_at: row.try_get("completed_at")?,
        attempts: Vec::new(),
    })
}

fn attempt(row: &sqlx::any::AnyRow) -> Result<Attempt, sqlx::Error> {
    Ok(Attempt {
        attempt: row.try_get("attempt")?,
        attempted_at: row.try_get("attempted_at")?,
        status_code: row.try_get("status_code")?,
        duration_ms: row.try_get("duration_ms")?,
        response: row.try_get("response")?,
        error: row.try_get("error")?,
    })
}
