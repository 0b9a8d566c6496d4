//! What storage does with a record type named as data ([`RecordKind`]) or with the records
//! of one, dispatched to that type's [`Record`] implementation: one arm a record type of the
//! registry.

use ports::{RecordChanges, RecordKind, Records, SalesFilter};

use crate::records::Record;
use crate::{Db, DbError, Tx};

macro_rules! by_kind {
    ($($collection:ident: $ty:path = $rules:ident,)*) => {
        /// The records of `kind` the cache holds (see [`Record::load`]).
        pub(crate) async fn load_kind(
            db: &Db,
            merchant_id: i64,
            kind: RecordKind,
        ) -> Result<Records, DbError> {
            Ok(match kind {
                $(RecordKind::$collection => {
                    Records::$collection(<$ty as Record>::load(db, merchant_id).await?)
                })*
            })
        }

        /// Records of `kind` by id.
        pub(crate) async fn find_kind(
            db: &Db,
            merchant_id: i64,
            kind: RecordKind,
            ids: &[i64],
        ) -> Result<Records, DbError> {
            Ok(match kind {
                $(RecordKind::$collection => {
                    Records::$collection(<$ty as Record>::find(db, merchant_id, ids).await?)
                })*
            })
        }

        /// Records of `kind` by filter.
        pub(crate) async fn query_kind(
            db: &Db,
            merchant_id: i64,
            kind: RecordKind,
            filter: &SalesFilter,
        ) -> Result<Records, DbError> {
            Ok(match kind {
                $(RecordKind::$collection => {
                    Records::$collection(<$ty as Record>::history(db, merchant_id, filter).await?)
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
