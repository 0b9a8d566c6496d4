//! What is stored about one customer beyond its own row (docs/customers.md, "Export and
//! erase"): read for its export, and scrubbed when it is erased, in the transaction of the
//! write that made it anonymous: the contact details of every order naming it (cached or
//! not), the payloads of the events about it and its orders, and the logs and stored
//! idempotent answers that quote it. Every statement names the merchant.

use std::collections::BTreeSet;

use sqlx::AnyConnection;

use super::logs::{record as log_record, Row as LogRow};
use super::{Db, DbError, Tx};
use crate::domain::erase::{like_pattern, scrub_answer, scrub_event, scrub_text, searched};
use crate::domain::event::Event;
use crate::domain::log::LogRecord;

/// Free-text columns that may quote a customer, by table: each row found is rewritten.
const LOG_COLUMNS: [&str; 4] = ["log_id", "identifier", "tags", "data"];

impl Tx {
    /// Scrubs what is stored about customer `customer_id` beyond its own row; `held` are the
    /// identifying values the cached records held (the customer's name, email, phone).
    pub async fn erase_customer(
        &mut self,
        merchant_id: i64,
        customer_id: i64,
        held: Vec<String>,
    ) -> Result<(), DbError> {
        let conn = self.conn()?;
        let mut values = held;
        let (order_ids, contacts) = orders_of(conn, merchant_id, customer_id).await?;
        values.extend(contacts);
        sqlx::query(
            "UPDATE orders SET customer_name = NULL, customer_email = NULL, \
             customer_phone = NULL, delivery_address = NULL \
             WHERE merchant_id = $1 AND customer_id = $2",
        )
        .bind(merchant_id)
        .bind(customer_id)
        .execute(&mut *conn)
        .await?;
        scrub_events(conn, merchant_id, customer_id).await?;
        let values = searched(values);
        if !values.is_empty() {
            scrub_logs(conn, merchant_id, &values).await?;
            scrub_answers(conn, merchant_id, customer_id, &order_ids, &values).await?;
        }
        Ok(())
    }
}

/// The customer's orders (stored ones, cached or not) and the contact details they copied.
async fn orders_of(
    conn: &mut AnyConnection,
    merchant_id: i64,
    customer_id: i64,
) -> Result<(BTreeSet<i64>, Vec<String>), DbError> {
    type Row = (
        i64,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
    );
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT id, customer_name, customer_email, customer_phone, delivery_address \
         FROM orders WHERE merchant_id = $1 AND customer_id = $2",
    )
    .bind(merchant_id)
    .bind(customer_id)
    .fetch_all(&mut *conn)
    .await?;
    let ids = rows.iter().map(|row| row.0).collect();
    let contacts = rows
        .into_iter()
        .flat_map(|(_, a, b, c, d)| [a, b, c, d])
        .flatten()
        .collect();
    Ok((ids, contacts))
}

/// The payloads of `customer.*` events about the customer and `order.*` events about its
/// orders lose their personal keys.
async fn scrub_events(
    conn: &mut AnyConnection,
    merchant_id: i64,
    customer_id: i64,
) -> Result<(), DbError> {
    let rows: Vec<(i64, String, String)> = sqlx::query_as(
        "SELECT seq, event_type, data FROM events WHERE merchant_id = $1 AND \
         ((event_type LIKE 'customer.%' AND object_id = $2) OR (event_type LIKE 'order.%' AND \
         object_id IN (SELECT id FROM orders WHERE merchant_id = $3 AND customer_id = $4)))",
    )
    .bind(merchant_id)
    .bind(customer_id)
    .bind(merchant_id)
    .bind(customer_id)
    .fetch_all(&mut *conn)
    .await?;
    for (seq, event_type, data) in rows {
        if let Some(scrubbed) = scrub_event(&event_type, &data) {
            sqlx::query("UPDATE events SET data = $1 WHERE merchant_id = $2 AND seq = $3")
                .bind(scrubbed)
                .bind(merchant_id)
                .bind(seq)
                .execute(&mut *conn)
                .await?;
        }
    }
    Ok(())
}

/// `LOWER(column) LIKE $n ESCAPE '\'` for each column and value, joined by OR, numbered from
/// `$2` (`$1` is the merchant).
fn quoting(columns: &[&str], values: &[String]) -> String {
    let mut n = 1;
    let mut terms = Vec::with_capacity(columns.len() * values.len());
    for _ in values {
        for column in columns {
            n += 1;
            terms.push(format!("LOWER({column}) LIKE ${n} ESCAPE '\\'"));
        }
    }
    terms.join(" OR ")
}

/// Logs quoting a value have it replaced, in their id, identifier, tags and data.
async fn scrub_logs(
    conn: &mut AnyConnection,
    merchant_id: i64,
    values: &[String],
) -> Result<(), DbError> {
    let sql = format!(
        "SELECT log_id, identifier, tags, data FROM logs WHERE merchant_id = $1 AND ({})",
        quoting(&LOG_COLUMNS, values)
    );
    let mut query = sqlx::query_as::<_, (String, String, String, String)>(&sql).bind(merchant_id);
    for value in values {
        let pattern = like_pattern(value);
        for _ in LOG_COLUMNS {
            query = query.bind(pattern.clone());
        }
    }
    let rows = query.fetch_all(&mut *conn).await?;
    for (log_id, identifier, tags, data) in rows {
        let scrub = |text: &String| scrub_text(text, values).unwrap_or_else(|| text.clone());
        sqlx::query(
            "UPDATE logs SET log_id = $1, identifier = $2, tags = $3, data = $4 \
             WHERE merchant_id = $5 AND log_id = $6",
        )
        .bind(scrub(&log_id))
        .bind(scrub(&identifier))
        .bind(scrub(&tags))
        .bind(scrub(&data))
        .bind(merchant_id)
        .bind(&log_id)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// Answers stored for idempotent replays that quote the customer lose its and its orders'
/// personal fields, and every identifying value: a replay answers the anonymous record.
async fn scrub_answers(
    conn: &mut AnyConnection,
    merchant_id: i64,
    customer_id: i64,
    order_ids: &BTreeSet<i64>,
    values: &[String],
) -> Result<(), DbError> {
    let sql = format!(
        "SELECT application_id, idem_key, answer FROM idempotency_keys \
         WHERE merchant_id = $1 AND ({})",
        quoting(&["answer"], values)
    );
    let mut query = sqlx::query_as::<_, (i64, String, String)>(&sql).bind(merchant_id);
    for value in values {
        query = query.bind(like_pattern(value));
    }
    for (application_id, key, answer) in query.fetch_all(&mut *conn).await? {
        let Some(scrubbed) = scrub_answer(&answer, customer_id, order_ids, values) else {
            continue;
        };
        sqlx::query(
            "UPDATE idempotency_keys SET answer = $1 \
             WHERE merchant_id = $2 AND application_id = $3 AND idem_key = $4",
        )
        .bind(scrubbed)
        .bind(merchant_id)
        .bind(application_id)
        .bind(key)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

impl Db {
    /// The events about customer `customer_id`, its baskets and its orders, oldest first (what
    /// its export shows).
    pub async fn customer_events(
        &self,
        merchant_id: i64,
        customer_id: i64,
    ) -> Result<Vec<Event>, DbError> {
        let rows: Vec<(i64, String, i64, i64, String)> = sqlx::query_as(
            "SELECT seq, event_type, object_id, occurred_at, data FROM events \
             WHERE merchant_id = $1 AND ((event_type LIKE 'customer.%' AND object_id = $2) \
             OR (event_type LIKE 'order.%' AND object_id IN \
             (SELECT id FROM orders WHERE merchant_id = $3 AND customer_id = $4)) \
             OR (event_type LIKE 'basket.%' AND object_id IN \
             (SELECT id FROM baskets WHERE merchant_id = $5 AND customer_id = $6))) ORDER BY seq",
        )
        .bind(merchant_id)
        .bind(customer_id)
        .bind(merchant_id)
        .bind(customer_id)
        .bind(merchant_id)
        .bind(customer_id)
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(|(seq, kind, object_id, occurred_at, data)| Event {
                seq,
                kind,
                object_id,
                occurred_at,
                data,
            })
            .collect())
    }

    /// The logs of the merchant quoting one of `values` (ignoring case), in filing order.
    pub async fn logs_quoting(
        &self,
        merchant_id: i64,
        values: &[String],
    ) -> Result<Vec<LogRecord>, DbError> {
        let values = searched(values.iter().cloned());
        if values.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT log_id, n, object, identifier, tags, data, added_date, complete_date \
             FROM logs WHERE merchant_id = $1 AND ({}) ORDER BY n",
            quoting(&LOG_COLUMNS, &values)
        );
        let mut query = sqlx::query_as::<_, LogRow>(&sql).bind(merchant_id);
        for value in &values {
            let pattern = like_pattern(value);
            for _ in LOG_COLUMNS {
                query = query.bind(pattern.clone());
            }
        }
        Ok(query
            .fetch_all(self.pool())
            .await?
            .into_iter()
            .map(log_record)
            .collect())
    }
}
