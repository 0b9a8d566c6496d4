//! The database behind the actors' storage ports (`ports.rs`). Which write protocol a group
//! follows (a claim first where replicas share the database, a lazy transaction on SQLite) is
//! chosen inside `db::group`; this file only forwards.

use std::future::Future;
use std::pin::Pin;

use super::merchant::history::{by_kind, Historic};
use super::merchant::load;
use super::merchant::state::MerchantState;
use super::ports::{
    Found, GroupStore, HistoryStore, OpenGroup, Pending, StateStore, StockStore, Writes, Writing,
};
use super::resource::Kind;
use super::store::StockMap;
use domain::batch::Idempotency;
use storage::group::GroupWrite;
use storage::idempotency::StoredAnswer;
use storage::{Db, DbError, SalesFilter, Tx};

impl StateStore for Db {
    fn load(&self, blank: MerchantState) -> Pending<'static, MerchantState> {
        let db = self.clone();
        Box::pin(async move { load::load(&db, blank).await })
    }

    fn version(&self, merchant_id: i64) -> Pending<'static, i64> {
        let db = self.clone();
        Box::pin(async move { db.merchant_version(merchant_id).await })
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
        Box::pin(GroupWrite::allocate_ids(self, n))
    }

    fn stored_answer<'a>(
        &'a mut self,
        key: &'a Idempotency,
        now: i64,
    ) -> Pending<'a, Option<StoredAnswer>> {
        Box::pin(GroupWrite::stored_answer(self, key, now))
    }

    fn write<'a>(&'a mut self, writes: Writes<'a>) -> Writing<'a, i64> {
        Box::pin(async move { write(self.tx().await?, &writes).await })
    }

    fn write_part<'a>(&'a mut self, writes: Writes<'a>) -> Writing<'a, Result<i64, DbError>> {
        Box::pin(async move {
            let tx = self.tx().await?;
            tx.begin_part().await?;
            match write(tx, &writes).await {
                Ok(seq) => tx.keep_part().await.map(|()| Ok(seq)),
                Err(e) => {
                    tx.undo_part().await?;
                    Ok(Err(e))
                }
            }
        })
    }

    fn commit(self: Box<Self>) -> Pending<'static, ()> {
        Box::pin(GroupWrite::commit(*self))
    }

    fn rollback(self: Box<Self>) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        Box::pin(GroupWrite::rollback(*self))
    }
}

/// The records' rows, the kept answers, the stock moves and the events, in `tx`.
async fn write(tx: &mut Tx, w: &Writes<'_>) -> Result<i64, DbError> {
    for record in &w.records {
        record.persist(tx, w.merchant_id).await?;
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
        Box::pin(async move { db.load_stock(merchant_id, store_id).await })
    }
}

async fn find<R: Historic>(db: Db, merchant_id: i64, ids: Vec<i64>) -> Result<Found, DbError> {
    Ok(Box::new(R::find(&db, merchant_id, &ids).await?))
}

async fn query<R: Historic>(
    db: Db,
    merchant_id: i64,
    filter: SalesFilter,
) -> Result<Found, DbError> {
    Ok(Box::new(R::query(&db, merchant_id, &filter).await?))
}

impl HistoryStore for Db {
    fn find(&self, kind: Kind, merchant_id: i64, ids: Vec<i64>) -> Pending<'static, Found> {
        by_kind!(kind, find(self.clone(), merchant_id, ids))
    }

    fn query(&self, kind: Kind, merchant_id: i64, filter: SalesFilter) -> Pending<'static, Found> {
        by_kind!(kind, query(self.clone(), merchant_id, filter))
    }

    fn made_by_clients(
        &self,
        kind: Kind,
        merchant_id: i64,
        client_ids: Vec<String>,
    ) -> Pending<'static, Vec<i64>> {
        let db = self.clone();
        let table = match kind {
            Kind::Transaction => "transactions",
            _ => "baskets",
        };
        Box::pin(async move { db.made_by_clients(table, merchant_id, &client_ids).await })
    }
}
