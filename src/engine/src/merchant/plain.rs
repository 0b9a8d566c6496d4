//! The engine's part of a `plain` record of the registry: its `Resource`, written by its
//! declaration alone (`domain::plain`), the ids it names checked against the collections they
//! refer to.

use domain::record::{int_field, Declared};

use super::resource::{Resource, Writing};

/// A plain record written: the declaration's checks, then every id it names live in the
/// collection its field refers to.
pub fn write<R: Resource>(record: R, w: Writing<'_>) -> Result<R, Vec<String>> {
    let written = domain::plain::write(&record, w.input.fields, w.creating)?;
    let problems: Vec<String> = R::DECL
        .fields
        .iter()
        .filter_map(|f| {
            let collection = f.refers?;
            let id = int_field(&written, f.name)?;
            (!w.state.holds(collection, id)).then(|| {
                format!(
                    "{}: {id} is not one of the merchant's {collection}.",
                    f.name
                )
            })
        })
        .collect();
    match problems.is_empty() {
        true => Ok(written),
        false => Err(problems),
    }
}

/// A plain record with nothing written yet.
pub fn blank<R: Declared>(id: i64, now: i64) -> R {
    // A declaration `build` cannot fill from its own blank values is a bug of the
    // declaration, found by the first test that writes the record.
    domain::plain::blank(id, now).unwrap_or_else(|why| panic!("{}: {why}", R::DECL.noun))
}

macro_rules! plain_resources {
    ($($collection:ident: $ty:path = $rules:ident,)*) => {
        $(plain_resources!(@ $rules $collection $ty);)*
    };
    (@ own $collection:ident $ty:path) => {};
    (@ plain $collection:ident $ty:path) => {
        impl Resource for $ty {
            $crate::resource_basics!($collection, |id, now| blank::<Self>(id, now));

            fn write(self, w: Writing<'_>) -> Result<Self, Vec<String>> {
                write(self, w)
            }
        }
    };
}

domain::for_each_record!(plain_resources);
