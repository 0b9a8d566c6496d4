//! `/employee` → `employees` (api-reference.md, Employee). GET is the generic one; writes carry
//! the caller's employee id so the actor can refuse a self-raise, and changes that affect tokens
//! (role, exit date, delete) drop the access-token cache so they bite at once.

use actix_web::web;

use crate::http::auth::Caller;
use crate::http::envelope::Reply;
use crate::http::resources::batch_reply;
use crate::http::resources::generic::{self, WriteHooks};
use crate::http::AppState;
use domain::batch::{BatchObject, WriteMode};
use domain::people::employee::EmployeeRecord;
use engine::merchant::job::ObjectOutcome;
use engine::merchant::resource::Resource;

pub fn routes(cfg: &mut web::ServiceConfig) {
    generic::routes::<EmployeeRecord>(cfg, "/employee");
}

/// Whether a write changes what tokens carry (a role, an exit date).
pub struct AffectsTokens(bool);

impl WriteHooks for EmployeeRecord {
    type Notes = AffectsTokens;

    async fn before(objects: &mut [BatchObject], _: WriteMode, _: &AppState) -> AffectsTokens {
        AffectsTokens(objects.iter().any(|o| {
            o.fields
                .as_ref()
                .is_ok_and(|f| f.contains_key("roleId") || f.contains_key("exitDate"))
        }))
    }

    fn after(
        AffectsTokens(affects): AffectsTokens,
        outcomes: Vec<ObjectOutcome>,
        _: &Caller,
        state: &AppState,
    ) -> Reply {
        if affects && outcomes.iter().any(|o| o.result.is_ok()) {
            // Cached tokens carry the role and exit date they were looked up with.
            state.tokens.forget_cached_tokens();
        }
        batch_reply(EmployeeRecord::PLURAL, outcomes)
    }

    /// Deleting an employee revokes their tokens (in the delete's transaction).
    const DELETE_REVOKES_TOKENS: Option<&'static str> = Some("employee_deleted");
}
