//! The API's contract as an OpenAPI 3.1 document (utoipa's model), built from the code: the
//! resources' names, id headers and scopes come from the traits the handlers use, their fields
//! from the validators' [`Shape`](crate::domain::fields::Shape)s, the examples from
//! `../shared/examples.md` (extracted into `examples.json`). Served at `/openapi.json`, checked
//! in at `docs/openapi.json` (`merchantd openapi` writes it), read by people at `/docs`.

mod catalogue;
mod endpoints;
mod paths;
pub mod schemas;

use std::sync::OnceLock;

use actix_web::http::header;
use actix_web::{web, HttpResponse};
use utoipa::openapi::security::{
    AuthorizationCode, Flow, HttpAuthScheme, HttpBuilder, OAuth2, Scopes, SecurityScheme,
};
use utoipa::openapi::{ComponentsBuilder, InfoBuilder, OpenApi, OpenApiBuilder, Server};
use utoipa_swagger_ui::{Config, SwaggerUi};

use super::messages::Message;

/// The document, built once: it depends on the code only.
pub fn document() -> &'static OpenApi {
    static DOCUMENT: OnceLock<OpenApi> = OnceLock::new();
    DOCUMENT.get_or_init(build)
}

/// The document as the checked-in `docs/openapi.json` holds it (pretty, newline-terminated).
pub fn pretty() -> String {
    let mut text = document()
        .to_pretty_json()
        .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    text.push('\n');
    text
}

fn compact() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| document().to_json().unwrap_or_default())
}

/// `/openapi.json` and the reference at `/docs` (Swagger UI, vendored from crates.io: a
/// self-hosted server works offline). Neither needs a token.
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/openapi.json").route(web::get().to(serve)))
        .service(web::resource("/docs").route(web::get().to(to_docs)))
        .service(SwaggerUi::new("/docs/{_:.*}").config(Config::new(["/openapi.json"])));
}

async fn serve() -> HttpResponse {
    HttpResponse::Ok()
        .content_type(mime_json())
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .body(compact())
}

fn mime_json() -> header::ContentType {
    header::ContentType::json()
}

async fn to_docs() -> HttpResponse {
    HttpResponse::MovedPermanently()
        .insert_header((header::LOCATION, "/docs/"))
        .finish()
}

fn build() -> OpenApi {
    let mut components = ComponentsBuilder::new()
        .schema("Api", schemas::api())
        .schema("Error", schemas::error())
        .security_scheme("oauth", oauth_scheme())
        .security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    for (name, response) in paths::shared_responses() {
        components = components.response(name, response);
    }
    for (name, schema) in paths::record_schemas() {
        components = components.schema(name, schema);
    }
    OpenApiBuilder::new()
        .info(
            InfoBuilder::new()
                .title("merchantd")
                .version(crate::http::envelope::CODE_BASE_VERSION)
                .description(Some(description()))
                .build(),
        )
        .servers(Some([Server::new("/")]))
        .paths(paths::paths())
        .components(Some(components.build()))
        .build()
}

fn oauth_scheme() -> SecurityScheme {
    let scopes = Scopes::from_iter([
        ("read", "Read the merchant's records."),
        ("write", "Create and change records."),
        ("admin", "Delete records and manage applications."),
    ]);
    SecurityScheme::OAuth2(OAuth2::new([Flow::AuthorizationCode(
        AuthorizationCode::new("/oauth/authorize", "/oauth/token", scopes),
    )]))
}

/// The introduction, with the message catalogue generated from [`Message`].
fn description() -> String {
    let mut text = String::from(
        "A multi-tenant merchant commerce API. Every API request sends `Authorization: Bearer \
         <token>` (or `OAuth <token>`) and `x-accept-version: 2.0`; every answer carries the \
         `api` envelope, and every answer with status 400 or more a top-level `error` object. \
         Write bodies are `{\"<plural>\": {\"<clientKey>\": {...}}}`; reads answer collections \
         keyed by id. Filters are request headers. Writes accept an `Idempotency-Key`.\n\n\
         | id | code | HTTP |\n|---|---|---|\n",
    );
    for message in Message::ALL {
        text.push_str(&format!(
            "| {} | {} | {} |\n",
            message.id(),
            message.code(),
            message.status()
        ));
    }
    text
}
