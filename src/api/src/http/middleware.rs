//! The outermost layer: request id, timing, panic containment, the envelope on every JSON
//! answer, `x-api-version`, metrics and the one log line per request.

use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::middleware::Next;
use actix_web::{web, HttpMessage};
use futures_util::FutureExt;

use crate::http::auth::Caller;
use crate::http::envelope::{PendingEnvelope, API_VERSION, CODE_BASE_VERSION};
use crate::http::error::ApiError;
use crate::http::AppState;

pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// When the request arrived and its id, for handlers that need them.
#[derive(Clone, Debug)]
pub struct RequestMeta {
    pub started: Instant,
    pub request_id: String,
}

pub async fn envelope_layer(
    req: ServiceRequest,
    next: Next<BoxBody>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let started = Instant::now();
    let request_id = uuid::Uuid::new_v4().to_string();
    req.extensions_mut().insert(RequestMeta {
        started,
        request_id: request_id.clone(),
    });
    let state = req.app_data::<web::Data<AppState>>().cloned();
    let state = state.as_ref().map(|s| s.get_ref());
    let method = req.method().to_string();
    let path = req.path().to_owned();

    let response = if let Some(err) = state.and_then(|s| declared_too_large(s, &req)) {
        req.error_response(err)
    } else {
        let deadline = state.map_or(0, |s| s.settings.request_timeout_secs);
        let handled = AssertUnwindSafe(next.call(req)).catch_unwind();
        let answered = if deadline == 0 {
            Ok(handled.await)
        } else {
            tokio::time::timeout(Duration::from_secs(deadline), handled).await
        };
        match answered {
            Ok(Ok(Ok(res))) => res,
            Ok(Ok(Err(err))) => return Err(err),
            Ok(Err(panic)) => return Err(panicked(&*panic, state, &method, request_id)),
            Err(_) => return Err(timed_out(deadline, state, &method, &path, request_id)),
        }
    };

    let mut response = finalize(response, started, &method, &path);
    let headers = response.headers_mut();
    headers.insert(API_VERSION, HeaderValue::from_static(CODE_BASE_VERSION));
    if let Ok(v) = HeaderValue::from_str(&request_id) {
        headers.insert(REQUEST_ID, v);
    }

    record(&response, state, &method, &request_id, started);
    Ok(response)
}

/// The request's metrics and its one log line.
fn record(
    response: &ServiceResponse<BoxBody>,
    state: Option<&AppState>,
    method: &str,
    request_id: &str,
    started: Instant,
) {
    let route = response
        .request()
        .match_pattern()
        .unwrap_or_else(|| "unmatched".to_owned());
    let status = response.status();
    let elapsed = started.elapsed();
    if let Some(state) = state {
        if status == StatusCode::SERVICE_UNAVAILABLE && !route.starts_with("/health") {
            state.services.note_unavailable();
        }
        let labels = [method, route.as_str(), status.as_str()];
        state.metrics.http_requests.with_label_values(&labels).inc();
        state
            .metrics
            .http_request_duration
            .with_label_values(&labels)
            .observe(elapsed.as_secs_f64());
    }
    let merchant_id = response
        .request()
        .extensions()
        .get::<Caller>()
        .map(|c| c.merchant_id);
    tracing::info!(
        target: "merchantd::http",
        method = %method,
        route = %route,
        status = status.as_u16(),
        duration_ms = elapsed.as_secs_f64() * 1000.0,
        request_id = %request_id,
        merchant_id = merchant_id,
        "request"
    );
}

/// The handler did not answer within `request_timeout_secs` (a database that stopped
/// answering). The request went with the dropped handler, as after a panic, so the error is
/// returned for actix to render (a complete envelope). What the handler waited on goes on
/// alone: a write already handed to its merchant's actor may still commit, as after any 503.
fn timed_out(
    deadline: u64,
    state: Option<&AppState>,
    method: &str,
    path: &str,
    request_id: String,
) -> actix_web::Error {
    if let Some(state) = state {
        state.services.note_unavailable();
    }
    tracing::warn!(
        target: "merchantd::http",
        method = %method,
        path = %path,
        status = 503,
        request_id = %request_id,
        "no answer within request_timeout_secs ({deadline} s)"
    );
    ApiError::Unavailable(format!("no answer within {deadline} s")).into()
}

/// A handler panicked: the request went down with it, so there is no ServiceResponse to
/// build. The error is returned for actix to render (ApiError renders a complete envelope body
/// on its own for exactly this path).
fn panicked(
    panic: &(dyn std::any::Any + Send),
    state: Option<&AppState>,
    method: &str,
    request_id: String,
) -> actix_web::Error {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-text panic payload".into());
    if let Some(state) = state {
        let labels = [method, "unknown", "500"];
        state.metrics.http_requests.with_label_values(&labels).inc();
    }
    tracing::error!(
        target: "merchantd::http",
        method = %method,
        status = 500,
        request_id = %request_id,
        "handler panicked"
    );
    PanicError {
        request_id,
        cause: ApiError::internal(anyhow::anyhow!("handler panicked: {what}")),
    }
    .into()
}

/// Rejects a body whose declared length is over the limit before reading any of it.
fn declared_too_large(state: &AppState, req: &ServiceRequest) -> Option<ApiError> {
    let declared: u64 = req
        .headers()
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let limit = if req.path() == "/uploader" {
        state.settings.max_upload_bytes
    } else {
        state.settings.max_body_bytes
    } as u64;
    (declared > limit).then(|| ApiError::PayloadTooLarge {
        detail: format!("The body is {declared} bytes; at most {limit} are allowed."),
    })
}

/// Writes the envelope: from the [`PendingEnvelope`] a handler or error left, or, for a bare
/// error response made by actix itself, from its status.
fn finalize(
    mut res: ServiceResponse<BoxBody>,
    started: Instant,
    method: &str,
    path: &str,
) -> ServiceResponse<BoxBody> {
    let pending = res
        .response_mut()
        .extensions_mut()
        .remove::<PendingEnvelope>();
    let is_page = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("text/html"));
    let pending = match pending {
        Some(p) => p,
        // The authorization pages answer 4xx as HTML a person reads; they keep their body.
        None if is_page => return res,
        None if res.status().is_client_error() || res.status().is_server_error() => {
            let cause = res.response().error().map(|e| e.to_string());
            ApiError::from_status(res.status(), method, path, cause).envelope()
        }
        None => return res,
    };
    let body = pending.render(started.elapsed().as_millis() as u64);
    res.map_body(|head, _| {
        head.headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        body.boxed()
    })
}

/// A handler panic, answered as a 500 that still carries the request id.
#[derive(Debug, thiserror::Error)]
#[error("{cause}")]
struct PanicError {
    request_id: String,
    cause: ApiError,
}

impl actix_web::ResponseError for PanicError {
    fn status_code(&self) -> actix_web::http::StatusCode {
        self.cause.status_code()
    }

    fn error_response(&self) -> actix_web::HttpResponse {
        let mut response = self.cause.error_response();
        if let Ok(v) = HeaderValue::from_str(&self.request_id) {
            response.headers_mut().insert(REQUEST_ID, v);
        }
        response
    }
}
