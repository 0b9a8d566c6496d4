//! JSON Schemas of the API's values: each field name's type (the same name means the same type
//! in every resource), the envelope, and records built from a domain [`Shape`]. Every object an
//! answer carries is closed (`additionalProperties: false`), so a field the server sends and
//! this document lacks fails the integration tests (tests/api/contract.rs); collections keyed
//! by id or client key stay maps (`additionalProperties: <schema>`).

use utoipa::openapi::schema::{
    AdditionalProperties, ArrayBuilder, ArrayItems, KnownFormat, ObjectBuilder, OneOfBuilder,
    Schema, SchemaFormat, SchemaType, Type,
};
use utoipa::openapi::{Ref, RefOr};

use crate::domain::fields::Shape;

/// Money: a decimal string of minor units, at most 4 decimals (`"300"`, `"41.7"`).
pub const MONEY: &str = r"^-?[0-9]{1,15}(\.[0-9]{1,4})?$";
/// A rate: a decimal string of a fraction (`"0.200"`).
pub const RATE: &str = r"^[0-9]{1,3}(\.[0-9]{1,6})?$";
/// A decimal string as written or read back (a promotion's `x`, a count written as text).
pub const DECIMAL: &str = r"^-?[0-9]{1,12}(\.[0-9]{1,6})?$";
/// Header date-times: `YYYY-MM-DD HH:MM:SS`, UTC.
pub const HEADER_DATE: &str = r"^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$";
/// Id-list headers: `9, 1040`, at most 1,000 ids (the filters' limit).
pub const ID_LIST: &str = r"^ ?[0-9]{1,15}( ?, ?[0-9]{1,15}){0,999} ?$";

/// The format of money and rates: decimal text (never a binary float).
const DECIMAL_FORMAT: &str = "decimal";

/// What one field holds, written and read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Id,
    Integer,
    Text,
    Money,
    Rate,
    Date,
    Bool,
    /// A JSON number or a decimal string, read back as a number (`lat`, `unit`).
    Number,
    /// A JSON number or a decimal string, read back as a decimal string (a promotion's `x`).
    Decimal,
    Ids,
    Texts,
    /// An employee's per-store roles: store id → `{id, roleId}`.
    StoreRoles,
    /// A product's categories: written as ids, read as id → title.
    Categories,
    /// One of the listed words.
    Choice(&'static [&'static str]),
    /// A nested collection keyed by client key or id (described by the shape's `nested`).
    Nested,
}

/// The kind of a field, by name: the API uses one name for one meaning. `None` for a name this
/// table does not know yet (a test keeps that from happening; the document then says "any").
pub fn kind_of(resource: &str, field: &str) -> Option<Kind> {
    use Kind::*;
    Some(match field {
        "id" | "storeId" | "parentId" | "supplierId" | "supplierStoreId" | "basketId"
        | "productId" | "productInstanceId" | "wastageBasketId" => Id,
        "roleId" | "quantity" | "amount" | "tip" | "totalQuantity" | "expected" | "counted"
        | "discrepancy" | "totalStock" | "stockSold" | "stockLeft" => Integer,
        "name" | "addressLine1" | "addressLine2" | "addressLine3" | "city" | "postcode"
        | "phoneNumber" | "email" | "timezone" | "barcode" | "details" | "tags" | "title"
        | "description" | "note" | "reference" | "firstName" | "lastName" | "terms"
        | "customerName" | "customerEmail" | "customerPhone" | "deliveryAddress"
        | "tableNumber" | "clientId" | "clientSecret" | "logo" | "size" | "companyNumber"
        | "vatNumber" | "url" | "secret" | "disabledReason" => Text,
        "countryId" => Text,
        "price" | "originalPrice" | "total" | "totalTax" | "totalPrice" | "totalVat"
        | "totalIncVat" | "unitPrice" | "costPrice" => Money,
        "taxPercentage" | "vatPercentage" => Rate,
        "activeDate" | "deleteDate" | "completeDate" | "joinedDate" | "exitDate" | "startDate"
        | "endDate" | "dueDate" | "invoiceDate" | "addedDate" | "timestamp" | "createDate" => Date,
        "sandbox" | "completed" | "automatic" | "regenerateSecret" | "rotateSecret" | "active" => {
            Bool
        }
        "lat" | "lng" | "unit" => Number,
        "x" | "y" => Decimal,
        "storeIds" | "productIds" | "categoryIds" | "daysAvailable" | "surplusEntryIds" => Ids,
        "redirectUris" | "images" | "events" => Texts,
        "stores" => StoreRoles,
        "categories" => Categories,
        "instances" | "basketProducts" | "items" | "products" => Nested,
        "fulfilment" => Choice(&["collection", "delivery", "table"]),
        "status" => Choice(&["pending", "accepted", "ready", "completed", "cancelled"]),
        "type" => match resource {
            "baskets" => Choice(&["sale", "wastage"]),
            "transactions" => Choice(&["CASH", "CARD", "CHEQUE", "VOUCHER", "APP"]),
            "promotions" => Choice(&["percentage", "xForY", "mealDeal"]),
            _ => return None,
        },
        _ => return None,
    })
}

fn typed(t: Type) -> ObjectBuilder {
    ObjectBuilder::new().schema_type(t)
}

fn nullable(t: Type) -> ObjectBuilder {
    ObjectBuilder::new().schema_type(SchemaType::from_iter([t, Type::Null]))
}

/// An object that allows no property beyond those it declares.
pub fn closed() -> ObjectBuilder {
    typed(Type::Object).additional_properties(Some(AdditionalProperties::<Schema>::FreeForm(false)))
}

/// A reference to `components.schemas.<name>`.
pub fn named(name: &str) -> RefOr<Schema> {
    RefOr::Ref(Ref::from_schema_name(name))
}

fn array_of(item: impl Into<RefOr<Schema>>) -> Schema {
    ArrayBuilder::new()
        .items(ArrayItems::RefOrSchema(Box::new(item.into())))
        .build()
        .into()
}

/// An object whose keys are client keys or ids and whose values are `value`.
pub fn keyed(value: impl Into<RefOr<Schema>>) -> Schema {
    typed(Type::Object)
        .additional_properties(Some(AdditionalProperties::RefOr(value.into())))
        .build()
        .into()
}

fn any_value() -> Schema {
    Schema::Object(
        ObjectBuilder::new()
            .schema_type(SchemaType::AnyValue)
            .build(),
    )
}

fn decimal_text(t: ObjectBuilder, pattern: &str) -> ObjectBuilder {
    t.format(Some(SchemaFormat::Custom(DECIMAL_FORMAT.into())))
        .pattern(Some(pattern))
}

/// A date-time as answers render it: ISO 8601 in UTC with milliseconds
/// (`2026-03-28T12:30:00.000Z`).
pub fn date_time(t: ObjectBuilder) -> ObjectBuilder {
    t.format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
}

impl Kind {
    /// The schema of a value written in a body (null clears a nullable field).
    pub fn write(self) -> Schema {
        use Kind::*;
        match self {
            Id | Integer => nullable(Type::Integer).build().into(),
            Text => nullable(Type::String).max_length(Some(2000)).build().into(),
            Money => decimal_text(nullable(Type::String), MONEY).build().into(),
            Rate => decimal_text(nullable(Type::String), RATE).build().into(),
            Date => nullable(Type::String)
                .description(Some(
                    "`2026-03-28T12:30:00.000Z` or `2026-03-28 12:30:00` (UTC).",
                ))
                .build()
                .into(),
            Bool => nullable(Type::Boolean).build().into(),
            Number | Decimal => OneOfBuilder::new()
                .item(typed(Type::Number))
                .item(typed(Type::String).pattern(Some(DECIMAL)))
                .item(typed(Type::Null))
                .build()
                .into(),
            Ids | Categories => array_of(typed(Type::Integer).minimum(Some(0))),
            Texts => array_of(typed(Type::String)),
            StoreRoles => keyed(store_role()),
            Choice(words) => typed(Type::String)
                .enum_values(Some(words.iter().copied()))
                .build()
                .into(),
            Nested => keyed(typed(Type::Object)),
        }
    }

    /// The schema of a value as reads render it.
    pub fn read(self) -> Schema {
        use Kind::*;
        match self {
            Id | Integer => nullable(Type::Integer).build().into(),
            Text => nullable(Type::String).build().into(),
            Date => date_time(nullable(Type::String)).build().into(),
            Money => decimal_text(nullable(Type::String), MONEY).build().into(),
            Rate => decimal_text(nullable(Type::String), RATE).build().into(),
            Bool => nullable(Type::Boolean).build().into(),
            Number => nullable(Type::Number).build().into(),
            Decimal => decimal_text(nullable(Type::String), DECIMAL).build().into(),
            Ids => array_of(typed(Type::Integer)),
            Texts => array_of(typed(Type::String)),
            StoreRoles => keyed(store_role()),
            Categories => keyed(typed(Type::String)),
            Choice(_) => nullable(Type::String).build().into(),
            Nested => keyed(closed()),
        }
    }
}

/// An employee's role at one store: `{id, roleId}` (`id` is the store's).
fn store_role() -> Schema {
    closed()
        .property("id", typed(Type::Integer))
        .property("roleId", typed(Type::Integer))
        .required("id")
        .required("roleId")
        .build()
        .into()
}

/// The component name of a nested collection's records (`instances` of a product are
/// `ProductInstance`s).
pub fn nested_name(resource: &str, field: &str) -> String {
    match (resource, field) {
        ("products", "instances") => "ProductInstance".into(),
        ("baskets", "basketProducts") => "BasketLine".into(),
        ("invoices", "items") => "InvoiceLine".into(),
        ("stockReconciliations", "products") => "CountLine".into(),
        _ => format!("{resource}_{field}"),
    }
}

/// Switches a write takes that no answer renders (`regenerateSecret`, `rotateSecret`).
fn request_only(field: &str) -> bool {
    matches!(field, "regenerateSecret" | "rotateSecret")
}

fn has_id(shape: &Shape) -> bool {
    shape
        .writable
        .iter()
        .chain(shape.read_only)
        .any(|f| *f == "id")
}

/// A record as a write sends it: every field the validator knows, plus `id` (an update) where
/// the record has one and `extra` (request-only switches such as `regenerateSecret`). Unknown
/// fields are refused (422).
pub fn write_record(resource: &str, shape: &Shape, extra: &[&str], required: &[&str]) -> Schema {
    let mut object = closed().description(Some(format!(
        "Without `id` a create (required: {}); with `id` a partial update of that record.",
        required.join(", ")
    )));
    if has_id(shape) {
        object = object.property("id", typed(Type::Integer).minimum(Some(0)));
    }
    for field in shape.writable.iter().chain(extra) {
        if *field == "id" {
            continue;
        }
        let schema = match kind_of(resource, field) {
            Some(Kind::Nested) => nested_write(resource, shape, field),
            Some(kind) => kind.write(),
            None => any_value(),
        };
        object = object.property(*field, schema);
    }
    object.build().into()
}

/// A nested collection as written: its records' own component (`ProductInstanceWrite`).
fn nested_write(resource: &str, shape: &Shape, field: &str) -> Schema {
    match shape.nested.iter().any(|(name, _)| *name == field) {
        true => keyed(named(&format!("{}Write", nested_name(resource, field)))),
        false => keyed(typed(Type::Object)),
    }
}

/// A record as reads render it, the one place a field list becomes a schema: `id` where the
/// shape has one, then the writable and read-only fields, then `extra` (answer-only fields
/// such as the stock columns a `storeId` header adds). Every field is sent (null when empty)
/// and so required, except `extra` and `optional` (a secret shown once). Nested collections
/// refer to their own component ([`nested_name`]), built by this function from the inner
/// shape.
pub fn read_record(resource: &str, shape: &Shape, extra: &[&str], optional: &[&str]) -> Schema {
    let mut object = closed();
    if has_id(shape) {
        object = object.property("id", typed(Type::Integer)).required("id");
    }
    for field in shape.writable.iter().chain(shape.read_only).chain(extra) {
        if *field == "id" || request_only(field) {
            continue;
        }
        let nested = shape.nested.iter().any(|(n, _)| n == field);
        let schema = match kind_of(resource, field) {
            _ if nested => keyed(named(&nested_name(resource, field))),
            Some(kind) => kind.read(),
            None => any_value(),
        };
        object = object.property(*field, schema);
        if !extra.contains(field) && !optional.contains(field) {
            object = object.required(*field);
        }
    }
    object.build().into()
}

/// The named schemas every answer shares: the `api` object and its message records, the
/// `error` object, and the envelopes built from them.
pub fn shared() -> Vec<(&'static str, Schema)> {
    vec![
        ("Api", api()),
        ("ApiMessages", messages()),
        ("ApiMessageRecord", message_record()),
        ("ErrorObject", error_object()),
        ("ErrorEnvelope", error_envelope()),
        ("OAuthError", oauth_error()),
        ("Envelope", envelope(vec![])),
        ("ApiVersion", choice(&["2.0", "2"])),
    ]
}

/// One record in `api.message.success|error|warning`; errors carry `code` and `statusCode`.
fn message_record() -> Schema {
    closed()
        .property("id", typed(Type::Integer))
        .property("code", typed(Type::String))
        .property("statusCode", typed(Type::Integer))
        .property("title", typed(Type::String))
        .property("details", typed(Type::String))
        .property("objectRef", typed(Type::String))
        .required("id")
        .required("title")
        .required("details")
        .build()
        .into()
}

/// `api.message`: the maps that have records (an empty object when none has).
fn messages() -> Schema {
    let records = || keyed(named("ApiMessageRecord"));
    closed()
        .property("success", records())
        .property("error", records())
        .property("warning", records())
        .build()
        .into()
}

/// `api`: the envelope on every answer.
fn api() -> Schema {
    closed()
        .property("message", named("ApiMessages"))
        .property("codeBaseVersion", typed(Type::String))
        .property("executionTime_milliSeconds", typed(Type::Integer))
        .required("message")
        .required("codeBaseVersion")
        .required("executionTime_milliSeconds")
        .build()
        .into()
}

/// The top-level `error` object of every answer with status 400 or more.
fn error_object() -> Schema {
    closed()
        .property("code", typed(Type::Integer))
        .property("message", typed(Type::String))
        .property("details", array_of(typed(Type::String)))
        .required("code")
        .required("message")
        .required("details")
        .build()
        .into()
}

/// Every API error: `error` beside `api`.
fn error_envelope() -> Schema {
    envelope(vec![("error", named("ErrorObject"))])
}

/// An answer: `api` (required) beside the given fields, all required.
pub fn envelope(fields: Vec<(&str, RefOr<Schema>)>) -> Schema {
    envelope_with(fields, &[])
}

/// An answer: `api` beside the `required` fields and the `optional` ones.
pub fn envelope_with(
    required: Vec<(&str, RefOr<Schema>)>,
    optional: &[(&str, RefOr<Schema>)],
) -> Schema {
    let mut object = closed().property("api", named("Api")).required("api");
    for (name, schema) in required {
        object = object.property(name, schema).required(name);
    }
    for (name, schema) in optional {
        object = object.property(*name, schema.clone());
    }
    object.build().into()
}

/// An OAuth error (RFC 6749 §5.2) inside the envelope.
fn oauth_error() -> Schema {
    envelope(vec![
        (
            "error",
            choice(&[
                "invalid_request",
                "invalid_client",
                "invalid_grant",
                "unauthorized_client",
                "unsupported_grant_type",
                "invalid_scope",
                "server_error",
            ])
            .into(),
        ),
        ("error_description", string().into()),
    ])
}

/// Any JSON object (a request body this document does not itemise).
pub fn object() -> Schema {
    typed(Type::Object).build().into()
}

/// Any JSON value (a log's `data`: whatever the client filed).
pub fn any() -> Schema {
    any_value()
}

pub fn string() -> Schema {
    typed(Type::String).build().into()
}

pub fn nullable_string() -> Schema {
    nullable(Type::String).build().into()
}

pub fn nullable_integer() -> Schema {
    nullable(Type::Integer).build().into()
}

/// A date-time as answers render it (see [`date_time`]); `nullable` when it may be absent.
pub fn date(nullable_too: bool) -> Schema {
    let t = match nullable_too {
        true => nullable(Type::String),
        false => typed(Type::String),
    };
    date_time(t).build().into()
}

/// Money as answers render it: decimal text.
pub fn money() -> Schema {
    decimal_text(typed(Type::String), MONEY).build().into()
}

pub fn boolean() -> Schema {
    typed(Type::Boolean).build().into()
}

pub fn integers() -> Schema {
    array_of(integer())
}

pub fn strings() -> Schema {
    array_of(string())
}

pub fn array_of_named(name: &str) -> Schema {
    array_of(named(name))
}

pub fn integer() -> Schema {
    typed(Type::Integer).build().into()
}

pub fn pattern(p: &str) -> Schema {
    typed(Type::String).pattern(Some(p)).build().into()
}

pub fn choice(words: &[&str]) -> Schema {
    typed(Type::String)
        .enum_values(Some(words.iter().copied()))
        .build()
        .into()
}

/// Exactly one of the named schemas.
pub fn one_of(items: Vec<RefOr<Schema>>) -> Schema {
    let mut one_of = OneOfBuilder::new();
    for item in items {
        one_of = one_of.item(item);
    }
    one_of.build().into()
}

pub fn binary() -> Schema {
    typed(Type::String)
        .content_media_type("application/octet-stream")
        .build()
        .into()
}
