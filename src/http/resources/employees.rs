//! `/employee` → `employees` (api-reference.md, Employee). GET is the generic one; writes carry
//! the caller's employee id so the actor can refuse a self-raise, and changes that affect tokens
//! (role, exit date, delete) drop the access-token cache so they bite at once.

use super::generic::{self, IdHeaders};
use super::{batch_reply, delete_ids, delete_reply};
use crate::actors::merchant::job::DeleteOutcome;
use crate::actors::resource::Resource;
use crate::domain::batch::WriteMode;
use crate::domain::employee::EmployeeRecord;
use crate::http::auth::Caller;
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::{batch, AppState};
use actix_web::{web, HttpRequest};

impl IdHeaders for EmployeeRecord {
    const ID_HEADERS: [&'static str; 2] = ["employeeIds", "employeeId"];
}

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/employee")
            .route(web::get().to(generic::list::<EmployeeRecord>))
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
    let objects = batch::objects(
        document,
        EmployeeRecord::PLURAL,
        state.settings.max_batch_objects,
    )?;
    let affects_tokens = objects.iter().any(|o| {
        o.fields
            .as_ref()
            .is_ok_and(|f| f.contains_key("roleId") || f.contains_key("exitDate"))
    });
    let outcomes = state
        .merchants
        .write::<EmployeeRecord>(caller.merchant_id, mode, objects, caller.employee_id)
        .await?;
    if affects_tokens && outcomes.iter().any(|o| o.result.is_ok()) {
        // Cached tokens carry the role and exit date they were looked up with.
        state.tokens.forget_cached_tokens();
    }
    Ok(batch_reply(EmployeeRecord::PLURAL, outcomes))
}

/// Deleting an employee revokes their tokens (in the delete's transaction); the cache forgets
/// them here, so their next request is a 401 on this replica at once.
async fn delete(
    req: HttpRequest,
    caller: Caller,
    state: web::Data<AppState>,
) -> Result<Reply, ApiError> {
    let ids = delete_ids(req.headers(), &EmployeeRecord::ID_HEADERS)?;
    let results = state
        .merchants
        .delete::<EmployeeRecord>(caller.merchant_id, ids)
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
            by_employee_id = caller.employee_id,
            employee_ids = ?deleted,
            outcome = "revoked",
            "employees deleted; their tokens were revoked"
        );
    }
    Ok(delete_reply(EmployeeRecord::NOUN, results))
}
