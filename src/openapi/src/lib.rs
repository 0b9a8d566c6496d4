//! The API's contract as an OpenAPI 3.1 document (utoipa's model), built from the code: each
//! record collection's path, names, fields, filters and limits come from its declaration, the
//! other limits from the constants their parsers read, the scopes from the gate's own rule, and
//! the examples from real exchanges the tests recorded. Served at `/openapi.json`, checked in at
//! `docs/openapi.json` (`merchantd openapi` writes it), read by people at `/docs`.

mod answers;
mod catalogue;
mod common;
mod endpoints;
mod examples;
mod finish;
mod offline;
mod operator;
mod pages;
mod paths;
mod pricing;
mod prose;
mod public;
mod records;
mod reference;
pub mod schemas;
pub mod tables;
#[cfg(test)]
mod tests;
mod till;

use std::sync::OnceLock;

use serde_json::Value;

use actix_web::http::header;
use actix_web::{web, HttpResponse};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{
    ComponentsBuilder, InfoBuilder, LicenseBuilder, OpenApi, OpenApiBuilder, Server,
};

use api::http::messages::Message;

/// The document, built once: it depends on the code only.
pub fn document() -> &'static Value {
    static DOCUMENT: OnceLock<Value> = OnceLock::new();
    DOCUMENT.get_or_init(|| {
        let built = serde_json::to_value(build()).unwrap_or_default();
        finish::finish(built)
    })
}

/// The document as the checked-in `docs/openapi.json` holds it (pretty, newline-terminated).
pub fn pretty() -> String {
    let mut text = serde_json::to_string_pretty(document())
        .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    text.push('\n');
    text
}

fn compact() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| serde_json::to_string(document()).unwrap_or_default())
}

/// `/openapi.json` and the reference at `/docs` (Swagger UI, vendored from crates.io: a
/// self-hosted server works offline). Neither needs a token.
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/openapi.json").route(web::get().to(serve)))
        .service(web::resource("/docs").route(web::get().to(to_docs)))
        .service(web::resource("/docs/").route(web::get().to(reference::page)))
        .service(web::resource("/docs/{file}").route(web::get().to(reference::file)));
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
        .security_scheme("oauth", oauth_scheme())
        .security_scheme(operator::SCHEME, operator::scheme())
        .parameter("AcceptVersion", common::version_param());
    for (name, schema) in schemas::shared()
        .into_iter()
        .chain(answers::all())
        .chain(catalogue::schemas())
        .chain(pricing::schemas())
        .chain(till::schemas())
        .chain(offline::schemas())
        .chain(operator::schemas())
    {
        components = components.schema(name, schema);
    }
    for (name, response) in common::shared_responses() {
        components = components.response(name, response);
    }
    for (name, schema) in paths::record_schemas() {
        components = components.schema(name, schema);
    }
    OpenApiBuilder::new()
        .info(
            InfoBuilder::new()
                .title("merchantd")
                .version(api::http::envelope::CODE_BASE_VERSION)
                .description(Some(description()))
                .contact(Some(
                    utoipa::openapi::ContactBuilder::new()
                        .name(Some("merchantd maintainers"))
                        .build(),
                ))
                .license(Some(
                    LicenseBuilder::new()
                        .name("Apache-2.0")
                        .identifier(Some("Apache-2.0"))
                        .build(),
                ))
                .build(),
        )
        .servers(Some([Server::new("/")]))
        .paths(paths::paths())
        .components(Some(components.build()))
        .build()
}

/// One scheme for every API operation, whose requirement names the scope it needs (OpenAPI 3.1
/// lets any scheme list required roles). An HTTP bearer scheme, not an `oauth2` one: the token
/// comes from OAuth 2.0, but generators write an `oauth2` token into `Authorization` as it is,
/// without `Bearer ` (openapi-generator's typescript-fetch), which the server refuses.
fn oauth_scheme() -> SecurityScheme {
    SecurityScheme::Http(
        HttpBuilder::new()
            .scheme(HttpAuthScheme::Bearer)
            .bearer_format("opaque")
            .description(Some(
                "An access token (`mcd_at_…`) from the OAuth 2.0 authorization code flow with \
                 PKCE: `GET /oauth/authorize`, then `POST /oauth/token` (endpoints and \
                 capabilities at `/.well-known/oauth-authorization-server`). Scopes: `read` \
                 reads the merchant's records, `write` creates and changes them, `admin` \
                 deletes records and manages applications; each operation names the one it \
                 needs.",
            ))
            .build(),
    )
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
