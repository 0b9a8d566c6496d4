//! `/webhook` → `webhooks` (docs/events.md, "Webhooks"), admin scope for every method (the
//! gate checks it). A create or a `rotateSecret` gets a fresh signing secret, generated here
//! and shown once in an answer sent with `Cache-Control: no-store`. A URL is refused when its
//! host is, or resolves to, a loopback, private, link-local or metadata address, unless the
//! operator allows them (`webhook_allow_private_addresses`).
//!
//! `/webhook/delivery` lists an endpoint's deliveries with their attempts; `/webhook/resend`
//! queues finished ones again.

use actix_web::web;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{json, Value};

use crate::http::auth::{Call, Caller};
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::filters::HeaderCheck;
use crate::http::people::secrets::{Secrets, Shown};
use crate::http::resources::generic::{self, WriteHooks};
use crate::http::{batch, AppState};
use crate::views::lists;
use crate::views::Snapshot;
use domain::batch::{BatchObject, WriteMode};
use domain::crypto;
use domain::dates::to_iso;
use domain::now_millis;
use domain::webhooks::webhook::{
    message_id, wants_secret, Delivery, DeliveryQuery, DeliveryStatus, Resend, WebhookRecord,
    SECRET_BYTES, SECRET_PREFIX,
};
use engine::merchant::job::ObjectOutcome;
use engine::merchant::resource::Resource;
use engine::webhooks::guard::refused_url;

/// Deliveries a listing shows at most, and by default.
pub const MAX_LISTED: i64 = 1000;
pub const DEFAULT_LISTED: i64 = 100;
/// Deliveries one resend names at most.
pub const MAX_RESEND: usize = 1000;

pub fn routes(cfg: &mut web::ServiceConfig) {
    generic::routes::<WebhookRecord>(cfg, "/webhook");
    cfg.service(web::resource("/webhook/delivery").route(web::get().to(deliveries)));
    cfg.service(web::resource("/webhook/resend").route(web::post().to(resend)));
}

impl WriteHooks for WebhookRecord {
    type Notes = Secrets;

    const NOT_REPLAYABLE: Option<&'static str> =
        Some("a webhook's answer shows a new signing secret once, and it is never shown again.");

    /// Refuses URLs at forbidden addresses; a create or a rotation gets a fresh secret.
    async fn before(objects: &mut [BatchObject], mode: WriteMode, state: &AppState) -> Secrets {
        if !state.settings.webhook_allow_private_addresses {
            // All URLs at once: each check may wait on DNS (at most 3 s), a batch no longer.
            let checks = objects.iter().map(|object| async move {
                match &object.fields {
                    Ok(fields) => match fields.get("url") {
                        Some(Value::String(url)) => refused_url(url.trim()).await,
                        _ => None,
                    },
                    Err(_) => None,
                }
            });
            let refused = futures_util::future::join_all(checks).await;
            for (object, why) in objects.iter_mut().zip(refused) {
                if let Some(why) = why {
                    object.fields = Err(format!("url: {why}"));
                }
            }
        }
        Secrets::draw(objects, mode, wants_secret, || {
            let secret = format!(
                "{SECRET_PREFIX}{}",
                STANDARD.encode(crypto::random_bytes::<SECRET_BYTES>())
            );
            (secret.clone(), secret)
        })
    }

    /// Each saved object shows its secret once, in an answer that is never cached.
    fn after(
        secrets: Secrets,
        outcomes: Vec<ObjectOutcome>,
        caller: &Caller,
        _: &AppState,
    ) -> Reply {
        secrets.reveal(WebhookRecord::PLURAL, SHOWN, outcomes, |outcome, id| {
            if let Ok(saved) = &mut outcome.result {
                saved.detail = format!(
                    "Secret of {id} rotated; the old one keeps signing beside it for 24 hours."
                );
            }
            tracing::info!(
                merchant_id = caller.merchant_id,
                webhook_id = id,
                employee_id = caller.employee_id,
                outcome = "rotated",
                "webhook signing secret rotated"
            );
        })
    }
}

const SHOWN: Shown = Shown {
    field: "secret",
    after: "url",
    what: "signing secret",
};

/// Whether the merchant's endpoint is live (`Ok(false)`: deleted), or the 404 an unknown id
/// gets (another merchant's id included).
async fn own_webhook(state: &AppState, caller: &Caller, id: i64) -> Result<bool, ApiError> {
    let snapshot = Snapshot::of(&state.merchants, caller.merchant_id).await?;
    match lists::is_live::<WebhookRecord>(&snapshot, id) {
        Some(live) => Ok(live),
        None => Err(ApiError::NotFound {
            detail: format!("webhookId: {id} is not a webhook of this merchant."),
        }),
    }
}

/// `GET /webhook/delivery`: headers `webhookId` (required), `status`
/// (`pending`/`succeeded`/`failed`) and `limit` (1–1000, 100 by default); newest first.
pub async fn deliveries(call: Call) -> Result<Reply, ApiError> {
    let Call { req, caller, state } = call;
    let mut check = HeaderCheck::new(req.headers());
    let id = check.parsed("webhookId", parse_id);
    let status = check.parsed("status", |text| {
        DeliveryStatus::parse(text).ok_or_else(|| "must be pending, succeeded or failed.".into())
    });
    let limit = check.parsed("limit", |text| match text.parse::<i64>() {
        Ok(n) if (1..=MAX_LISTED).contains(&n) => Ok(n),
        _ => Err(format!("must be a whole number from 1 to {MAX_LISTED}.")),
    });
    if id.is_none() {
        check.missing("webhookId");
    }
    check.finish(&["webhookId", "status", "limit"])?;
    let id = id.unwrap_or_default();
    own_webhook(&state, &caller, id).await?;
    let found = state
        .services
        .webhook_deliveries(&DeliveryQuery {
            merchant_id: caller.merchant_id,
            webhook_id: id,
            status,
            limit: limit.unwrap_or(DEFAULT_LISTED),
        })
        .await?;
    let listed: Vec<Value> = found
        .iter()
        .map(|d| delivery_json(caller.merchant_id, d))
        .collect();
    Ok(Reply::ok().field("deliveries", listed))
}

/// `POST /webhook/resend` with `{"webhookId": 5, "sequences": [42, 43]}`: the named finished
/// deliveries (succeeded or failed) are queued again, due now. Pending ones are already queued
/// and are left alone.
pub async fn resend(call: Call, body: web::Bytes) -> Result<Reply, ApiError> {
    let Call { req, caller, state } = call;
    let document = batch::json_document(&req, &body)?;
    let (id, seqs) = resend_body(document)?;
    if !own_webhook(&state, &caller, id).await? {
        return Err(ApiError::NotFound {
            detail: format!(
                "webhookId: webhook {id} is deleted; its deliveries can be listed, not resent."
            ),
        });
    }
    let resent = state
        .services
        .resend_deliveries(Resend {
            merchant_id: caller.merchant_id,
            webhook_id: id,
            seqs: &seqs,
            now: now_millis(),
        })
        .await?;
    if resent.is_empty() {
        return Err(ApiError::NotFound {
            detail: "sequences: no finished delivery of this webhook has these sequence numbers \
                     (pending ones are queued already)."
                .into(),
        });
    }
    Ok(Reply::ok().field("resent", resent))
}

fn resend_body(document: Value) -> Result<(i64, Vec<i64>), ApiError> {
    let shape = || {
        ApiError::bad_body(
            "The body must be {\"webhookId\": <id>, \"sequences\": [<sequence>, ...]}.",
        )
    };
    let Value::Object(top) = document else {
        return Err(shape());
    };
    if let Some(other) = top.keys().find(|k| *k != "webhookId" && *k != "sequences") {
        return Err(ApiError::bad_body(format!("{other}: unexpected field.")));
    }
    let id = top
        .get("webhookId")
        .and_then(Value::as_i64)
        .filter(|id| *id > 0)
        .ok_or_else(|| ApiError::bad_body("webhookId: must be a webhook's id."))?;
    let Some(Value::Array(items)) = top.get("sequences") else {
        return Err(shape());
    };
    if items.is_empty() || items.len() > MAX_RESEND {
        return Err(ApiError::bad_body(format!(
            "sequences: name from 1 to {MAX_RESEND} deliveries."
        )));
    }
    let seqs = items
        .iter()
        .map(|v| v.as_i64().filter(|n| *n > 0))
        .collect::<Option<Vec<i64>>>()
        .ok_or_else(|| {
            ApiError::bad_body("sequences: every item must be a positive whole number.")
        })?;
    Ok((id, seqs))
}

fn parse_id(text: &str) -> Result<i64, String> {
    text.parse::<i64>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| "must be a webhook's id (a positive whole number).".into())
}

fn delivery_json(merchant_id: i64, d: &Delivery) -> Value {
    let attempts: Vec<Value> = d
        .attempts
        .iter()
        .map(|a| {
            json!({
                "attempt": a.attempt,
                "attemptDate": to_iso(a.attempted_at),
                "statusCode": a.status_code,
                "durationMs": a.duration_ms,
                "response": a.response,
                "error": a.error,
            })
        })
        .collect();
    json!({
        "webhookId": d.webhook_id,
        "sequence": d.seq,
        "messageId": message_id(merchant_id, d.seq),
        "eventType": d.event_type,
        "status": d.status.as_str(),
        "attemptCount": d.attempt_count,
        "createDate": to_iso(d.created_at),
        "nextAttemptDate": (d.status == DeliveryStatus::Pending).then(|| to_iso(d.next_attempt_at)),
        "completeDate": d.completed_at.and_then(to_iso),
        "attempts": attempts,
    })
}
