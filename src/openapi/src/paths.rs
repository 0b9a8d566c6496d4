//! The record collections' operations, one table of them: each row is a record type whose
//! path, names, id headers, fields, filters and limits are its declaration's; the filters a
//! list reads beyond the declaration are the handler's own [`FilterHeader`]s, and the scopes
//! the gate's own rule ([`needed_scope`](api::http::auth::needed_scope)).

use actix_web::http::Method;
use utoipa::openapi::link::LinkBuilder;
use utoipa::openapi::path::{HttpMethod, Operation, Parameter, PathItem};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::{Header, Paths, RefOr, Required};

use crate::common::{
    api_operation, bool_param, date_param, header_param, idempotency_param, ids_param, item,
    json_content, json_ok, limit, sequence_param, with,
};
use crate::records::{self, schema_name};
use crate::schemas::{self, typed, Kind};
use api::http::filters::{FilterHeader, FilterKind};
use api::http::resources::OBJECT_IDS;
use api::http::{catalogue, customers, stock};
use domain::record::{self, RecordDecl};

/// One record collection under its path: GET (list), POST, PUT, DELETE.
struct ResourceDoc {
    name: String,
    decl: &'static RecordDecl,
    id_headers: [&'static str; 2],
    /// What the list reads beyond the ids and `deleted`: the declared filters, then the
    /// handler's, each with what it keeps.
    filters: Vec<(Parameter, String)>,
    /// Answer-only fields beyond the record (the stock columns).
    read_extra: &'static [(&'static str, Kind)],
}

/// A declared filter as a header, and what it keeps in words.
fn declared_filter(field: &record::FieldDecl, header: &'static str) -> (Parameter, String) {
    match field.kind {
        record::Kind::Bool => (
            bool_param(
                header,
                false,
                &format!("Only those whose `{}` is this.", field.name),
            ),
            format!("`{header}` keeps those whose `{}` is that.", field.name),
        ),
        _ => (
            ids_param(header, false),
            format!(
                "`{header}` keeps those whose `{}` is one of them.",
                field.name
            ),
        ),
    }
}

/// A handler's own filter as a header, and what it keeps in words.
fn handler_filter(filter: &FilterHeader) -> (Parameter, String) {
    let parameter = match filter.kind {
        FilterKind::Ids => ids_param(filter.name, filter.required),
        FilterKind::OneId => header_param(
            filter.name,
            typed(Type::String)
                .pattern(Some("^ ?[0-9]{1,19} ?$"))
                .build(),
            filter.required,
            filter.doc,
        ),
        FilterKind::Bool => bool_param(filter.name, filter.required, filter.doc),
        FilterKind::DateTime => {
            let mut p = date_param(filter.name, filter.required);
            p.description = Some(format!("{} `YYYY-MM-DD HH:MM:SS`, UTC.", filter.doc));
            p
        }
        FilterKind::Search(max) => header_param(
            filter.name,
            limit(
                typed(Type::String).pattern(Some(format!("^.{{0,{max}}}$"))),
                "length",
                max as i64,
            )
            .build(),
            filter.required,
            filter.doc,
        ),
    };
    (parameter, format!("`{}`: {}", filter.name, filter.doc))
}

fn doc(decl: &'static RecordDecl) -> ResourceDoc {
    let filters = decl
        .fields
        .iter()
        .filter_map(|f| f.filter.map(|header| declared_filter(f, header)))
        .collect();
    ResourceDoc {
        name: schema_name(decl.noun),
        decl,
        id_headers: decl.id_headers,
        filters,
        read_extra: &[],
    }
}

impl ResourceDoc {
    fn path(&self) -> &'static str {
        self.decl.path
    }

    fn filters(mut self, own: &[FilterHeader]) -> Self {
        self.filters.extend(own.iter().map(handler_filter));
        self
    }
}

/// Every record collection: the registry's, with what their handlers add.
fn resources() -> Vec<ResourceDoc> {
    const STOCK: &[(&str, Kind)] = &[
        ("totalStock", Kind::Integer),
        ("stockSold", Kind::Integer),
        ("stockLeft", Kind::Integer),
    ];
    domain::registry::declarations()
        .into_iter()
        .filter(|decl| !decl.path.is_empty())
        .map(doc)
        .map(|r| match r.path() {
            "/product" => ResourceDoc {
                read_extra: STOCK,
                ..r.filters(catalogue::products::FILTERS)
            },
            "/promotion" => r.filters(catalogue::promotions::FILTERS),
            "/customer" => r.filters(customers::records::FILTERS),
            "/stock/reconcile" => ResourceDoc {
                filters: Vec::new(),
                ..r
            }
            .filters(stock::counts::FILTERS),
            _ => r,
        })
        .collect()
}

/// The record schemas under `components.schemas`: `<Noun>` as read, `<Noun>Create`,
/// `<Noun>Update` and `<Noun>Write` (either) as written, and the same for each nested
/// collection's record (`ProductInstance`); `<Noun>List` the answer of reads and writes,
/// `<Noun>WriteBody` a POST's body, `<Noun>UpdateBody` a PUT's.
pub fn record_schemas() -> Vec<(String, Schema)> {
    let mut out = Vec::new();
    let written = |out: &mut Vec<(String, Schema)>, decl: &'static RecordDecl, name: &str| {
        out.push((format!("{name}Create"), records::create_record(decl)));
        if decl.field("id").is_some() {
            out.push((format!("{name}Update"), records::update_record(decl)));
            out.push((format!("{name}Write"), records::write_record(name)));
        }
    };
    for r in resources() {
        out.push((r.name.clone(), records::read_record(r.decl, r.read_extra)));
        for field in r.decl.fields {
            if let record::Kind::Children(inner) = field.kind {
                out.push((inner.schema.to_owned(), records::read_record(inner, &[])));
                written(&mut out, inner, inner.schema);
            }
        }
        written(&mut out, r.decl, &r.name);
        out.push((format!("{}List", r.name), list_answer(&r)));
        out.push((format!("{}WriteBody", r.name), write_body(&r, "Write")));
        if r.decl.field("id").is_some() {
            out.push((format!("{}UpdateBody", r.name), write_body(&r, "Update")));
        }
    }
    out
}

/// `{"<plural>": {"<id or key>": <Noun>}, "api": …}`: what reads and writes answer.
fn list_answer(r: &ResourceDoc) -> Schema {
    let records = schemas::keyed(schemas::named(&r.name));
    let plural = r.decl.plural;
    match r.path() {
        // The counts of a range come with the units they booked: store → product → units.
        "/stock/reconcile" => {
            let units = || schemas::keyed(schemas::keyed(schemas::integer())).into();
            schemas::envelope_with(
                vec![(plural, records.into())],
                &[("wastage", units()), ("surplus", units())],
            )
        }
        _ => schemas::envelope(vec![(plural, records.into())]),
    }
}

/// `{"<plural>": {"<clientKey>": <Noun><what>}}`, at most the server's default
/// `max_batch_objects` objects. Open, as before: what the server reads of a write body is its
/// plural (each record is closed), and schemathesis's stateful phase finds fewer successful
/// writes to follow links from when the body is closed.
fn write_body(r: &ResourceDoc, what: &str) -> Schema {
    let max = config::Settings::default().max_batch_objects;
    let records = limit(
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .additional_properties(Some(schemas::named(&format!("{}{what}", r.name))))
            .max_properties(Some(max)),
        "objects",
        max as i64,
    );
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .property(r.decl.plural, records)
        .required(r.decl.plural)
        .build()
        .into()
}

fn records_answer(r: &ResourceDoc) -> RefOr<Schema> {
    schemas::named(&format!("{}List", r.name))
}

fn resource_item(r: &ResourceDoc) -> PathItem {
    let mut operations = vec![
        (HttpMethod::Get, list_operation(r)),
        (HttpMethod::Post, write_operation(r, Method::POST)),
    ];
    if r.decl.field("id").is_some() {
        operations.push((HttpMethod::Put, write_operation(r, Method::PUT)));
    }
    operations.push((HttpMethod::Delete, delete_operation(r)));
    item(operations)
}

fn list_operation(r: &ResourceDoc) -> Operation {
    let plural = r.decl.plural;
    let mut list = api_operation(
        &Method::GET,
        r.path(),
        format!("list{}", r.name),
        format!("Read {plural}"),
    )
    .description(Some(format!(
        "The merchant's {plural}, keyed by id: those `{}` (or `{}`) names, or every one. \
         Deleted ones are left out unless `deleted: true`; with `changedSince` only those \
         changed after that sequence come, deleted ones included. {} {}",
        r.id_headers[0],
        r.id_headers[1],
        r.filters
            .iter()
            .map(|(_, what)| what.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        r.decl.doc
    )))
    .parameter(ids_param(r.id_headers[0], false))
    .parameter(ids_param(r.id_headers[1], false))
    .parameter(bool_param(
        "deleted",
        false,
        "`true` adds deleted records to the list.",
    ))
    .parameter(sequence_param(
        "changedSince",
        "Only the records changed after this `x-merchant-sequence`, deleted ones included.",
    ));
    for (filter, _) in &r.filters {
        list = list.parameter(filter.clone());
    }
    let found = ResponseBuilder::new()
        .description(format!("The {plural} found, keyed by id."))
        .header("x-merchant-sequence", Header::new(schemas::string()))
        .content("application/json", json_content(records_answer(r)))
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

/// What a create must give, in words.
fn required_text(decl: &RecordDecl) -> String {
    let required: Vec<String> = decl
        .fields
        .iter()
        .filter(|f| f.access == record::Access::Required)
        .map(|f| format!("`{}`", f.name))
        .collect();
    match required.is_empty() {
        true => "A create needs no field.".into(),
        false => format!("A create must give {}.", required.join(", ")),
    }
}

fn write_operation(r: &ResourceDoc, method: Method) -> Operation {
    let plural = r.decl.plural;
    let max = config::Settings::default().max_batch_objects;
    let (verb, body, description) = match method == Method::PUT {
        true => (
            "update",
            "UpdateBody",
            format!(
                "Changes the {plural} each object's `id` names; only the fields given change. \
                 Each object, under a key of the client's choosing, is answered on its own: \
                 the saved record, or the messages that refused it (the others still save)."
            ),
        ),
        false => (
            "create",
            "WriteBody",
            format!(
                "Creates {plural} (an object without `id`) or changes the one an `id` names. \
                 {} Each object, under a key of the client's choosing, is answered on its own: \
                 the saved record, or the messages that refused it (the others still save). At \
                 most {max} objects a request (the server's `max_batch_objects`).",
                required_text(r.decl)
            ),
        ),
    };
    let saved = ResponseBuilder::new()
        .description("The saved records under their client keys; a record per object.")
        .header(OBJECT_IDS, Header::new(schemas::string()))
        .content("application/json", json_content(records_answer(r)))
        .link("read", saved_link(r, format!("list{}", r.name)))
        .link("delete", saved_link(r, format!("delete{}", r.name)))
        .build();
    let op = api_operation(
        &method,
        r.path(),
        format!("{verb}{}", r.name),
        format!("{verb} {plural}"),
    )
    .description(Some(description))
    .parameter(idempotency_param())
    .request_body(Some(
        RequestBodyBuilder::new()
            .required(Some(Required::True))
            .content(
                "application/json",
                json_content(schemas::named(&format!("{}{body}", r.name))),
            )
            .build(),
    ))
    .response("201", saved);
    with(op, &["404", "413", "415", "422"]).build()
}

fn delete_operation(r: &ResourceDoc) -> Operation {
    let plural = r.decl.plural;
    let delete = api_operation(
        &Method::DELETE,
        r.path(),
        format!("delete{}", r.name),
        format!("Delete {plural}"),
    )
    .description(Some(format!(
        "Deletes the {plural} `{}` (or `{}`) names. A deleted record stays readable with \
         `deleted: true`; the answer has a message per deleted id.",
        r.id_headers[0], r.id_headers[1]
    )))
    .parameter(ids_param(r.id_headers[0], false))
    .parameter(ids_param(r.id_headers[1], false))
    .parameter(idempotency_param())
    .response(
        "205",
        json_ok("A record per deleted id.", schemas::named("Envelope")),
    );
    with(delete, &["404", "422"]).build()
}

/// Every path of the API.
pub fn paths() -> Paths {
    let mut paths = Paths::new();
    for r in resources() {
        paths.paths.insert(r.path().to_owned(), resource_item(&r));
    }
    for (path, item) in crate::endpoints::items() {
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
            let schema = serde_json::to_value(records::read_record(r.decl, &[])).unwrap();
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
            assert_eq!(names, declared, "{}", r.decl.plural);
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
