//! What every operation shares: the answers any request may get (`components.responses`),
//! the header parameters and their limits (each the constant its parser reads), and the
//! builders of an operation behind the token gate.

use actix_web::http::Method;
use serde_json::json;
use utoipa::openapi::extensions::{Extensions, ExtensionsBuilder};
use utoipa::openapi::path::{
    HttpMethod, Operation, OperationBuilder, Parameter, ParameterBuilder, ParameterIn, PathItem,
    PathItemBuilder,
};
use utoipa::openapi::response::{Response, ResponseBuilder};
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::{Content, Header, Ref, RefOr, Required};

use crate::schemas::{self, typed};
use api::http::auth::needed_scope;
use api::http::filters::MAX_IDS;

/// A limit the document states, as `x-limit` beside the schema that keeps it: what a
/// boundary test reads to send the limit and one past it (`tests/api/limits.rs`).
pub fn limit(schema: ObjectBuilder, what: &str, value: i64) -> ObjectBuilder {
    schema.extensions(Some(limit_extension(what, value)))
}

/// `x-limit: {<what>: <value>}`.
pub fn limit_extension(what: &str, value: impl Into<i64>) -> Extensions {
    ExtensionsBuilder::new()
        .add("x-limit", json!({ what: value.into() }))
        .build()
}

/// Answers every operation may give, under `components.responses`.
pub fn shared_responses() -> Vec<(&'static str, Response)> {
    let error = || Content::new(Some(schemas::named("ErrorEnvelope")));
    let answer = |text: &str| {
        ResponseBuilder::new()
            .description(text)
            .content("application/json", error())
            .build()
    };
    vec![
        (
            "BadRequest",
            answer("A malformed header, body or version (101)."),
        ),
        (
            "Unauthorized",
            answer("The token is missing, unknown, revoked (100) or expired (102)."),
        ),
        (
            "Forbidden",
            answer("The token's scope or the user's role does not allow this (103)."),
        ),
        ("NotFound", answer("No such record or route (104).")),
        (
            "PayloadTooLarge",
            answer("The body, file or batch is over its limit (107)."),
        ),
        (
            "UnsupportedMediaType",
            answer("The body or file is of a type not accepted (106)."),
        ),
        (
            "Unprocessable",
            answer("Every object was refused (110–113), or an Idempotency-Key was reused (114)."),
        ),
        (
            "RateLimited",
            ResponseBuilder::new()
                .description("Too many requests (108); `Retry-After` says when to come back.")
                .header("Retry-After", Header::new(schemas::integer()))
                .content("application/json", error())
                .build(),
        ),
        (
            "Unavailable",
            answer("The database is unreachable or the server is stopping (121)."),
        ),
        (
            "InternalError",
            answer("An unexpected failure (120); the request may be retried."),
        ),
        (
            "Gone",
            answer("The event log no longer reaches back to that sequence: read in full (115)."),
        ),
    ]
}

pub fn shared(status: &str) -> (String, RefOr<Response>) {
    let name = match status {
        "400" => "BadRequest",
        "401" => "Unauthorized",
        "403" => "Forbidden",
        "404" => "NotFound",
        "413" => "PayloadTooLarge",
        "415" => "UnsupportedMediaType",
        "422" => "Unprocessable",
        "429" => "RateLimited",
        "410" => "Gone",
        "500" => "InternalError",
        _ => "Unavailable",
    };
    (
        status.to_owned(),
        RefOr::Ref(Ref::new(format!("#/components/responses/{name}"))),
    )
}

pub fn header_param(
    name: &str,
    schema: impl Into<RefOr<Schema>>,
    required: bool,
    description: &str,
) -> Parameter {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Header)
        .required(if required {
            Required::True
        } else {
            Required::False
        })
        .description(Some(description))
        .schema(Some(schema))
        .build()
}

/// `x-accept-version`, under `components.parameters` as `AcceptVersion`.
pub fn version_param() -> Parameter {
    header_param(
        "x-accept-version",
        schemas::named("ApiVersion"),
        true,
        "The API version the client speaks. An application whose merchant turned \
         `legacy_clients` on may also send an old client's `0.x`, or nothing: it is served as 2.0.",
    )
}

/// Comma-separated ids, at most `max` of them.
pub fn id_list(max: usize) -> Schema {
    let pattern = format!(
        "^ ?[0-9]{{1,19}}( ?, ?[0-9]{{1,19}}){{0,{}}} ?$",
        max.saturating_sub(1)
    );
    limit(
        typed(Type::String).pattern(Some(pattern)),
        "items",
        max as i64,
    )
    .build()
    .into()
}

/// An id-list header of at most `max` ids: `storeIds` → "Comma-separated store ids".
pub fn ids_param_within(name: &str, required: bool, max: usize) -> Parameter {
    let noun: String = name
        .trim_end_matches("Ids")
        .trim_end_matches("Id")
        .chars()
        .flat_map(|c| match c.is_ascii_uppercase() {
            true => vec![' ', c.to_ascii_lowercase()],
            false => vec![c],
        })
        .collect();
    header_param(
        name,
        id_list(max),
        required,
        &format!("Comma-separated {noun} ids (at most {max})."),
    )
}

/// An id-list header of at most [`MAX_IDS`] ids, the filters' limit.
pub fn ids_param(name: &str, required: bool) -> Parameter {
    ids_param_within(name, required, MAX_IDS)
}

/// `true` or `false`.
pub fn bool_param(name: &str, required: bool, description: &str) -> Parameter {
    header_param(name, schemas::named("HeaderBoolean"), required, description)
}

/// `YYYY-MM-DD HH:MM:SS`, UTC.
pub fn date_param(name: &str, required: bool) -> Parameter {
    header_param(
        name,
        schemas::pattern(schemas::HEADER_DATE),
        required,
        "`YYYY-MM-DD HH:MM:SS`, UTC.",
    )
}

/// A whole number from `min` to `max` (a page size), `default` when not sent.
pub fn count_param(name: &str, (min, default, max): (i64, i64, i64), what: &str) -> Parameter {
    let schema = limit(
        typed(Type::Integer)
            .minimum(Some(min))
            .maximum(Some(max))
            .default(Some(json!(default))),
        "maximum",
        max,
    );
    header_param(
        name,
        schema.build(),
        false,
        &format!("{what} ({min} to {max}; {default} when not sent)."),
    )
}

/// A sequence number of an earlier answer (`x-merchant-sequence`, an event's `id`).
pub fn sequence_param(name: &str, description: &str) -> Parameter {
    let digits = api::http::delta::MAX_SEQUENCE_DIGITS;
    header_param(
        name,
        limit(
            typed(Type::String).pattern(Some(format!("^[0-9]{{1,{digits}}}$"))),
            "digits",
            digits as i64,
        )
        .build(),
        false,
        description,
    )
}

pub fn idempotency_param() -> Parameter {
    let max = api::http::idempotency::MAX_LEN;
    header_param(
        "Idempotency-Key",
        limit(
            typed(Type::String).pattern(Some(format!("^[!-~]{{1,{max}}}$"))),
            "length",
            max as i64,
        )
        .build(),
        false,
        "Repeating a write with the same key and body within 24 hours answers the stored \
         response without doing the work again.",
    )
}

pub fn json_content(schema: impl Into<RefOr<Schema>>) -> Content {
    Content::new(Some(schema))
}

pub fn ok(description: &str, schema: Schema) -> Response {
    json_ok(description, schema)
}

pub fn json_ok(description: &str, schema: impl Into<RefOr<Schema>>) -> Response {
    ResponseBuilder::new()
        .description(description)
        .content("application/json", json_content(schema))
        .build()
}

/// An operation behind the token gate: the scope its method needs on `path`, the version
/// header, and the answers every API request may give. Its tag is the path's first segment.
pub fn api_operation(
    method: &Method,
    path: &str,
    id: impl Into<String>,
    summary: impl Into<String>,
) -> OperationBuilder {
    let scope = needed_scope(method, path).as_str();
    let mut op = OperationBuilder::new()
        .operation_id(Some(id.into()))
        .summary(Some(summary.into()))
        .tag(tag_of(path))
        .security(SecurityRequirement::new("oauth", [scope]))
        .parameter_ref(Ref::new("#/components/parameters/AcceptVersion"));
    for status in ["400", "401", "403", "429", "500", "503"] {
        let (code, response) = shared(status);
        op = op.response(code, response);
    }
    op
}

/// `/register/session` → `register`.
pub fn tag_of(path: &str) -> &str {
    path.trim_start_matches('/')
        .split('/')
        .next()
        .unwrap_or("api")
}

pub fn with(mut op: OperationBuilder, statuses: &[&str]) -> OperationBuilder {
    for status in statuses {
        let (code, response) = shared(status);
        op = op.response(code, response);
    }
    op
}

/// A path's operations.
pub fn item(operations: Vec<(HttpMethod, Operation)>) -> PathItem {
    let mut builder = PathItemBuilder::new();
    for (method, operation) in operations {
        builder = builder.operation(method, operation);
    }
    builder.build()
}
