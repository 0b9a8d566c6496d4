//! Unauthenticated operational endpoints: liveness, readiness, status and metrics.

use actix_web::http::header::{self, HeaderValue};
use actix_web::{web, HttpResponse};

use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::AppState;

pub async fn live() -> Reply {
    Reply::ok().field("status", "live")
}

/// Ready only while the database answers (and not while shutting down).
pub async fn ready(state: web::Data<AppState>) -> Result<Reply, ApiError> {
    if state.services.database_ready().await {
        Ok(Reply::ok().field("status", "ready"))
    } else {
        Err(ApiError::Unavailable("database is not answering".into()))
    }
}

pub async fn status() -> Reply {
    Reply::ok().field("status", "OK").field(
        "serverTimestamp",
        chrono::Utc::now()
            .format("%Y-%m-%dT%H:%M:%S%.3fZ")
            .to_string(),
    )
}

/// How many of the busiest merchants `/metrics` names (docs/operator.md): a bounded number of
/// series however many merchants the process serves.
const TOP_MERCHANTS: usize = 10;

/// The registry's metrics and the busiest merchants. Their ids only on the separate metrics
/// listener (`metrics_bind`): on the API's port, which anyone may reach, the ranks alone, so the
/// page tells no one which merchants exist.
fn metrics_text(state: &AppState) -> String {
    let internal = state.settings.metrics_bind.is_some();
    state.metrics.render()
        + &state
            .services
            .operator
            .usage()
            .render_top(TOP_MERCHANTS, internal)
}

pub async fn metrics(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        ))
        .body(metrics_text(&state))
}
