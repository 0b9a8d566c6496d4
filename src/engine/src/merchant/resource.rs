//! What a merchant-owned resource must provide for the merchant supervisor to validate, store,
//! cache and serve it. One implementation per resource, beside its record type in `catalogue/`.

use serde_json::{Map, Value};

use crate::merchant::state::{Collection, MerchantState};
use domain::record::Declared;
use domain::sales::basket::BasketRecord;
use domain::sales::totals::Deltas;
use domain::stock::levels::StockMove;
use domain::Refusal;
use ports::{RecordKind, Registered};

/// Identifiers handed out while a batch is validated.
pub type Ids<'a> = &'a mut dyn Iterator<Item = i64>;

/// One object to create or update, with the facts the server adds to it.
pub struct Input {
    pub fields: Map<String, Value>,
    /// A secret the server generated for this object (see `BatchObject::secret`).
    pub secret: Option<String>,
    /// The webhook dispatcher turns the endpoint off, for this reason.
    pub disabled_because: Option<String>,
    /// The employee the writing token acts as.
    pub caller: i64,
}

/// What a write of one object hands the record's rules.
pub struct Writing<'a> {
    /// Identifiers for the records it creates (nested ones included).
    pub ids: Ids<'a>,
    pub input: Input,
    /// The merchant as the batch's earlier objects left it.
    pub state: &'a MerchantState,
    pub now: i64,
    /// A new record, rather than an update.
    pub creating: bool,
}

/// The sales collections whose finished records leave the cache for the database.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Basket,
    Transaction,
    Order,
    Invoice,
    Count,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::Basket,
        Kind::Transaction,
        Kind::Order,
        Kind::Invoice,
        Kind::Count,
    ];

    /// The record kind storage knows it as.
    pub fn record(self) -> RecordKind {
        match self {
            Kind::Basket => RecordKind::baskets,
            Kind::Transaction => RecordKind::transactions,
            Kind::Order => RecordKind::orders,
            Kind::Invoice => RecordKind::invoices,
            Kind::Count => RecordKind::stock_reconciliations,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Basket => "basket",
            Kind::Transaction => "transaction",
            Kind::Order => "order",
            Kind::Invoice => "invoice",
            Kind::Count => "stock_reconciliation",
        }
    }
}

pub trait Resource: Registered + Clone + Send + Sync + 'static {
    /// "Store", as messages name one record.
    const NOUN: &'static str = <Self as Declared>::DECL.noun;
    /// "stores", the collection key in bodies and answers.
    const PLURAL: &'static str = <Self as Declared>::DECL.plural;
    /// "store", the object of its change events (`store.created`).
    const EVENT: &'static str = <Self as Declared>::DECL.event;
    /// The action of the event a write that completes the record also appends
    /// (`basket.completed`, `invoice.received`).
    const COMPLETES_AS: Option<&'static str> = None;
    /// Sales records: once finished (completed or deleted) they are history, which the cache
    /// keeps only in a bounded window; the database holds all of it.
    const HISTORY: Option<Kind> = None;
    /// Whether `create`/`update` read stock levels (a stock count's expected units): the
    /// supervisor then waits until every store's actor has loaded its stock before validating.
    const READS_STOCK: bool = false;

    fn id(&self) -> i64;
    fn delete_date(&self) -> Option<i64>;
    fn mark_deleted(&mut self, at: i64);

    /// What a soft delete does beyond setting `deleteDate` (forget a one-time secret, end an
    /// employment).
    fn on_deleted(&mut self, _at: i64) {}

    fn collection(state: &MerchantState) -> &Collection<Self>;
    fn collection_mut(state: &mut MerchantState) -> &mut Collection<Self>;

    /// Identifiers a create of these fields consumes (nested records take their own).
    fn ids_needed(_fields: &Map<String, Value>) -> usize {
        1
    }

    /// Identifiers a write of these fields consumes when that depends on the stored record
    /// (completing a stock count books a line per counted product). Defaults to `ids_needed`.
    fn ids_needed_in(fields: &Map<String, Value>, _state: &MerchantState) -> usize {
        Self::ids_needed(fields)
    }

    /// Baskets a write of these fields refers to, which must be at hand (from the database if
    /// they are history) before it is validated.
    fn referenced_baskets(_fields: &Map<String, Value>) -> Vec<i64> {
        Vec::new()
    }

    /// Payments a write of these fields refers to (the one a refund names), likewise.
    fn referenced_payments(_fields: &Map<String, Value>) -> Vec<i64> {
        Vec::new()
    }

    /// The `clientId` the record was made under (a till's own id for it), and the fingerprint
    /// of the body that made it. Resources whose records a till may make under its own id
    /// (they are history: the id is looked up there too) say so by answering it.
    fn made_under(&self) -> Option<(&str, Option<&str>)> {
        None
    }

    /// Whether a creation may name a `clientId` ([`Resource::made_under`]).
    const CLIENT_IDS: bool = false;

    /// The `clientId` a creation of these fields names, lower case.
    fn client_id_of(fields: &Map<String, Value>) -> Option<String> {
        if !Self::CLIENT_IDS || fields.get("id").is_some_and(|id| !id.is_null()) {
            return None;
        }
        domain::offline::sync::client_key(fields.get("clientId")?)
    }

    /// The record made under `client_id`, with the fingerprint of the body it was made from.
    fn made_by_client(state: &MerchantState, client_id: &str) -> Option<(i64, Option<String>)> {
        let kind = Self::HISTORY?;
        let id = *state.index.by_client.get(&(kind, client_id.to_owned()))?;
        let made_from = state.entry::<Self>(id)?.record().made_under()?.1;
        Some((id, made_from.map(str::to_owned)))
    }

    /// The basket a record belongs to (a payment, an order), needed to validate changes to it.
    fn basket_id(&self) -> Option<i64> {
        None
    }

    /// False once a sales record is history (completed or deleted): it then leaves the cache
    /// with the window. Records of other resources are always kept.
    fn is_open(&self, _state: &MerchantState) -> bool {
        true
    }

    /// Keeps the state's ledgers (units returned per sale line, amounts refunded per payment)
    /// in step with a write of this record. Unlike indexes, ledgers count history too: they
    /// are loaded whole and change only when a record is written, never when it leaves or
    /// comes back to the cache.
    fn keep_ledger(_state: &mut MerchantState, _before: Option<&Self>, _after: Option<&Self>) {}

    /// Keeps the state's indexes in step with a change of this record.
    fn reindex(_state: &mut MerchantState, _before: Option<&Self>, _after: Option<&Self>) {}

    /// Records of other collections this change brings with it (the wastage basket a stock
    /// count books). They go into the working state after the record, and the record's own
    /// `persist` writes them in the same transaction. They move no stock of their own.
    ///
    /// Gives the baskets it booked, stored before the record (its row names them).
    fn side_records(
        &self,
        _before: Option<&Self>,
        _state: &mut MerchantState,
    ) -> Vec<BasketRecord> {
        Vec::new()
    }

    /// What this change adds to the sales running totals (a sale basket just completed), in
    /// the same transaction as the record.
    fn sales_totals(&self, _before: Option<&Self>, _state: &MerchantState, _out: &mut Deltas) {}

    /// A record with nothing written yet, which [`Resource::write`] makes into a new one.
    fn blank(id: i64, now: i64) -> Self;

    /// The blank record of a create in this merchant (an application draws a client id no
    /// other application of the merchant has).
    fn blank_in(_state: &MerchantState, id: i64, now: i64) -> Self {
        Self::blank(id, now)
    }

    /// This record with the object written on it (see [`Writing`]).
    fn write(self, w: Writing<'_>) -> Result<Self, Vec<String>>;

    /// A new record.
    fn create(
        ids: Ids<'_>,
        input: Input,
        state: &MerchantState,
        now: i64,
    ) -> Result<Self, Vec<String>> {
        let id = next_id(ids)?;
        Self::blank_in(state, id, now).write(Writing {
            ids,
            input,
            state,
            now,
            creating: true,
        })
    }

    /// This record with an update applied.
    fn update(
        &self,
        ids: Ids<'_>,
        input: Input,
        state: &MerchantState,
        now: i64,
    ) -> Result<Self, Vec<String>> {
        self.clone().write(Writing {
            ids,
            input,
            state,
            now,
            creating: false,
        })
    }

    /// Uniqueness broken by this record against the others of the state (message 113), checked
    /// after `create`/`update` succeeded.
    fn conflicts(&self, _state: &MerchantState) -> Vec<String> {
        Vec::new()
    }

    /// A record that may no longer change (completed): updates are refused with 111.
    fn locked(&self) -> bool {
        false
    }

    /// Rules against the rest of the state that answer with their own refusal (for example
    /// 112 for an order on an open basket), checked after `create`/`update` succeeded.
    fn check(&self, _state: &MerchantState) -> Result<(), Refusal> {
        Ok(())
    }

    /// True when this record's child rows (lines, items) equal those of `before`, so storing
    /// the change rewrites the record's own row only.
    fn same_children(&self, _before: &Self) -> bool {
        false
    }

    /// Stock this change moves, given the record as it was before (None when new). Persisted in
    /// the same transaction as the record, then applied to the store's actor.
    fn stock_moves(&self, _before: Option<&Self>) -> Vec<StockMove> {
        Vec::new()
    }

    /// The verb of the success message ("created", "updated", or for example "completed").
    fn verb(&self, before: Option<&Self>) -> &'static str {
        if before.is_some() {
            "updated"
        } else {
            "created"
        }
    }

    /// The action of an event this change appends beside `created`/`updated` (a webhook the
    /// dispatcher turned off appends `webhook.disabled`).
    fn also_event(&self, _before: Option<&Self>) -> Option<&'static str> {
        None
    }

    /// The details of the success message: "<Noun> <id> <verb>." unless a resource says more.
    fn success_detail(&self, before: Option<&Self>) -> String {
        format!("{} {} {}.", Self::NOUN, self.id(), self.verb(before))
    }

    /// Refuses a delete that would break a rule (for example a store with open baskets).
    fn check_delete(&self, _state: &MerchantState) -> Result<(), String> {
        Ok(())
    }
}

/// The parts of a [`Resource`] that every record implements alike: its id, its soft delete,
/// and what [`resource_collection!`] gives (`crate::resource_basics!(stores);`).
#[macro_export]
macro_rules! resource_basics {
    ($collection:ident $(, $($blank:tt)*)?) => {
        fn id(&self) -> i64 {
            self.id
        }

        fn delete_date(&self) -> Option<i64> {
            self.delete_date
        }

        fn mark_deleted(&mut self, at: i64) {
            self.delete_date = Some(at);
            Resource::on_deleted(self, at);
        }

        $crate::resource_collection!($collection $(, $($blank)*)?);
    };
}

/// Where a resource's collection lives in the merchant's state, and its blank record:
/// `Self::new(id, now)` unless given (`resource_collection!(x, |id, now| …)`).
#[macro_export]
macro_rules! resource_collection {
    ($collection:ident) => {
        $crate::resource_collection!($collection, |id, now| Self::new(id, now));
    };
    ($collection:ident, |$id:ident, $now:ident| $blank:expr) => {
        fn blank($id: i64, $now: i64) -> Self {
            $blank
        }

        fn collection(
            state: &$crate::merchant::state::MerchantState,
        ) -> &$crate::merchant::state::Collection<Self> {
            &state.$collection
        }

        fn collection_mut(
            state: &mut $crate::merchant::state::MerchantState,
        ) -> &mut $crate::merchant::state::Collection<Self> {
            &mut state.$collection
        }
    };
}

pub use domain::fields::next_id;

/// Keeps the `clientId` index of a resource whose records a till may make under its own id;
/// called by its `reindex`.
pub fn index_client<R: Resource>(state: &mut MerchantState, before: Option<&R>, after: Option<&R>) {
    let Some(kind) = R::HISTORY else { return };
    let index = &mut state.index.by_client;
    if let Some((client, _)) = before.and_then(R::made_under) {
        index.remove(&(kind, client.to_owned()));
    }
    if let Some(after) = after {
        if let Some((client, _)) = after.made_under() {
            index.insert((kind, client.to_owned()), after.id());
        }
    }
}
