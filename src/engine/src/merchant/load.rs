//! Activation: what a merchant's cached state is built from. The catalogue is loaded whole,
//! sales only while open; the collections are read concurrently.

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::sync::watch;

use crate::merchant::ports::{
    MerchantStorage, RecordKind, Records, Registered, SalesFilter, StorageError,
};
use crate::merchant::resource::Resource;
use crate::merchant::state::{Cached, MerchantState};
use crate::till::session::categories;
use domain::sales::basket::BasketRecord;
use domain::sales::payment::TransactionRecord;
use domain::till::session::TillFigures;

/// `blank` (a state with nothing loaded, made by the supervisor with its settings) filled with
/// what storage keeps of its merchant.
#[tracing::instrument(level = "debug", skip_all, fields(merchant_id = blank.merchant_id))]
pub(crate) async fn load(
    storage: &dyn MerchantStorage,
    blank: MerchantState,
) -> Result<MerchantState, StorageError> {
    let mut state = blank;
    let stored = storage.load(state.merchant_id).await?;
    state.version = stored.version;
    state.event_seq = stored.event_seq;
    state.sales = Arc::new(stored.sales);
    state.returned = stored.returned.into_iter().collect();
    state.refunded = stored.refunded.into_iter().collect();
    state.receipts = stored.receipts.into_iter().collect();
    // Each store's stock as last stored; the StoreActors take over from these values.
    state.stock = stored
        .stock
        .into_iter()
        .map(|(id, levels)| (id, watch::channel(Arc::new(levels)).1))
        .collect();
    for records in stored.records {
        fill_records(&mut state, records);
    }
    load_till(storage, &mut state).await?;
    Ok(state)
}

macro_rules! fill_kinds {
    ($($collection:ident: $ty:path = $rules:ident,)*) => {
        /// Sets the collection `records` belong to.
        fn fill_records(state: &mut MerchantState, records: Records) {
            match records {
                $(Records::$collection(records) => fill::<$ty>(state, records),)*
            }
        }
    };
}

domain::for_each_record!(fill_kinds);

/// The till ledgers: each register's last receipt number, and each open session's running
/// figures from its completed baskets (a session's day, however long the history).
async fn load_till(
    storage: &dyn MerchantStorage,
    state: &mut MerchantState,
) -> Result<(), StorageError> {
    let merchant_id = state.merchant_id;
    let open: Vec<i64> = state.index.open_sessions.values().copied().collect();
    if open.is_empty() {
        return Ok(());
    }
    let sold = SalesFilter {
        completed: Some(true),
        ..SalesFilter::default()
    }
    .with(domain::record::filter::SESSION_IDS, open.clone());
    let (baskets, payments) = tokio::try_join!(
        storage.query(RecordKind::baskets, merchant_id, sold.clone()),
        storage.query(RecordKind::transactions, merchant_id, sold),
    )?;
    let baskets = BasketRecord::from_records(baskets).unwrap_or_default();
    let payments = TransactionRecord::from_records(payments).unwrap_or_default();
    let mut figures: BTreeMap<i64, TillFigures> =
        open.iter().map(|s| (*s, TillFigures::default())).collect();
    for basket in &baskets {
        if let Some(f) = basket.session_id.and_then(|s| figures.get_mut(&s)) {
            f.add_sale(basket, &|product| categories(state, product));
        }
    }
    for payment in &payments {
        if let Some(f) = payment.session_id.and_then(|s| figures.get_mut(&s)) {
            f.add_payment(payment, 1);
        }
    }
    for movement in state.cash_movements.values() {
        if let (Some(f), None) = (figures.get_mut(&movement.session_id), movement.delete_date) {
            f.add_movement(movement);
        }
    }
    state.till = figures.into_iter().map(|(s, f)| (s, Arc::new(f))).collect();
    Ok(())
}

/// Sets a collection from loaded records and indexes them.
fn fill<R: Resource>(state: &mut MerchantState, records: Vec<R>) {
    for record in &records {
        R::reindex(state, None, Some(record));
    }
    *R::collection_mut(state) = records
        .into_iter()
        .map(|r| (r.id(), Cached::new(r)))
        .collect();
}
