//! `GET /user` and `GET /merchant`: who the token acts as, from the merchant's snapshot.

use actix_web::web;
use serde_json::json;

use super::auth::Caller;
use super::envelope::Reply;
use super::error::ApiError;
use super::AppState;
use crate::domain::employee::EmployeeRecord;

pub async fn user(caller: Caller, state: web::Data<AppState>) -> Result<Reply, ApiError> {
    let snapshot = state.merchants.snapshot(caller.merchant_id).await?;
    let employee = snapshot
        .find::<EmployeeRecord>(caller.employee_id)
        .ok_or_else(|| ApiError::TokenInvalid {
            detail: "the token's user no longer exists".into(),
        })?;
    let record = employee.to_json();
    Ok(Reply::ok().field(
        "user",
        json!({
            "id": employee.id,
            "firstName": employee.first_name,
            "lastName": employee.last_name,
            "email": employee.email,
            "employee": {"merchantId": caller.merchant_id, "roleId": employee.role.id(), "stores": record["stores"]},
        }),
    ))
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
