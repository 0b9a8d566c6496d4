//! Stock's routes: supplier invoices received, stock counts and the stock ledger.

pub mod counts;
pub mod ledger;

use actix_web::web;
use domain::stock::count::StockReconciliation;
use domain::stock::invoice::InvoiceRecord;

use crate::http::resources::with_list;
use crate::http::sales::records;

pub fn routes(cfg: &mut web::ServiceConfig) {
    with_list::<InvoiceRecord, _, _>(cfg, "/invoice", records::list::<InvoiceRecord>);
    with_list::<StockReconciliation, _, _>(cfg, "/stock/reconcile", counts::list);
    cfg.service(web::resource("/stock/movement").route(web::get().to(ledger::movements)));
}
