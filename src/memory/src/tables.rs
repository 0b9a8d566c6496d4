//! A merchant's records in memory: one table a record type, each by id, as storage keeps
//! rows.

use std::collections::HashMap;

use domain::batch::Change;
use domain::record::Visit;
use ports::{RecordChanges, RecordKind, Records, Registered};

/// Record type → its records, in id order.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tables(HashMap<RecordKind, Records>);

impl Tables {
    /// Every record of `R`.
    pub(crate) fn all<R: Registered + Clone>(&self) -> Vec<R> {
        self.0
            .get(&R::KIND)
            .cloned()
            .and_then(R::from_records)
            .unwrap_or_default()
    }

    /// Every record of `kind`.
    pub(crate) fn of(&self, kind: RecordKind) -> Records {
        self.0
            .get(&kind)
            .cloned()
            .unwrap_or_else(|| Records::none(kind))
    }

    /// Rewrites the records of `R` with `f`.
    pub(crate) fn change<R: Registered + Clone>(&mut self, f: impl FnOnce(&mut Vec<R>)) {
        let mut rows = self.all::<R>();
        f(&mut rows);
        self.0.insert(R::KIND, R::into_records(rows));
    }

    /// Stores what a write changed: a new record is inserted (its id must be free), a changed
    /// one replaces the stored one (which must be there), as rows are.
    pub(crate) fn write<R: Registered + Clone>(
        &mut self,
        changes: &[(Change, R)],
    ) -> Result<(), String> {
        let mut result = Ok(());
        self.change::<R>(|rows| {
            for (change, record) in changes {
                let at = rows.binary_search_by_key(&record.key(), Visit::key);
                match (change.is_new(), at) {
                    (true, Err(at)) => rows.insert(at, record.clone()),
                    (false, Ok(at)) => rows[at] = record.clone(),
                    (true, Ok(_)) => {
                        result = Err(format!("{} {} exists already", R::DECL.noun, record.key()));
                    }
                    (false, Err(_)) => {
                        result = Err(format!("{} {} is not stored", R::DECL.noun, record.key()));
                    }
                }
            }
        });
        result
    }

    /// Stores one step's records.
    pub(crate) fn write_changes(&mut self, changes: RecordChanges<'_>) -> Result<(), String> {
        write_changes(self, changes)
    }
}

macro_rules! writes {
    ($($collection:ident: $ty:path = $rules:ident,)*) => {
        fn write_changes(tables: &mut Tables, changes: RecordChanges<'_>) -> Result<(), String> {
            match changes {
                $(RecordChanges::$collection(records) => tables.write::<$ty>(records),)*
            }
        }
    };
}

domain::for_each_record!(writes);
