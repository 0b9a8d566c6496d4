//! `/supplier` and `/supplier/store` (api-reference.md Supplier; examples §2.4, §2.5). Suppliers
//! use the generic handlers; supplier stores filter by their parents too.

use actix_web::{web, HttpRequest};

use super::generic::{self, IdHeaders};
use super::show_deleted;
use crate::actors::resource::Resource;
use crate::domain::supplier::{SupplierRecord, SupplierStoreRecord};
use crate::http::auth::Caller;
use crate::http::delta;
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::{filters, AppState};

impl IdHeaders for SupplierRecord {
    const ID_HEADERS: [&'static str; 2] = ["supplierIds", "supplierId"];
}

impl IdHeaders for SupplierStoreRecord {
    const ID_HEADERS: [&'static str; 2] = ["supplierStoreIds", "supplierStoreId"];
}

/// GET `/supplier/store`: by own ids (`supplierStoreIds`) and by parent (`supplierIds`).
async fn list_stores(
    req: HttpRequest,
    caller: Caller,
    state: web::Data<AppState>,
) -> Result<Reply, ApiError> {
    let ids = filters::id_list_any(req.headers(), &SupplierStoreRecord::ID_HEADERS)?;
    let suppliers = filters::id_list_any(req.headers(), &SupplierRecord::ID_HEADERS)?;
    let deleted = show_deleted(req.headers())?;
    let snapshot = state.merchants.snapshot(caller.merchant_id).await?;
    let event = SupplierStoreRecord::EVENT;
    let delta::Narrowed { ids, deleted } =
        delta::narrow(req.headers(), &state, &snapshot, &[event], ids, deleted).await?;
    let records = generic::render::<SupplierStoreRecord>(&snapshot, ids.as_ref(), deleted, |s| {
        suppliers
            .as_ref()
            .is_none_or(|parents| parents.contains(&s.supplier_id))
    });
    Ok(delta::positioned(
        Reply::ok().raw_field("supplierStores", records),
        snapshot.event_seq,
    ))
}

/// Both paths are exact, so neither shadows the other.
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/supplier/store")
            .route(web::get().to(list_stores))
            .route(web::post().to(generic::post::<SupplierStoreRecord>))
            .route(web::put().to(generic::put::<SupplierStoreRecord>))
            .route(web::delete().to(generic::delete::<SupplierStoreRecord>)),
    );
    generic::routes::<SupplierRecord>(cfg, "/supplier");
}
