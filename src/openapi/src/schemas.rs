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

/// Header date-times: `YYYY-MM-DD HH:MM:SS`, UTC.
pub const HEADER_DATE: &str = r"^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$";

/// Money as a write sends it: a decimal string of minor units, from 0 to
/// [`MAX_MONEY`](domain::money::MAX_MONEY) with at most [`MAX_SCALE`] decimals.
pub fn money_pattern() -> String {
    let max = domain::money::MAX_MONEY.to_string();
    let (first, zeros) = max.split_at(1);
    // MAX_MONEY is a power of ten, so "fewer digits, or exactly it" is the whole range.
    debug_assert!(first == "1" && zeros.chars().all(|c| c == '0'));
    format!(
        r"^(0|[1-9][0-9]{{0,{}}})(\.[0-9]{{1,{MAX_SCALE}}})?$|^{max}(\.0{{1,{MAX_SCALE}}})?$",
        zeros.len() - 1
    )
}

/// Money as answers render it: totals and refunds may pass a write's limit or be negative.
fn read_money_pattern() -> String {
    format!(r"^-?[0-9]+(\.[0-9]{{1,{MAX_SCALE}}})?$")
}

/// A rate: a fraction from 0 to 1 as a decimal string (`"0.200"`), at most [`MAX_SCALE`]
/// decimals.
pub fn rate_pattern() -> String {
    format!(r"^(0(\.[0-9]{{1,{MAX_SCALE}}})?|1(\.0{{1,{MAX_SCALE}}})?)$")
}

/// A decimal string as written or read back (a promotion's `x`, a count written as text).
pub fn decimal_pattern() -> String {
    format!(r"^-?[0-9]{{1,12}}(\.[0-9]{{1,{MAX_SCALE}}})?$")
}

use domain::money::MAX_SCALE;

/// The format of money and rates: decimal text (never a binary float).
const DECIMAL_FORMAT: &str = "decimal";

/// What a field holds, as the record declarations say it (`domain::record::Kind`).
pub use domain::record::Kind;

pub fn typed(t: Type) -> ObjectBuilder {
    ObjectBuilder::new().schema_type(t)
}

pub fn nullable(t: Type) -> ObjectBuilder {
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

pub fn decimal_text(t: ObjectBuilder, pattern: &str) -> ObjectBuilder {
    t.format(Some(SchemaFormat::Custom(DECIMAL_FORMAT.into())))
        .pattern(Some(pattern))
}

/// A date-time as answers render it: ISO 8601 in UTC with milliseconds
/// (`2026-03-28T12:30:00.000Z`).
pub fn date_time(t: ObjectBuilder) -> ObjectBuilder {
    t.format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
}

/// The schema of a value as reads render it; `null` only where the field may be null.
pub fn read_schema(kind: Kind, may_be_null: bool) -> Schema {
    use Kind::*;
    let scalar = |t: Type| if may_be_null { nullable(t) } else { typed(t) };
    match kind {
        Id | Integer => scalar(Type::Integer).build().into(),
        Text | Url => scalar(Type::String).build().into(),
        Date => date_time(scalar(Type::String)).build().into(),
        Money => decimal_text(scalar(Type::String), &read_money_pattern())
            .build()
            .into(),
        Rate => decimal_text(scalar(Type::String), &rate_pattern())
            .build()
            .into(),
        Bool => scalar(Type::Boolean).build().into(),
        Number => scalar(Type::Number).build().into(),
        Decimal => decimal_text(scalar(Type::String), &decimal_pattern())
            .build()
            .into(),
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
pub fn store_role() -> Schema {
    closed()
        .property("id", typed(Type::Integer))
        .property("roleId", typed(Type::Integer))
        .required("id")
        .required("roleId")
        .build()
        .into()
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
        (
            "ApiVersion",
            choice(&api::http::version::ACCEPTED.map(|(value, _)| value)),
        ),
        ("HeaderBoolean", choice(&["true", "false"])),
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

/// A closed object of `fields` (with `description` when not empty), every field required but
/// those named in `optional`.
pub fn fields_object(
    description: &str,
    fields: Vec<(&str, RefOr<Schema>)>,
    optional: &[&str],
) -> Schema {
    let mut object = closed();
    if !description.is_empty() {
        object = object.description(Some(description));
    }
    for (name, schema) in fields {
        object = object.property(name, schema);
        if !optional.contains(&name) {
            object = object.required(name);
        }
    }
    object.build().into()
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
    decimal_text(typed(Type::String), &read_money_pattern())
        .build()
        .into()
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

/// Money as a write sends it, `null` clearing it.
pub fn money_write() -> Schema {
    decimal_text(nullable(Type::String), &money_pattern())
        .build()
        .into()
}
