//! The catalogue's routes: stores, categories, products (their list reads stock), suppliers,
//! promotions, and the catalogue file (import and export).

pub mod file;
pub mod products;
pub mod promotions;
pub mod suppliers;

use actix_web::web;
use domain::catalogue::{category::CategoryRecord, product::ProductRecord, store::StoreRecord};

use crate::http::resources::{generic, with_list};

pub fn routes(cfg: &mut web::ServiceConfig) {
    generic::routes::<StoreRecord>(cfg, "/store");
    generic::routes::<CategoryRecord>(cfg, "/category");
    suppliers::routes(cfg);
    promotions::routes(cfg);
    with_list::<ProductRecord, _, _>(cfg, "/product", products::list);
    file::routes(cfg);
}
