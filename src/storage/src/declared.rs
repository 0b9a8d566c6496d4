//! Every declared record (`#[derive(Record)]`) is a table row: its columns, its values and its
//! decoding follow from the declaration, so no record type writes its row mapping by hand.

use std::collections::BTreeMap;

use crate::rows::{decode_error, get, json, optional_decimal, Row, TableRow, Val};
use domain::money;
use domain::record::{Cell, Declared, FieldDecl, FromCell, Kind, Source, Stored, Visit, Visitor};

impl<T: Declared> TableRow for T {
    const TABLE: &'static str = T::DECL.table;
    const COLUMNS: &'static [&'static str] = T::COLUMNS;
    const JSON_COLUMNS: &'static [&'static str] = T::JSON_COLUMNS;

    fn values(&self) -> Vec<Val> {
        let mut encoder = Encoder(Vec::with_capacity(T::COLUMNS.len()));
        self.visit(&mut encoder);
        encoder.0
    }

    fn from_row(row: &Row<'_>) -> Result<Self, sqlx::Error> {
        T::build(&mut RowSource(row))
    }
}

/// How a field of this kind is stored.
enum Storage {
    Int,
    Real,
    Text,
    Decimal,
    Ids,
    Texts,
    Pairs,
}

fn storage(kind: Kind) -> Storage {
    match kind {
        Kind::Id | Kind::Integer | Kind::Date | Kind::Bool => Storage::Int,
        Kind::Number => Storage::Real,
        Kind::Text | Kind::Url | Kind::Choice(_) | Kind::Children(_) | Kind::Json(_) => {
            Storage::Text
        }
        Kind::Money | Kind::Rate | Kind::Decimal => Storage::Decimal,
        Kind::Ids | Kind::Categories => Storage::Ids,
        Kind::Texts | Kind::Images => Storage::Texts,
        Kind::StoreRoles => Storage::Pairs,
    }
}

/// Collects the column values of a record, in column order.
struct Encoder(Vec<Val>);

impl Visitor for Encoder {
    fn cell(&mut self, field: &'static FieldDecl, value: Cell<'_>) {
        if field.column.is_none() {
            return;
        }
        self.0.push(match value {
            Cell::Null => match storage(field.kind) {
                Storage::Int => Val::Int(None),
                Storage::Real => Val::Real(None),
                _ => Val::Text(None),
            },
            Cell::Int(v) => Val::Int(Some(v)),
            Cell::Real(v) => Val::Real(Some(v)),
            Cell::Bool(v) => Val::Int(Some(i64::from(v))),
            Cell::Text(v) => Val::Text(Some(v.to_owned())),
            Cell::Json(v) => Val::Text(serde_json::to_string(&v).ok()),
            Cell::Decimal(v) => Val::Text(Some(money::text(&v))),
            Cell::Ids(v) => Val::Text(serde_json::to_string(v).ok()),
            Cell::Texts(v) => Val::Text(serde_json::to_string(v).ok()),
            Cell::StoreRoles(v) => {
                let stored: BTreeMap<String, i64> =
                    v.iter().map(|(s, r)| (s.to_string(), r.id())).collect();
                Val::Text(serde_json::to_string(&stored).ok())
            }
        });
    }

    fn children(&mut self, _: &'static FieldDecl, _: &mut dyn Iterator<Item = &dyn Visit>) {
        // Nested records are rows of their own table.
    }
}

/// Stored values of one row of an aggregated read.
struct RowSource<'r, 'a>(&'r Row<'a>);

impl Source for RowSource<'_, '_> {
    type Error = sqlx::Error;

    fn take<T: FromCell>(&mut self, field: &'static FieldDecl) -> Result<T, sqlx::Error> {
        let column = field.column.unwrap_or(field.name);
        let row = self.0;
        let stored = match storage(field.kind) {
            Storage::Int => get::<Option<i64>>(row, column)?.map_or(Stored::Null, Stored::Int),
            Storage::Real => get::<Option<f64>>(row, column)?.map_or(Stored::Null, Stored::Real),
            Storage::Text => get::<Option<String>>(row, column)?.map_or(Stored::Null, Stored::Text),
            Storage::Decimal => {
                optional_decimal(row, column)?.map_or(Stored::Null, Stored::Decimal)
            }
            Storage::Ids => {
                json::<Option<Vec<i64>>>(row, column)?.map_or(Stored::Null, Stored::Ids)
            }
            Storage::Texts => {
                json::<Option<Vec<String>>>(row, column)?.map_or(Stored::Null, Stored::Texts)
            }
            Storage::Pairs => match json::<Option<BTreeMap<String, i64>>>(row, column)? {
                None => Stored::Null,
                Some(map) => Stored::Pairs(
                    map.into_iter()
                        .map(|(k, v)| k.parse().map(|k| (k, v)))
                        .collect::<Result<_, _>>()
                        .map_err(|e| decode_error(column, e))?,
                ),
            },
        };
        T::from_cell(stored).ok_or_else(|| decode_error(column, "a value the field cannot hold"))
    }
}
