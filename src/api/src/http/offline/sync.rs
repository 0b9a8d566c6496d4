//! `POST /basket/sync`: sales a till made offline, recorded once each (docs/offline.md).

use actix_web::web;

use crate::http::auth::Call;
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::resources::batch_reply;
use crate::http::{batch, idempotency};
use domain::now_millis;
use domain::offline::fingerprint::Fingerprint;
use domain::offline::sync::OfflineSale;

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
                .and_then(|fields| OfflineSale::parse(&fields, Fingerprint::of(&fields), now));
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
