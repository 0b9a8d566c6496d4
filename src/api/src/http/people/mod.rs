//! The routes of who acts for a merchant: employees and applications, and the one-time
//! secrets their writes make.

pub mod applications;
pub mod employees;
pub mod secrets;

use actix_web::web;

pub fn routes(cfg: &mut web::ServiceConfig) {
    employees::routes(cfg);
    applications::routes(cfg);
}
