//! The routes outside the token gate: public files, health and metrics, the OAuth endpoints
//! applications call, and this document with its reference page.

use utoipa::openapi::path::{HttpMethod, OperationBuilder, PathItem};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::response::{Response, ResponseBuilder};
use utoipa::openapi::schema::Schema;
use utoipa::openapi::{Content, Required};

use crate::common::{header_param, item, json_content, json_ok, shared};
use crate::endpoints::{plain, public};
use crate::schemas::{self, named};

fn path_param(name: &str) -> utoipa::openapi::path::Parameter {
    utoipa::openapi::path::ParameterBuilder::new()
        .name(name)
        .parameter_in(utoipa::openapi::path::ParameterIn::Path)
        .required(Required::True)
        .schema(Some(schemas::pattern("^[A-Za-z0-9_-][A-Za-z0-9._-]*$")))
        .build()
}

pub(super) fn files() -> PathItem {
    let op = |id: &str| {
        public(id, "A public uploaded file", "files")
            .parameter(path_param("fileName"))
            .parameter(header_param(
                "If-None-Match",
                schemas::string(),
                false,
                "The `ETag` of a copy the client holds.",
            ))
            .response("200", plain("The file.", "image/*", schemas::binary()))
            .response(
                "304",
                ResponseBuilder::new()
                    .description("Not Modified: the copy the client holds (`If-None-Match`).")
                    .build(),
            )
            .response(shared("404").0, shared("404").1)
            .build()
    };
    item(vec![
        (HttpMethod::Get, op("getFile")),
        (HttpMethod::Head, op("headFile")),
    ])
}

pub(super) fn health() -> Vec<(&'static str, PathItem)> {
    let status = |id: &str, summary: &str, path: &str| {
        let schema = if path == "/status" {
            "Status"
        } else {
            "Health"
        };
        public(id, summary, "health").response("200", json_ok(summary, named(schema)))
    };
    let ready = status(
        "ready",
        "Ready to serve: the database answers",
        "/health/ready",
    )
    .response(shared("503").0, shared("503").1);
    let metrics = public("metrics", "Prometheus metrics", "health").response(
        "200",
        plain(
            "The text exposition format.",
            "text/plain",
            schemas::string(),
        ),
    );
    vec![
        (
            "/status",
            item(vec![(
                HttpMethod::Get,
                status("status", "The server is up", "/status").build(),
            )]),
        ),
        (
            "/health/live",
            item(vec![(
                HttpMethod::Get,
                status("live", "The process is alive", "/health/live").build(),
            )]),
        ),
        (
            "/health/ready",
            item(vec![(HttpMethod::Get, ready.build())]),
        ),
        ("/metrics", item(vec![(HttpMethod::Get, metrics.build())])),
    ]
}

/// The body of the token, revoke and introspect endpoints, described as JSON (what the spec
/// names). The server reads the same fields as `application/x-www-form-urlencoded` too (RFC
/// 6749), which the description says rather than a second media type: generators handle two
/// poorly (openapi-python-client 0.29 then writes a client that does not type-check).
fn form_or_json(
    schema: utoipa::openapi::RefOr<Schema>,
) -> utoipa::openapi::request_body::RequestBody {
    RequestBodyBuilder::new()
        .required(Some(Required::True))
        .description(Some(
            "JSON, or the same fields as `application/x-www-form-urlencoded` (RFC 6749).",
        ))
        .content("application/json", json_content(schema))
        .build()
}

fn oauth_error() -> Response {
    ResponseBuilder::new()
        .description("An OAuth error (`invalid_grant`, `invalid_client`, …).")
        .content("application/json", Content::new(Some(named("OAuthError"))))
        .build()
}

/// An endpoint clients call with a token in the body (revoke, introspect).
fn token_body() -> utoipa::openapi::request_body::RequestBody {
    form_or_json(named("TokenBody"))
}

/// An endpoint a client calls with its credentials: a bad request, a bad client and a failure
/// answer as RFC 6749 §5.2 errors, and calls may be throttled.
fn client_endpoint(id: &str, summary: &str) -> OperationBuilder {
    public(id, summary, "oauth")
        .response("400", oauth_error())
        .response("401", oauth_error())
        .response("500", oauth_error())
        .response(shared("429").0, shared("429").1)
}

/// The endpoints applications call: token, revoke, introspect, metadata.
pub(super) fn oauth() -> Vec<(&'static str, PathItem)> {
    let token = client_endpoint("token", "Exchange a code or a refresh token")
        .request_body(Some(form_or_json(named("TokenRequest"))))
        .response(
            "200",
            json_ok(
                "The token response (RFC 6749 §5.1).",
                named("TokenResponse"),
            ),
        )
        .response(shared("503").0, shared("503").1)
        .build();
    let revoke = client_endpoint("revoke", "Revoke a token and its family (RFC 7009)")
        .request_body(Some(token_body()))
        .response(
            "200",
            json_ok("Revoked, or already unknown.", named("Envelope")),
        )
        .build();
    let introspect = client_endpoint("introspect", "Describe a token (RFC 7662)")
        .request_body(Some(token_body()))
        .response(
            "200",
            json_ok(
                "`active` and, when active, the token's facts.",
                named("Introspection"),
            ),
        )
        .build();
    let metadata = public(
        "metadata",
        "Authorization server metadata (RFC 8414)",
        "oauth",
    )
    .response(
        "200",
        json_ok(
            "The endpoints and what they support.",
            named("AuthorizationServerMetadata"),
        ),
    )
    .build();
    let mut items = crate::pages::oauth_pages();
    items.extend([
        ("/oauth/token", item(vec![(HttpMethod::Post, token)])),
        ("/oauth/revoke", item(vec![(HttpMethod::Post, revoke)])),
        (
            "/oauth/introspect",
            item(vec![(HttpMethod::Post, introspect)]),
        ),
        (
            "/.well-known/oauth-authorization-server",
            item(vec![(HttpMethod::Get, metadata)]),
        ),
    ]);
    items
}

pub(super) fn contract() -> Vec<(&'static str, PathItem)> {
    let document = public("openapi", "This document", "contract")
        .response(
            "200",
            plain("OpenAPI 3.1.", "application/json", schemas::object()),
        )
        .build();
    let docs = public("docs", "The reference, for people", "contract")
        .response(
            "301",
            ResponseBuilder::new()
                .description(
                    "To `/docs/`, Swagger UI's page (not itself described: a path with a \
                     trailing slash, which linters and generators refuse).",
                )
                .build(),
        )
        .build();
    let docs_files = public("docsFiles", "The reference's page and files", "contract")
        .parameter(path_param("file"))
        .response(
            "200",
            plain(
                "HTML, scripts, styles and images, each of its own type.",
                "*/*",
                schemas::binary(),
            ),
        )
        .response(
            "404",
            ResponseBuilder::new().description("No such file.").build(),
        )
        .build();
    vec![
        ("/openapi.json", item(vec![(HttpMethod::Get, document)])),
        ("/docs", item(vec![(HttpMethod::Get, docs)])),
        ("/docs/{file}", item(vec![(HttpMethod::Get, docs_files)])),
    ]
}
