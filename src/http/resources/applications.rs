//! `/application` → `applications` (api-reference.md, Application; examples §2.7). Writes need
//! `admin` (the gate checks it). A create or a `regenerateSecret` gets a fresh client secret:
//! it is generated here, only its SHA-256 goes to the merchant actor (and the database), and the
//! clear secret lives just long enough to be added to this one answer, sent with
//! `Cache-Control: no-store`. Nothing ever reads it back.

use std::collections::HashMap;

use actix_web::http::header::{self, HeaderValue};
use actix_web::{web, HttpRequest};
use serde_json::{Map, Value};

use super::generic::{self, IdHeaders};
use super::{batch_reply, delete_ids, delete_reply};
use crate::actors::merchant::job::{DeleteOutcome, ObjectOutcome};
use crate::actors::resource::Resource;
use crate::crypto;
use crate::domain::application::{wants_secret, ApplicationRecord};
use crate::domain::batch::WriteMode;
use crate::http::auth::Caller;
use crate::http::envelope::{raw, Reply};
use crate::http::error::ApiError;
use crate::http::{batch, AppState};

impl IdHeaders for ApplicationRecord {
    const ID_HEADERS: [&'static str; 2] = ["applicationIds", "applicationId"];
}

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/application")
            .route(web::get().to(generic::list::<ApplicationRecord>))
            .route(web::post().to(post))
            .route(web::put().to(put))
            .route(web::delete().to(delete)),
    );
}

async fn post(
    req: HttpRequest,
    body: web::Bytes,
    caller: Caller,
    state: web::Data<AppState>,
) -> Result<Reply, ApiError> {
    write(req, body, caller, state, WriteMode::Upsert).await
}

async fn put(
    req: HttpRequest,
    body: web::Bytes,
    caller: Caller,
    state: web::Data<AppState>,
) -> Result<Reply, ApiError> {
    write(req, body, caller, state, WriteMode::UpdateOnly).await
}

async fn write(
    req: HttpRequest,
    body: web::Bytes,
    caller: Caller,
    state: web::Data<AppState>,
    mode: WriteMode,
) -> Result<Reply, ApiError> {
    let document = batch::json_document(&req, &body)?;
    let mut objects = batch::objects(
        document,
        ApplicationRecord::PLURAL,
        state.settings.max_batch_objects,
    )?;
    // Client key → the clear secret whose hash rides with that object.
    let mut secrets: HashMap<String, String> = HashMap::new();
    for object in &mut objects {
        let Ok(fields) = &object.fields else { continue };
        if wants_secret(fields, mode == WriteMode::Upsert) {
            let secret = crypto::random_token("");
            object.secret_hash = Some(crypto::sha256_hex(&secret));
            secrets.insert(object.key.clone(), secret);
        }
    }
    let mut outcomes = state
        .merchants
        .write::<ApplicationRecord>(caller.merchant_id, mode, objects, caller.employee_id)
        .await?;
    let mut shown = false;
    let mut replaced = false;
    for outcome in &mut outcomes {
        if let Some(secret) = secrets.remove(&outcome.key) {
            shown |= reveal(outcome, secret, &caller, &mut replaced);
        }
    }
    if replaced {
        // The old secret's tokens were revoked with the write; forget any we cached.
        state.tokens.forget_cached_tokens();
    }
    let reply = batch_reply(ApplicationRecord::PLURAL, outcomes);
    Ok(if shown {
        reply.header(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))
    } else {
        reply
    })
}

/// Adds the secret to a successful object's answer (after `clientId`) and says so in its
/// message. False when the object failed: its secret was never stored and is dropped.
fn reveal(
    outcome: &mut ObjectOutcome,
    secret: String,
    caller: &Caller,
    replaced: &mut bool,
) -> bool {
    let Ok(saved) = &mut outcome.result else {
        return false;
    };
    let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(saved.json.get()) else {
        return false;
    };
    let id = fields.get("id").and_then(Value::as_i64).unwrap_or_default();
    let mut with_secret = Map::with_capacity(fields.len() + 1);
    for (name, value) in fields {
        let after = name == "clientId";
        with_secret.insert(name, value);
        if after {
            with_secret.insert("clientSecret".into(), Value::String(secret.clone()));
        }
    }
    with_secret
        .entry("clientSecret")
        .or_insert_with(|| Value::String(secret));
    saved.json = raw(Value::Object(with_secret).to_string());
    if saved.created {
        saved
            .detail
            .push_str(" Keep the client secret now: it is never shown again.");
    } else {
        *replaced = true;
        saved.detail = format!("Secret of {id} replaced.");
        tracing::info!(
            merchant_id = caller.merchant_id,
            application_id = id,
            employee_id = caller.employee_id,
            outcome = "regenerated",
            "client secret regenerated; the application's tokens were revoked"
        );
    }
    true
}

/// Deleting an application revokes every token issued to it (in the delete's transaction).
async fn delete(
    req: HttpRequest,
    caller: Caller,
    state: web::Data<AppState>,
) -> Result<Reply, ApiError> {
    let ids = delete_ids(req.headers(), &ApplicationRecord::ID_HEADERS)?;
    let results = state
        .merchants
        .delete::<ApplicationRecord>(caller.merchant_id, ids)
        .await?;
    let deleted: Vec<i64> = results
        .iter()
        .filter(|(_, outcome)| *outcome == DeleteOutcome::Deleted)
        .map(|(id, _)| *id)
        .collect();
    if !deleted.is_empty() {
        state.tokens.forget_cached_tokens();
        tracing::info!(
            merchant_id = caller.merchant_id,
            employee_id = caller.employee_id,
            application_ids = ?deleted,
            outcome = "revoked",
            "applications deleted; their tokens were revoked"
        );
    }
    Ok(delete_reply(ApplicationRecord::NOUN, results))
}
