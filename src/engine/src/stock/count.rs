//! Stock counts as the merchant supervisor knows them. Completing one reads the stock left at
//! that moment, moves stock (shortfall → sold, surplus → received) and brings its wastage
//! basket into the baskets collection; a completed count is locked (111).

use rust_decimal::Decimal;
use serde_json::{Map, Value};

use crate::merchant::resource::{Kind, Resource, Writing};
use crate::merchant::state::MerchantState;
use domain::catalogue::product::ProductRecord;
use domain::catalogue::store::StoreRecord;
use domain::sales::basket::BasketRecord;
use domain::sales::basket::InstancePrice;
use domain::stock::count::{CountContext, StockReconciliation};
use domain::stock::levels::{MoveReason, StockMove};

/// A wastage line's price: the product's first live instance (its only one, usually), or
/// nothing at all (instance 0, price 0) when it has none.
fn wastage_price(state: &MerchantState, product_id: i64) -> InstancePrice {
    let instance = state
        .entry::<ProductRecord>(product_id)
        .and_then(|p| p.live_instances().min_by_key(|i| i.id).cloned());
    InstancePrice {
        product_id,
        instance_id: instance.as_ref().map_or(0, |i| i.id),
        price: instance.as_ref().map_or(Decimal::ZERO, |i| i.price),
        tax_percentage: instance
            .as_ref()
            .map_or(Decimal::ZERO, |i| i.tax_percentage),
    }
}

fn apply_count(
    base: StockReconciliation,
    w: Writing<'_>,
) -> Result<StockReconciliation, Vec<String>> {
    let (state, now) = (w.state, w.now);
    let store_exists = |id| state.find::<StoreRecord>(id).is_some();
    let product_exists = |id| state.find::<ProductRecord>(id).is_some();
    let stock_left = |store, product| state.stock_level(store, product).left();
    let price = |product| wastage_price(state, product);
    // Objects of one request share `now` (each request of a group has its own).
    let this_request: Vec<&StockReconciliation> = state
        .live::<StockReconciliation>()
        .filter(|c| c.complete_date == Some(now))
        .collect();
    let completed_in_request = |store, product| {
        this_request
            .iter()
            .find(|c| c.store_id == store && c.lines.iter().any(|l| l.product_id == product))
            .map(|c| c.id)
    };
    let ctx = CountContext {
        store_exists: &store_exists,
        product_exists: &product_exists,
        stock_left: &stock_left,
        wastage_price: &price,
        completed_in_request: &completed_in_request,
        price: &|basket| crate::sales::pricing::price(state, basket, now),
    };
    base.apply(w.input.fields, w.ids, &ctx, now, w.creating)
}

fn just_completed(record: &StockReconciliation, before: Option<&StockReconciliation>) -> bool {
    record.completed && !before.is_some_and(|b| b.completed)
}

impl Resource for StockReconciliation {
    const COMPLETES_AS: Option<&'static str> = Some("completed");
    const READS_STOCK: bool = true;
    const HISTORY: Option<Kind> = Some(Kind::Count);

    crate::resource_basics!(stock_reconciliations);

    fn write(self, w: Writing<'_>) -> Result<Self, Vec<String>> {
        apply_count(self, w)
    }

    fn is_open(&self, _: &MerchantState) -> bool {
        !self.completed && self.delete_date.is_none()
    }

    /// The count's own id when new; completing takes one for the wastage basket and one per
    /// counted product (a wastage line or a surplus entry each, at most).
    fn ids_needed_in(fields: &Map<String, Value>, state: &MerchantState) -> usize {
        let existing = match fields.get("id") {
            None | Some(Value::Null) => None,
            Some(id) => Some(id.as_i64().and_then(|id| state.find::<Self>(id))),
        };
        let own = usize::from(existing.is_none());
        if fields.get("completed") != Some(&Value::Bool(true)) {
            return own;
        }
        let stored = existing.flatten().map_or(0, |c| c.lines.len());
        let sent = fields
            .get("products")
            .and_then(Value::as_object)
            .map_or(0, Map::len);
        own + 1 + stored + sent
    }

    fn locked(&self) -> bool {
        self.completed
    }

    fn stock_moves(&self, before: Option<&Self>) -> Vec<StockMove> {
        if !just_completed(self, before) {
            return Vec::new();
        }
        let moved = |product_id, total, sold| StockMove {
            store_id: self.store_id,
            product_id,
            total,
            sold,
            at: self.complete_date.unwrap_or_default(),
            reason: MoveReason::Count,
            source_id: self.id,
        };
        let shortfalls = self
            .shortfalls()
            .map(|(product_id, n)| moved(product_id, 0, n));
        let surpluses = self
            .surpluses()
            .map(|(product_id, n)| moved(product_id, n, 0));
        shortfalls.chain(surpluses).collect()
    }

    /// The wastage basket joins the baskets as it is: completed, and without stock moves of
    /// its own (the count's moves book the shortfall).
    fn side_records(&self, before: Option<&Self>, state: &mut MerchantState) -> Vec<BasketRecord> {
        match (just_completed(self, before), &self.booked_basket) {
            (true, Some(basket)) => {
                state.put(basket.as_ref().clone());
                vec![basket.as_ref().clone()]
            }
            _ => Vec::new(),
        }
    }

    fn verb(&self, before: Option<&Self>) -> &'static str {
        match before {
            _ if just_completed(self, before) => "completed",
            Some(_) => "updated",
            None => "created",
        }
    }

    fn success_detail(&self, before: Option<&Self>) -> String {
        if just_completed(self, before) {
            self.outcome()
        } else {
            format!("{} {} {}.", Self::NOUN, self.id, self.verb(before))
        }
    }
}
