//! The till's routes: registers, their sessions with the session report, and cash paid in
//! and out.

mod sessions;

use actix_web::web;
use domain::till::register::RegisterRecord;
use domain::till::session::{CashMovementRecord, SessionRecord};

use crate::http::resources::generic;

pub fn routes(cfg: &mut web::ServiceConfig) {
    generic::routes::<RegisterRecord>(cfg, "/register");
    cfg.service(web::resource("/register/session/report").route(web::get().to(sessions::report)));
    generic::routes::<SessionRecord>(cfg, "/register/session");
    generic::routes::<CashMovementRecord>(cfg, "/register/cash");
}
