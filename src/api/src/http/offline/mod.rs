//! The offline till's routes: sales synced later, and the digests a till compares its copy
//! with.

mod digest;
mod sync;

use actix_web::web;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/basket/sync").route(web::post().to(sync::sync)));
    cfg.service(web::resource("/digest").route(web::get().to(digest::digest)));
}
