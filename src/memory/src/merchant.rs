//! The merchant ports in memory.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};

use domain::batch::{Idempotency, StoredAnswer, IDEMPOTENCY_TTL_MILLIS};
use domain::event::Event;
use domain::record::{text_field, Visit};
use domain::sales::basket::BasketRecord;
use domain::sales::order::OrderRecord;
use domain::sales::payment::TransactionRecord;
use domain::sales::pricing::SaleSettings;
use domain::sales::totals::Deltas;
use domain::stock::levels::StockMap;
use ports::{
    GroupStore, GroupWrites, HistoryStore, KindVisitor, OpenGroup, Pending, RecordKind, Records,
    Registered, SalesFilter, StateStore, StockStore, StorageError, StoredMerchant, WriteStep,
};

use crate::history;
use crate::tables::Tables;

/// Storage in memory, shared by every clone.
#[derive(Clone, Default)]
pub struct MemoryStorage {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Default)]
struct Inner {
    merchants: HashMap<i64, Kept>,
    last_id: i64,
    /// While true every commit fails, as a database that went away.
    refusing: bool,
    commits: usize,
    loads: usize,
}

/// One merchant as committed.
#[derive(Clone, Default)]
struct Kept {
    version: i64,
    sales: SaleSettings,
    tables: Tables,
    events: Vec<Event>,
    stock: BTreeMap<i64, StockMap>,
    totals: Deltas,
    /// By (application, key): the answer and when it expires.
    answers: HashMap<(i64, String), (StoredAnswer, i64)>,
}

impl Kept {
    fn event_seq(&self) -> i64 {
        self.events.last().map_or(0, |e| e.seq)
    }

    /// Writes the group's writes in their order; the last event number after them.
    fn write(&mut self, w: &GroupWrites<'_>) -> Result<i64, StorageError> {
        for step in &w.steps {
            match step {
                WriteStep::Records(changes) => self
                    .tables
                    .write_changes(*changes)
                    .map_err(StorageError::Corrupt)?,
                WriteStep::EraseCustomer { customer_id, .. } => self.erase_customer(*customer_id),
            }
        }
        for (key, answer) in &w.answers {
            let stored = StoredAnswer {
                fingerprint: key.fingerprint.clone(),
                answer: answer.clone(),
            };
            let expires = w.now + IDEMPOTENCY_TTL_MILLIS;
            self.answers
                .insert((key.application_id, key.key.clone()), (stored, expires));
        }
        for m in w.moves {
            let level = self
                .stock
                .entry(m.store_id)
                .or_default()
                .entry(m.product_id)
                .or_default();
            level.total += m.total;
            level.sold += m.sold;
        }
        for (key, delta) in w.totals {
            self.totals.entry(key.clone()).or_default().add(delta);
        }
        if self.event_seq() != w.after_event {
            return Err(StorageError::Conflict(format!(
                "events numbered after {} while the log ends at {}",
                w.after_event,
                self.event_seq()
            )));
        }
        for (seq, event) in (w.after_event + 1..).zip(w.events) {
            self.events.push(Event {
                seq,
                kind: event.kind.as_str().to_owned(),
                object_id: event.object_id,
                occurred_at: w.now,
                data: event.data.clone(),
            });
        }
        Ok(self.event_seq())
    }

    /// The stored orders naming the customer lose the contact details they copied.
    fn erase_customer(&mut self, customer_id: i64) {
        self.tables.change::<OrderRecord>(|orders| {
            for order in orders
                .iter_mut()
                .filter(|o| o.customer_id == Some(customer_id))
            {
                order.erase_customer();
            }
        });
    }

    /// What activation reads: every record type, history kinds only while open, with the
    /// ledgers derived from the stored sales.
    fn stored(&self) -> StoredMerchant {
        let records = RecordKind::ALL
            .iter()
            .map(|kind| {
                let all = self.tables.of(*kind);
                match kind.decl().history {
                    true => kind.visit(Open(all, &self.tables)),
                    false => all,
                }
            })
            .collect();
        let baskets: Vec<BasketRecord> = self.tables.all();
        let payments: Vec<TransactionRecord> = self.tables.all();
        let mut returned: BTreeMap<i64, i64> = BTreeMap::new();
        let mut receipts: BTreeMap<i64, i64> = BTreeMap::new();
        for basket in &baskets {
            if let (Some(register), Some(number)) = (basket.register_id, basket.receipt_number) {
                let last = receipts.entry(register).or_default();
                *last = (*last).max(number);
            }
            if basket.delete_date.is_some() {
                continue;
            }
            for line in &basket.lines {
                if let Some(of) = &line.return_of {
                    *returned.entry(of.line_id).or_default() -= line.quantity;
                }
            }
        }
        let mut refunded: BTreeMap<i64, i64> = BTreeMap::new();
        for payment in payments.iter().filter(|p| p.delete_date.is_none()) {
            if let Some(of) = payment.refund_of {
                *refunded.entry(of).or_default() += payment.amount;
            }
        }
        StoredMerchant {
            version: self.version,
            event_seq: self.event_seq(),
            sales: self.sales.clone(),
            returned: returned.into_iter().collect(),
            refunded: refunded.into_iter().collect(),
            receipts: receipts.into_iter().collect(),
            stock: self.stock.clone(),
            records,
        }
    }
}

/// The open records of a history kind: not finished, and the payments of open baskets.
struct Open<'a>(Records, &'a Tables);

impl KindVisitor for Open<'_> {
    type Out = Records;

    fn visit<R: Registered>(self) -> Records {
        let Open(all, tables) = self;
        let open_baskets: Vec<i64> = tables
            .all::<BasketRecord>()
            .iter()
            .filter(|b| !history::finished(*b))
            .map(|b| b.id)
            .collect();
        history::filtered::<R>(all, |r| {
            !history::finished(r)
                || domain::record::int_field(r, "basketId").is_some_and(|b| {
                    R::KIND == RecordKind::transactions && open_baskets.contains(&b)
                })
        })
    }
}

impl MemoryStorage {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A merchant with nothing stored yet, priced by `sales`.
    pub fn add_merchant(&self, merchant_id: i64, sales: SaleSettings) {
        self.lock().merchants.insert(
            merchant_id,
            Kept {
                sales,
                ..Kept::default()
            },
        );
    }

    /// While `refusing`, every commit fails, as a database that went away.
    pub fn refuse_commits(&self, refusing: bool) {
        self.lock().refusing = refusing;
    }

    /// Groups committed so far.
    pub fn commits(&self) -> usize {
        self.lock().commits
    }

    /// Merchants loaded so far (activations and reloads).
    pub fn loads(&self) -> usize {
        self.lock().loads
    }

    /// The merchant's committed version and last event number.
    pub fn committed(&self, merchant_id: i64) -> (i64, i64) {
        let inner = self.lock();
        inner
            .merchants
            .get(&merchant_id)
            .map_or((0, 0), |k| (k.version, k.event_seq()))
    }

    /// The merchant's events, in order.
    pub fn events(&self, merchant_id: i64) -> Vec<Event> {
        self.kept(merchant_id, |k| k.events.clone())
    }

    fn kept<T>(&self, merchant_id: i64, read: impl FnOnce(&Kept) -> T) -> T {
        let inner = self.lock();
        match inner.merchants.get(&merchant_id) {
            Some(kept) => read(kept),
            None => read(&Kept::default()),
        }
    }
}

type Answer<'a, T> = Pending<'a, T>;

fn ready<'a, T: Send + 'a>(value: Result<T, StorageError>) -> Answer<'a, T> {
    Box::pin(async move { value })
}

impl StateStore for MemoryStorage {
    fn load(&self, merchant_id: i64) -> Pending<'static, StoredMerchant> {
        let mut inner = self.lock();
        inner.loads += 1;
        let stored = inner
            .merchants
            .get(&merchant_id)
            .map_or_else(|| Kept::default().stored(), Kept::stored);
        ready(Ok(stored))
    }

    fn version(&self, merchant_id: i64) -> Pending<'static, i64> {
        ready(Ok(self.kept(merchant_id, |k| k.version)))
    }

    fn hears_others(&self) -> bool {
        true
    }
}

impl GroupStore for MemoryStorage {
    fn open_group(
        &self,
        merchant_id: i64,
        expected: i64,
    ) -> Pending<'static, Option<Box<dyn OpenGroup>>> {
        let committed = self.kept(merchant_id, Kept::clone);
        if committed.version != expected {
            return ready(Ok(None));
        }
        let group = MemoryGroup {
            storage: self.clone(),
            merchant_id,
            version: expected + 1,
            working: committed,
            wrote: false,
        };
        ready(Ok(Some(Box::new(group) as Box<dyn OpenGroup>)))
    }
}

/// A group's writes, into a copy of the merchant that the commit puts in place.
struct MemoryGroup {
    storage: MemoryStorage,
    merchant_id: i64,
    version: i64,
    working: Kept,
    wrote: bool,
}

impl OpenGroup for MemoryGroup {
    fn version(&self) -> i64 {
        self.version
    }

    fn allocate_ids(&mut self, n: usize) -> Pending<'_, Vec<i64>> {
        let mut inner = self.storage.lock();
        let first = inner.last_id + 1;
        inner.last_id += n as i64;
        ready(Ok((first..first + n as i64).collect()))
    }

    fn stored_answer<'a>(
        &'a mut self,
        key: &'a Idempotency,
        now: i64,
    ) -> Pending<'a, Option<StoredAnswer>> {
        let found = self
            .working
            .answers
            .get(&(key.application_id, key.key.clone()))
            .filter(|(_, expires)| *expires > now)
            .map(|(answer, _)| answer.clone());
        ready(Ok(found))
    }

    fn write<'a>(&'a mut self, writes: &'a GroupWrites<'a>) -> Pending<'a, i64> {
        self.wrote = true;
        ready(self.working.write(writes))
    }

    fn write_part<'a>(
        &'a mut self,
        writes: &'a GroupWrites<'a>,
    ) -> Pending<'a, Result<i64, StorageError>> {
        self.wrote = true;
        let mut trial = self.working.clone();
        let written = trial.write(writes);
        if written.is_ok() {
            self.working = trial;
        }
        ready(Ok(written))
    }

    fn commit(self: Box<Self>) -> Pending<'static, ()> {
        let mut inner = self.storage.lock();
        if inner.refusing {
            return ready(Err(StorageError::Conflict("the commit was refused".into())));
        }
        if self.wrote {
            let mut kept = self.working;
            kept.version = self.version;
            inner.merchants.insert(self.merchant_id, kept);
            inner.commits += 1;
        }
        ready(Ok(()))
    }

    fn rollback(self: Box<Self>) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        Box::pin(async {})
    }
}

impl StockStore for MemoryStorage {
    fn store_stock(&self, merchant_id: i64, store_id: i64) -> Pending<'static, StockMap> {
        let stock = self.kept(merchant_id, |k| k.stock.get(&store_id).cloned());
        ready(Ok(stock.unwrap_or_default()))
    }
}

/// Refuses a read by filter of a record type that is not history, as storage does.
fn history_kind(kind: RecordKind) -> Result<(), StorageError> {
    match kind.decl().history {
        true => Ok(()),
        false => Err(StorageError::Corrupt(format!(
            "{} rows are not read by filter",
            kind.decl().table
        ))),
    }
}

/// The records of a kind kept by a test of each record.
struct Keep<'a>(Records, &'a dyn Fn(&dyn Visit) -> bool);

impl KindVisitor for Keep<'_> {
    type Out = Records;

    fn visit<R: Registered>(self) -> Records {
        let Keep(all, keep) = self;
        history::filtered::<R>(all, |r| keep(r))
    }
}

impl HistoryStore for MemoryStorage {
    fn find(&self, kind: RecordKind, merchant_id: i64, ids: Vec<i64>) -> Pending<'static, Records> {
        let all = self.kept(merchant_id, |k| k.tables.of(kind));
        ready(Ok(kind.visit(Keep(all, &|r| ids.contains(&r.key())))))
    }

    fn query(
        &self,
        kind: RecordKind,
        merchant_id: i64,
        filter: SalesFilter,
    ) -> Pending<'static, Records> {
        if let Err(e) = history_kind(kind) {
            return ready(Err(e));
        }
        let all = self.kept(merchant_id, |k| k.tables.of(kind));
        ready(Ok(kind.visit(Keep(all, &|r| history::matches(r, &filter)))))
    }

    fn made_by_clients(
        &self,
        kind: RecordKind,
        merchant_id: i64,
        client_ids: Vec<String>,
    ) -> Pending<'static, Vec<i64>> {
        let all = self.kept(merchant_id, |k| k.tables.of(kind));
        let made = kind.visit(Keep(all, &|r| {
            text_field(r, "clientId").is_some_and(|c| client_ids.contains(&c))
        }));
        ready(Ok(kind.visit(Ids(made))))
    }
}

/// The ids of some records.
struct Ids(Records);

impl KindVisitor for Ids {
    type Out = Vec<i64>;

    fn visit<R: Registered>(self) -> Vec<i64> {
        R::from_records(self.0)
            .unwrap_or_default()
            .iter()
            .map(Visit::key)
            .collect()
    }
}
