//! The HTTP surface: routes, extractors, the envelope and the error mapping.

mod account;
pub mod auth;
pub mod batch;
pub mod catalogue;
pub mod customers;
pub mod delta;
pub mod envelope;
pub mod error;
pub mod events;
pub mod filters;
pub mod fleet;
pub mod health;
pub mod idempotency;
pub mod logs;
mod me;
pub mod messages;
pub mod middleware;
pub mod oauth;
pub mod offline;
pub mod people;
pub mod rate;
pub mod resources;
pub mod sales;
pub mod stock;
mod test_hooks;
pub mod till;
pub mod uploads;
pub mod version;
pub mod webhooks;

use std::sync::Arc;

use actix_web::error::{JsonPayloadError, PayloadError};
use actix_web::middleware::{from_fn, Compress};
use actix_web::{web, HttpRequest};

use config::Settings;
use engine::services::Services;
use engine::{Merchants, TokenActors};
use error::ApiError;
use metrics::Metrics;

/// Everything handlers share. Built once per server; no globals.
pub struct AppState {
    pub settings: Arc<Settings>,
    pub metrics: Metrics,
    /// OAuth state: grants, access tokens, sessions, codes.
    pub tokens: TokenActors,
    /// The authorization server's rate limits.
    pub oauth: oauth::OAuth,
    pub merchants: Merchants,
    /// Logs, files, the report, the merchant directory, database health.
    pub services: Services,
    /// The API's rate limits per token family and per merchant.
    pub limits: Arc<rate::ApiLimits>,
    /// Event streams open, per token family.
    pub streams: Arc<events::OpenStreams>,
}

/// Registers every route and the layers around them; `documents` are the public routes that
/// describe the API (the OpenAPI document and its reader), served before the API's gate.
pub fn configure(
    cfg: &mut web::ServiceConfig,
    state: web::Data<AppState>,
    serve_metrics: bool,
    documents: fn(&mut web::ServiceConfig),
) {
    let limit = state.settings.max_body_bytes;
    let test_hooks = state.settings.test_hooks;
    cfg.app_data(state)
        .app_data(
            web::JsonConfig::default()
                .limit(limit)
                .error_handler(|err, req| json_error(err, req).into()),
        )
        .app_data(web::FormConfig::default().limit(limit))
        .app_data(web::PayloadConfig::default().limit(limit))
        .service(web::resource("/status").route(web::get().to(health::status)))
        .service(web::resource("/health/live").route(web::get().to(health::live)))
        .service(web::resource("/health/ready").route(web::get().to(health::ready)))
        .configure(uploads::public_routes)
        .configure(documents);
    cfg.configure(oauth::configure);
    cfg.configure(account::configure);
    // The operator's realm, before the API's catch-all scope: its own gate, its own tokens.
    cfg.configure(fleet::operator::configure);
    if serve_metrics {
        cfg.service(web::resource("/metrics").route(web::get().to(health::metrics)));
    }
    if test_hooks {
        test_hooks::configure(cfg);
    }
    // Everything else is the API: authorization first, then the version, then the route.
    cfg.service(
        web::scope("")
            .wrap(from_fn(auth::api_gate))
            .service(web::resource("/user").route(web::get().to(me::user)))
            .service(web::resource("/merchant").route(web::get().to(me::merchant)))
            .configure(resources::routes)
            .configure(logs::routes)
            .configure(uploads::routes)
            .configure(events::routes)
            .default_service(web::to(not_found)),
    );
}

/// Builds the actix `App` for one worker.
pub fn app(
    state: web::Data<AppState>,
    serve_metrics: bool,
    documents: fn(&mut web::ServiceConfig),
) -> actix_web::App<
    impl actix_web::dev::ServiceFactory<
        actix_web::dev::ServiceRequest,
        Config = (),
        Response = actix_web::dev::ServiceResponse<impl actix_web::body::MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    actix_web::App::new()
        .configure(|cfg| configure(cfg, state, serve_metrics, documents))
        .wrap(from_fn(middleware::envelope_layer))
        .wrap(Compress::default())
}

async fn not_found(req: HttpRequest) -> Result<actix_web::HttpResponse, ApiError> {
    Err(ApiError::NotFound {
        detail: format!("No route {} {}.", req.method(), req.path()),
    })
}

fn json_error(err: JsonPayloadError, _req: &HttpRequest) -> ApiError {
    match err {
        JsonPayloadError::OverflowKnownLength { length, limit } => ApiError::PayloadTooLarge {
            detail: format!("The body is {length} bytes; at most {limit} are allowed."),
        },
        JsonPayloadError::Overflow { limit } => ApiError::PayloadTooLarge {
            detail: format!("The body is over {limit} bytes."),
        },
        JsonPayloadError::ContentType => ApiError::UnsupportedMediaType {
            detail: "Content-Type: the body must be application/json.".into(),
        },
        JsonPayloadError::Deserialize(e) => {
            ApiError::bad_body(format!("The body is not valid JSON: {e}."))
        }
        JsonPayloadError::Payload(PayloadError::Overflow) => ApiError::PayloadTooLarge {
            detail: "The body is over the limit.".into(),
        },
        other => ApiError::bad_body(format!("The body could not be read: {other}.")),
    }
}
