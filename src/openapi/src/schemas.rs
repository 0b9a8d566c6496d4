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

use domain::record::{Access, FieldDecl, RecordDecl};

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

/// What a field holds, as the record declarations say it (`domain::record::Kind`).
pub use domain::record::Kind;

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

/// The schema of a value written in a body (null clears a nullable field).
pub fn write_schema(kind: Kind) -> Schema {
    use Kind::*;
    match kind {
        Id | Integer => nullable(Type::Integer).build().into(),
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
        Text | Url => nullable(Type::String).max_length(Some(2000)).build().into(),
        Images => array_of(typed(Type::String)),
        Children(inner) => keyed(named(&format!("{}Write", inner.schema))),
        Json(schema) => one_of(vec![named(schema), typed(Type::Null).build().into()]),
    }
}

/// The schema of a value as reads render it; `null` only where the field may be null.
pub fn read_schema(kind: Kind, may_be_null: bool) -> Schema {
    use Kind::*;
    let scalar = |t: Type| if may_be_null { nullable(t) } else { typed(t) };
    match kind {
        Id | Integer => scalar(Type::Integer).build().into(),
        Text | Url => scalar(Type::String).build().into(),
        Date => date_time(scalar(Type::String)).build().into(),
        Money => decimal_text(scalar(Type::String), MONEY).build().into(),
        Rate => decimal_text(scalar(Type::String), RATE).build().into(),
        Bool => scalar(Type::Boolean).build().into(),
        Number => scalar(Type::Number).build().into(),
        Decimal => decimal_text(scalar(Type::String), DECIMAL).build().into(),
        Ids => array_of(typed(Type::Integer)),
        Texts | Images => array_of(typed(Type::String)),
        StoreRoles => keyed(store_role()),
        Categories => keyed(typed(Type::String)),
        Children(inner) => keyed(named(inner.schema)),
        Json(schema) if may_be_null => {
            one_of(vec![named(schema), typed(Type::Null).build().into()])
        }
        Json(schema) => utoipa::openapi::AllOfBuilder::new()
            .item(named(schema))
            .build()
            .into(),
        Choice(words) => scalar(Type::String)
            .enum_values(Some(
                words
                    .iter()
                    .copied()
                    .map(Some)
                    .chain(may_be_null.then_some(None)),
            ))
            .build()
            .into(),
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

/// A record as a write sends it: the fields its declaration lets writes set, plus `id` (an
/// update) where the record has one. Unknown fields are refused (422); nested records refer to
/// their own write component (`ProductInstanceWrite`).
pub fn write_record(decl: &'static RecordDecl) -> Schema {
    let required: Vec<&str> = decl
        .fields
        .iter()
        .filter(|f| f.access == Access::Required)
        .map(|f| f.name)
        .collect();
    let mut object = closed().description(Some(format!(
        "Without `id` a create (required: {}); with `id` a partial update of that record.",
        required.join(", ")
    )));
    if let Some(id) = decl.field("id") {
        object = object.property("id", described(typed(Type::Integer).minimum(Some(0)), id));
    }
    for field in decl
        .fields
        .iter()
        .filter(|f| f.writable() && f.name != "id")
    {
        object = object.property(field.name, write_schema(field.kind));
    }
    object.build().into()
}

/// A record as reads render it, the one place a declaration becomes a schema: every field it
/// shows, in its order, then `extra` (answer-only fields such as the stock columns a `storeId`
/// header adds). Every shown field is sent (null when empty, where it may be) and so required,
/// except `extra` and a secret shown once. Nested records refer to their own component.
pub fn read_record(decl: &'static RecordDecl, extra: &[(&str, Kind)]) -> Schema {
    let mut object = closed();
    for field in decl.fields {
        let once = field.access == Access::Once;
        if !field.shown() && !once {
            continue;
        }
        object = object.property(field.name, read_schema(field.kind, field.nullable));
        if !once {
            object = object.required(field.name);
        }
    }
    for (name, kind) in extra {
        object = object.property(*name, read_schema(*kind, false));
    }
    object.build().into()
}

/// A schema with its field's doc comment as the description.
fn described(builder: ObjectBuilder, field: &FieldDecl) -> ObjectBuilder {
    match field.doc {
        "" => builder,
        doc => builder.description(Some(doc)),
    }
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
