//! `/supplier` and `/supplier/store` (api-reference.md Supplier; examples §2.4, §2.5). Both use
//! the generic handlers; supplier stores also filter by their parents (`supplierIds`, declared
//! on `SupplierStoreRecord::supplier_id`).

use actix_web::web;

use crate::http::resources::generic;
use domain::catalogue::supplier::{SupplierRecord, SupplierStoreRecord};

/// Both paths are exact, so neither shadows the other.
pub fn routes(cfg: &mut web::ServiceConfig) {
    generic::routes::<SupplierStoreRecord>(cfg, "/supplier/store");
    generic::routes::<SupplierRecord>(cfg, "/supplier");
}
