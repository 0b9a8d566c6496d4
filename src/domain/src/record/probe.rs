//! A record's values read by their JSON names (what generic code needs of a record it only
//! knows through its declaration), and records compared as storage would store them.

use super::{Cell, FieldDecl, Visit, Visitor};

/// The value of a record's integer (or id, or date) field named `name` in JSON; `None` when it
/// is null or the record has no such field.
pub fn int_field(record: &dyn Visit, name: &str) -> Option<i64> {
    field_as(record, name, |cell| match cell {
        Cell::Int(v) => Some(v),
        _ => None,
    })
}

/// The value of a record's boolean field (or computed field) named `name` in JSON.
pub fn bool_field(record: &dyn Visit, name: &str) -> Option<bool> {
    field_as(record, name, |cell| match cell {
        Cell::Bool(v) => Some(v),
        _ => None,
    })
}

/// The value of a record's text field (or choice) named `name` in JSON.
pub fn text_field(record: &dyn Visit, name: &str) -> Option<String> {
    field_as(record, name, |cell| match cell {
        Cell::Text(v) => Some(v.to_owned()),
        _ => None,
    })
}

/// The field named `name` as `read` takes it; `None` when it is not of the cell `read` takes.
fn field_as<T>(record: &dyn Visit, name: &str, read: fn(Cell<'_>) -> Option<T>) -> Option<T> {
    let mut found = None;
    probe(record, name, &mut |cell| {
        if let Some(v) = read(cell) {
            found = Some(v);
        }
    });
    found
}

/// Hands the cell of the field named `name` to `seen`.
fn probe(record: &dyn Visit, name: &str, seen: &mut dyn FnMut(Cell<'_>)) {
    struct Probe<'n, 's> {
        name: &'n str,
        seen: &'s mut dyn FnMut(Cell<'_>),
    }
    impl Visitor for Probe<'_, '_> {
        fn cell(&mut self, field: &'static FieldDecl, value: Cell<'_>) {
            if field.name == self.name {
                (self.seen)(value);
            }
        }
        fn children(&mut self, _: &'static FieldDecl, _: &mut dyn Iterator<Item = &dyn Visit>) {}
    }
    record.visit(&mut Probe { name, seen });
}

/// True when two lists of records would be stored exactly alike: every stored field equal,
/// decimals with their scale (1 and 1.00 are stored and shown apart). A write whose child rows
/// are the same rewrites the parent's row only.
pub fn same_stored<R: Visit>(a: &[R], b: &[R]) -> bool {
    /// Every stored field's value, written out.
    struct Stored(String);
    impl Visitor for Stored {
        fn cell(&mut self, field: &'static FieldDecl, value: Cell<'_>) {
            use std::fmt::Write as _;
            if field.column.is_some() {
                let _ = write!(self.0, "{value:?}\u{1f}");
            }
        }
        fn children(&mut self, _: &'static FieldDecl, _: &mut dyn Iterator<Item = &dyn Visit>) {}
    }
    let stored = |r: &R| {
        let mut s = Stored(String::new());
        r.visit(&mut s);
        s.0
    };
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| stored(x) == stored(y))
}
