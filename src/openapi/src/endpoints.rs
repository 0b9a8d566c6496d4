//! The routes behind the token gate that are not record collections: who am I, logs, uploads,
//! the report, events, webhook deliveries, a customer's export and erasure (the routes outside
//! the gate are in `public.rs`, the HTML pages in `pages.rs`, the answers' schemas in
//! `answers.rs`).

use actix_web::http::Method;
use utoipa::openapi::path::{HttpMethod, OperationBuilder, PathItem};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::response::{Response, ResponseBuilder};
use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaType, Type};
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::{Content, RefOr, Required};

use crate::common::{
    api_operation, bool_param, count_param, date_param, header_param, ids_param, item,
    json_content, json_ok, limit, ok, sequence_param, with,
};
use crate::schemas::{self, named, typed};
use api::http::logs::{MAX_IDENTIFIER_LEN, MAX_OBJECT_LEN, MAX_TAGS, MAX_TAG_LEN};
use api::http::webhooks::endpoints::{DEFAULT_LISTED, MAX_LISTED, MAX_RESEND};
use domain::event::{MAX_ENTRY, MAX_TYPES};

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

fn me() -> Vec<(&'static str, PathItem)> {
    let user = api_operation(&Method::GET, "/user", "getUser", "The token's user").response(
        "200",
        ok(
            "The employee the token acts for.",
            envelope_with("user", named("User")),
        ),
    );
    let merchant = api_operation(
        &Method::GET,
        "/merchant",
        "getMerchant",
        "The token's merchant",
    )
    .response(
        "200",
        ok(
            "The merchant.",
            envelope_with("merchant", named("Merchant")),
        ),
    );
    vec![
        ("/user", item(vec![(HttpMethod::Get, user.build())])),
        ("/merchant", item(vec![(HttpMethod::Get, merchant.build())])),
    ]
}

/// A header of visible text, `pattern` its shape, `max` its limit (`what`).
fn text_header(pattern: String, (what, max): (&str, usize)) -> Schema {
    limit(typed(Type::String).pattern(Some(pattern)), what, max as i64)
        .build()
        .into()
}

fn log_headers(op: OperationBuilder, required: bool) -> OperationBuilder {
    let tags = text_header(
        format!(
            "^ ?[^, ][^,]{{0,{}}}( ?, ?[^, ][^,]{{0,{}}}){{0,{}}} ?$",
            MAX_TAG_LEN - 1,
            MAX_TAG_LEN - 1,
            MAX_TAGS - 1
        ),
        ("items", MAX_TAGS),
    );
    let object = text_header(
        format!("^[A-Za-z0-9_]{{1,{MAX_OBJECT_LEN}}}$"),
        ("length", MAX_OBJECT_LEN),
    );
    let identifier = text_header(
        format!("^[!-~]{{1,{MAX_IDENTIFIER_LEN}}}$"),
        ("length", MAX_IDENTIFIER_LEN),
    );
    op.parameter(header_param(
        "tag",
        tags,
        required,
        &format!(
            "Comma-separated tags: at most {MAX_TAGS}, each at most {MAX_TAG_LEN} characters."
        ),
    ))
    .parameter(header_param(
        "object",
        object,
        required,
        "An object type key, such as `STORE` (letters, digits and `_`).",
    ))
    .parameter(header_param(
        "identifier",
        identifier,
        required,
        "That object's id, as text.",
    ))
}

fn logs() -> PathItem {
    let id = || {
        header_param(
            "id",
            schemas::pattern("^[A-Za-z0-9_]+-[!-~]+:[0-9]+$"),
            false,
            "A log id: `<object>-<identifier>:<n>` (`STORE-9:1`).",
        )
    };
    let logs = || envelope_with("logs", schemas::keyed(named("Log")));
    let list = log_headers(
        api_operation(&Method::GET, "/log", "listLogs", "Read logs"),
        false,
    )
    .parameter(id())
    .response("200", ok("The logs found.", logs()));
    let post = log_headers(
        api_operation(&Method::POST, "/log", "createLog", "File a log"),
        true,
    )
    .parameter(id())
    .parameter(bool_param(
        "completed",
        false,
        "Whether the work the log records is finished.",
    ))
    .request_body(Some(
        RequestBodyBuilder::new()
            .required(Some(Required::True))
            .content("application/json", json_content(schemas::any()))
            .build(),
    ))
    .response("201", ok("The saved log.", logs()));
    let delete = api_operation(&Method::DELETE, "/log", "deleteLog", "Delete a log")
        .parameter(id())
        .response("205", json_ok("The log was deleted.", named("Envelope")));
    item(vec![
        (HttpMethod::Get, list.build()),
        (
            HttpMethod::Post,
            with(post, &["404", "413", "415", "422"]).build(),
        ),
        (HttpMethod::Delete, with(delete, &["404"]).build()),
    ])
}

fn uploader() -> PathItem {
    let form = ObjectBuilder::new()
        .schema_type(Type::Object)
        .property("file", schemas::binary())
        .required("file")
        .build();
    let upload = |method: Method, id: &str| {
        let op = api_operation(&method, "/uploader", id, "Upload an image")
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
        "basketReport",
        "Sales totals over a range",
    )
    .parameter(date_param("reportFrom", true))
    .parameter(date_param("reportTo", true))
    .parameter(ids_param("storeIds", false))
    .response(
        "200",
        ok(
            "Summary, per store, per local day and per product.",
            envelope_with("basketReport", named("BasketReport")),
        ),
    )
}

fn events() -> PathItem {
    let op = api_operation(
        &Method::GET,
        "/events",
        "streamEvents",
        "The merchant's change events, live (server-sent events)",
    )
    .parameter(sequence_param(
        "Last-Event-ID",
        "Resume after this event (its `id`); without it the stream starts at the present.",
    ))
    .parameter(header_param(
        "types",
        text_header(
            format!(
                "^ ?[A-Za-z0-9_.]{{1,{MAX_ENTRY}}}( ?, ?[A-Za-z0-9_.]{{1,{MAX_ENTRY}}}){{0,{}}} ?$",
                MAX_TYPES - 1
            ),
            ("items", MAX_TYPES),
        ),
        false,
        &format!(
            "Event types (`basket.completed`) or objects (`product`), comma-separated: at most \
             {MAX_TYPES}, each at most {MAX_ENTRY} characters."
        ),
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
        "listWebhookDeliveries",
        "An endpoint's deliveries and their attempts, newest first",
    )
    .parameter(header_param(
        "webhookId",
        schemas::pattern("^[0-9]{1,18}$"),
        true,
        "The endpoint (a webhook's id).",
    ))
    .parameter(header_param(
        "status",
        schemas::choice(&["pending", "succeeded", "failed"]),
        false,
        "Only deliveries in this state.",
    ))
    .parameter(count_param(
        "limit",
        (1, DEFAULT_LISTED, MAX_LISTED),
        "At most this many",
    ))
    .response(
        "200",
        ok(
            "`{webhookId, sequence, messageId, eventType, status, attemptCount, createDate, \
             nextAttemptDate, completeDate, attempts: [{attempt, attemptDate, statusCode, \
             durationMs, response, error}]}` per delivery.",
            envelope_with("deliveries", schemas::array_of_named("WebhookDelivery")),
        ),
    );
    item(vec![(HttpMethod::Get, with(op, &["404"]).build())])
}

fn webhook_resend() -> PathItem {
    let body = ObjectBuilder::new()
        .schema_type(SchemaType::new(Type::Object))
        .property("webhookId", schemas::integer())
        .property(
            "sequences",
            utoipa::openapi::schema::ArrayBuilder::new()
                .items(utoipa::openapi::schema::ArrayItems::RefOrSchema(Box::new(
                    schemas::integer().into(),
                )))
                .min_items(Some(1))
                .max_items(Some(MAX_RESEND))
                .extensions(Some(crate::common::limit_extension(
                    "items",
                    MAX_RESEND as i64,
                ))),
        )
        .required("webhookId")
        .required("sequences")
        .build();
    let op = api_operation(
        &Method::POST,
        "/webhook/resend",
        "resendWebhookDeliveries",
        "Queue finished deliveries again",
    )
    .request_body(Some(
        RequestBodyBuilder::new()
            .required(Some(Required::True))
            .content("application/json", json_content(Schema::Object(body)))
            .build(),
    ))
    .response(
        "200",
        ok(
            "The sequences queued again (finished deliveries only; pending ones are queued).",
            envelope_with("resent", schemas::integers()),
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
        "exportCustomer",
        "Everything held about one customer (admin)",
    )
    .parameter(header_param(
        "customerId",
        schemas::pattern("^ ?[0-9]{1,19} ?$"),
        true,
        "The customer (one id).",
    ))
    .response(
        "200",
        ok(
            "The customer (deleted or erased too), its baskets, their payments, its orders, \
             the events about them (`{sequence, type, occurredAt, objectId, object}`, oldest \
             first) and the logs quoting its name, email or phone.",
            answer,
        ),
    );
    item(vec![(HttpMethod::Get, with(op, &["404"]).build())])
}

fn customer_erase() -> PathItem {
    let op = api_operation(
        &Method::POST,
        "/customer/erase",
        "eraseCustomers",
        "Erase customers' personal data; their sales stay (admin)",
    )
    .parameter(ids_param("customerIds", false))
    .parameter(ids_param("customerId", false))
    .response(
        "205",
        json_ok(
            "A message per erased id: the customer is anonymous and deleted, the orders naming \
             it lost their contact details, and events, logs and stored answers were scrubbed.",
            named("Envelope"),
        ),
    );
    item(vec![(HttpMethod::Post, with(op, &["404"]).build())])
}

/// Every path that is not a record collection.
pub fn items() -> Vec<(&'static str, PathItem)> {
    let mut items = me();
    items.push(("/log", logs()));
    items.push(("/uploader", uploader()));
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
    items.push(("/files/{fileName}", crate::public::files()));
    items.extend(crate::public::health());
    items.extend(crate::public::oauth());
    items.extend(crate::pages::account_pages());
    items.extend(crate::public::contract());
    items
}
