//! `POST /basket/calculate` → `receipts`: what baskets will cost, priced by the same engine
//! that completion records, with nothing written. The body is the basket dialect:
//! `{"baskets": {"<clientKey>": {...}}}`, each a new basket's fields or an open basket's `id`
//! with fields to try on it. Needs the `read` scope: it changes nothing.

use actix_web::http::StatusCode;
use actix_web::web;
use actix_web::HttpRequest;

use crate::http::auth::Call;
use crate::http::batch;
use crate::http::envelope::{ErrorObject, Messages, Reply};
use crate::http::error::ApiError;
use crate::http::resources::message_of;
use domain::sales::draft::DraftBatch;

pub async fn basket(call: Call, body: web::Bytes) -> Result<Reply, ApiError> {
    let Call { req, caller, state } = call;
    let now = domain::now_millis();
    if let Some(drafts) = drafts(&req, &body, state.settings.max_batch_objects) {
        let priced = crate::views::sales::pricing::calculate_drafts(
            &state.merchants,
            caller.merchant_id,
            &drafts.baskets,
            now,
        )
        .await?;
        if let Some(receipts) = priced {
            return Ok(Reply::ok().raw_field("receipts", receipts));
        }
    }
    let document = batch::json_document(&req, &body)?;
    let objects = batch::objects(document, "baskets", state.settings.max_batch_objects)?;
    let outcomes =
        crate::views::sales::pricing::calculate(&state.merchants, caller.merchant_id, objects, now)
            .await?;
    let mut receipts = String::from("{");
    let mut priced = 0;
    let mut messages = Messages::default();
    let mut problems = Vec::new();
    for (key, outcome) in outcomes {
        match outcome {
            Ok(json) => {
                if priced > 0 {
                    receipts.push(',');
                }
                priced += 1;
                receipts.push_str(&serde_json::to_string(&key).unwrap_or_default());
                receipts.push(':');
                receipts.push_str(&json);
            }
            Err(refusal) => {
                let details = refusal.details();
                problems.extend(details.iter().map(|d| format!("{key}: {d}")));
                messages.add(message_of(&refusal), Some(&key), details.join(" "));
            }
        }
    }
    receipts.push('}');
    if priced == 0 {
        return Ok(Reply::new(StatusCode::UNPROCESSABLE_ENTITY)
            .messages(messages)
            .error(ErrorObject {
                code: 422,
                message: "No basket in the request could be priced.".into(),
                details: problems,
            }));
    }
    Ok(Reply::ok()
        .raw_field("receipts", receipts)
        .messages(messages))
}

/// The body read as drafts when it is JSON in the common shape and its batch size is allowed;
/// everything else takes the general reading and its messages.
fn drafts<'b>(req: &HttpRequest, body: &'b [u8], max: usize) -> Option<DraftBatch<'b>> {
    if batch::media_type(req) != "application/json" {
        return None;
    }
    DraftBatch::read(body).filter(|d| !d.baskets.0.is_empty() && d.baskets.0.len() <= max)
}
