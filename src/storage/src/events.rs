//! The change-event log (migration 0015): appended inside the write's own transaction
//! (transactional outbox), read by the event stream and by delta reads, pruned by age.

use std::collections::BTreeSet;

use sqlx::Row;

use crate::rows::{self, TableRow, Val};
use crate::{Db, DbError, Tx};
use domain::event::{ChangeWindow, Event, LogPosition, NewEvent};

/// An event as its row: the type is the domain's, its table is ours.
struct EventRow(Event);

impl TableRow for EventRow {
    const TABLE: &'static str = "events";
    const COLUMNS: &'static [&'static str] =
        &["seq", "event_type", "object_id", "occurred_at", "data"];

    fn values(&self) -> Vec<Val> {
        let e = &self.0;
        vec![
            e.seq.into(),
            (&e.kind).into(),
            e.object_id.into(),
            e.occurred_at.into(),
            (&e.data).into(),
        ]
    }

    fn from_row(row: &rows::Row<'_>) -> Result<Self, sqlx::Error> {
        Ok(Self(Event {
            seq: rows::get(row, "seq")?,
            kind: rows::get(row, "event_type")?,
            object_id: rows::get(row, "object_id")?,
            occurred_at: rows::get(row, "occurred_at")?,
            data: rows::get(row, "data")?,
        }))
    }
}

impl Tx {
    /// Appends a write's events for the merchant, numbered after `after`: the last number the
    /// merchant's writer knows. The writer holds the merchant (the one process on SQLite, the
    /// merchant's row on PostgreSQL), so no one numbers meanwhile, and the primary key would
    /// refuse a number given twice. Returns the last number given.
    pub async fn append_events(
        &mut self,
        merchant_id: i64,
        after: i64,
        events: &[NewEvent],
        now: i64,
    ) -> Result<i64, DbError> {
        let mut numbered: Vec<EventRow> = Vec::with_capacity(events.len());
        for (seq, event) in (after + 1..).zip(events) {
            // Compared with what the event before it stored: after one stored empty, a third
            // copy is stored whole again, so a repeat always points at a whole one.
            let data = match numbered.last() {
                Some(before) if repeats(&before.0, event) => String::new(),
                _ => event.data.clone(),
            };
            numbered.push(EventRow(Event {
                seq,
                kind: event.kind.as_str().to_owned(),
                object_id: event.object_id,
                occurred_at: now,
                data,
            }));
        }
        let refs: Vec<&EventRow> = numbered.iter().collect();
        rows::insert_many(self.conn()?, merchant_id, &refs).await?;
        self.appended |= !numbered.is_empty();
        Ok(numbered.last().map_or(after, |e| e.0.seq))
    }
}

/// Whether `event` carries the same object as the event appended just before it (a basket
/// created and completed by one write: `basket.created` and `basket.completed`). Its data is
/// then stored empty and read as that event's ([`DATA`]): a synced sale's basket, about
/// 1.5 KB, is stored once instead of twice. Both are appended together, so both have one
/// `occurred_at` and retention keeps or removes them together.
fn repeats(before: &Event, event: &NewEvent) -> bool {
    before.object_id == event.object_id
        && before.kind.split('.').next() == event.kind.as_str().split('.').next()
        && before.data == event.data
}

/// The `data` column of `events e` as its readers see it: an empty one (see [`repeats`]) is
/// the event's before it.
const DATA: &str = "CASE WHEN e.data = '' THEN (SELECT p.data FROM events p \
     WHERE p.merchant_id = e.merchant_id AND p.seq = e.seq - 1) ELSE e.data END AS data";

impl Db {
    pub async fn event_position(&self, merchant_id: i64) -> Result<LogPosition, DbError> {
        let row: Option<(i64, i64)> = sqlx::query_as(
            "SELECT events_pruned_through, \
               COALESCE((SELECT MAX(seq) FROM events WHERE merchant_id = $1), 0) \
             FROM merchants WHERE id = $1",
        )
        .bind(merchant_id)
        .fetch_optional(self.pool())
        .await?;
        let (pruned_through, newest) =
            row.ok_or_else(|| DbError::Conflict(format!("merchant {merchant_id} does not exist")))?;
        Ok(LogPosition {
            last: newest.max(pruned_through),
            pruned_through,
        })
    }

    /// The last sequence number retention removed from the merchant's log.
    async fn pruned_through(&self, merchant_id: i64) -> Result<i64, DbError> {
        let row: Option<(i64,)> =
            sqlx::query_as("SELECT events_pruned_through FROM merchants WHERE id = $1")
                .bind(merchant_id)
                .fetch_optional(self.pool())
                .await?;
        row.map(|(n,)| n)
            .ok_or_else(|| DbError::Conflict(format!("merchant {merchant_id} does not exist")))
    }

    /// Up to `limit` events after `after`, oldest first.
    pub async fn events_after(
        &self,
        merchant_id: i64,
        after: i64,
        limit: i64,
    ) -> Result<Vec<Event>, DbError> {
        self.read_events(
            "WHERE e.merchant_id = $1 AND e.seq > $2 ORDER BY e.seq LIMIT $3",
            &[merchant_id, after, limit],
        )
        .await
    }

    /// The ids of the records of one type (`product`) that events in `(after, upto]` name.
    /// `None` when events after `after` were pruned: the answer would have gaps.
    pub async fn changed_since(
        &self,
        window: ChangeWindow<'_>,
    ) -> Result<Option<BTreeSet<i64>>, DbError> {
        let ChangeWindow {
            merchant_id,
            object,
            after,
            upto,
        } = window;
        // LIKE, not a range of text: a range follows the database's collation, which may
        // order punctuation unlike ASCII. Object names hold no `%`; a `_` in one matches only
        // itself among the types there are.
        let rows: Vec<(i64,)> = sqlx::query_as(
            "SELECT DISTINCT object_id FROM events \
             WHERE merchant_id = $1 AND seq > $2 AND seq <= $3 AND event_type LIKE $4",
        )
        .bind(merchant_id)
        .bind(after)
        .bind(upto)
        .bind(format!("{object}.%"))
        .fetch_all(self.pool())
        .await?;
        // Checked after the read: a prune before or during it shows here, and the rows read
        // may then have gaps.
        if after < self.pruned_through(merchant_id).await? {
            return Ok(None);
        }
        Ok(Some(rows.into_iter().map(|(id,)| id).collect()))
    }

    /// Cuts each merchant's log below its newest event older than `before`, and records how
    /// far (a delta read from before it gets 410). The cut is by sequence and only moves
    /// forward: times need not rise with sequence (replicas' clocks), numbers do. One merchant
    /// per transaction, so no merchant's writes wait for another's pruning.
    pub async fn prune_events(&self, before: i64) -> Result<u64, DbError> {
        let cuts: Vec<(i64, i64)> = sqlx::query_as(
            "SELECT merchant_id, MAX(seq) FROM events WHERE occurred_at < $1 GROUP BY merchant_id",
        )
        .bind(before)
        .fetch_all(self.pool())
        .await?;
        let mut removed = 0;
        for (merchant_id, through) in cuts {
            // Events an active webhook endpoint has yet to send stay, however old: it is
            // retrying them (and is turned off after its retry window, which lets them go).
            let (held,): (Option<i64>,) = sqlx::query_as(
                "SELECT MIN(x) FROM ( \
                   SELECT cursor_seq AS x FROM webhooks \
                   WHERE merchant_id = $1 AND active = 1 AND delete_date IS NULL \
                   UNION ALL SELECT d.seq - 1 AS x FROM webhook_deliveries d \
                   JOIN webhooks w ON w.merchant_id = d.merchant_id AND w.id = d.webhook_id \
                   WHERE d.merchant_id = $1 AND d.status = 'pending' AND w.active = 1 \
                     AND w.delete_date IS NULL) AS needed",
            )
            .bind(merchant_id)
            .fetch_one(self.pool())
            .await?;
            let through = held.map_or(through, |held| through.min(held));
            // Digests follow the log: what they have not taken in yet goes in before it goes,
            // in transactions of their own (SQLite's one writer is not held for all of it),
            // and what was appended meanwhile by the prune's own transaction.
            self.catch_up_digests(merchant_id, through).await?;
            let mut tx = self.begin().await?;
            while tx.catch_up_digests(merchant_id, through).await? {}
            sqlx::query(
                "UPDATE merchants SET events_pruned_through = $2 \
                 WHERE id = $1 AND events_pruned_through < $2",
            )
            .bind(merchant_id)
            .bind(through)
            .execute(tx.conn()?)
            .await?;
            // The first event kept may point at the last one removed (see `repeats`): it
            // takes that event's object first.
            sqlx::query(
                "UPDATE events SET data = (SELECT p.data FROM events p \
                   WHERE p.merchant_id = $1 AND p.seq = $2) \
                 WHERE merchant_id = $1 AND seq = $3 AND data = ''",
            )
            .bind(merchant_id)
            .bind(through)
            .bind(through + 1)
            .execute(tx.conn()?)
            .await?;
            let done = sqlx::query("DELETE FROM events WHERE merchant_id = $1 AND seq <= $2")
                .bind(merchant_id)
                .bind(through)
                .execute(tx.conn()?)
                .await?;
            tx.commit().await?;
            removed += done.rows_affected();
        }
        Ok(removed)
    }

    /// The events `rest` selects (what follows `FROM events e`: joins, conditions, order, with
    /// `binds` for its parameters), each with the payload it repeats when stored empty.
    pub(crate) async fn read_events(
        &self,
        rest: &str,
        binds: &[i64],
    ) -> Result<Vec<Event>, DbError> {
        let sql = format!(
            "SELECT e.seq, e.event_type, e.object_id, e.occurred_at, {DATA} FROM events e {rest}"
        );
        let mut query = sqlx::query(&sql);
        for bind in binds {
            query = query.bind(*bind);
        }
        events_of(&query.fetch_all(self.pool()).await?)
    }
}

/// Events from rows of `seq, event_type, object_id, occurred_at, data`.
fn events_of(rows: &[sqlx::any::AnyRow]) -> Result<Vec<Event>, DbError> {
    rows.iter()
        .map(|row| {
            Ok(Event {
                seq: row.try_get("seq")?,
                kind: row.try_get("event_type")?,
                object_id: row.try_get("object_id")?,
                occurred_at: row.try_get("occurred_at")?,
                data: row.try_get("data")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(DbError::from)
}
