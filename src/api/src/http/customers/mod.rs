//! Customers' routes: the records with their search, and a customer's export and erasure.

pub mod records;

use actix_web::web;
use domain::customers::customer::CustomerRecord;

use crate::http::resources::with_list;

pub fn routes(cfg: &mut web::ServiceConfig) {
    records::routes(cfg);
    with_list::<CustomerRecord, _, _>(cfg, "/customer", records::list);
}
