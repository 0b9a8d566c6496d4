//! `GET /user` and `GET /merchant`: who the token acts as.

use actix_web::web;
use serde_json::json;

use super::auth::Caller;
use super::envelope::Reply;
use super::error::ApiError;
use super::AppState;

pub async fn user(caller: Caller, state: web::Data<AppState>) -> Result<Reply, ApiError> {
    let employee = state
        .store
        .employee(caller.merchant_id, caller.employee_id)
        .await?
        .ok_or_else(|| ApiError::TokenInvalid {
            detail: "the token's user no longer exists".into(),
        })?;
    Ok(Reply::ok().field(
        "user",
        json!({
            "id": employee.id,
            "firstName": employee.first_name,
            "lastName": employee.last_name,
            "email": employee.email,
            "employee": {"merchantId": employee.merchant_id, "roleId": employee.role_id, "stores": {}},
        }),
    ))
}

pub async fn merchant(caller: Caller, state: web::Data<AppState>) -> Result<Reply, ApiError> {
    let merchant = state
        .store
        .merchant(caller.merchant_id)
        .await?
        .ok_or_else(|| ApiError::internal(anyhow::anyhow!("token's merchant is missing")))?;
    Ok(Reply::ok().field(
        "merchant",
        json!({"id": merchant.id, "name": merchant.name}),
    ))
}
