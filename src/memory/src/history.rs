//! Sales records read by filter, as storage's indexed queries answer them: by the fields the
//! filter names, read from each record's declaration.

use domain::record::{bool_field, int_field, text_field, Visit};
use ports::{Records, Registered, SalesFilter};

/// Whether a record is finished: completed (or an order completed or cancelled), or deleted.
pub(crate) fn finished(record: &dyn Visit) -> bool {
    int_field(record, "deleteDate").is_some() || done(record)
}

/// `completed` as a filter means it: the record's `completed`, or an order's status.
fn done(record: &dyn Visit) -> bool {
    bool_field(record, "completed").unwrap_or(false)
        || matches!(
            text_field(record, "status").as_deref(),
            Some("completed" | "cancelled")
        )
}

/// Whether the record matches the filter.
pub(crate) fn matches(record: &dyn Visit, filter: &SalesFilter) -> bool {
    // Each list on the field that declares its filter; one the record does not declare does
    // not narrow it.
    let decl = record.decl();
    let lists = filter.lists.iter().all(|(header, ids)| {
        decl.filtered_by(header)
            .is_none_or(|f| int_field(record, f.name).is_some_and(|id| ids.contains(&id)))
    });
    (filter.include_deleted || int_field(record, "deleteDate").is_none())
        && filter.completed.is_none_or(|c| c == done(record))
        && filter.completed_between.is_none_or(|(from, to)| {
            int_field(record, "completeDate").is_some_and(|at| from <= at && at < to)
        })
        && filter
            .ids
            .as_ref()
            .is_none_or(|ids| ids.contains(&record.key()))
        && lists
}

/// The records of `R` kept by `keep`.
pub(crate) fn filtered<R: Registered + Clone>(
    records: Records,
    keep: impl Fn(&R) -> bool,
) -> Records {
    let rows: Vec<R> = R::from_records(records).unwrap_or_default();
    R::into_records(rows.into_iter().filter(|r| keep(r)).collect())
}
