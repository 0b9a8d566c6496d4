//! Writing a record by its declaration alone, for a `plain` record of the registry: each
//! writable field a write names is read by its kind and checked against its declared limits,
//! the fields it leaves out keep their values, and a create gives every required field. The
//! record is then built from the values as storage would build it from its row, so nothing
//! here is written per record type.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::fields::{Fields, Patch};
use crate::money;
use crate::record::{Access, Cell, Declared, FieldDecl, Kind, Source, Stored, Visit, Visitor};

/// `current` with the write's `fields` written on it (a new record when `creating`).
pub fn write<R: Declared>(
    current: &R,
    fields: Map<String, Value>,
    creating: bool,
) -> Result<R, Vec<String>> {
    let mut values = stored_values(current);
    let mut written_names = Vec::new();
    let mut f = Fields::declared::<R>(fields);
    for field in R::DECL
        .fields
        .iter()
        .filter(|d| d.writable() && d.column.is_some())
    {
        let before = values.get(field.name).cloned().unwrap_or(Stored::Null);
        let written = match read(&mut f, field) {
            Patch::Keep => continue,
            Patch::Clear if !field.nullable => {
                f.reject(field.name, "cannot be cleared.");
                continue;
            }
            Patch::Clear => Stored::Null,
            Patch::Set(value) => value,
        };
        if field.create_only && !creating && !same(&written, &before) {
            f.reject(field.name, "is set when the record is created.");
            continue;
        }
        if !matches!(written, Stored::Null) {
            written_names.push(field.name);
        }
        values.insert(field.name, written);
    }
    if creating {
        for field in R::DECL.fields.iter() {
            if field.access == Access::Required && !written_names.contains(&field.name) {
                f.reject(field.name, "required field is missing.");
            }
        }
    }
    f.finish()?;
    R::build(&mut Values(values)).map_err(|why| vec![why])
}

/// A record with nothing written yet: its id, active from `now`, every other field empty.
pub fn blank<R: Declared>(id: i64, now: i64) -> Result<R, String> {
    let mut values = BTreeMap::new();
    for field in R::DECL.fields.iter().filter(|f| f.column.is_some()) {
        let value = match field.name {
            "id" => Stored::Int(id),
            "activeDate" => Stored::Int(now),
            _ => match field.kind {
                Kind::Bool => Stored::Int(0),
                Kind::Ids => Stored::Ids(Vec::new()),
                Kind::Texts => Stored::Texts(Vec::new()),
                _ if !field.nullable => Stored::Int(0),
                _ => Stored::Null,
            },
        };
        values.insert(field.name, value);
    }
    R::build(&mut Values(values))
}

/// Two stored values alike (`Stored` has no equality: reals).
fn same(a: &Stored, b: &Stored) -> bool {
    format!("{a:?}") == format!("{b:?}")
}

/// A written field's value, read by its kind.
fn read(f: &mut Fields, field: &'static FieldDecl) -> Patch<Stored> {
    let key = field.name;
    let limits = field.limits;
    match field.kind {
        Kind::Text | Kind::Url => f.text(key).map(Stored::Text),
        Kind::Choice(values) => match f.text(key) {
            Patch::Set(v) if !values.contains(&v.as_str()) => {
                f.reject(key, format!("must be one of {}.", values.join(", ")));
                Patch::Keep
            }
            other => other.map(Stored::Text),
        },
        Kind::Id | Kind::Integer => match f.integer(key) {
            Patch::Set(v) if outside(v as f64, limits.min, limits.max) => {
                f.reject(key, range_message(limits.min, limits.max));
                Patch::Keep
            }
            other => other.map(Stored::Int),
        },
        Kind::Date => f.date(key).map(Stored::Int),
        Kind::Number => f.number(key).map(Stored::Real),
        Kind::Bool => match f.boolean(key) {
            Some(b) => Patch::Set(Stored::Int(i64::from(b))),
            None => Patch::Keep,
        },
        Kind::Money | Kind::Rate | Kind::Decimal => {
            let parse = match field.kind {
                Kind::Money => money::money,
                Kind::Rate => money::rate,
                _ => money::decimal,
            };
            match f.value(key).cloned() {
                None => Patch::Keep,
                Some(Value::Null) => Patch::Clear,
                Some(v) => match parse(&v) {
                    Ok(d) => Patch::Set(Stored::Decimal(d)),
                    Err(why) => {
                        f.reject(key, why);
                        Patch::Keep
                    }
                },
            }
        }
        Kind::Ids => ids(f, field),
        _ => {
            f.reject(key, "cannot be written here.");
            Patch::Keep
        }
    }
}

/// A list of ids, at most `max_items`.
fn ids(f: &mut Fields, field: &'static FieldDecl) -> Patch<Stored> {
    let key = field.name;
    let items = match f.value(key) {
        None => return Patch::Keep,
        Some(Value::Null) => return Patch::Clear,
        Some(Value::Array(items)) => items.clone(),
        Some(_) => {
            f.reject(key, "must be a list of ids.");
            return Patch::Keep;
        }
    };
    if let Some(max) = field.limits.max_items.filter(|max| items.len() > *max) {
        f.reject(key, format!("at most {max} ids."));
        return Patch::Keep;
    }
    match items
        .iter()
        .map(Value::as_i64)
        .collect::<Option<Vec<i64>>>()
    {
        Some(ids) => Patch::Set(Stored::Ids(ids)),
        None => {
            f.reject(key, "must be a list of ids.");
            Patch::Keep
        }
    }
}

fn outside(v: f64, min: Option<f64>, max: Option<f64>) -> bool {
    min.is_some_and(|m| v < m) || max.is_some_and(|m| v > m)
}

fn range_message(min: Option<f64>, max: Option<f64>) -> String {
    match (min, max) {
        (Some(lo), Some(hi)) => format!("must be between {lo} and {hi}."),
        (Some(lo), None) => format!("must be at least {lo}."),
        (None, Some(hi)) => format!("must be at most {hi}."),
        (None, None) => String::new(),
    }
}

/// Every stored field's value, by JSON name (hidden fields by column).
fn stored_values<R: Visit>(record: &R) -> BTreeMap<&'static str, Stored> {
    struct Collect(BTreeMap<&'static str, Stored>);
    impl Visitor for Collect {
        fn cell(&mut self, field: &'static FieldDecl, value: Cell<'_>) {
            let Some(column) = field.column else { return };
            let name = if field.name.is_empty() {
                column
            } else {
                field.name
            };
            self.0.insert(name, stored(value));
        }
        fn children(&mut self, _: &'static FieldDecl, _: &mut dyn Iterator<Item = &dyn Visit>) {}
    }
    let mut collect = Collect(BTreeMap::new());
    record.visit(&mut collect);
    collect.0
}

/// A cell as the value `build` takes back.
fn stored(cell: Cell<'_>) -> Stored {
    match cell {
        Cell::Null => Stored::Null,
        Cell::Int(v) => Stored::Int(v),
        Cell::Real(v) => Stored::Real(v),
        Cell::Bool(v) => Stored::Int(i64::from(v)),
        Cell::Text(v) => Stored::Text(v.to_owned()),
        Cell::Decimal(v) => Stored::Decimal(v),
        Cell::Ids(v) => Stored::Ids(v.to_vec()),
        Cell::Texts(v) => Stored::Texts(v.to_vec()),
        Cell::StoreRoles(v) => Stored::Pairs(v.iter().map(|(s, r)| (*s, r.id())).collect()),
        // A plain record holds no structured value (`kinds_a_plain_record_holds`).
        Cell::Json(_) => Stored::Null,
    }
}

/// The values a record is built from.
struct Values(BTreeMap<&'static str, Stored>);

impl Source for Values {
    type Error = String;

    fn take<T: crate::record::FromCell>(&mut self, field: &'static FieldDecl) -> Result<T, String> {
        let name = match field.name {
            "" => field.column.unwrap_or_default(),
            name => name,
        };
        let value = self.0.remove(name).unwrap_or(Stored::Null);
        T::from_cell(value).ok_or_else(|| format!("{name}: a value the field cannot hold."))
    }
}
