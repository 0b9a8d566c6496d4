//! Baskets, transactions, orders and invoices as the merchant supervisor knows them: completed
//! records are locked (111), completing a basket or an invoice moves stock, and finished ones
//! are history that the cache keeps only in its window.

use serde_json::{Map, Value};

use crate::merchant::resource::{index_client, Kind, Resource, Writing};
use crate::merchant::state::MerchantState;
use crate::sales::pricing;
use domain::catalogue::product::ProductRecord;
use domain::catalogue::store::StoreRecord;
use domain::catalogue::supplier::{SupplierRecord, SupplierStoreRecord};
use domain::customers::customer::CustomerRecord;
use domain::offline::fingerprint::fingerprint;
use domain::sales::basket::{self, BasketRecord};
use domain::sales::order::{OrderContext, OrderRecord};
use domain::sales::payment::{PaymentContext, Refundable, TransactionRecord};
use domain::sales::totals::Deltas;
use domain::stock::invoice::{InvoiceContext, InvoiceRecord};
use domain::stock::levels::{MoveReason, StockMove};
use domain::Refusal;

/// The parts every sales record shares: a soft delete, a collection, and a completion that
/// locks the record for good and makes it history.
macro_rules! sale_basics {
    ($collection:ident, $kind:expr, $completed:expr) => {
        const HISTORY: Option<Kind> = Some($kind);

        $crate::resource_basics!($collection);

        fn locked(&self) -> bool {
            let completed: fn(&Self) -> bool = $completed;
            completed(self)
        }
    };
}

/// A sales record with lines or items that completes once: created and updated through one
/// `apply` function, moving stock when completed, and saying so with its own verb.
macro_rules! completing_sale {
    (
        $record:ident: $collection:ident, $kind:expr,
        apply: $apply:ident, new_children: $children:path, children: $children_field:ident,
        completes_as: $verb:literal,
        moves: |$r:ident| $moves:expr
        $(, also: { $($also:item)* })?
    ) => {
        impl Resource for $record {
            const COMPLETES_AS: Option<&'static str> = Some($verb);
            sale_basics!($collection, $kind, |r| r.completed);

            fn ids_needed(fields: &Map<String, Value>) -> usize {
                1 + $children(fields)
            }

            fn is_open(&self, _: &MerchantState) -> bool {
                !self.completed && self.delete_date.is_none()
            }

            fn write(self, w: Writing<'_>) -> Result<Self, Vec<String>> {
                $apply(self, w)
            }

            fn same_children(&self, before: &Self) -> bool {
                domain::record::same_stored(&self.$children_field, &before.$children_field)
            }

            fn stock_moves(&self, before: Option<&Self>) -> Vec<StockMove> {
                if !completes(self.completed, before.map(|b| b.completed)) {
                    return Vec::new();
                }
                let $r = self;
                $moves.collect()
            }

            fn verb(&self, before: Option<&Self>) -> &'static str {
                let completes = completes(self.completed, before.map(|b| b.completed));
                completion_verb(completes, before.is_some(), $verb)
            }

            $($($also)*)?
        }
    };
}

/// What a payment and an order share: a blank record, written against the basket it names
/// (what the rules need of that basket is `$lookup`), which is brought in first when it is
/// history.
macro_rules! basket_child {
    ($record:ident, |$state:ident| $lookup:expr) => {
        fn write(self, w: Writing<'_>) -> Result<Self, Vec<String>> {
            let $state = w.state;
            self.apply(w.input.fields, $lookup, w.now, w.creating)
        }

        fn referenced_baskets(fields: &Map<String, Value>) -> Vec<i64> {
            basket_field(fields).into_iter().collect()
        }

        fn basket_id(&self) -> Option<i64> {
            Some(self.basket_id)
        }
    };
}

/// A record just completed by this write (it was not completed before).
fn completes(completed: bool, before: Option<bool>) -> bool {
    completed && before != Some(true)
}

/// "completed" (or "received") for the write that completes, else "updated" or "created".
fn completion_verb(completes: bool, existed: bool, verb: &'static str) -> &'static str {
    match (completes, existed) {
        (true, _) => verb,
        (false, true) => "updated",
        (false, false) => "created",
    }
}

/// The basket id a transaction or an order names, when it names one.
fn basket_field(fields: &Map<String, Value>) -> Option<i64> {
    fields.get("basketId").and_then(Value::as_i64)
}

fn apply_basket(base: BasketRecord, w: Writing<'_>) -> Result<BasketRecord, Vec<String>> {
    let (fields, ids, now, creating) = (w.input.fields, w.ids, w.now, w.creating);
    let made_from = made_from(&fields, creating);
    let mut basket = pricing::with_context(w.state, now, w.input.caller, |ctx| {
        base.apply(fields, ids, ctx, now, creating)
    })?;
    if basket.client_id.is_some() && made_from.is_some() {
        basket.client_digest = made_from;
    }
    Ok(basket)
}

/// The fingerprint of a creation under the till's `clientId`: the record remembers the body
/// it was made from, so the same id with another body is refused.
fn made_from(fields: &Map<String, Value>, creating: bool) -> Option<String> {
    (creating && fields.contains_key("clientId")).then(|| fingerprint(fields))
}

/// What a refund (`refund`) of `payment` needs of it: a completed payment, not itself a
/// refund, its type and what other refunds have not yet given back.
fn refundable(state: &MerchantState, refund: i64, payment: i64) -> Result<Refundable, String> {
    let paid = state
        .find::<TransactionRecord>(payment)
        .filter(|t| t.completed && t.refund_of.is_none())
        .ok_or_else(|| format!("{payment} is not a completed payment of this merchant."))?;
    let own = state
        .find::<TransactionRecord>(refund)
        .filter(|t| t.refund_of == Some(payment))
        .map_or(0, |t| t.amount);
    let others = state.refunded.get(&payment).copied().unwrap_or(0) - own;
    Ok(Refundable {
        payment_type: paid.payment_type.clone(),
        left: paid.amount - others,
    })
}

/// Sale line → units the basket's return lines give back (none when it is deleted).
fn returns_of(basket: Option<&BasketRecord>) -> impl Iterator<Item = (i64, i64)> + '_ {
    basket
        .filter(|b| b.delete_date.is_none())
        .into_iter()
        .flat_map(|b| b.lines.iter())
        .filter_map(|l| l.return_of.map(|r| (r.line_id, -l.quantity)))
}

completing_sale! {
    BasketRecord: baskets, Kind::Basket,
    apply: apply_basket, new_children: basket::new_lines, children: lines,
    completes_as: "completed",
    moves: |basket| basket.lines.iter().filter(|l| l.restock || l.quantity > 0).map(|l| StockMove {
        store_id: basket.store_id,
        product_id: l.product_id,
        total: 0,
        sold: l.quantity,
        at: basket.complete_date.unwrap_or_default(),
        reason: if l.quantity > 0 { MoveReason::Sale } else { MoveReason::Return },
        source_id: basket.id,
    }),
    also: {
        /// The sale baskets its return lines name, to be at hand when they are history.
        fn referenced_baskets(fields: &Map<String, Value>) -> Vec<i64> {
            basket::returned_baskets(fields)
        }

        const CLIENT_IDS: bool = true;

        fn made_under(&self) -> Option<(&str, Option<&str>)> {
            Some((self.client_id.as_deref()?, self.client_digest.as_deref()))
        }

        fn reindex(state: &mut MerchantState, before: Option<&Self>, after: Option<&Self>) {
            index_client(state, before, after);
        }

        fn sales_totals(&self, before: Option<&Self>, state: &MerchantState, out: &mut Deltas) {
            if completes(self.completed, before.map(|b| b.completed)) {
                crate::till::session::sale_totals(state, self, out);
            }
        }

        fn keep_ledger(state: &mut MerchantState, before: Option<&Self>, after: Option<&Self>) {
            if let Some(basket) = after.filter(|a| completes(a.completed, before.map(|b| b.completed))) {
                crate::till::session::count_sale(state, basket);
            }
            let before: Vec<_> = returns_of(before).map(|(line, units)| (line, -units)).collect();
            for (line, units) in before.into_iter().chain(returns_of(after)) {
                let left = state.returned.get(&line).copied().unwrap_or(0) + units;
                if left == 0 {
                    state.returned.remove(&line);
                } else {
                    state.returned.insert(line, left);
                }
            }
        }
    }
}

impl Resource for TransactionRecord {
    sale_basics!(transactions, Kind::Transaction, |t| t.completed);

    fn write(self, w: Writing<'_>) -> Result<Self, Vec<String>> {
        let state = w.state;
        let till = |b| {
            let register = state.find::<BasketRecord>(b).and_then(|b| b.register_id);
            let session = register.and_then(|r| crate::till::session::open_session(state, r));
            (register, session)
        };
        let ctx = PaymentContext {
            basket_exists: &|b| state.find::<BasketRecord>(b).is_some(),
            refundable: &|refund, payment| refundable(state, refund, payment),
            any_type: state.sales.refund_to_other_types,
            till: &till,
            caller: w.input.caller,
        };
        let made_from = made_from(&w.input.fields, w.creating);
        let mut payment = self.apply(w.input.fields, &ctx, w.now, w.creating)?;
        if payment.client_id.is_some() && made_from.is_some() {
            payment.client_digest = made_from;
        }
        Ok(payment)
    }

    fn referenced_baskets(fields: &Map<String, Value>) -> Vec<i64> {
        basket_field(fields).into_iter().collect()
    }

    fn basket_id(&self) -> Option<i64> {
        Some(self.basket_id)
    }

    /// The payment a refund names, to be at hand when it is history.
    fn referenced_payments(fields: &Map<String, Value>) -> Vec<i64> {
        fields
            .get("refundOf")
            .and_then(Value::as_i64)
            .into_iter()
            .collect()
    }

    fn keep_ledger(state: &mut MerchantState, before: Option<&Self>, after: Option<&Self>) {
        crate::till::session::count_payment(state, before, after);
        let refund = |t: Option<&Self>, sign: i64| {
            t.filter(|t| t.delete_date.is_none())
                .and_then(|t| t.refund_of.map(|p| (p, sign * t.amount)))
        };
        for (payment, amount) in refund(before, -1).into_iter().chain(refund(after, 1)) {
            let total = state.refunded.get(&payment).copied().unwrap_or(0) + amount;
            if total == 0 {
                state.refunded.remove(&payment);
            } else {
                state.refunded.insert(payment, total);
            }
        }
    }

    /// Pending payments, and every payment of an open basket.
    fn is_open(&self, state: &MerchantState) -> bool {
        (!self.completed && self.delete_date.is_none())
            || state
                .find::<BasketRecord>(self.basket_id)
                .is_some_and(|b| !b.completed)
    }

    const CLIENT_IDS: bool = true;

    fn made_under(&self) -> Option<(&str, Option<&str>)> {
        Some((self.client_id.as_deref()?, self.client_digest.as_deref()))
    }

    fn reindex(state: &mut MerchantState, before: Option<&Self>, after: Option<&Self>) {
        index_client(state, before, after);
        let index = &mut state.index.transactions_by_basket;
        if let Some(before) = before {
            if let Some(ids) = index.get_mut(&before.basket_id) {
                ids.remove(&before.id);
                if ids.is_empty() {
                    index.remove(&before.basket_id);
                }
            }
        }
        if let Some(after) = after {
            index.entry(after.basket_id).or_default().insert(after.id);
        }
    }

    /// Payments belong to open baskets: a completed basket's payments are final.
    fn check(&self, state: &MerchantState) -> Result<(), Refusal> {
        match state.find::<BasketRecord>(self.basket_id) {
            Some(b) if b.completed => Err(Refusal::Locked(vec![format!(
                "Basket {} is completed and takes no more payments.",
                b.id
            )])),
            _ => Ok(()),
        }
    }
}

impl Resource for OrderRecord {
    sale_basics!(orders, Kind::Order, OrderRecord::is_completed);
    basket_child!(OrderRecord, |state| &OrderContext {
        basket: &|b| state
            .find::<BasketRecord>(b)
            .map(|b| (b.store_id, b.customer_id)),
        customer_exists: &|c| state.find::<CustomerRecord>(c).is_some(),
    });

    fn is_open(&self, _: &MerchantState) -> bool {
        !self.is_completed() && self.delete_date.is_none()
    }

    /// Orders are made from completed baskets only (112).
    fn check(&self, state: &MerchantState) -> Result<(), Refusal> {
        match state.find::<BasketRecord>(self.basket_id) {
            Some(b) if !b.completed => Err(Refusal::NotComplete(vec![format!(
                "basketId: basket {} is not completed; complete it first.",
                b.id
            )])),
            _ => Ok(()),
        }
    }
}

fn apply_invoice(base: InvoiceRecord, w: Writing<'_>) -> Result<InvoiceRecord, Vec<String>> {
    let (state, now) = (w.state, w.now);
    let store_exists = |id| state.find::<StoreRecord>(id).is_some();
    let supplier_exists = |id| state.find::<SupplierRecord>(id).is_some();
    let supplier_of_store = |id| state.find::<SupplierStoreRecord>(id).map(|s| s.supplier_id);
    let product_exists = |id| state.find::<ProductRecord>(id).is_some();
    let ctx = InvoiceContext {
        store_exists: &store_exists,
        supplier_exists: &supplier_exists,
        supplier_of_store: &supplier_of_store,
        product_exists: &product_exists,
    };
    base.apply(w.input.fields, w.ids, &ctx, now, w.creating)
}

completing_sale! {
    InvoiceRecord: invoices, Kind::Invoice,
    apply: apply_invoice, new_children: domain::stock::invoice::new_items, children: items,
    completes_as: "received",
    moves: |invoice| invoice.items.iter().map(|i| StockMove {
        store_id: invoice.store_id,
        product_id: i.product_id,
        total: i.quantity,
        sold: 0,
        at: invoice.complete_date.unwrap_or_default(),
        reason: MoveReason::Receipt,
        source_id: invoice.id,
    })
}
