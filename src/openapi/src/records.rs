//! A record's schemas, read off its declaration and nothing else: `<Noun>` as reads render
//! it, `<Noun>Create` and `<Noun>Update` as writes send it (what a create must give marked
//! required, what only a create writes left out of an update), `<Noun>Write` either of them.
//! Every limit a written value keeps is the declaration's (`max_len`, `min`, `max`,
//! `max_items`), the one the validator reads.

use utoipa::openapi::schema::{
    ArrayBuilder, ArrayItems, ObjectBuilder, OneOfBuilder, Schema, Type,
};
use utoipa::openapi::RefOr;

use crate::schemas::{self, closed, decimal_text, keyed, named, nullable, typed, Kind};
use domain::record::{Access, FieldDecl, RecordDecl};

/// `Supplier store` → `SupplierStore`.
pub fn schema_name(noun: &str) -> String {
    noun.split(' ')
        .map(|word| {
            let mut chars = word.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect(),
                None => String::new(),
            }
        })
        .collect()
}

/// A written field's value: its kind, `null` where a write may clear it, and its declared
/// limits.
pub fn write_field(field: &FieldDecl) -> Schema {
    use Kind::*;
    let limits = field.limits;
    let ranged = |t: ObjectBuilder| t.minimum(limits.min).maximum(limits.max);
    let items = |item: RefOr<Schema>| -> Schema {
        ArrayBuilder::new()
            .items(ArrayItems::RefOrSchema(Box::new(item)))
            .max_items(limits.max_items)
            .build()
            .into()
    };
    match field.kind {
        Id => nullable(Type::Integer).minimum(Some(0)).build().into(),
        Integer => ranged(nullable(Type::Integer)).build().into(),
        Money => decimal_text(nullable(Type::String), &schemas::money_pattern())
            .build()
            .into(),
        Rate => decimal_text(nullable(Type::String), &schemas::rate_pattern())
            .build()
            .into(),
        Date => nullable(Type::String)
            .description(Some(
                "`2026-03-28T12:30:00.000Z` or `2026-03-28 12:30:00` (UTC).",
            ))
            .build()
            .into(),
        Bool => nullable(Type::Boolean).build().into(),
        Number | Decimal => OneOfBuilder::new()
            .item(ranged(typed(Type::Number)))
            .item(typed(Type::String).pattern(Some(schemas::decimal_pattern())))
            .item(typed(Type::Null))
            .build()
            .into(),
        Ids | Categories => items(typed(Type::Integer).minimum(Some(0)).build().into()),
        Texts | Images => items(
            typed(Type::String)
                .max_length(limits.max_len)
                .build()
                .into(),
        ),
        StoreRoles => keyed(schemas::store_role()),
        Choice(words) => typed(Type::String)
            .enum_values(Some(words.iter().copied()))
            .build()
            .into(),
        Text | Url => nullable(Type::String)
            .max_length(limits.max_len)
            .build()
            .into(),
        // A nested record without ids (a count's lines) is only ever created.
        Children(inner) => match inner.field("id") {
            Some(_) => keyed(named(&format!("{}Write", inner.schema))),
            None => keyed(named(&format!("{}Create", inner.schema))),
        },
        Json(schema) => schemas::one_of(vec![named(schema), typed(Type::Null).build().into()]),
    }
}

/// The fields a write may send, in declaration order (`id` apart).
fn written(decl: &'static RecordDecl) -> impl Iterator<Item = &'static FieldDecl> {
    decl.fields
        .iter()
        .filter(|f| f.writable() && f.name != "id")
}

fn described(builder: ObjectBuilder, doc: &str) -> ObjectBuilder {
    match doc {
        "" => builder,
        doc => builder.description(Some(doc)),
    }
}

/// A create: every field a write sets, without `id`; the fields a create must give are
/// required. Closed: an unknown field is refused (422).
pub fn create_record(decl: &'static RecordDecl) -> Schema {
    let mut object = described(closed(), &format!("A new {}.", decl.noun.to_lowercase()));
    for field in written(decl) {
        object = object.property(field.name, with_doc(write_field(field), field));
        if field.access == Access::Required {
            object = object.required(field.name);
        }
    }
    object.build().into()
}

/// An update: `id` names the record, every other field is optional and changes only what it
/// names; a field only a create writes (a till's `clientId`) is not there.
pub fn update_record(decl: &'static RecordDecl) -> Schema {
    let mut object = described(
        closed(),
        &format!(
            "A change to the {} `id` names; only the fields given change.",
            decl.noun.to_lowercase()
        ),
    );
    let id_doc = decl.field("id").map(|f| f.doc).unwrap_or_default();
    object = object
        .property(
            "id",
            described(typed(Type::Integer).minimum(Some(0)), id_doc),
        )
        .required("id");
    for field in written(decl).filter(|f| !f.create_only) {
        object = object.property(field.name, with_doc(write_field(field), field));
    }
    object.build().into()
}

/// A write's object (`name` the record's schema name): a create without `id`, an update with
/// one.
pub fn write_record(name: &str) -> Schema {
    schemas::one_of(vec![
        named(&format!("{name}Create")),
        named(&format!("{name}Update")),
    ])
}

/// A record as reads render it: every field it shows, in its order, then `extra`
/// (answer-only fields such as the stock columns a `storeId` header adds). Every shown field
/// is sent (null when empty, where it may be) and so required, except `extra` and a secret
/// shown once; what the server sets is marked `readOnly`.
pub fn read_record(decl: &'static RecordDecl, extra: &[(&str, Kind)]) -> Schema {
    let mut object = described(closed(), decl.doc);
    for field in decl.fields {
        let once = field.access == Access::Once;
        if !field.shown() && !once {
            continue;
        }
        let schema = schemas::read_schema(field.kind, field.nullable);
        let schema = match field.access == Access::ReadOnly || once {
            true => read_only(schema),
            false => schema,
        };
        let schema = with_doc(schema, field);
        object = object.property(field.name, schema);
        if !once {
            object = object.required(field.name);
        }
    }
    for (name, kind) in extra {
        object = object.property(*name, read_only(schemas::read_schema(*kind, false)));
    }
    object.build().into()
}

/// A field's schema with its doc comment as the description, where it has one and the schema
/// can carry one.
fn with_doc(schema: Schema, field: &FieldDecl) -> Schema {
    match (schema, field.doc) {
        (schema, "") => schema,
        (Schema::Object(mut object), doc) => {
            object.description = Some(doc.to_owned());
            Schema::Object(object)
        }
        (Schema::Array(mut array), doc) => {
            array.description = Some(doc.to_owned());
            Schema::Array(array)
        }
        (Schema::OneOf(mut one_of), doc) => {
            one_of.description = Some(doc.to_owned());
            Schema::OneOf(one_of)
        }
        (other, _) => other,
    }
}

fn read_only(schema: Schema) -> Schema {
    match schema {
        Schema::Object(mut object) => {
            object.read_only = Some(true);
            Schema::Object(object)
        }
        other => other,
    }
}
