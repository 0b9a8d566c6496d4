//! Customers' routes: the records with their search, and a customer's export and erasure.

pub mod customers;

use actix_web::web;
use domain::customers::customer::CustomerRecord;

use crate::http::resources::with_list;

pub fn routes(cfg: &mut web::ServiceConfig) {
    customers::routes(cfg);
    with_list::<CustomerRecord, _, _>(cfg, "/customer", customers::list);
}
