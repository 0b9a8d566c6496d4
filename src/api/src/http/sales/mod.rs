//! Selling's routes: baskets (priced as they are written, or only calculated), payments,
//! orders, and the reports read from completed sales.

pub mod calculate;
pub mod records;
pub mod report;

use actix_web::web;
use domain::sales::basket::BasketRecord;
use domain::sales::order::OrderRecord;
use domain::sales::payment::TransactionRecord;

use crate::http::resources::with_list;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/basket/calculate").route(web::post().to(calculate::basket)));
    with_list::<BasketRecord, _, _>(cfg, "/basket", records::list::<BasketRecord>);
    with_list::<TransactionRecord, _, _>(cfg, "/transaction", records::list::<TransactionRecord>);
    with_list::<OrderRecord, _, _>(cfg, "/order", records::list::<OrderRecord>);
    cfg.service(web::resource("/report/basket").route(web::get().to(report::basket)));
    cfg.service(web::resource("/report/sales").route(web::get().to(report::sales)));
    cfg.service(web::resource("/report").route(web::get().to(report::legacy)));
}
