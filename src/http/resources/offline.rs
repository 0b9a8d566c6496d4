//! `POST /basket/sync`: sales a till made offline, recorded once each (docs/offline.md).

use actix_web::web;
use serde_json::{Map, Value};

use super::batch_reply;
use crate::domain::now_millis;
use crate::domain::offline::OfflineSale;
use crate::http::auth::Call;
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::{batch, idempotency};

/// The body's collection: `{"sales": {"<key>": {...}, ...}}`.
pub const PLURAL: &str = "sales";

pub async fn sync(call: Call, body: web::Bytes) -> Result<Reply, ApiError> {
    let Call { req, caller, state } = call;
    idempotency::refuse_key(
        &req,
        "a sale's clientId already makes a sync safe to repeat.",
    )?;
    let document = batch::json_document(&req, &body)?;
    let objects = batch::objects(document, PLURAL, state.settings.max_batch_objects)?;
    let now = now_millis();
    let sales: Vec<_> = objects
        .into_iter()
        .map(|o| {
            let sale = o
                .fields
                .map_err(|why| vec![why])
                .and_then(|fields| OfflineSale::parse(&fields, fingerprint(&fields), now));
            (o.key, sale)
        })
        .collect();
    let times: Vec<(String, i64)> = sales
        .iter()
        .filter_map(|(key, s)| s.as_ref().ok().map(|s| (key.clone(), s.occurred_at)))
        .collect();
    let synced = state
        .merchants
        .sync(caller.merchant_id, sales, caller.employee_id)
        .await?;
    let metrics = &state.metrics.offline;
    for outcome in &synced.outcomes {
        if outcome.result.as_ref().is_ok_and(|s| s.created) {
            metrics.received.inc();
            if let Some((_, at)) = times.iter().find(|(key, _)| *key == outcome.key) {
                metrics.lateness.observe((now - at).max(0) as f64 / 1000.0);
            }
        }
    }
    metrics.shortfalls.inc_by(synced.shortfalls as u64);
    Ok(batch_reply("baskets", synced.outcomes))
}

/// A digest of one sale as sent: SHA-256 of its JSON with every object's keys sorted, so the
/// same sale sent again, in whatever key order, has the same digest.
fn fingerprint(fields: &Map<String, Value>) -> String {
    let mut text = String::new();
    canonical_object(fields, &mut text);
    crate::crypto::sha256_hex(&text)
}

fn canonical_object(map: &Map<String, Value>, out: &mut String) {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_by_key(|(key, _)| *key);
    out.push('{');
    for (i, (key, value)) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&Value::String(key.clone()).to_string());
        out.push(':');
        canonical(value, out);
    }
    out.push('}');
}

fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => canonical_object(map, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn key_order_does_not_change_the_fingerprint_but_a_value_does() {
        let a = json!({"b": 1, "a": {"y": [1, 2], "x": "s"}});
        let b = json!({"a": {"x": "s", "y": [1, 2]}, "b": 1});
        let c = json!({"a": {"x": "s", "y": [2, 1]}, "b": 1});
        let f = |v: Value| fingerprint(v.as_object().unwrap());
        assert_eq!(f(a.clone()), f(b));
        assert_ne!(f(a), f(c));
    }
}
