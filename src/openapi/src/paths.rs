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

use crate::schemas;
use crate::schemas::Kind;
use api::http::auth::needed_scope;
use api::http::resources::generic::IdHeaders;
use api::http::resources::OBJECT_IDS;
use api::http::sales::records::SalesFilters;
use domain::catalogue::{category, product, promotion, store, supplier};
use domain::customers::customer;
use domain::people::{application, employee};
use domain::record::{self, RecordDecl};
use domain::sales::basket;
use domain::stock::count as reconcile;
use domain::till::{register, session as till};
use domain::webhooks::webhook;
use engine::merchant::resource::Resource;

/// A filter header beside a resource's id header.
#[derive(Clone, Copy)]
pub(super) enum Filter {
    Ids(&'static str),
    Bool(&'static str),
    Date(&'static str),
    /// Free text (a search).
    Text(&'static str),
}

/// One resource under its path: GET (list), POST, PUT, DELETE.
struct ResourceDoc {
    path: &'static str,
    noun: &'static str,
    plural: &'static str,
    id_headers: [&'static str; 2],
    /// The record's declaration: its fields, kinds and write rules.
    decl: &'static RecordDecl,
    filters: Vec<(Filter, bool)>,
    /// Answer-only fields beyond the record (the stock columns).
    read_extra: &'static [(&'static str, Kind)],
}

fn doc<R: Resource + IdHeaders>(path: &'static str) -> ResourceDoc {
    // The declared filter headers (`supplierIds`); list reads with filters of their own add
    // them below.
    let filters = R::DECL
        .fields
        .iter()
        .filter_map(|f| f.filter.map(|header| (f, header)))
        .filter(|(f, _)| !matches!(f.kind, record::Kind::Bool))
        .map(|(_, header)| (Filter::Ids(header), false))
        .collect();
    ResourceDoc {
        path,
        noun: R::NOUN,
        plural: R::PLURAL,
        id_headers: R::ID_HEADERS,
        decl: R::DECL,
        filters,
        read_extra: &[],
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

    /// A sales resource's filters: every one its declaration names (the completed flag
    /// included).
    fn sales<R: SalesFilters>(mut self) -> Self {
        self.filters.clear();
        for field in R::DECL.fields {
            match (field.filter, field.kind) {
                (Some(header), record::Kind::Bool) => self = self.filter(Filter::Bool(header)),
                (Some(header), _) => self = self.filter(Filter::Ids(header)),
                (None, _) => {}
            }
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

macro_rules! plain_docs {
    ($($collection:ident: $ty:path = $rules:ident,)*) => {
        /// Every `plain` record of the registry, at its declared path.
        #[allow(clippy::vec_init_then_push)]
        fn plain_resources() -> Vec<ResourceDoc> {
            let mut docs = Vec::new();
            $(plain_docs!(@ $rules $ty, docs);)*
            docs
        }
    };
    (@ own $ty:path, $docs:ident) => {};
    (@ plain $ty:path, $docs:ident) => {
        $docs.push(doc::<$ty>(<$ty as domain::record::Declared>::DECL.path));
    };
}

domain::for_each_record!(plain_docs);

fn resources() -> Vec<ResourceDoc> {
    use basket::BasketRecord;
    use domain::sales::order::OrderRecord;
    use domain::sales::payment::TransactionRecord;
    use domain::stock::invoice::InvoiceRecord;
    const STOCK: &[(&str, Kind)] = &[
        ("totalStock", Kind::Integer),
        ("stockSold", Kind::Integer),
        ("stockLeft", Kind::Integer),
    ];
    vec![
        doc::<store::StoreRecord>("/store"),
        doc::<category::CategoryRecord>("/category"),
        ResourceDoc {
            read_extra: STOCK,
            ..doc::<product::ProductRecord>("/product")
                .filter(Filter::Ids("categoryIds"))
                .filter(Filter::Ids("storeId"))
        },
        doc::<supplier::SupplierRecord>("/supplier"),
        doc::<supplier::SupplierStoreRecord>("/supplier/store"),
        doc::<customer::CustomerRecord>("/customer").filter(Filter::Text("search")),
        doc::<register::RegisterRecord>("/register"),
        doc::<till::SessionRecord>("/register/session"),
        doc::<till::CashMovementRecord>("/register/cash"),
        doc::<employee::EmployeeRecord>("/employee"),
        doc::<application::ApplicationRecord>("/application"),
        doc::<webhook::WebhookRecord>("/webhook"),
        doc::<promotion::PromotionRecord>("/promotion")
            .filter(Filter::Ids("storeIds"))
            .filter(Filter::Bool("active"))
            .filter(Filter::Bool("expired"))
            .filter(Filter::Bool("imminent")),
        doc::<BasketRecord>("/basket").sales::<BasketRecord>(),
        doc::<TransactionRecord>("/transaction").sales::<TransactionRecord>(),
        doc::<OrderRecord>("/order").sales::<OrderRecord>(),
        doc::<InvoiceRecord>("/invoice").sales::<InvoiceRecord>(),
        {
            let mut count = doc::<reconcile::StockReconciliation>("/stock/reconcile");
            count.filters.clear();
            count
                .required_filter(Filter::Date("from"))
                .required_filter(Filter::Date("to"))
                .required_filter(Filter::Ids("storeIds"))
        },
    ]
    .into_iter()
    .chain(plain_resources())
    .collect()
}

/// The record schemas under `components.schemas`: `<Noun>` as read (and each nested
/// collection's record, such as `ProductInstance`), `<Noun>Write` as written, `<Noun>List` the
/// answer of reads and writes, `<Noun>WriteBody` a write's body.
pub fn record_schemas() -> Vec<(String, Schema)> {
    let mut out = Vec::new();
    for r in resources() {
        let name = r.schema_name();
        out.push((name.clone(), schemas::read_record(r.decl, r.read_extra)));
        for field in r.decl.fields {
            if let record::Kind::Children(inner) = field.kind {
                out.push((inner.schema.to_owned(), schemas::read_record(inner, &[])));
                out.push((
                    format!("{}Write", inner.schema),
                    schemas::write_record(inner),
                ));
            }
        }
        out.push((format!("{name}Write"), schemas::write_record(r.decl)));
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
        Filter::Text(name) => header_param(
            name,
            schemas::pattern("^.{0,100}$"),
            required,
            "The first letters of a name (or a word of it), an email or a phone number; case \
             is ignored, and so is everything but the digits of a phone number.",
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
    for (path, item) in crate::endpoints::items(&all) {
        paths.paths.insert(path.to_owned(), item);
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each resource's schema is its declaration: the same fields, in the same order.
    #[test]
    fn every_record_schema_is_its_declaration() {
        for r in resources() {
            let schema = serde_json::to_value(schemas::read_record(r.decl, &[])).unwrap();
            let names: Vec<&str> = schema["properties"]
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            let declared: Vec<&str> = r
                .decl
                .fields
                .iter()
                .filter(|f| f.shown() || f.access == record::Access::Once)
                .map(|f| f.name)
                .collect();
            assert_eq!(names, declared, "{}", r.plural);
        }
    }

    #[test]
    fn the_catalogue_lists_every_message() {
        let document = crate::pretty();
        for message in api::http::messages::Message::ALL {
            assert!(document.contains(&format!("| {} | {} |", message.id(), message.code())));
        }
    }
}
