//! Routes that exist only when `test_hooks = true`, so tests can provoke what real traffic
//! cannot on demand: a panic inside a handler and a request that takes a while.

use std::time::Duration;

use actix_web::web;

use super::envelope::Reply;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/__test/panic").route(web::get().to(panic)))
        .service(web::resource("/__test/sleep/{millis}").route(web::get().to(sleep)));
}

async fn panic() -> Reply {
    panic!("test hook: deliberate panic");
}

async fn sleep(path: web::Path<u64>) -> Reply {
    let millis = path.into_inner().min(60_000);
    tokio::time::sleep(Duration::from_millis(millis)).await;
    Reply::ok().field("sleptMillis", millis)
}
