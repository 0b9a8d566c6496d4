//! JSON Schemas of the API's values: each field name's type (the same name means the same type
//! in every resource), the envelope, and records built from a domain [`Shape`].

use utoipa::openapi::schema::{
    AdditionalProperties, ArrayBuilder, ArrayItems, ObjectBuilder, OneOfBuilder, Schema,
    SchemaType, Type,
};
use utoipa::openapi::RefOr;

use crate::domain::fields::Shape;

/// Money: a decimal string of minor units, at most 4 decimals (`"300"`, `"41.7"`).
pub const MONEY: &str = r"^-?[0-9]{1,15}(\.[0-9]{1,4})?$";
/// A rate: a decimal string of a fraction (`"0.200"`).
pub const RATE: &str = r"^[0-9]{1,3}(\.[0-9]{1,6})?$";
/// Header date-times: `YYYY-MM-DD HH:MM:SS`, UTC.
pub const HEADER_DATE: &str = r"^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$";
/// Id-list headers: `9, 1040`.
pub const ID_LIST: &str = r"^ ?[0-9]{1,15}( ?, ?[0-9]{1,15}){0,9} ?$";

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
        | "discrepancy" => Integer,
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

impl Kind {
    /// The schema of a value written in a body (null clears a nullable field).
    pub fn write(self) -> Schema {
        use Kind::*;
        match self {
            Id | Integer => nullable(Type::Integer).build().into(),
            Text => nullable(Type::String).max_length(Some(2000)).build().into(),
            Money => nullable(Type::String).pattern(Some(MONEY)).build().into(),
            Rate => nullable(Type::String).pattern(Some(RATE)).build().into(),
            Date => nullable(Type::String)
                .description(Some(
                    "`2026-03-28T12:30:00.000Z` or `2026-03-28 12:30:00` (UTC).",
                ))
                .build()
                .into(),
            Bool => nullable(Type::Boolean).build().into(),
            Number | Decimal => OneOfBuilder::new()
                .item(typed(Type::Number))
                .item(typed(Type::String).pattern(Some(r"^-?[0-9]{1,12}(\.[0-9]{1,6})?$")))
                .item(typed(Type::Null))
                .build()
                .into(),
            Ids | Categories => array_of(typed(Type::Integer).minimum(Some(0))),
            Texts => array_of(typed(Type::String)),
            StoreRoles => keyed(
                typed(Type::Object)
                    .property("id", typed(Type::Integer))
                    .property("roleId", typed(Type::Integer)),
            ),
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
            Text | Date => nullable(Type::String).build().into(),
            Money => nullable(Type::String).pattern(Some(MONEY)).build().into(),
            Rate => nullable(Type::String).build().into(),
            Bool => nullable(Type::Boolean).build().into(),
            Number => nullable(Type::Number).build().into(),
            Decimal => nullable(Type::String).build().into(),
            Ids => array_of(typed(Type::Integer)),
            Texts => array_of(typed(Type::String)),
            StoreRoles => keyed(typed(Type::Object)),
            Categories => keyed(typed(Type::String)),
            Choice(_) => nullable(Type::String).build().into(),
            Nested => keyed(typed(Type::Object)),
        }
    }
}

/// A record as a write sends it: every field the validator knows, plus `id` (an update) and
/// `extra` (request-only switches such as `regenerateSecret`). Unknown fields are refused (422).
pub fn write_record(resource: &str, shape: &Shape, extra: &[&str], required: &[&str]) -> Schema {
    let mut object = typed(Type::Object)
        .property("id", typed(Type::Integer).minimum(Some(0)))
        .additional_properties(Some(AdditionalProperties::FreeForm(false)))
        .description(Some(format!(
            "Without `id` a create (required: {}); with `id` a partial update of that record.",
            required.join(", ")
        )));
    for field in shape.writable.iter().chain(extra) {
        let kind = kind_of(resource, field);
        let schema = match kind {
            Some(Kind::Nested) => nested_write(resource, shape, field),
            Some(kind) => kind.write(),
            None => any_value(),
        };
        object = object.property(*field, schema);
    }
    object.build().into()
}

fn nested_write(resource: &str, shape: &Shape, field: &str) -> Schema {
    match shape.nested.iter().find(|(name, _)| *name == field) {
        Some((_, inner)) => keyed(write_record(resource, inner, &[], &[])),
        None => keyed(typed(Type::Object)),
    }
}

/// A record as reads render it: the writable and read-only fields (more may follow, such as
/// the stock columns a `storeId` header adds).
pub fn read_record(resource: &str, shape: &Shape, extra: &[&str]) -> Schema {
    let mut object = typed(Type::Object)
        .property("id", typed(Type::Integer))
        .required("id");
    for field in shape.writable.iter().chain(shape.read_only).chain(extra) {
        if *field == "id" {
            continue;
        }
        let schema = match (
            kind_of(resource, field),
            shape.nested.iter().find(|(n, _)| n == field),
        ) {
            (_, Some((_, inner))) => keyed(read_record(resource, inner, &[])),
            (Some(kind), None) => kind.read(),
            (None, None) => any_value(),
        };
        object = object.property(*field, schema);
    }
    object.build().into()
}

/// `api`: the envelope on every answer.
pub fn api() -> Schema {
    let record = typed(Type::Object)
        .property("id", typed(Type::Integer))
        .property("title", typed(Type::String))
        .property("details", typed(Type::String))
        .property("objectRef", nullable(Type::String))
        .property("code", typed(Type::String))
        .property("statusCode", typed(Type::Integer))
        .required("id")
        .required("title")
        .build();
    let records = || keyed(record.clone());
    typed(Type::Object)
        .property(
            "message",
            typed(Type::Object)
                .property("success", records())
                .property("error", records())
                .property("warning", records()),
        )
        .property("codeBaseVersion", typed(Type::String))
        .property("executionTime_milliSeconds", typed(Type::Integer))
        .required("message")
        .required("codeBaseVersion")
        .build()
        .into()
}

/// The top-level `error` object of every answer with status 400 or more.
pub fn error() -> Schema {
    typed(Type::Object)
        .property("code", typed(Type::Integer))
        .property("message", typed(Type::String))
        .property("details", array_of(typed(Type::String)))
        .required("code")
        .required("message")
        .build()
        .into()
}

/// An answer: `api` (required) beside the given fields.
pub fn envelope(fields: Vec<(&str, RefOr<Schema>)>) -> Schema {
    let mut object = typed(Type::Object)
        .property(
            "api",
            RefOr::Ref(utoipa::openapi::Ref::from_schema_name("Api")),
        )
        .required("api");
    for (name, schema) in fields {
        object = object.property(name, schema).required(name);
    }
    object.build().into()
}

/// An OAuth error (RFC 6749 §5.2) inside the envelope.
pub fn oauth_error() -> Schema {
    envelope(vec![("error", typed(Type::String).build().into())])
}

/// Any JSON object (the parts of an answer this document does not itemise).
pub fn object() -> Schema {
    typed(Type::Object).build().into()
}

pub fn string() -> Schema {
    typed(Type::String).build().into()
}

pub fn boolean() -> Schema {
    typed(Type::Boolean).build().into()
}

pub fn integers() -> Schema {
    array_of(integer())
}

pub fn array_of_objects() -> Schema {
    array_of(object())
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

pub fn binary() -> Schema {
    typed(Type::String)
        .content_media_type("application/octet-stream")
        .build()
        .into()
}
