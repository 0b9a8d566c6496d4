//! `/application` → `applications` (api-reference.md, Application; examples §2.7). Writes need
//! `admin` (the gate checks it). A create or a `regenerateSecret` gets a fresh client secret:
//! it is generated here, only its SHA-256 goes to the merchant actor (and the database), and the
//! clear secret lives just long enough to be added to this one answer, sent with
//! `Cache-Control: no-store`. Nothing ever reads it back.

use std::collections::HashMap;

use actix_web::http::header::{self, HeaderValue};
use actix_web::web;

use super::batch_reply;
use super::generic::{self, WriteHooks};
use crate::actors::merchant::job::ObjectOutcome;
use crate::actors::resource::Resource;
use crate::crypto;
use crate::domain::application::{wants_secret, ApplicationRecord};
use crate::domain::batch::{BatchObject, WriteMode};
use crate::http::auth::Caller;
use crate::http::envelope::Reply;
use crate::http::AppState;

pub fn routes(cfg: &mut web::ServiceConfig) {
    generic::routes::<ApplicationRecord>(cfg, "/application");
}

/// Client key → the clear secret whose hash rides with that object.
pub struct Secrets(HashMap<String, String>);

impl WriteHooks for ApplicationRecord {
    type Notes = Secrets;

    const NOT_REPLAYABLE: Option<&'static str> = Some(
        "an application's answer shows a new client secret once, and secrets are never stored.",
    );

    /// A create or a regeneration gets a fresh secret; only its hash goes to the actor.
    async fn before(objects: &mut [BatchObject], mode: WriteMode, _: &AppState) -> Secrets {
        let mut secrets = HashMap::new();
        for object in objects {
            let Ok(fields) = &object.fields else { continue };
            if wants_secret(fields, mode == WriteMode::Upsert) {
                let secret = crypto::random_token("");
                object.secret = Some(crypto::sha256_hex(&secret));
                secrets.insert(object.key.clone(), secret);
            }
        }
        Secrets(secrets)
    }

    /// Each saved object shows its secret once, in an answer that is never cached.
    fn after(
        Secrets(mut secrets): Secrets,
        mut outcomes: Vec<ObjectOutcome>,
        caller: &Caller,
        state: &AppState,
    ) -> Reply {
        let mut shown = false;
        let mut replaced = false;
        for outcome in &mut outcomes {
            if let Some(secret) = secrets.remove(&outcome.key) {
                shown |= reveal(outcome, secret, caller, &mut replaced);
            }
        }
        if replaced {
            // The old secret's tokens were revoked with the write; forget any we cached.
            state.tokens.forget_cached_tokens();
        }
        let reply = batch_reply(ApplicationRecord::PLURAL, outcomes);
        if shown {
            reply.header(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))
        } else {
            reply
        }
    }

    /// Deleting an application revokes every token issued to it (in the delete's transaction).
    const DELETE_REVOKES_TOKENS: Option<&'static str> = Some("application_deleted");
}

/// Adds the secret to a successful object's answer and says so in its message. False when
/// the object failed: its secret was never stored and is dropped.
fn reveal(
    outcome: &mut ObjectOutcome,
    secret: String,
    caller: &Caller,
    replaced: &mut bool,
) -> bool {
    let Some((id, created)) = super::show_secret(
        outcome,
        "clientSecret",
        "clientId",
        ("client secret", secret),
    ) else {
        return false;
    };
    if !created {
        *replaced = true;
        if let Ok(saved) = &mut outcome.result {
            saved.detail = format!("Secret of {id} replaced.");
        }
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
