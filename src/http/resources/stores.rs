//! `/store` → `stores` (api-reference.md, Store).

use actix_web::{web, HttpRequest};
use serde_json::{Map, Value};

use super::{batch_reply, delete_ids, show_deleted};
use crate::actors::merchant::{DeleteStores, WriteMode, WriteStores};
use crate::http::auth::Caller;
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::{batch, filters, AppState};

const PLURAL: &str = "stores";
const ID_HEADERS: [&str; 2] = ["storeIds", "storeId"];

pub async fn list(
    req: HttpRequest,
    caller: Caller,
    state: web::Data<AppState>,
) -> Result<Reply, ApiError> {
    let ids = filters::id_list(req.headers(), "storeIds")?;
    let deleted = show_deleted(req.headers())?;
    let snapshot = state
        .merchants
        .get(caller.merchant_id)
        .await?
        .snapshot()
        .await?;
    let stores: Map<String, Value> = snapshot
        .stores
        .values()
        .filter(|s| deleted || s.delete_date.is_none())
        .filter(|s| ids.as_ref().is_none_or(|ids| ids.contains(&s.id)))
        .map(|s| (s.id.to_string(), s.to_json()))
        .collect();
    Ok(Reply::ok().field(PLURAL, Value::Object(stores)))
}

async fn write(
    req: HttpRequest,
    body: web::Bytes,
    caller: Caller,
    state: web::Data<AppState>,
    mode: WriteMode,
) -> Result<Reply, ApiError> {
    let document = batch::json_document(&req, &body)?;
    let objects = batch::objects(document, PLURAL, state.settings.max_batch_objects)?;
    let outcomes = state
        .merchants
        .write(caller.merchant_id, WriteStores { mode, objects })
        .await??;
    Ok(batch_reply(PLURAL, outcomes))
}

pub async fn post(
    req: HttpRequest,
    body: web::Bytes,
    caller: Caller,
    state: web::Data<AppState>,
) -> Result<Reply, ApiError> {
    write(req, body, caller, state, WriteMode::Upsert).await
}

pub async fn put(
    req: HttpRequest,
    body: web::Bytes,
    caller: Caller,
    state: web::Data<AppState>,
) -> Result<Reply, ApiError> {
    write(req, body, caller, state, WriteMode::UpdateOnly).await
}

pub async fn delete(
    req: HttpRequest,
    caller: Caller,
    state: web::Data<AppState>,
) -> Result<Reply, ApiError> {
    let ids = delete_ids(req.headers(), &ID_HEADERS)?;
    let results = state
        .merchants
        .write(caller.merchant_id, DeleteStores { ids })
        .await??;
    Ok(super::delete_reply("Store", results))
}
