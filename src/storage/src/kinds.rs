//! What storage does with a record type named as data ([`RecordKind`]) or with the records
//! of one, dispatched to that type's [`Record`] implementation: one arm a record type of the
//! registry.

use ports::{RecordChanges, RecordKind, Records, SalesFilter};

use crate::records::Record;
use crate::{Db, DbError, Tx};

/// Which records of a type a read asks for.
#[derive(Clone, Copy)]
pub(crate) enum Wanted<'a> {
    /// Those the cache holds (see [`Record::load`]).
    Cached,
    /// These ids.
    Ids(&'a [i64]),
    /// Those matching a filter (sales records).
    Matching(&'a SalesFilter),
}

impl Wanted<'_> {
    async fn read<R: Record>(self, db: &Db, merchant_id: i64) -> Result<Vec<R>, DbError> {
        match self {
            Wanted::Cached => R::load(db, merchant_id).await,
            Wanted::Ids(ids) => R::find(db, merchant_id, ids).await,
            Wanted::Matching(filter) => R::history(db, merchant_id, filter).await,
        }
    }
}

macro_rules! by_kind {
    ($($collection:ident: $ty:path = $rules:ident,)*) => {
        /// The records of `kind` that `wanted` names.
        pub(crate) async fn read_kind(
            db: &Db,
            merchant_id: i64,
            kind: RecordKind,
            wanted: Wanted<'_>,
        ) -> Result<Records, DbError> {
            Ok(match kind {
                $(RecordKind::$collection => {
                    Records::$collection(wanted.read::<$ty>(db, merchant_id).await?)
                })*
            })
        }

        /// Writes what one write changed of one record type.
        pub(crate) async fn persist_changes(
            tx: &mut Tx,
            merchant_id: i64,
            changes: RecordChanges<'_>,
        ) -> Result<(), DbError> {
            match changes {
                $(RecordChanges::$collection(records) => {
                    <$ty as Record>::persist_all(tx, merchant_id, records).await
                })*
            }
        }
    };
}

domain::for_each_record!(by_kind);
