//! `/application` → `applications` (api-reference.md, Application; examples §2.7). Writes need
//! `admin` (the gate checks it). A create or a `regenerateSecret` gets a fresh client secret:
//! it is generated here, only its SHA-256 goes to the merchant actor (and the database), and the
//! clear secret lives just long enough to be added to this one answer, sent with
//! `Cache-Control: no-store`. Nothing ever reads it back.

use actix_web::web;

use crate::http::auth::Caller;
use crate::http::envelope::Reply;
use crate::http::people::secrets::{Secrets, Shown};
use crate::http::resources::generic::{self, WriteHooks};
use crate::http::AppState;
use domain::batch::{BatchObject, WriteMode};
use domain::crypto;
use domain::people::application::{wants_secret, ApplicationRecord};
use engine::merchant::job::ObjectOutcome;
use engine::merchant::resource::Resource;

pub fn routes(cfg: &mut web::ServiceConfig) {
    generic::routes::<ApplicationRecord>(cfg, "/application");
}

impl WriteHooks for ApplicationRecord {
    type Notes = Secrets;

    const NOT_REPLAYABLE: Option<&'static str> = Some(
        "an application's answer shows a new client secret once, and secrets are never stored.",
    );

    /// A create or a regeneration gets a fresh secret; only its hash goes to the actor.
    async fn before(objects: &mut [BatchObject], mode: WriteMode, _: &AppState) -> Secrets {
        Secrets::draw(objects, mode, wants_secret, || {
            let secret = crypto::random_token("");
            let hash = crypto::sha256_hex(&secret);
            (secret, hash)
        })
    }

    /// Each saved object shows its secret once, in an answer that is never cached.
    fn after(
        secrets: Secrets,
        outcomes: Vec<ObjectOutcome>,
        caller: &Caller,
        state: &AppState,
    ) -> Reply {
        let mut replaced = false;
        let reply = secrets.reveal(ApplicationRecord::PLURAL, SHOWN, outcomes, |outcome, id| {
            replaced = true;
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
        });
        if replaced {
            // The old secret's tokens were revoked with the write; forget any we cached.
            state.tokens.forget_cached_tokens();
        }
        reply
    }

    /// Deleting an application revokes every token issued to it (in the delete's transaction).
    const DELETE_REVOKES_TOKENS: Option<&'static str> = Some("application_deleted");
}

const SHOWN: Shown = Shown {
    field: "clientSecret",
    after: "clientId",
    what: "client secret",
};
