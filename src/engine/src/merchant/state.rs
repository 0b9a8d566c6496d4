//! The cached state of one merchant: persistent maps, so publishing a snapshot after a write
//! copies only the paths the write touched (O(log n) plus its own records), with indexes kept
//! beside them and each record's JSON rendered once, when first read after it changed.
//!
//! Sales records (baskets, transactions, orders, invoices, stock counts) are held while open;
//! once finished they stay only in a bounded window of recent history, and the database answers
//! for the rest. So a merchant a year into trading costs what a new one does.

use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, OnceLock};

use imbl::{OrdMap, OrdSet, Vector};
use tokio::sync::watch;

use crate::merchant::resource::{Kind, Resource};
use crate::merchant::stock::StockMap;
use domain::sales::basket::BasketRecord;
use domain::sales::order::OrderRecord;
use domain::sales::payment::TransactionRecord;
use domain::sales::pricing::SaleSettings;
use domain::stock::count::StockReconciliation;
use domain::stock::invoice::InvoiceRecord;
use domain::stock::levels::{StockLevel, StockMove};
use domain::till::session::TillFigures;

/// A record, with what the read side derived from this version of it (its rendering), shared
/// by every snapshot holding it.
#[derive(Debug)]
pub struct Cached<R> {
    record: R,
    memo: Memo,
}

/// What the read side keeps of one version of a record. The actors only make it empty with a
/// new version; `views` fills it on first use.
#[derive(Debug, Default)]
pub struct Memo(OnceLock<Shown>);

/// A record's JSON text and where its live part goes (a product's category titles, written
/// afresh at each read so a renamed category costs no re-rendering).
#[derive(Debug)]
pub struct Shown {
    pub text: Box<str>,
    /// The offset of the live part's `{}` placeholder and the ids it shows, when the record
    /// has one.
    pub live: Option<(usize, Box<[i64]>)>,
}

impl Memo {
    pub fn get_or_init(&self, show: impl FnOnce() -> Shown) -> &Shown {
        self.0.get_or_init(show)
    }
}

impl<R> Cached<R> {
    pub fn new(record: R) -> Arc<Self> {
        Arc::new(Self {
            record,
            memo: Memo::default(),
        })
    }

    pub fn record(&self) -> &R {
        &self.record
    }

    pub fn memo(&self) -> &Memo {
        &self.memo
    }
}

impl<R> Deref for Cached<R> {
    type Target = R;

    fn deref(&self) -> &R {
        &self.record
    }
}

pub type Entry<R> = Arc<Cached<R>>;
pub type Collection<R> = OrdMap<i64, Entry<R>>;

/// Look-ups kept with the snapshot so filtered reads and uniqueness checks need no scan.
#[derive(Clone, Debug, Default)]
pub struct Indexes {
    /// Category → the products (live or deleted) that name it.
    pub products_by_category: OrdMap<i64, OrdSet<i64>>,
    /// Barcode → the live product that carries it.
    pub product_by_barcode: OrdMap<String, i64>,
    /// Basket → its cached transactions.
    pub transactions_by_basket: OrdMap<i64, OrdSet<i64>>,
    /// (search key, customer): the customer search's prefix index (live and deleted).
    pub customers_by_key: OrdSet<(String, i64)>,
    /// Register → its open till session.
    pub open_sessions: OrdMap<i64, i64>,
    /// (kind, `clientId`) → the cached basket or payment a till made under its own id.
    pub by_client: OrdMap<(crate::merchant::resource::Kind, String), i64>,
    /// Products not deleted (the product quota's count).
    pub live_products: usize,
}

macro_rules! collections {
    ($($collection:ident: $ty:path = $rules:ident,)*) => {
        /// The merchant's records: a collection a record type of the registry.
        #[derive(Clone, Debug, Default)]
        pub struct Collections {
            $(pub $collection: Collection<$ty>,)*
        }

        /// The live records of every collection, by collection and id (what an id a
        /// declaration says it `refers` to must name).
        impl Collections {
            pub fn holds(&self, collection: &str, id: i64) -> bool {
                match collection {
                    $(stringify!($collection) => self
                        .$collection
                        .get(&id)
                        .is_some_and(|e| e.record().delete_date.is_none()),)*
                    _ => false,
                }
            }
        }
    };
}

domain::for_each_record!(collections);

impl Deref for MerchantState {
    type Target = Collections;

    fn deref(&self) -> &Collections {
        &self.records
    }
}

impl DerefMut for MerchantState {
    fn deref_mut(&mut self) -> &mut Collections {
        &mut self.records
    }
}

/// Everything reads need about one merchant, immutable once published.
#[derive(Clone, Debug, Default)]
pub struct MerchantState {
    pub merchant_id: i64,
    /// The merchant's version in the database this state reflects (see `Tx::claim_merchant`).
    pub version: i64,
    /// The last change event this state reflects (reads answer it as `x-merchant-sequence`).
    pub event_seq: i64,
    /// Every record type's records (`state.stores` reads through to them).
    pub records: Collections,
    pub index: Indexes,
    /// Finished sales records still cached, oldest first; beyond `window` they are dropped.
    history: Vector<(Kind, i64)>,
    window: usize,
    /// Since a group began: the window may grow until the next one begins.
    holding: bool,
    /// Each live store's stock, as its StoreActor publishes it.
    pub stock: BTreeMap<i64, watch::Receiver<Arc<StockMap>>>,
    /// Moves of writes validated but not yet committed (a group being written).
    pending_stock: OrdMap<(i64, i64), StockLevel>,
    /// Where uploaded files are served (`<public_base_url>`), for image URLs.
    pub files_base: Arc<str>,
    /// Live products the merchant may have (`quota_products`); 0: no limit.
    pub product_quota: usize,
    /// How sales are priced (the manifest's `[sales]`).
    pub sales: Arc<SaleSettings>,
    /// Sale line → units its live return lines give back (open returns included, so two
    /// returns of one line can never give back more than was sold).
    pub returned: OrdMap<i64, i64>,
    /// Payment → what its live refunds give back (pending ones included).
    pub refunded: OrdMap<i64, i64>,
    /// Register → the last receipt number it gave.
    pub receipts: OrdMap<i64, i64>,
    /// Open till session → its running figures (what its X-report shows).
    pub till: OrdMap<i64, Arc<TillFigures>>,
}

impl MerchantState {
    pub fn new(merchant_id: i64, files_base: Arc<str>, window: usize) -> Self {
        Self {
            merchant_id,
            files_base,
            window,
            holding: false,
            ..Default::default()
        }
    }

    pub fn with_product_quota(mut self, quota: usize) -> Self {
        self.product_quota = quota;
        self
    }

    /// A live record by id.
    pub fn find<R: Resource>(&self, id: i64) -> Option<&R> {
        R::collection(self)
            .get(&id)
            .map(|e| e.record())
            .filter(|r| r.delete_date().is_none())
    }

    /// A cached record by id, deleted or not.
    pub fn entry<R: Resource>(&self, id: i64) -> Option<&Entry<R>> {
        R::collection(self).get(&id)
    }

    /// The live records of a collection, in id order.
    pub fn live<R: Resource>(&self) -> impl Iterator<Item = &R> {
        R::collection(self)
            .values()
            .map(|e| e.record())
            .filter(|r| r.delete_date().is_none())
    }

    /// A product's stock at a store: what its StoreActor published plus what writes of the
    /// group being validated move. A store that is not this merchant's (or none) has none.
    pub fn stock_level(&self, store_id: i64, product_id: i64) -> StockLevel {
        let mut level = self
            .stock
            .get(&store_id)
            .and_then(|stock| stock.borrow().get(&product_id).copied())
            .unwrap_or_default();
        if let Some(pending) = self.pending_stock.get(&(store_id, product_id)) {
            level.total += pending.total;
            level.sold += pending.sold;
        }
        level
    }

    /// Counts moves of a write that is validated but not committed yet.
    pub(crate) fn add_pending_stock(&mut self, moves: &[StockMove]) {
        for m in moves {
            let level = self
                .pending_stock
                .entry((m.store_id, m.product_id))
                .or_default();
            level.total += m.total;
            level.sold += m.sold;
        }
    }

    pub(crate) fn clear_pending_stock(&mut self) {
        self.pending_stock = OrdMap::new();
    }

    /// Inserts or replaces a record, keeping indexes, renderings and the history window in
    /// step.
    pub fn put<R: Resource>(&mut self, record: R) {
        let id = record.id();
        let before = R::collection(self).get(&id).cloned();
        R::keep_ledger(self, before.as_deref().map(Cached::record), Some(&record));
        R::reindex(self, before.as_deref().map(Cached::record), Some(&record));
        let was_open = before.as_ref().is_none_or(|b| b.is_open(self));
        let open = record.is_open(self);
        let entry = Cached::new(record);
        R::collection_mut(self).insert(id, entry.clone());
        if let (Some(kind), true, false) = (R::HISTORY, was_open, open) {
            self.retire(kind, id);
            if kind == Kind::Basket {
                // A finished basket's payments are finished with it.
                let paid: Vec<i64> = self
                    .index
                    .transactions_by_basket
                    .get(&id)
                    .map(|ids| ids.iter().copied().collect())
                    .unwrap_or_default();
                for transaction in paid {
                    self.retire(Kind::Transaction, transaction);
                }
            }
        }
    }

    /// Brings a finished record read from the database into the window (to validate a write
    /// that names it).
    pub fn put_history<R: Resource>(&mut self, entry: Entry<R>) {
        let id = entry.id();
        if R::collection(self).contains_key(&id) {
            return;
        }
        R::reindex(self, None, Some(entry.record()));
        R::collection_mut(self).insert(id, entry);
        if let Some(kind) = R::HISTORY {
            self.retire(kind, id);
        }
    }

    fn retire(&mut self, kind: Kind, id: i64) {
        self.history.push_back((kind, id));
        if !self.holding {
            self.trim_window();
        }
    }

    /// A group of writes begins: the window drops what the previous group kept beyond its size,
    /// then keeps every record this group brings in or finishes until the next group begins. A
    /// sync repeating more sales than the window holds brings them all from history: one pushed
    /// out before its sale is matched would be taken for a new sale, and one pushed out before
    /// the group's answers are rendered would be answered as nothing. So the state a group
    /// publishes may hold one group's worth of records beyond the window.
    pub fn begin_group(&mut self) {
        self.trim_window();
        self.holding = true;
    }

    fn trim_window(&mut self) {
        while self.history.len() > self.window {
            match self.history.pop_front() {
                Some((kind, id)) => self.evict(kind, id),
                None => break,
            }
        }
    }

    fn evict(&mut self, kind: Kind, id: i64) {
        match kind {
            Kind::Basket => self.drop_record::<BasketRecord>(id),
            Kind::Transaction => self.drop_record::<TransactionRecord>(id),
            Kind::Order => self.drop_record::<OrderRecord>(id),
            Kind::Invoice => self.drop_record::<InvoiceRecord>(id),
            Kind::Count => self.drop_record::<StockReconciliation>(id),
        }
    }

    fn drop_record<R: Resource>(&mut self, id: i64) {
        // Only finished records are evicted: one that came back into use stays.
        let finished = R::collection(self)
            .get(&id)
            .is_some_and(|e| !e.is_open(self));
        if finished {
            if let Some(entry) = R::collection_mut(self).remove(&id) {
                R::reindex(self, Some(entry.record()), None);
            }
        }
    }

    /// How many records of each sales kind the state holds (for the gauge and tests).
    pub fn cached_sales(&self) -> [(Kind, usize); 5] {
        [
            (Kind::Basket, self.baskets.len()),
            (Kind::Transaction, self.transactions.len()),
            (Kind::Order, self.orders.len()),
            (Kind::Invoice, self.invoices.len()),
            (Kind::Count, self.stock_reconciliations.len()),
        ]
    }
}

impl<R: Resource> Cached<R> {
    fn is_open(&self, state: &MerchantState) -> bool {
        self.record.is_open(state)
    }
}
