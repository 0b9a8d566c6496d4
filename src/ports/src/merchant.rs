//! What a merchant's actors need from storage, one small trait per user of it: activation
//! ([`StateStore`]), a group's write ([`GroupStore`], [`OpenGroup`]), a store's stock
//! ([`StockStore`]) and finished sales records ([`HistoryStore`]).

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;

use domain::batch::{Idempotency, StoredAnswer};
use domain::event::NewEvent;
use domain::sales::pricing::SaleSettings;
use domain::sales::totals::Deltas;
use domain::stock::levels::{StockMap, StockMove};

use crate::records::{RecordChanges, RecordKind, Records};
use crate::{Pending, StorageError};

/// A merchant as stored: what its cached state is built from.
#[derive(Clone, Debug, Default)]
pub struct StoredMerchant {
    /// Its version (read first: a write committed while the rest is read makes the state look
    /// older than it is, and reloaded again, never newer).
    pub version: i64,
    /// The last change event it appended.
    pub event_seq: i64,
    /// How its sales are priced (the manifest's `[sales]`).
    pub sales: SaleSettings,
    /// Sale line → units its live return lines give back.
    pub returned: Vec<(i64, i64)>,
    /// Payment → what its live refunds give back.
    pub refunded: Vec<(i64, i64)>,
    /// Register → the last receipt number it gave.
    pub receipts: Vec<(i64, i64)>,
    /// Store → its stock.
    pub stock: BTreeMap<i64, StockMap>,
    /// Every record type's records: all of them, but for history kinds only the open ones
    /// (not completed, not deleted).
    pub records: Vec<Records>,
}

/// Activation and reload.
pub trait StateStore: Send + Sync {
    fn load(&self, merchant_id: i64) -> Pending<'static, StoredMerchant>;
    /// The merchant's version as stored (what another process may have moved on).
    fn version(&self, merchant_id: i64) -> Pending<'static, i64>;
    /// Whether this process hears every other process's writes as they commit.
    fn hears_others(&self) -> bool;
}

/// Opening one group of writes on a merchant.
pub trait GroupStore: Send + Sync {
    /// `None` when storage is ahead of the cached state at version `expected` (another
    /// process wrote): reload first.
    fn open_group(
        &self,
        merchant_id: i64,
        expected: i64,
    ) -> Pending<'static, Option<Box<dyn OpenGroup>>>;
}

/// One group's write, open: nothing is kept until `commit`.
pub trait OpenGroup: Send {
    /// The merchant's version once this group commits.
    fn version(&self) -> i64;
    /// Identifiers for the group's new records.
    fn allocate_ids(&mut self, n: usize) -> Pending<'_, Vec<i64>>;
    /// The answer kept for an `Idempotency-Key`.
    fn stored_answer<'a>(
        &'a mut self,
        key: &'a Idempotency,
        now: i64,
    ) -> Pending<'a, Option<StoredAnswer>>;
    /// Writes into the group; the merchant's last event number after it.
    fn write<'a>(&'a mut self, writes: &'a GroupWrites<'a>) -> Pending<'a, i64>;
    /// Writes into a part of the group that is taken back alone if it fails (the inner
    /// error); the outer error loses the group.
    fn write_part<'a>(
        &'a mut self,
        writes: &'a GroupWrites<'a>,
    ) -> Pending<'a, Result<i64, StorageError>>;
    fn commit(self: Box<Self>) -> Pending<'static, ()>;
    /// Ends the group without keeping anything (nothing changed, or it failed).
    fn rollback(self: Box<Self>) -> Pin<Box<dyn Future<Output = ()> + Send>>;
}

/// What one write (or a group of them) keeps, written in this order: the steps (records and
/// what goes with them), the kept answers, the stock moves, the running totals, the events.
pub struct GroupWrites<'a> {
    pub merchant_id: i64,
    pub steps: Vec<WriteStep<'a>>,
    /// Answers to keep for their `Idempotency-Key`.
    pub answers: Vec<(&'a Idempotency, String)>,
    pub moves: &'a [StockMove],
    /// What the writes add to the sales running totals.
    pub totals: &'a Deltas,
    pub events: &'a [NewEvent],
    /// The merchant's last event number before these.
    pub after_event: i64,
    pub now: i64,
}

/// One step of a group's write.
pub enum WriteStep<'a> {
    /// Records as a write left them, with what storing each brings along (child rows, a new
    /// secret, revoked sign-ins).
    Records(RecordChanges<'a>),
    /// A customer's personal data taken out of everything stored beside its record: its
    /// orders, the events and logs quoting it, kept answers naming it (`held`: the values it
    /// held, to find them).
    EraseCustomer { customer_id: i64, held: Vec<String> },
}

/// A store's stock as stored (a store actor's start).
pub trait StockStore: Send + Sync {
    fn store_stock(&self, merchant_id: i64, store_id: i64) -> Pending<'static, StockMap>;
}

/// What a read of sales records asks for. Every list is optional; storage may answer a
/// superset when a list is too long to bind, so callers filter the answer again.
#[derive(Clone, Debug, Default)]
pub struct SalesFilter {
    pub ids: Option<Vec<i64>>,
    /// Id lists by the filter header a field of the record declares (`storeIds`: the records
    /// whose `storeId` is one of them).
    pub lists: Vec<(&'static str, Vec<i64>)>,
    pub completed: Option<bool>,
    pub include_deleted: bool,
    /// `[from, to)` on the completion time, for completed records.
    pub completed_between: Option<(i64, i64)>,
}

impl SalesFilter {
    /// The records whose field filtered by `header` is one of `ids`.
    pub fn with(mut self, header: &'static str, ids: Vec<i64>) -> Self {
        self.lists.push((header, ids));
        self
    }
}

/// Sales records past the cached window, of a history kind (baskets, payments, orders,
/// invoices, stock counts).
pub trait HistoryStore: Send + Sync {
    fn find(&self, kind: RecordKind, merchant_id: i64, ids: Vec<i64>) -> Pending<'static, Records>;
    fn query(
        &self,
        kind: RecordKind,
        merchant_id: i64,
        filter: SalesFilter,
    ) -> Pending<'static, Records>;
    /// The records of `kind` tills made under these `clientId`s.
    fn made_by_clients(
        &self,
        kind: RecordKind,
        merchant_id: i64,
        client_ids: Vec<String>,
    ) -> Pending<'static, Vec<i64>>;
}

/// Everything a merchant's actors keep and read.
pub trait MerchantStorage: StateStore + GroupStore + StockStore + HistoryStore {}

impl<T: StateStore + GroupStore + StockStore + HistoryStore> MerchantStorage for T {}
