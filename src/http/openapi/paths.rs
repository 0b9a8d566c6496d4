//! Every route's operations. The resources come from one table whose names, id headers and
//! fields are read off the code (the [`Resource`] and [`IdHeaders`] traits, the domain shapes),
//! and whose scopes come from the gate's own rule ([`needed_scope`]).

use actix_web::http::Method;
use serde_json::Value;
use utoipa::openapi::link::LinkBuilder;
use utoipa::openapi::path::{
    HttpMethod, Operation, OperationBuilder, Parameter, ParameterBuilder, ParameterIn, PathItem,
    PathItemBuilder,
};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::response::{Response, ResponseBuilder};
use utoipa::openapi::schema::Schema;
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::{Content, Header, Paths, Ref, RefOr, Required};

use super::schemas;
use crate::actors::resource::Resource;
use crate::domain::fields::Shape;
use crate::domain::{
    application, basket, category, employee, product, promotion, reconcile, sales, store, supplier,
    webhook,
};
use crate::http::auth::needed_scope;
use crate::http::resources::generic::IdHeaders;
use crate::http::resources::sales::SalesFilters;
use crate::http::resources::OBJECT_IDS;

/// A filter header beside a resource's id header.
#[derive(Clone, Copy)]
pub(super) enum Filter {
    Ids(&'static str),
    Bool(&'static str),
    Date(&'static str),
}

/// One resource under its path: GET (list), POST, PUT, DELETE.
struct ResourceDoc {
    path: &'static str,
    noun: &'static str,
    plural: &'static str,
    id_headers: [&'static str; 2],
    shape: &'static Shape,
    filters: Vec<(Filter, bool)>,
    /// Request-only switches of a write (`regenerateSecret`).
    write_extra: &'static [&'static str],
    /// Answer-only fields beyond the shape (the stock columns).
    read_extra: &'static [&'static str],
    /// Fields of the shape an answer carries only sometimes (a secret, shown once).
    read_optional: &'static [&'static str],
    required: &'static [&'static str],
}

fn doc<R: Resource + IdHeaders>(path: &'static str, shape: &'static Shape) -> ResourceDoc {
    ResourceDoc {
        path,
        noun: R::NOUN,
        plural: R::PLURAL,
        id_headers: R::ID_HEADERS,
        shape,
        filters: Vec::new(),
        write_extra: &[],
        read_extra: &[],
        read_optional: &[],
        required: &[],
    }
}

impl ResourceDoc {
    fn filter(mut self, filter: Filter) -> Self {
        self.filters.push((filter, false));
        self
    }

    fn required_filter(mut self, filter: Filter) -> Self {
        self.filters.push((filter, true));
        self
    }

    fn requires(mut self, fields: &'static [&'static str]) -> Self {
        self.required = fields;
        self
    }

    fn sales<R: SalesFilters>(mut self) -> Self {
        let reads = &R::READS;
        if reads.stores {
            self = self.filter(Filter::Ids("storeIds"));
        }
        if reads.baskets {
            self = self.filter(Filter::Ids("basketIds"));
        }
        if reads.completed {
            self = self.filter(Filter::Bool("completed"));
        }
        self
    }

    /// `Supplier store` → `SupplierStore`.
    fn schema_name(&self) -> String {
        self.noun
            .split(' ')
            .map(|word| {
                let mut chars = word.chars();
                match chars.next() {
                    Some(first) => first.to_uppercase().chain(chars).collect(),
                    None => String::new(),
                }
            })
            .collect()
    }
}

fn resources() -> Vec<ResourceDoc> {
    use basket::BasketRecord;
    use sales::{InvoiceRecord, OrderRecord, TransactionRecord};
    vec![
        doc::<store::StoreRecord>("/store", &store::SHAPE).requires(&[
            "name",
            "addressLine1",
            "city",
            "postcode",
            "countryId",
        ]),
        doc::<category::CategoryRecord>("/category", &category::SHAPE).requires(&["title"]),
        ResourceDoc {
            read_extra: &["totalStock", "stockSold", "stockLeft"],
            ..doc::<product::ProductRecord>("/product", &product::SHAPE)
                .filter(Filter::Ids("categoryIds"))
                .filter(Filter::Ids("storeId"))
                .requires(&["name"])
        },
        doc::<supplier::SupplierRecord>("/supplier", &supplier::SUPPLIER_SHAPE).requires(&["name"]),
        doc::<supplier::SupplierStoreRecord>("/supplier/store", &supplier::STORE_SHAPE)
            .filter(Filter::Ids("supplierIds"))
            .requires(&["supplierId"]),
        doc::<employee::EmployeeRecord>("/employee", &employee::SHAPE).requires(&[
            "firstName",
            "lastName",
            "email",
            "roleId",
        ]),
        ResourceDoc {
            write_extra: &["regenerateSecret"],
            read_optional: &["clientSecret"],
            ..doc::<application::ApplicationRecord>("/application", &application::SHAPE)
                .requires(&["name", "redirectUris"])
        },
        ResourceDoc {
            read_optional: &["secret"],
            ..doc::<webhook::WebhookRecord>("/webhook", &webhook::SHAPE).requires(&["url"])
        },
        doc::<promotion::PromotionRecord>("/promotion", &promotion::SHAPE)
            .filter(Filter::Ids("storeIds"))
            .filter(Filter::Bool("active"))
            .filter(Filter::Bool("expired"))
            .filter(Filter::Bool("imminent"))
            .requires(&["title", "type", "x", "startDate"]),
        doc::<BasketRecord>("/basket", &basket::SHAPE)
            .sales::<BasketRecord>()
            .requires(&["storeId"]),
        doc::<TransactionRecord>("/transaction", &sales::TRANSACTION_SHAPE)
            .sales::<TransactionRecord>()
            .requires(&["basketId", "type", "amount"]),
        doc::<OrderRecord>("/order", &sales::ORDER_SHAPE)
            .sales::<OrderRecord>()
            .requires(&["basketId", "fulfilment"]),
        doc::<InvoiceRecord>("/invoice", &sales::INVOICE_SHAPE)
            .sales::<InvoiceRecord>()
            .requires(&["storeId", "supplierId"]),
        doc::<reconcile::StockReconciliation>("/stock/reconcile", &reconcile::SHAPE)
            .required_filter(Filter::Date("from"))
            .required_filter(Filter::Date("to"))
            .required_filter(Filter::Ids("storeIds"))
            .requires(&["storeId"]),
    ]
}

/// The record schemas under `components.schemas`: `<Noun>` as read (and each nested
/// collection's record, such as `ProductInstance`), `<Noun>Write` as written, `<Noun>List` the
/// answer of reads and writes, `<Noun>WriteBody` a write's body.
pub fn record_schemas() -> Vec<(String, Schema)> {
    let mut out = Vec::new();
    for r in resources() {
        let name = r.schema_name();
        out.push((
            name.clone(),
            schemas::read_record(r.plural, r.shape, r.read_extra, r.read_optional),
        ));
        for (field, inner) in r.shape.nested {
            let nested = schemas::nested_name(r.plural, field);
            out.push((
                nested.clone(),
                schemas::read_record(r.plural, inner, &[], &[]),
            ));
            out.push((
                format!("{nested}Write"),
                schemas::write_record(r.plural, inner, &[], &[]),
            ));
        }
        out.push((
            format!("{name}Write"),
            schemas::write_record(r.plural, r.shape, r.write_extra, r.required),
        ));
        out.push((format!("{name}List"), list_answer(&r)));
        out.push((format!("{name}WriteBody"), write_body(&r)));
    }
    out
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

pub(super) fn shared(status: &str) -> (String, RefOr<Response>) {
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

pub(super) fn header_param(
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

pub(super) fn ids_param(name: &str, required: bool) -> Parameter {
    header_param(
        name,
        schemas::pattern(schemas::ID_LIST),
        required,
        "Comma-separated ids (at most 1,000).",
    )
}

pub(super) fn filter_param((filter, required): (Filter, bool)) -> Parameter {
    match filter {
        Filter::Ids(name) => ids_param(name, required),
        Filter::Bool(name) => header_param(
            name,
            schemas::choice(&["true", "false"]),
            required,
            "`true` or `false`.",
        ),
        Filter::Date(name) => header_param(
            name,
            schemas::pattern(schemas::HEADER_DATE),
            required,
            "`YYYY-MM-DD HH:MM:SS`, UTC.",
        ),
    }
}

fn idempotency_param() -> Parameter {
    header_param(
        "Idempotency-Key",
        schemas::pattern("^[!-~]{1,255}$"),
        false,
        "Repeating a write with the same key and body within 24 hours answers the stored \
         response without doing the work again.",
    )
}

/// The examples of `../shared/examples.md` (see `tools/extract_examples.py`).
pub(super) struct Example {
    method: String,
    path: String,
    status: u16,
    request: Option<Value>,
    response: Option<Value>,
}

pub(super) fn examples() -> Vec<Example> {
    let parsed: Vec<Value> =
        serde_json::from_str(include_str!("examples.json")).unwrap_or_default();
    parsed
        .into_iter()
        .map(|e| Example {
            method: e["method"].as_str().unwrap_or_default().to_owned(),
            path: e["path"].as_str().unwrap_or_default().to_owned(),
            status: e["status"]
                .as_u64()
                .and_then(|s| u16::try_from(s).ok())
                .unwrap_or(0),
            request: Some(e["request"].clone()).filter(|v| !v.is_null()),
            response: Some(e["response"].clone()).filter(|v| !v.is_null()),
        })
        .collect()
}

pub(super) fn request_example(all: &[Example], method: &str, path: &str) -> Option<Value> {
    all.iter()
        .find(|e| e.method == method && e.path == path && e.request.is_some() && e.status < 300)
        .and_then(|e| e.request.clone())
}

pub(super) fn response_example(
    all: &[Example],
    method: &str,
    path: &str,
    status: u16,
) -> Option<Value> {
    all.iter()
        .find(|e| {
            e.method == method && e.path == path && e.status == status && e.response.is_some()
        })
        .and_then(|e| e.response.clone())
}

pub(super) fn json_content(schema: impl Into<RefOr<Schema>>, example: Option<Value>) -> Content {
    let mut content = Content::new(Some(schema));
    if example.is_some() {
        content.example = example;
    }
    content
}

pub(super) fn ok(description: &str, schema: Schema, example: Option<Value>) -> Response {
    json_ok(description, schema, example)
}

pub(super) fn json_ok(
    description: &str,
    schema: impl Into<RefOr<Schema>>,
    example: Option<Value>,
) -> Response {
    ResponseBuilder::new()
        .description(description)
        .content("application/json", json_content(schema, example))
        .build()
}

/// An operation behind the token gate: the scope its method needs on `path`, the version
/// header, and the answers every API request may give.
pub(super) fn api_operation(
    method: &Method,
    path: &str,
    id: String,
    summary: String,
) -> OperationBuilder {
    let scope = needed_scope(method, path).as_str();
    let mut op = OperationBuilder::new()
        .operation_id(Some(id))
        .summary(Some(summary))
        .tag(
            path.trim_start_matches('/')
                .split('/')
                .next()
                .unwrap_or("api"),
        )
        .security(SecurityRequirement::new("oauth", [scope]))
        .parameter_ref(Ref::new("#/components/parameters/AcceptVersion"));
    for status in ["400", "401", "403", "429", "500", "503"] {
        let (code, response) = shared(status);
        op = op.response(code, response);
    }
    op
}

pub(super) fn with(mut op: OperationBuilder, statuses: &[&str]) -> OperationBuilder {
    for status in statuses {
        let (code, response) = shared(status);
        op = op.response(code, response);
    }
    op
}

fn resource_item(r: &ResourceDoc, all: &[Example]) -> PathItem {
    item(vec![
        (HttpMethod::Get, list_operation(r, all)),
        (
            HttpMethod::Post,
            write_operation(r, all, Method::POST, "create"),
        ),
        (
            HttpMethod::Put,
            write_operation(r, all, Method::PUT, "update"),
        ),
        (HttpMethod::Delete, delete_operation(r, all)),
    ])
}

/// `{"<plural>": {"<id or key>": <Noun>}, "api": …}`: what reads and writes answer.
fn list_answer(r: &ResourceDoc) -> Schema {
    let records = schemas::keyed(schemas::named(&r.schema_name()));
    match r.path {
        // The counts of a range come with the units they booked: store → product → units.
        "/stock/reconcile" => {
            let units = || schemas::keyed(schemas::keyed(schemas::integer())).into();
            schemas::envelope_with(
                vec![(r.plural, records.into())],
                &[("wastage", units()), ("surplus", units())],
            )
        }
        _ => schemas::envelope(vec![(r.plural, records.into())]),
    }
}

fn records_answer(r: &ResourceDoc) -> RefOr<Schema> {
    schemas::named(&format!("{}List", r.schema_name()))
}

/// `{"<plural>": {"<clientKey>": <Noun>Write}}`. Open, as before: what the server reads of a
/// write body is its plural (each record is closed), and schemathesis's stateful phase finds
/// fewer successful writes to follow links from when the body is closed.
fn write_body(r: &ResourceDoc) -> Schema {
    let records = schemas::keyed(schemas::named(&format!("{}Write", r.schema_name())));
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::Object)
        .property(r.plural, records)
        .required(r.plural)
        .build()
        .into()
}

fn list_operation(r: &ResourceDoc, all: &[Example]) -> Operation {
    let name = r.schema_name();
    let mut list = api_operation(
        &Method::GET,
        r.path,
        format!("list{name}"),
        format!("Read {}", r.plural),
    )
    .parameter(ids_param(r.id_headers[0], false))
    .parameter(ids_param(r.id_headers[1], false))
    .parameter(filter_param((Filter::Bool("deleted"), false)))
    .parameter(header_param(
        "changedSince",
        schemas::pattern("^[0-9]{1,15}$"),
        false,
        "Only the records changed after this `x-merchant-sequence`, deleted ones included.",
    ));
    for filter in &r.filters {
        list = list.parameter(filter_param(*filter));
    }
    let found = ResponseBuilder::new()
        .description(format!("The {} found, keyed by id.", r.plural))
        .header("x-merchant-sequence", Header::new(schemas::string()))
        .content(
            "application/json",
            json_content(records_answer(r), response_example(all, "GET", r.path, 200)),
        )
        .build();
    with(list.response("200", found), &["410"]).build()
}

/// A link from a write's answer to the operation `id`, naming the saved records.
fn saved_link(r: &ResourceDoc, id: String) -> utoipa::openapi::link::Link {
    LinkBuilder::new()
        .operation_id(id)
        .parameter(
            format!("header.{}", r.id_headers[0]),
            format!("$response.header.{OBJECT_IDS}"),
        )
        .build()
}

fn write_operation(r: &ResourceDoc, all: &[Example], method: Method, verb: &str) -> Operation {
    let name = r.schema_name();
    let text = method.as_str();
    let saved = ResponseBuilder::new()
        .description("The saved records under their client keys; a record per object.")
        .header(OBJECT_IDS, Header::new(schemas::string()))
        .content(
            "application/json",
            json_content(records_answer(r), response_example(all, text, r.path, 201)),
        )
        .link("read", saved_link(r, format!("list{name}")))
        .link("delete", saved_link(r, format!("delete{name}")))
        .build();
    let op = api_operation(
        &method,
        r.path,
        format!("{verb}{name}"),
        format!("{verb} {}", r.plural),
    )
    .parameter(idempotency_param())
    .request_body(Some(
        RequestBodyBuilder::new()
            .required(Some(Required::True))
            .content(
                "application/json",
                json_content(
                    schemas::named(&format!("{name}WriteBody")),
                    request_example(all, text, r.path),
                ),
            )
            .build(),
    ))
    .response("201", saved);
    with(op, &["404", "413", "415", "422"]).build()
}

fn delete_operation(r: &ResourceDoc, all: &[Example]) -> Operation {
    let delete = api_operation(
        &Method::DELETE,
        r.path,
        format!("delete{}", r.schema_name()),
        format!("Delete {}", r.plural),
    )
    .parameter(ids_param(r.id_headers[0], false))
    .parameter(ids_param(r.id_headers[1], false))
    .parameter(idempotency_param())
    .response(
        "205",
        json_ok(
            "A record per deleted id.",
            schemas::named("Envelope"),
            response_example(all, "DELETE", r.path, 205),
        ),
    );
    with(delete, &["404", "422"]).build()
}

/// A path's operations.
pub(super) fn item(operations: Vec<(HttpMethod, Operation)>) -> PathItem {
    let mut builder = PathItemBuilder::new();
    for (method, operation) in operations {
        builder = builder.operation(method, operation);
    }
    builder.build()
}

/// Every path of the API.
pub fn paths() -> Paths {
    let all = examples();
    let mut paths = Paths::new();
    for r in resources() {
        paths
            .paths
            .insert(r.path.to_owned(), resource_item(&r, &all));
    }
    for (path, item) in super::endpoints::items(&all) {
        paths.paths.insert(path.to_owned(), item);
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::openapi::schemas::kind_of;

    fn names(shape: &Shape) -> Vec<&'static str> {
        let mut all: Vec<_> = shape
            .writable
            .iter()
            .chain(shape.read_only)
            .copied()
            .collect();
        for (_, inner) in shape.nested {
            all.extend(names(inner));
        }
        all
    }

    /// A field the validators know but the type table does not would be described as "any".
    #[test]
    fn every_field_of_every_resource_has_a_type() {
        let mut missing = Vec::new();
        for r in resources() {
            for field in names(r.shape)
                .into_iter()
                .chain(r.write_extra.iter().copied())
            {
                if kind_of(r.plural, field).is_none() {
                    missing.push(format!("{}.{field}", r.plural));
                }
            }
        }
        assert!(missing.is_empty(), "fields without a kind: {missing:?}");
    }

    #[test]
    fn the_catalogue_lists_every_message() {
        let document = crate::http::openapi::pretty();
        for message in crate::http::messages::Message::ALL {
            assert!(document.contains(&format!("| {} | {} |", message.id(), message.code())));
        }
    }
}
