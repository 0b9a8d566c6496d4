//! Routes that exist only when `test_hooks = true`, so tests can provoke what real traffic
//! cannot on demand: a panic inside a handler, a request that takes a while, and writes made
//! at another time.

use std::time::Duration;

use actix_web::web;

use crate::http::envelope::Reply;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/__test/panic").route(web::get().to(panic)))
        .service(web::resource("/__test/sleep/{millis}").route(web::get().to(sleep)))
        .service(web::resource("/__test/write-clock/{offset}").route(web::post().to(write_clock)))
        .service(
            web::resource("/__test/merchant/{merchant}/store/{store}/{action}")
                .route(web::post().to(probe_store)),
        );
}

async fn panic() -> Reply {
    panic!("test hook: deliberate panic");
}

async fn sleep(path: web::Path<u64>) -> Reply {
    let millis = path.into_inner().min(60_000);
    tokio::time::sleep(Duration::from_millis(millis)).await;
    Reply::ok().field("sleptMillis", millis)
}

/// Sets merchant writes' clock `offset` milliseconds from the wall clock (negative: the past),
/// so a benchmark completes a year of sales in minutes (`benches/load` scenario j).
async fn write_clock(path: web::Path<i64>) -> Reply {
    let offset = path.into_inner();
    domain::clock::set_write_offset(offset);
    Reply::ok().field("writeClockOffsetMillis", offset)
}

/// Asks a store's actor how many products it has stock for (`probe`), or makes it panic
/// (`crash`), through the merchant's supervisor.
async fn probe_store(
    path: web::Path<(i64, i64, String)>,
    state: web::Data<crate::http::AppState>,
) -> Result<Reply, crate::http::error::ApiError> {
    let (merchant_id, store_id, action) = path.into_inner();
    let stocked = state
        .merchants
        .probe_store(merchant_id, store_id, action == "crash")
        .await?;
    Ok(Reply::ok().field("stockedProducts", stocked))
}
