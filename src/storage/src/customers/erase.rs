//! What is stored about one customer beyond its own row (docs/customers.md, "Export and
//! erase"): read for its export, and scrubbed when it is erased, in the transaction of the
//! write that made it anonymous: the contact details of every order naming it (cached or
//! not), the payloads of the events about it and its orders, and the logs and stored
//! idempotent answers that quote it. Every statement names the merchant.

use std::collections::BTreeSet;

use sqlx::AnyConnection;

use crate::logs::{record as log_record, Row as LogRow};
use crate::{Db, DbError, Tx};
use domain::customers::erase::{
    like_patterns, scrub_answer, scrub_event, scrub_json_text, scrub_text, searched,
};
use domain::event::Event;
use domain::log::LogRecord;

/// The columns of a log that may quote a customer.
const LOG_COLUMNS: [&str; 3] = ["identifier", "tags", "data"];

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
        }
        // Also with no value to look for: the answers naming the customer or its orders.
        scrub_answers(conn, merchant_id, customer_id, &order_ids, &values).await?;
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

/// Patterns one candidate query holds at most: SQLite refuses expressions deeper than 1,000.
const PATTERNS_PER_QUERY: usize = 100;

/// `(LOWER(column) LIKE $n ESCAPE '\' OR column LIKE $n+1 …)` for each column and pattern,
/// numbered from `$2` (`$1` is the merchant). Databases fold only ASCII letters, so each column
/// is also matched as written (see `like_patterns`).
fn quoting(columns: &[&str], patterns: usize) -> String {
    let mut n = 1;
    let mut terms = Vec::with_capacity(columns.len() * patterns * 2);
    for _ in 0..patterns {
        for column in columns {
            terms.push(format!("LOWER({column}) LIKE ${} ESCAPE '\\'", n + 1));
            terms.push(format!("{column} LIKE ${} ESCAPE '\\'", n + 2));
            n += 2;
        }
    }
    terms.join(" OR ")
}

/// Every `LIKE` pattern finding one of `values`.
fn patterns_of(values: &[String]) -> Vec<String> {
    let mut patterns: Vec<String> = values.iter().flat_map(|v| like_patterns(v)).collect();
    patterns.sort();
    patterns.dedup();
    patterns
}

/// The rows of `select` (a query on `table` of the merchant, its `WHERE` left open) matching
/// one of `patterns` in one of `columns`, in chunks, each row once (by `key`).
async fn candidates<Row, Key>(
    conn: &mut AnyConnection,
    select: &str,
    merchant_id: i64,
    columns: &[&str],
    patterns: &[String],
    key: impl Fn(&Row) -> Key,
) -> Result<Vec<Row>, DbError>
where
    Row: for<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> + Send + Unpin,
    Key: Ord,
{
    let mut found = std::collections::BTreeMap::new();
    for chunk in patterns.chunks(PATTERNS_PER_QUERY / (2 * columns.len()).max(1)) {
        let sql = format!("{select} AND ({})", quoting(columns, chunk.len()));
        let mut query = sqlx::query_as::<_, Row>(&sql).bind(merchant_id);
        for pattern in chunk {
            for _ in columns {
                query = query.bind(pattern.clone()).bind(pattern.clone());
            }
        }
        for row in query.fetch_all(&mut *conn).await? {
            found.entry(key(&row)).or_insert(row);
        }
    }
    Ok(found.into_values().collect())
}

/// Logs quoting a value have it replaced, as a whole word, in their identifier, tags and data
/// (the strings of its JSON, never its keys); a changed identifier changes the log's id with it.
async fn scrub_logs(
    conn: &mut AnyConnection,
    merchant_id: i64,
    values: &[String],
) -> Result<(), DbError> {
    type Row = (String, i64, String, String, String, String);
    let rows: Vec<Row> = candidates(
        conn,
        "SELECT log_id, n, object, identifier, tags, data FROM logs WHERE merchant_id = $1",
        merchant_id,
        &LOG_COLUMNS,
        &patterns_of(values),
        |row: &Row| row.0.clone(),
    )
    .await?;
    for (log_id, n, object, identifier, tags, data) in rows {
        let new_identifier = scrub_text(&identifier, values);
        let new_tags = scrub_text(&tags, values);
        let new_data = scrub_json_text(&data, values);
        if new_identifier.is_none() && new_tags.is_none() && new_data.is_none() {
            continue;
        }
        let new_id = match &new_identifier {
            Some(identifier) => format!("{object}-{identifier}:{n}"),
            None => log_id.clone(),
        };
        sqlx::query(
            "UPDATE logs SET log_id = $1, identifier = $2, tags = $3, data = $4 \
             WHERE merchant_id = $5 AND log_id = $6",
        )
        .bind(new_id)
        .bind(new_identifier.unwrap_or(identifier))
        .bind(new_tags.unwrap_or(tags))
        .bind(new_data.unwrap_or(data))
        .bind(merchant_id)
        .bind(&log_id)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// Answers stored for idempotent replays that name the customer or its orders, or quote one
/// of the values, lose the customer's and its orders' personal fields and every quoted value:
/// a replay answers the anonymous record.
async fn scrub_answers(
    conn: &mut AnyConnection,
    merchant_id: i64,
    customer_id: i64,
    order_ids: &BTreeSet<i64>,
    values: &[String],
) -> Result<(), DbError> {
    type Row = (i64, String, String);
    // A write's stored answer names each saved object as `"id":<id>,`.
    let mut patterns = patterns_of(values);
    patterns.extend(
        std::iter::once(customer_id)
            .chain(order_ids.iter().copied())
            .map(|id| format!("%\"id\":{id},%")),
    );
    let rows: Vec<Row> = candidates(
        conn,
        "SELECT application_id, idem_key, answer FROM idempotency_keys WHERE merchant_id = $1",
        merchant_id,
        &["answer"],
        &patterns,
        |row: &Row| (row.0, row.1.clone()),
    )
    .await?;
    for (application_id, key, answer) in rows {
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
        self.read_events(
            "WHERE e.merchant_id = $1 AND ((e.event_type LIKE 'customer.%' AND e.object_id = $2) \
             OR (e.event_type LIKE 'order.%' AND e.object_id IN \
             (SELECT id FROM orders WHERE merchant_id = $3 AND customer_id = $4)) \
             OR (e.event_type LIKE 'basket.%' AND e.object_id IN \
             (SELECT id FROM baskets WHERE merchant_id = $5 AND customer_id = $6))) ORDER BY e.seq",
            &[
                merchant_id,
                customer_id,
                merchant_id,
                customer_id,
                merchant_id,
                customer_id,
            ],
        )
        .await
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
        let mut conn = self.pool().acquire().await?;
        let rows: Vec<LogRow> = candidates(
            &mut conn,
            "SELECT log_id, n, object, identifier, tags, data, added_date, complete_date \
             FROM logs WHERE merchant_id = $1",
            merchant_id,
            &LOG_COLUMNS,
            &patterns_of(&values),
            |row: &LogRow| row.1,
        )
        .await?;
        // Candidates by pattern; kept when a whole word matches, as the erase replaces them.
        Ok(rows
            .into_iter()
            .map(log_record)
            .filter(|log| {
                scrub_text(&log.identifier, &values).is_some()
                    || scrub_text(&log.tags, &values).is_some()
                    || scrub_json_text(&log.data, &values).is_some()
            })
            .collect())
    }
}
