//! A merchant's actors' ports on one database. Which write protocol a group follows (a claim
//! first where replicas share the database, a lazy transaction on SQLite) is chosen in
//! `crate::group`; this file forwards, and writes a group's [`GroupWrites`] in its order.

use std::future::Future;
use std::pin::Pin;

use domain::batch::{Idempotency, StoredAnswer};
use domain::stock::levels::StockMap;
use domain::till::register::RegisterRecord;
use futures_util::future::try_join_all;
use ports::{
    GroupStore, GroupWrites, HistoryStore, OpenGroup, Pending, RecordKind, Records, SalesFilter,
    StateStore, StockStore, StorageError, StoredMerchant, WriteStep,
};

use crate::group::GroupWrite;
use crate::kinds::{persist_changes, read_kind, Wanted};
use crate::{Db, DbError, Tx};

/// Everything a merchant's cached state is built from. The collections are read concurrently.
pub(crate) async fn load(db: &Db, merchant_id: i64) -> Result<StoredMerchant, DbError> {
    // First: a write committed while the rest is read makes this state look older than it
    // is (and reloaded again), never newer.
    let version = db.merchant_version(merchant_id).await?;
    let event_seq = db.event_position(merchant_id).await?.last;
    let sales = db.merchant_sales(merchant_id).await?;
    let returned = db.returned_units(merchant_id).await?.into_iter().collect();
    let refunded = db.refunded_amounts(merchant_id).await?;
    let (stock, records) = tokio::try_join!(
        db.load_merchant_stock(merchant_id),
        try_join_all(RecordKind::ALL.iter().map(|kind| read_kind(
            db,
            merchant_id,
            *kind,
            Wanted::Cached
        ))),
    )?;
    let registers: Vec<i64> = records
        .iter()
        .find_map(|r| match r {
            Records::registers(registers) => {
                Some(registers.iter().map(|r: &RegisterRecord| r.id).collect())
            }
            _ => None,
        })
        .unwrap_or_default();
    let receipts = db.last_receipts(merchant_id, &registers).await?;
    Ok(StoredMerchant {
        version,
        event_seq,
        sales,
        returned,
        refunded,
        receipts,
        stock,
        records,
    })
}

impl StateStore for Db {
    fn load(&self, merchant_id: i64) -> Pending<'static, StoredMerchant> {
        let db = self.clone();
        Box::pin(async move { Ok(load(&db, merchant_id).await?) })
    }

    fn version(&self, merchant_id: i64) -> Pending<'static, i64> {
        let db = self.clone();
        Box::pin(async move { Ok(db.merchant_version(merchant_id).await?) })
    }

    fn hears_others(&self) -> bool {
        self.coherence().is_live()
    }
}

impl GroupStore for Db {
    fn open_group(
        &self,
        merchant_id: i64,
        expected: i64,
    ) -> Pending<'static, Option<Box<dyn OpenGroup>>> {
        let db = self.clone();
        Box::pin(async move {
            let group = db.open_group(merchant_id, expected).await?;
            Ok(group.map(|g| Box::new(g) as Box<dyn OpenGroup>))
        })
    }
}

impl OpenGroup for GroupWrite {
    fn version(&self) -> i64 {
        GroupWrite::version(self)
    }

    fn allocate_ids(&mut self, n: usize) -> Pending<'_, Vec<i64>> {
        Box::pin(async move { Ok(GroupWrite::allocate_ids(self, n).await?) })
    }

    fn stored_answer<'a>(
        &'a mut self,
        key: &'a Idempotency,
        now: i64,
    ) -> Pending<'a, Option<StoredAnswer>> {
        Box::pin(async move { Ok(GroupWrite::stored_answer(self, key, now).await?) })
    }

    fn write<'a>(&'a mut self, writes: &'a GroupWrites<'a>) -> Pending<'a, i64> {
        Box::pin(async move { Ok(write(self.tx().await?, writes).await?) })
    }

    fn write_part<'a>(
        &'a mut self,
        writes: &'a GroupWrites<'a>,
    ) -> Pending<'a, Result<i64, StorageError>> {
        Box::pin(async move {
            let tx = self.tx().await?;
            tx.begin_part().await?;
            match write(tx, writes).await {
                Ok(seq) => Ok(tx.keep_part().await.map(|()| Ok(seq))?),
                Err(e) => {
                    tx.undo_part().await?;
                    Ok(Err(e.into()))
                }
            }
        })
    }

    fn commit(self: Box<Self>) -> Pending<'static, ()> {
        Box::pin(async move { Ok(GroupWrite::commit(*self).await?) })
    }

    fn rollback(self: Box<Self>) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        Box::pin(GroupWrite::rollback(*self))
    }
}

/// The steps' rows, the kept answers, the stock moves, the running totals and the events, in
/// `tx`; the merchant's last event number after them.
async fn write(tx: &mut Tx, w: &GroupWrites<'_>) -> Result<i64, DbError> {
    for step in &w.steps {
        match step {
            WriteStep::Records(changes) => persist_changes(tx, w.merchant_id, *changes).await?,
            WriteStep::EraseCustomer { customer_id, held } => {
                tx.erase_customer(w.merchant_id, *customer_id, held.clone())
                    .await?
            }
        }
    }
    for (key, answer) in &w.answers {
        tx.store_answer(w.merchant_id, key, answer, w.now).await?;
    }
    tx.apply_stock_moves(w.merchant_id, w.moves, w.now).await?;
    tx.add_sales_totals(w.merchant_id, w.totals).await?;
    tx.append_events(w.merchant_id, w.after_event, w.events, w.now)
        .await
}

impl StockStore for Db {
    fn store_stock(&self, merchant_id: i64, store_id: i64) -> Pending<'static, StockMap> {
        let db = self.clone();
        Box::pin(async move { Ok(db.load_stock(merchant_id, store_id).await?) })
    }
}

impl HistoryStore for Db {
    fn find(&self, kind: RecordKind, merchant_id: i64, ids: Vec<i64>) -> Pending<'static, Records> {
        let db = self.clone();
        Box::pin(async move { Ok(read_kind(&db, merchant_id, kind, Wanted::Ids(&ids)).await?) })
    }

    fn query(
        &self,
        kind: RecordKind,
        merchant_id: i64,
        filter: SalesFilter,
    ) -> Pending<'static, Records> {
        let db = self.clone();
        Box::pin(
            async move { Ok(read_kind(&db, merchant_id, kind, Wanted::Matching(&filter)).await?) },
        )
    }

    fn made_by_clients(
        &self,
        kind: RecordKind,
        merchant_id: i64,
        client_ids: Vec<String>,
    ) -> Pending<'static, Vec<i64>> {
        let db = self.clone();
        let table = kind.decl().table;
        Box::pin(async move { Ok(db.made_by_clients(table, merchant_id, &client_ids).await?) })
    }
}
