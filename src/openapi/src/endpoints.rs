//! The routes that are not record collections: who am I, logs, uploads, the report, public
//! files, health, metrics, the OAuth endpoints, and this document itself (the HTML pages are in
//! `pages.rs`, the answers' schemas in `answers.rs`).

use actix_web::http::Method;
use serde_json::Value;
use utoipa::openapi::path::{HttpMethod, OperationBuilder, PathItem};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::response::{Response, ResponseBuilder};
use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaType, Type};
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::{Content, RefOr, Required};

use crate::paths::{
    api_operation, filter_param, header_param, ids_param, item, json_content, json_ok, ok,
    request_example, response_example, shared, with, Example, Filter,
};
use crate::schemas::{self, named};

pub(super) fn envelope_with(
    field: &'static str,
    schema: impl Into<utoipa::openapi::RefOr<Schema>>,
) -> Schema {
    schemas::envelope(vec![(field, schema.into())])
}

pub(super) fn plain(description: &str, media: &str, schema: Schema) -> Response {
    ResponseBuilder::new()
        .description(description)
        .content(media, Content::new(Some(schema)))
        .build()
}

/// An operation outside the token gate (no version header, no scope): `security: []`.
pub(super) fn public(id: &str, summary: &str, tag: &str) -> OperationBuilder {
    OperationBuilder::new()
        .operation_id(Some(id))
        .summary(Some(summary))
        .tag(tag)
        .securities(Some(Vec::<SecurityRequirement>::new()))
}

fn me(all: &[Example]) -> Vec<(&'static str, PathItem)> {
    let user = api_operation(
        &Method::GET,
        "/user",
        "getUser".into(),
        "The token's user".into(),
    )
    .response(
        "200",
        ok(
            "The employee the token acts for.",
            envelope_with("user", named("User")),
            response_example(all, "GET", "/user", 200),
        ),
    );
    let merchant = api_operation(
        &Method::GET,
        "/merchant",
        "getMerchant".into(),
        "The token's merchant".into(),
    )
    .response(
        "200",
        ok(
            "The merchant.",
            envelope_with("merchant", named("Merchant")),
            None,
        ),
    );
    vec![
        ("/user", item(vec![(HttpMethod::Get, user.build())])),
        ("/merchant", item(vec![(HttpMethod::Get, merchant.build())])),
    ]
}

fn log_headers(op: OperationBuilder, required: bool) -> OperationBuilder {
    let text = |name, what| {
        header_param(
            name,
            schemas::pattern("^[!-~][ -~]{0,199}$"),
            required,
            what,
        )
    };
    op.parameter(text("tag", "Comma-separated tags."))
        .parameter(text("object", "An object type key, such as `STORE`."))
        .parameter(text("identifier", "That object's id, as text."))
}

fn logs(all: &[Example]) -> PathItem {
    let id = || {
        header_param(
            "id",
            schemas::pattern("^[!-~]{1,250}$"),
            false,
            "A log id (`STORE-9:1`).",
        )
    };
    let logs = || envelope_with("logs", schemas::keyed(named("Log")));
    let list = log_headers(
        api_operation(&Method::GET, "/log", "listLogs".into(), "Read logs".into()),
        false,
    )
    .parameter(id())
    .response("200", ok("The logs found.", logs(), None));
    let post = log_headers(
        api_operation(
            &Method::POST,
            "/log",
            "createLog".into(),
            "File a log".into(),
        ),
        true,
    )
    .parameter(id())
    .parameter(filter_param((Filter::Bool("completed"), false)))
    .request_body(Some(
        RequestBodyBuilder::new()
            .required(Some(Required::True))
            .content(
                "application/json",
                json_content(schemas::any(), request_example(all, "POST", "/log")),
            )
            .build(),
    ))
    .response(
        "201",
        ok(
            "The saved log.",
            logs(),
            response_example(all, "POST", "/log", 201),
        ),
    );
    let delete = api_operation(
        &Method::DELETE,
        "/log",
        "deleteLog".into(),
        "Delete a log".into(),
    )
    .parameter(id())
    .response(
        "205",
        json_ok("The log was deleted.", named("Envelope"), None),
    );
    item(vec![
        (HttpMethod::Get, list.build()),
        (
            HttpMethod::Post,
            with(post, &["404", "413", "415", "422"]).build(),
        ),
        (HttpMethod::Delete, with(delete, &["404"]).build()),
    ])
}

fn uploader(all: &[Example]) -> PathItem {
    let form = ObjectBuilder::new()
        .schema_type(Type::Object)
        .property("file", schemas::binary())
        .required("file")
        .build();
    let upload = |method: Method, id: &str| {
        let op = api_operation(&method, "/uploader", id.into(), "Upload an image".into())
            .parameter(header_param(
                "contentType",
                schemas::choice(&[
                    "product",
                    "merchant",
                    "user",
                    "applicationLogo",
                    "applicationImages",
                ]),
                false,
                "What the file is for.",
            ))
            .request_body(Some(
                RequestBodyBuilder::new()
                    .required(Some(Required::True))
                    .content("multipart/form-data", Content::new(Some(form.clone())))
                    .build(),
            ))
            .response(
                "201",
                ok(
                    "The stored file (JPEG, PNG, GIF or WebP, recognised by content).",
                    envelope_with("file", named("UploadedFile")),
                    response_example(all, "POST", "/uploader", 201),
                ),
            );
        with(op, &["413", "415", "422"]).build()
    };
    item(vec![
        (HttpMethod::Post, upload(Method::POST, "upload")),
        (HttpMethod::Put, upload(Method::PUT, "uploadPut")),
    ])
}

fn report() -> PathItem {
    item(vec![(
        HttpMethod::Get,
        report_operation("/report/basket").build(),
    )])
}

/// `GET /report`: the Node client's name of the basket report, for `legacy_clients` only.
fn legacy_report() -> PathItem {
    let op = report_operation("/report")
        .operation_id(Some("legacyBasketReport"))
        .description(Some(
            "`GET /report/basket` under the old Shopwave Node client's name, served where the \
             merchant turned `legacy_clients` on; 404 for any other merchant.",
        ))
        .deprecated(Some(utoipa::openapi::Deprecated::True));
    item(vec![(HttpMethod::Get, with(op, &["404"]).build())])
}

fn report_operation(path: &str) -> utoipa::openapi::path::OperationBuilder {
    api_operation(
        &Method::GET,
        path,
        "basketReport".into(),
        "Sales totals over a range".into(),
    )
    .parameter(filter_param((Filter::Date("reportFrom"), true)))
    .parameter(filter_param((Filter::Date("reportTo"), true)))
    .parameter(ids_param("storeIds", false))
    .response(
        "200",
        ok(
            "Summary, per store, per local day and per product.",
            envelope_with("basketReport", named("BasketReport")),
            None,
        ),
    )
}

fn path_param(name: &str) -> utoipa::openapi::path::Parameter {
    utoipa::openapi::path::ParameterBuilder::new()
        .name(name)
        .parameter_in(utoipa::openapi::path::ParameterIn::Path)
        .required(Required::True)
        .schema(Some(schemas::pattern("^[A-Za-z0-9._-]{1,100}$")))
        .build()
}

fn files() -> PathItem {
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

fn health(all: &[Example]) -> Vec<(&'static str, PathItem)> {
    let status = |id: &str, summary: &str, path: &str| {
        let schema = if path == "/status" {
            "Status"
        } else {
            "Health"
        };
        public(id, summary, "health").response(
            "200",
            json_ok(
                summary,
                named(schema),
                response_example(all, "GET", path, 200),
            ),
        )
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
    example: Option<Value>,
) -> utoipa::openapi::request_body::RequestBody {
    RequestBodyBuilder::new()
        .required(Some(Required::True))
        .description(Some(
            "JSON, or the same fields as `application/x-www-form-urlencoded` (RFC 6749).",
        ))
        .content("application/json", json_content(schema, example))
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
    form_or_json(named("TokenBody"), None)
}

/// The endpoints applications call: token, revoke, introspect, metadata.
fn oauth(all: &[Example]) -> Vec<(&'static str, PathItem)> {
    let token = public("token", "Exchange a code or a refresh token", "oauth")
        .request_body(Some(form_or_json(
            named("TokenRequest"),
            request_example(all, "POST", "/oauth/token"),
        )))
        .response(
            "200",
            json_ok(
                "The token response (RFC 6749 §5.1).",
                named("TokenResponse"),
                response_example(all, "POST", "/oauth/token", 200),
            ),
        )
        .response("400", oauth_error())
        .response("401", oauth_error())
        .response("500", oauth_error())
        .response(shared("429").0, shared("429").1)
        .response(shared("503").0, shared("503").1)
        .build();
    let revoke = public(
        "revoke",
        "Revoke a token and its family (RFC 7009)",
        "oauth",
    )
    .request_body(Some(token_body()))
    .response(
        "200",
        json_ok("Revoked, or already unknown.", named("Envelope"), None),
    )
    .response("400", oauth_error())
    .response("401", oauth_error())
    .response("500", oauth_error())
    .response(shared("429").0, shared("429").1)
    .build();
    let introspect = public("introspect", "Describe a token (RFC 7662)", "oauth")
        .request_body(Some(token_body()))
        .response(
            "200",
            json_ok(
                "`active` and, when active, the token's facts.",
                named("Introspection"),
                None,
            ),
        )
        .response("400", oauth_error())
        .response("401", oauth_error())
        .response("500", oauth_error())
        .response(shared("429").0, shared("429").1)
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
            // The spec's example predates the revocation and introspection methods the server
            // also lists: it would not validate (the linter checks every example).
            None,
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

fn events() -> PathItem {
    let op = api_operation(
        &Method::GET,
        "/events",
        "streamEvents".into(),
        "The merchant's change events, live (server-sent events)".into(),
    )
    .parameter(header_param(
        "Last-Event-ID",
        schemas::pattern("^[0-9]{1,15}$"),
        false,
        "Resume after this event (its `id`); without it the stream starts at the present.",
    ))
    .parameter(header_param(
        "types",
        schemas::pattern("^[A-Za-z0-9_.]{1,64}( ?, ?[A-Za-z0-9_.]{1,64}){0,9}$"),
        false,
        "Event types (`basket.completed`) or objects (`product`), comma-separated.",
    ))
    .response(
        "200",
        plain(
            "`id: <sequence>`, `event: <type>`, `data: {sequence, type, occurredAt, objectId, \
             object}`; comments as heartbeats; `event: end` when the token expires or is revoked.",
            "text/event-stream",
            schemas::string(),
        ),
    );
    item(vec![(HttpMethod::Get, with(op, &["410"]).build())])
}

fn webhook_deliveries() -> PathItem {
    let op = api_operation(
        &Method::GET,
        "/webhook/delivery",
        "listWebhookDeliveries".into(),
        "An endpoint's deliveries and their attempts, newest first".into(),
    )
    .parameter(header_param(
        "webhookId",
        schemas::pattern("^[0-9]{1,18}$"),
        true,
        "The endpoint.",
    ))
    .parameter(header_param(
        "status",
        schemas::choice(&["pending", "succeeded", "failed"]),
        false,
        "Only deliveries in this state.",
    ))
    .parameter(header_param(
        "limit",
        schemas::pattern("^[0-9]{1,4}$"),
        false,
        "At most this many (1 to 1,000; 100 by default).",
    ))
    .response(
        "200",
        ok(
            "`{webhookId, sequence, messageId, eventType, status, attemptCount, createDate, \
             nextAttemptDate, completeDate, attempts: [{attempt, attemptDate, statusCode, \
             durationMs, response, error}]}` per delivery.",
            envelope_with("deliveries", schemas::array_of_named("WebhookDelivery")),
            None,
        ),
    );
    item(vec![(HttpMethod::Get, with(op, &["404"]).build())])
}

fn webhook_resend() -> PathItem {
    let body = ObjectBuilder::new()
        .schema_type(SchemaType::new(Type::Object))
        .property("webhookId", schemas::integer())
        .property("sequences", schemas::integers())
        .required("webhookId")
        .required("sequences")
        .build();
    let op = api_operation(
        &Method::POST,
        "/webhook/resend",
        "resendWebhookDeliveries".into(),
        "Queue finished deliveries again".into(),
    )
    .request_body(Some(
        RequestBodyBuilder::new()
            .required(Some(Required::True))
            .content("application/json", json_content(Schema::Object(body), None))
            .build(),
    ))
    .response(
        "200",
        ok(
            "The sequences queued again (finished deliveries only; pending ones are queued).",
            envelope_with("resent", schemas::integers()),
            None,
        ),
    );
    item(vec![(
        HttpMethod::Post,
        with(op, &["404", "413", "415"]).build(),
    )])
}

fn customer_export() -> PathItem {
    let keyed = |name: &str| RefOr::T(schemas::keyed(named(name)));
    let answer = schemas::envelope(vec![
        ("customers", keyed("Customer")),
        ("baskets", keyed("Basket")),
        ("transactions", keyed("Transaction")),
        ("orders", keyed("Order")),
        (
            "events",
            RefOr::T(Schema::Array(utoipa::openapi::schema::Array::new(
                schemas::object(),
            ))),
        ),
        ("logs", keyed("Log")),
    ]);
    let op = api_operation(
        &Method::GET,
        "/customer/export",
        "exportCustomer".into(),
        "Everything held about one customer (admin)".into(),
    )
    .parameter(ids_param("customerId", true))
    .response(
        "200",
        ok(
            "The customer (deleted or erased too), its baskets, their payments, its orders, \
             the events about them (`{sequence, type, occurredAt, objectId, object}`, oldest \
             first) and the logs quoting its name, email or phone.",
            answer,
            None,
        ),
    );
    item(vec![(HttpMethod::Get, with(op, &["404"]).build())])
}

fn customer_erase() -> PathItem {
    let op = api_operation(
        &Method::POST,
        "/customer/erase",
        "eraseCustomers".into(),
        "Erase customers' personal data; their sales stay (admin)".into(),
    )
    .parameter(ids_param("customerIds", false))
    .parameter(ids_param("customerId", false))
    .response(
        "205",
        json_ok(
            "A message per erased id: the customer is anonymous and deleted, the orders naming \
             it lost their contact details, and events, logs and stored answers were scrubbed.",
            named("Envelope"),
            None,
        ),
    );
    item(vec![(HttpMethod::Post, with(op, &["404"]).build())])
}

fn contract() -> Vec<(&'static str, PathItem)> {
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

/// Every path that is not a record collection.
pub fn items(all: &[Example]) -> Vec<(&'static str, PathItem)> {
    let mut items = me(all);
    items.push(("/log", logs(all)));
    items.push(("/uploader", uploader(all)));
    items.extend(crate::catalogue::items());
    items.extend(crate::pricing::items());
    items.extend(crate::offline::items());
    items.extend(crate::till::items());
    items.push(("/report/basket", report()));
    items.push(("/report", legacy_report()));
    items.push(("/events", events()));
    items.push(("/webhook/delivery", webhook_deliveries()));
    items.push(("/webhook/resend", webhook_resend()));
    items.push(("/customer/export", customer_export()));
    items.push(("/customer/erase", customer_erase()));
    items.extend(crate::operator::items());
    items.push(("/files/{fileName}", files()));
    items.extend(health(all));
    items.extend(oauth(all));
    items.extend(crate::pages::account_pages());
    items.extend(contract());
    items
}
