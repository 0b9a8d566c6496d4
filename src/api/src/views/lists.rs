//! List reads over a snapshot: ids are looked up, indexes answer filters, and each record's
//! kept rendering is copied into one buffer.

use std::collections::{BTreeMap, BTreeSet};

use crate::views::json::push_key;
use crate::views::records::{collection, push_level, write_entry};
use crate::views::Snapshot;
use domain::catalogue::product::ProductRecord;
use domain::customers::customer::CustomerRecord;
use domain::record::{Cell, FieldDecl, Visit, Visitor};
use domain::stock::count::StockReconciliation;
use domain::Failure;
pub use engine::merchant::history::{Historic, SalesQuery};
use engine::merchant::registry::Merchants;
use engine::merchant::resource::Resource;
use engine::merchant::state::{Entry, MerchantState};

/// What a list asks for besides its ids.
#[derive(Clone, Debug, Default)]
pub struct ListQuery {
    /// The id header's ids; `None`: every record.
    pub ids: Option<BTreeSet<i64>>,
    /// Show soft-deleted records too.
    pub deleted: bool,
    /// Declared filter headers (`#[field(filter = ...)]`) that were sent.
    pub filters: Vec<Filter>,
}

/// A declared filter and what it was given.
#[derive(Clone, Debug)]
pub struct Filter {
    pub field: &'static FieldDecl,
    pub value: FilterValue,
}

#[derive(Clone, Debug)]
pub enum FilterValue {
    /// Any of these ids.
    Ids(BTreeSet<i64>),
    Bool(bool),
}

impl ListQuery {
    /// Whether a record passes every filter.
    fn keeps(&self, record: &dyn Visit) -> bool {
        self.filters.iter().all(|filter| filter.keeps(record))
    }
}

impl Filter {
    fn keeps(&self, record: &dyn Visit) -> bool {
        struct Probe<'f> {
            field: &'f FieldDecl,
            value: &'f FilterValue,
            kept: bool,
        }
        impl Visitor for Probe<'_> {
            fn cell(&mut self, field: &'static FieldDecl, value: Cell<'_>) {
                // By name: a declaration's table is a constant, which may stand at more than
                // one address.
                if field.name != self.field.name {
                    return;
                }
                self.kept = match (self.value, value) {
                    (FilterValue::Ids(ids), Cell::Int(v)) => ids.contains(&v),
                    (FilterValue::Bool(b), Cell::Bool(v)) => *b == v,
                    _ => false,
                };
            }
            fn children(&mut self, _: &'static FieldDecl, _: &mut dyn Iterator<Item = &dyn Visit>) {
            }
        }
        let mut probe = Probe {
            field: self.field,
            value: &self.value,
            kept: false,
        };
        record.visit(&mut probe);
        probe.kept
    }
}

/// `{"<id>": <record>, ...}` of the records of `R` passing the query and `keep`.
pub fn records<R: Resource>(
    snapshot: &Snapshot,
    query: &ListQuery,
    keep: impl Fn(&R) -> bool,
) -> String {
    let state = snapshot.state();
    let wanted = |e: &&Entry<R>| {
        (query.deleted || e.delete_date().is_none()) && keep(e.record()) && query.keeps(e.record())
    };
    let mut out = String::new();
    match &query.ids {
        Some(ids) => collection(
            state,
            ids.iter()
                .filter_map(|id| state.entry::<R>(*id))
                .filter(wanted),
            &mut out,
        ),
        None => collection(
            state,
            R::collection(state).values().filter(wanted),
            &mut out,
        ),
    }
    out
}

/// The customers a `search` text may find, from the snapshot's prefix index.
pub fn customer_candidates(snapshot: &Snapshot, text: &str) -> BTreeSet<i64> {
    engine::customers::customer::search_candidates(snapshot.state(), text)
}

/// The values that identify a customer in free text (its name, email and phone), for its
/// export's logs; none for an unknown or erased customer.
pub fn customer_contacts(snapshot: &Snapshot, id: i64) -> Vec<String> {
    match snapshot.state().entry::<CustomerRecord>(id) {
        Some(entry) if entry.record().erase_date.is_none() => entry.record().identifying(),
        _ => Vec::new(),
    }
}

/// A record of the snapshot by id, deleted or not, as reads show it.
pub fn record<R: Resource>(snapshot: &Snapshot, id: i64) -> Option<String> {
    let state = snapshot.state();
    state.entry::<R>(id).map(|entry| {
        let mut out = String::new();
        write_entry(entry, state, &mut out);
        out
    })
}

/// Whether the snapshot holds a record of `R` with this id: `Some(true)` live, `Some(false)`
/// deleted, `None` not this merchant's.
pub fn is_live<R: Resource>(snapshot: &Snapshot, id: i64) -> Option<bool> {
    snapshot
        .state()
        .entry::<R>(id)
        .map(|e| e.delete_date().is_none())
}

/// What `GET /product` asks for.
#[derive(Clone, Debug, Default)]
pub struct ProductQuery {
    pub list: ListQuery,
    /// Products in any of these categories.
    pub categories: Option<BTreeSet<i64>>,
    /// Adds this store's `totalStock`, `stockSold` and `stockLeft`.
    pub store: Option<i64>,
}

/// `{"<id>": <product>, ...}`: ids looked up, categories through their index.
pub fn products(snapshot: &Snapshot, query: &ProductQuery) -> String {
    let state = snapshot.state();
    let in_categories = |p: &ProductRecord| {
        query
            .categories
            .as_ref()
            .is_none_or(|wanted| p.category_ids.iter().any(|c| wanted.contains(c)))
    };
    let wanted = |e: &&Entry<ProductRecord>| {
        (query.list.deleted || e.delete_date.is_none()) && in_categories(e.record())
    };
    let candidates: Box<dyn Iterator<Item = &Entry<ProductRecord>>> =
        match (&query.list.ids, &query.categories) {
            (Some(ids), _) => Box::new(lookup(state, ids.iter().copied())),
            (None, Some(categories)) => {
                let ids: BTreeSet<i64> = categories
                    .iter()
                    .filter_map(|c| state.index.products_by_category.get(c))
                    .flat_map(|ids| ids.iter().copied())
                    .collect();
                Box::new(
                    lookup(state, ids.into_iter())
                        .collect::<Vec<_>>()
                        .into_iter(),
                )
            }
            (None, None) => Box::new(state.products.values()),
        };
    let mut out = String::with_capacity(1024);
    match query.store {
        None => collection(state, candidates.filter(wanted), &mut out),
        Some(store_id) => with_stock(state, &mut out, candidates.filter(wanted), store_id),
    }
    out
}

fn lookup(
    state: &MerchantState,
    ids: impl Iterator<Item = i64>,
) -> impl Iterator<Item = &Entry<ProductRecord>> {
    ids.filter_map(|id| state.entry::<ProductRecord>(id))
}

/// The products with the store's stock columns after their own fields. A store of another
/// merchant, or none at all, has no stock here: the same answer for both, so nothing leaks.
fn with_stock<'a>(
    state: &MerchantState,
    out: &mut String,
    products: impl Iterator<Item = &'a Entry<ProductRecord>>,
    store_id: i64,
) {
    out.push('{');
    for (i, product) in products.enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_key(out, product.id);
        write_entry(product, state, out);
        // The stock columns go after the record's own fields, inside its object.
        if out.ends_with('}') {
            out.pop();
        }
        push_level(out, state.stock_level(store_id, product.id));
        out.push('}');
    }
    out.push('}');
}

/// Sales records matching a query, from the snapshot, the history cache or the database.
pub struct Sales {
    /// `{"<id>": <record>, ...}`
    pub json: String,
    /// The position of the snapshot the records were read against.
    pub position: i64,
}

/// The records of `R` matching `query`.
pub async fn sales<R: Historic>(
    merchants: &Merchants,
    merchant_id: i64,
    query: &SalesQuery,
) -> Result<Sales, Failure> {
    let found = merchants.sales::<R>(merchant_id, query).await?;
    let mut json = String::with_capacity(found.entries.len() * 256 + 2);
    collection(&found.state, &found.entries, &mut json);
    Ok(Sales {
        json,
        position: found.state.event_seq,
    })
}

/// [`sales`] with the ids of the records rendered, in order (a customer's export reads the
/// payments of the baskets it found).
pub async fn sales_and_ids<R: Historic>(
    merchants: &Merchants,
    merchant_id: i64,
    query: &SalesQuery,
) -> Result<(Sales, Vec<i64>), Failure> {
    let found = merchants.sales::<R>(merchant_id, query).await?;
    let mut json = String::with_capacity(found.entries.len() * 256 + 2);
    collection(&found.state, &found.entries, &mut json);
    let ids = found.entries.iter().map(|e| e.id()).collect();
    let sales = Sales {
        json,
        position: found.state.event_seq,
    };
    Ok((sales, ids))
}

/// Units per store and product (`{"<store>": {"<product>": units}}`).
type Units = BTreeMap<i64, BTreeMap<i64, i64>>;

/// What `GET /stock/reconcile` answers: the counts, and what they booked as `wastage` and
/// `surplus` per store of the merchant asked for.
pub struct Counts {
    pub json: String,
    pub wastage: String,
    pub surplus: String,
}

pub async fn counts(
    merchants: &Merchants,
    merchant_id: i64,
    query: &SalesQuery,
    stores: &BTreeSet<i64>,
) -> Result<Counts, Failure> {
    let found = merchants
        .sales::<StockReconciliation>(merchant_id, query)
        .await?;
    // Another merchant's store is a store that does not exist: it gets no key.
    let mine: Units = stores
        .iter()
        .filter(|s| found.state.stores.contains_key(*s))
        .map(|s| (*s, BTreeMap::new()))
        .collect();
    let (mut wastage, mut surplus) = (mine.clone(), mine);
    for c in &found.entries {
        for (product, n) in c.shortfalls() {
            *wastage
                .entry(c.store_id)
                .or_default()
                .entry(product)
                .or_default() += n;
        }
        for (product, n) in c.surpluses() {
            *surplus
                .entry(c.store_id)
                .or_default()
                .entry(product)
                .or_default() += n;
        }
    }
    let mut json = String::new();
    collection(&found.state, &found.entries, &mut json);
    Ok(Counts {
        json,
        wastage: units(&wastage),
        surplus: units(&surplus),
    })
}

fn units(units: &Units) -> String {
    let mut out = String::from("{");
    for (i, (store, products)) in units.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_key(&mut out, *store);
        out.push('{');
        for (j, (product, n)) in products.iter().enumerate() {
            if j > 0 {
                out.push(',');
            }
            push_key(&mut out, *product);
            out.push_str(itoa::Buffer::new().format(*n));
        }
        out.push('}');
    }
    out.push('}');
    out
}
