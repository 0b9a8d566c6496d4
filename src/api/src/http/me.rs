//! `GET /user` and `GET /merchant`: who the token acts as, from the merchant's snapshot.

use actix_web::web;
use serde_json::json;

use crate::http::auth::Caller;
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::AppState;
use crate::views::{people, Snapshot};

pub async fn user(caller: Caller, state: web::Data<AppState>) -> Result<Reply, ApiError> {
    let snapshot = Snapshot::of(&state.merchants, caller.merchant_id).await?;
    let user =
        people::user(&snapshot, caller.employee_id).ok_or_else(|| ApiError::TokenInvalid {
            detail: "the token's user no longer exists".into(),
        })?;
    Ok(Reply::ok().raw_field("user", user))
}

pub async fn merchant(caller: Caller, state: web::Data<AppState>) -> Result<Reply, ApiError> {
    let merchant = state
        .services
        .merchant(caller.merchant_id)
        .await?
        .ok_or_else(|| ApiError::internal(anyhow::anyhow!("token's merchant is missing")))?;
    Ok(Reply::ok().field(
        "merchant",
        json!({"id": merchant.id, "name": merchant.name}),
    ))
}
