//! Sales history: finished baskets, payments, orders, invoices and stock counts that the cached
//! state no longer holds. Reads by id go through a bounded cache in front of the database;
//! reads by filter are indexed queries (`(merchant_id, store_id, ...)`), unless the cached
//! state alone holds every record the filter can match (open baskets, the payments of open
//! baskets). Only records that can never change again (completed or deleted) are cached here,
//! so no write ever has to invalidate one; orders naming a customer are not (an erase changes
//! them).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use moka::sync::Cache;

use crate::merchant::job::Wants;
use crate::merchant::ports::{HistoryStore, Records, SalesFilter, StorageError};
use crate::merchant::resource::{Kind, Resource};
use crate::merchant::state::{Cached, Entry, MerchantState};
use domain::record::{bool_field, filter, int_field};
use domain::sales::basket::BasketRecord;
use domain::sales::order::OrderRecord;
use domain::sales::payment::TransactionRecord;
use domain::stock::count::StockReconciliation;
use domain::stock::invoice::InvoiceRecord;
use metrics::Metrics;

/// History records kept in memory, per kind, across all merchants of the process.
const CACHED_PER_KIND: u64 = 4_096;

type ByMerchantAndId<R> = Cache<(i64, i64), Entry<R>>;

/// The bounded caches of history records.
#[derive(Clone)]
pub struct History {
    baskets: ByMerchantAndId<BasketRecord>,
    transactions: ByMerchantAndId<TransactionRecord>,
    orders: ByMerchantAndId<OrderRecord>,
    invoices: ByMerchantAndId<InvoiceRecord>,
    counts: ByMerchantAndId<StockReconciliation>,
    hits: prometheus::IntCounter,
    misses: prometheus::IntCounter,
}

impl History {
    pub fn new(metrics: &Metrics) -> Self {
        Self {
            baskets: Cache::new(CACHED_PER_KIND),
            transactions: Cache::new(CACHED_PER_KIND),
            orders: Cache::new(CACHED_PER_KIND),
            invoices: Cache::new(CACHED_PER_KIND),
            counts: Cache::new(CACHED_PER_KIND),
            hits: metrics
                .cache_requests
                .with_label_values(&["sales_history", "hit"]),
            misses: metrics
                .cache_requests
                .with_label_values(&["sales_history", "miss"]),
        }
    }

    /// Records by id, in id order: the state's, else this cache's, else the database's.
    #[tracing::instrument(level = "debug", skip_all, fields(kind = R::PLURAL, ids = ids.len()))]
    pub async fn by_ids<R: Historic>(
        &self,
        db: &dyn HistoryStore,
        state: &MerchantState,
        ids: &BTreeSet<i64>,
    ) -> Result<Vec<Entry<R>>, StorageError> {
        let cache = R::cache(self);
        let mut found = Vec::with_capacity(ids.len());
        let mut missing = Vec::new();
        for id in ids {
            if let Some(entry) = state.entry::<R>(*id) {
                found.push(entry.clone());
            } else if let Some(entry) = cache.get(&(state.merchant_id, *id)) {
                self.hits.inc();
                found.push(entry);
            } else {
                missing.push(*id);
            }
        }
        if !missing.is_empty() {
            self.misses.inc_by(missing.len() as u64);
            let stored = db
                .find(kind::<R>()?.record(), state.merchant_id, missing)
                .await?;
            for record in records::<R>(stored)? {
                found.push(self.keep(state.merchant_id, record));
            }
            found.sort_by_key(|e| e.id());
        }
        Ok(found)
    }

    /// Every record matching `filter`, read from the database.
    #[tracing::instrument(level = "debug", skip_all, fields(kind = R::PLURAL))]
    pub async fn query<R: Historic>(
        &self,
        db: &dyn HistoryStore,
        merchant_id: i64,
        filter: &SalesFilter,
    ) -> Result<Vec<Entry<R>>, StorageError> {
        let found = db
            .query(kind::<R>()?.record(), merchant_id, filter.clone())
            .await?;
        Ok(records::<R>(found)?
            .into_iter()
            .map(|record| self.keep(merchant_id, record))
            .collect())
    }

    /// Wraps a record read from the database, caching it when it can no longer change.
    fn keep<R: Historic>(&self, merchant_id: i64, record: R) -> Entry<R> {
        let id = record.id();
        let finished = (record.locked() || record.delete_date().is_some()) && !record.erasable();
        let entry = Cached::new(record);
        if finished {
            R::cache(self).insert((merchant_id, id), entry.clone());
        }
        entry
    }

    /// Brings the history records a group of writes names into the working state, so they
    /// are validated against what is stored ("completed", not "does not exist").
    pub async fn bring(
        &self,
        db: &dyn HistoryStore,
        state: &mut MerchantState,
        wants: &Wants,
    ) -> Result<(), StorageError> {
        for (kind, ids) in wants {
            match kind {
                Kind::Basket => self.bring_kind::<BasketRecord>(db, state, ids).await?,
                Kind::Transaction => self.bring_kind::<TransactionRecord>(db, state, ids).await?,
                Kind::Order => self.bring_kind::<OrderRecord>(db, state, ids).await?,
                Kind::Invoice => self.bring_kind::<InvoiceRecord>(db, state, ids).await?,
                Kind::Count => {
                    self.bring_kind::<StockReconciliation>(db, state, ids)
                        .await?
                }
            }
        }
        Ok(())
    }

    async fn bring_kind<R: Historic>(
        &self,
        db: &dyn HistoryStore,
        state: &mut MerchantState,
        ids: &BTreeSet<i64>,
    ) -> Result<(), StorageError> {
        for entry in self.by_ids::<R>(db, state, ids).await? {
            state.put_history(entry);
        }
        Ok(())
    }
}

/// What a read of sales records asks for.
#[derive(Clone, Debug, Default)]
pub struct SalesQuery {
    pub ids: Option<BTreeSet<i64>>,
    /// Id lists by the filter header a field of the record declares (`storeIds`).
    pub lists: BTreeMap<&'static str, BTreeSet<i64>>,
    pub completed: Option<bool>,
    pub deleted: bool,
    /// `[from, to)` on the completion time.
    pub completed_between: Option<(i64, i64)>,
}

impl SalesQuery {
    /// The records whose field filtered by `header` is one of `ids` too.
    pub fn with(mut self, header: &'static str, ids: BTreeSet<i64>) -> Self {
        self.lists.insert(header, ids);
        self
    }

    /// The ids the query names for filter `header`, if it names any.
    pub fn list(&self, header: &str) -> Option<&BTreeSet<i64>> {
        self.lists.get(header)
    }

    fn filter(&self) -> SalesFilter {
        SalesFilter {
            ids: self.ids.as_ref().map(|s| s.iter().copied().collect()),
            lists: self
                .lists
                .iter()
                .map(|(header, ids)| (*header, ids.iter().copied().collect()))
                .collect(),
            completed: self.completed,
            include_deleted: self.deleted,
            completed_between: self.completed_between,
        }
    }

    /// Whether a record passes every part of the query (the database's answer is checked
    /// again, so a superset from it never leaks through).
    fn keeps<R: Historic>(&self, record: &R) -> bool {
        (self.deleted || record.delete_date().is_none())
            && self.lists.iter().all(|(header, ids)| {
                R::DECL
                    .filtered_by(header)
                    .is_none_or(|f| int_field(record, f.name).is_some_and(|id| ids.contains(&id)))
            })
            && self.completed.is_none_or(|c| c == record.done())
            && self.completed_between.is_none_or(|(from, to)| {
                record
                    .completed_at()
                    .is_some_and(|at| from <= at && at < to)
            })
    }
}

/// A sales resource whose history lives in the database.
pub trait Historic: Resource {
    fn cache(history: &History) -> &ByMerchantAndId<Self>;

    /// The store the record belongs to, when it names one (its `storeId`).
    fn store(&self) -> Option<i64> {
        int_field(self, "storeId")
    }

    /// What `completed: true` means for this resource (its `completed`, as reads show it).
    fn done(&self) -> bool {
        bool_field(self, "completed").unwrap_or(false)
    }

    /// Whether an erase may still change it (an order copying its customer's contact
    /// details): such a record is never cached here, so every replica reads it scrubbed.
    fn erasable(&self) -> bool {
        false
    }

    /// Its `completeDate`.
    fn completed_at(&self) -> Option<i64> {
        int_field(self, "completeDate")
    }

    /// Whether the cached state holds every record this query can match.
    fn cached_answer(state: &MerchantState, query: &SalesQuery) -> bool {
        let _ = state;
        query.completed == Some(false) && !query.deleted
    }
}

impl Historic for BasketRecord {
    fn cache(history: &History) -> &ByMerchantAndId<Self> {
        &history.baskets
    }
}

impl Historic for TransactionRecord {
    fn cache(history: &History) -> &ByMerchantAndId<Self> {
        &history.transactions
    }
    /// Every payment of an open basket is cached.
    fn cached_answer(state: &MerchantState, query: &SalesQuery) -> bool {
        query.list(filter::BASKET_IDS).is_some_and(|baskets| {
            baskets
                .iter()
                .all(|b| state.find::<BasketRecord>(*b).is_some_and(|b| !b.completed))
        })
    }
}

impl Historic for OrderRecord {
    fn cache(history: &History) -> &ByMerchantAndId<Self> {
        &history.orders
    }

    fn erasable(&self) -> bool {
        self.customer_id.is_some()
    }
}

impl Historic for InvoiceRecord {
    fn cache(history: &History) -> &ByMerchantAndId<Self> {
        &history.invoices
    }
}

impl Historic for StockReconciliation {
    fn cache(history: &History) -> &ByMerchantAndId<Self> {
        &history.counts
    }
}

/// Sales records a read found, with the snapshot to render them against.
pub struct SalesList<R> {
    pub state: Arc<MerchantState>,
    pub entries: Vec<Entry<R>>,
}

/// The records of `R` matching `query`.
pub async fn list<R: Historic>(
    history: &History,
    db: &dyn HistoryStore,
    state: Arc<MerchantState>,
    query: &SalesQuery,
) -> Result<SalesList<R>, StorageError> {
    let entries: Vec<Entry<R>> = if let Some(ids) = &query.ids {
        history.by_ids::<R>(db, &state, ids).await?
    } else if R::cached_answer(&state, query) {
        R::collection(&state).values().cloned().collect()
    } else {
        history
            .query::<R>(db, state.merchant_id, &query.filter())
            .await?
    };
    let entries = entries
        .into_iter()
        .filter(|e| query.keeps(e.record()))
        .collect();
    Ok(SalesList { state, entries })
}

/// The history kind of `R`.
fn kind<R: Historic>() -> Result<Kind, StorageError> {
    R::HISTORY.ok_or_else(|| StorageError::Corrupt(format!("{} are not history", R::PLURAL)))
}

/// The records storage found for `R`'s kind.
fn records<R: Historic>(found: Records) -> Result<Vec<R>, StorageError> {
    R::from_records(found).ok_or_else(|| {
        StorageError::Corrupt(format!("storage answered another kind for {}", R::PLURAL))
    })
}
