//! An offline sale recorded against the merchant's state (docs/offline.md). A sale that
//! happened is never refused for what the till could not know: a price changed since, a
//! product deleted since, a promotion that no longer applies, stock short, a session closed
//! meanwhile. Each becomes a warning on the basket. What is refused is what the till did know:
//! ids that are not this merchant's, a session of another register.

use std::collections::BTreeMap;

use crate::merchant::state::MerchantState;
use domain::catalogue::product::ProductRecord;
use domain::catalogue::promotion::PromotionRecord;
use domain::catalogue::store::StoreRecord;
use domain::customers::customer::CustomerRecord;
use domain::money;
use domain::offline::sync::{OfflineLine, OfflineSale, Shortfall, SyncWarnings};
use domain::people::employee::EmployeeRecord;
use domain::sales::basket::{BasketLine, BasketRecord};
use domain::sales::payment::TransactionRecord;
use domain::till::register::RegisterRecord;
use domain::till::session::SessionRecord;

/// A sale ready to be accepted: its payments first, then the completed basket.
pub struct Recorded {
    pub basket: BasketRecord,
    pub payments: Vec<TransactionRecord>,
    pub shortfalls: Vec<Shortfall>,
}

/// New identifiers one sale takes: its basket, its lines and its payments.
pub fn ids_needed(sale: &OfflineSale) -> usize {
    1 + sale.lines.len() + sale.payments.len()
}

/// Records `sale` against `state` as it is now (arrival `now`), or says which of its ids are
/// not this merchant's.
pub fn record(
    state: &MerchantState,
    sale: &OfflineSale,
    ids: &mut dyn Iterator<Item = i64>,
    now: i64,
    caller: i64,
) -> Result<Recorded, Vec<String>> {
    let mut problems = Vec::new();
    let mut warnings = SyncWarnings::default();
    let mut basket = BasketRecord::new(ids.next().unwrap_or(0), sale.occurred_at);
    references(
        state,
        sale,
        &mut basket,
        &mut warnings,
        &mut problems,
        caller,
    );
    let at = sale.occurred_at;
    for (key, line) in &sale.lines {
        match sold_line(state, basket.id, line, ids.next().unwrap_or(0), at) {
            Ok((sold, changed)) => {
                for (code, detail) in changed {
                    warnings.push(code, Some(key), detail);
                }
                basket.lines.push(sold);
            }
            Err(why) => problems.push(format!("basketProducts.{key}.{why}")),
        }
    }
    for id in &sale.promotion_ids {
        match state.entry::<PromotionRecord>(*id) {
            None => problems.push(format!(
                "promotionIds: {id} is not a promotion of this merchant."
            )),
            Some(_) => match crate::sales::pricing::check_promotion(state, &basket, *id, at) {
                Ok(()) => basket.promotion_ids.push(*id),
                Err(why) => warnings.push("promotionNotApplied", None, why),
            },
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let mut receipt = crate::sales::pricing::price(state, &basket, at);
    let payments = payments(sale, &basket, ids, at);
    let (cash, other) = payments
        .iter()
        .fold((0, 0), |(c, o), p| match p.payment_type.as_str() {
            "CASH" => (c + p.amount, o),
            _ => (c, o + p.amount),
        });
    let (due, rounding) = receipt.due(cash, other, state.sales.rounding);
    if cash + other < due {
        let detail = format!("the payments cover {} of {due}.", cash + other);
        warnings.push("underpaid", None, detail);
    }
    receipt.cash_rounding = rounding;
    basket.receipt = Some(receipt);
    let shortfalls = shortfalls(state, &basket);
    for s in &shortfalls {
        let detail = format!(
            "product {} at store {}: {} short, {} left.",
            s.product_id, s.store_id, s.short, s.level
        );
        warnings.push("stockShortfall", None, detail);
    }
    basket.client_id = Some(sale.client_id.clone());
    basket.client_digest = Some(sale.fingerprint.digest.clone());
    basket.occurred_at = Some(at);
    basket.sync_date = Some(now);
    basket.completed = true;
    basket.complete_date = Some(at);
    basket.sync_warnings = (!warnings.0.is_empty()).then_some(warnings);
    Ok(Recorded {
        basket,
        payments,
        shortfalls,
    })
}

/// The store, register, session, employee and customer a sale names. A session closed since
/// still takes the sale (it shows on the session's supplementary report); a register's open
/// session takes a sale that names none.
fn references(
    state: &MerchantState,
    sale: &OfflineSale,
    basket: &mut BasketRecord,
    warnings: &mut SyncWarnings,
    problems: &mut Vec<String>,
    caller: i64,
) {
    let not_ours =
        |field: &str, id: i64, what: &str| format!("{field}: {id} is not {what} of this merchant.");
    if state.entry::<StoreRecord>(sale.store_id).is_none() {
        problems.push(not_ours("storeId", sale.store_id, "a store"));
    }
    basket.store_id = sale.store_id;
    if let Some(register) = sale.register_id {
        match state.entry::<RegisterRecord>(register) {
            Some(r) if r.store_id == sale.store_id => basket.register_id = Some(register),
            Some(r) => problems.push(format!(
                "registerId: register {register} is at store {}, not the sale's store.",
                r.store_id
            )),
            None => problems.push(not_ours("registerId", register, "a register")),
        }
        basket.session_id = match sale.session_id {
            None => crate::till::session::open_session(state, register),
            Some(session) => match state.entry::<SessionRecord>(session) {
                Some(s) if s.register_id != register => {
                    problems.push(format!(
                        "sessionId: session {session} is not a session of register {register}."
                    ));
                    None
                }
                Some(s) => {
                    if s.closed {
                        let detail = format!(
                            "session {session} closed before the sale arrived; it is on the session's supplementary report."
                        );
                        warnings.push("sessionClosed", None, detail);
                    }
                    Some(session)
                }
                None => {
                    problems.push(not_ours("sessionId", session, "a session"));
                    None
                }
            },
        };
        basket.receipt_number = Some(crate::till::session::last_receipt(state, register) + 1);
    }
    match sale.employee_id {
        Some(e) if state.entry::<EmployeeRecord>(e).is_none() => {
            problems.push(not_ours("employeeId", e, "an employee"))
        }
        Some(e) => basket.employee_id = Some(e),
        None => basket.employee_id = (caller != 0).then_some(caller),
    }
    match sale.customer_id {
        Some(c) if state.entry::<CustomerRecord>(c).is_none() => {
            problems.push(not_ours("customerId", c, "a customer"))
        }
        customer => basket.customer_id = customer,
    }
    basket.note = sale.note.clone();
}

/// What changed since the till sold a line: `(warning code, detail)`.
type Changed = Vec<(&'static str, String)>;

/// A sold line at the till's price, with what changed since (`(code, detail)`); `Err` when
/// its product or instance is not the merchant's.
fn sold_line(
    state: &MerchantState,
    basket_id: i64,
    line: &OfflineLine,
    id: i64,
    at: i64,
) -> Result<(BasketLine, Changed), String> {
    let product_id = line.product_id;
    let product = state
        .entry::<ProductRecord>(product_id)
        .map(|e| e.record())
        .ok_or_else(|| format!("productId: {product_id} is not a product of this merchant."))?;
    let mut changed = Vec::new();
    if product.delete_date.is_some() {
        changed.push((
            "productDeleted",
            format!("product {product_id} was deleted since."),
        ));
    }
    let instance = match line.product_instance_id {
        // Instances are never forgotten: the one the till sold is found even if retired.
        Some(wanted) => product
            .instances
            .iter()
            .find(|i| i.id == wanted)
            .ok_or_else(|| {
                format!("productInstanceId: {wanted} is not an instance of product {product_id}.")
            })?,
        None => {
            let mut live = product.live_instances();
            match (live.next(), live.next(), product.instances.first()) {
                (Some(only), None, _) => only,
                (None, _, Some(first)) if product.instances.len() == 1 => first,
                _ => {
                    return Err(format!(
                        "productInstanceId: required: product {product_id} has several instances (or none)."
                    ))
                }
            }
        }
    };
    let price = line.price.unwrap_or(instance.price);
    // A price changes by a new instance replacing the old: the price now is the product's one
    // live instance's (else the instance sold).
    let mut live = product.live_instances();
    let now = match (live.next(), live.next()) {
        (Some(only), None) => only.price,
        _ => instance.price,
    };
    if price != now {
        changed.push((
            "priceChanged",
            format!(
                "sold at {} where the price is now {}.",
                money::text(&price),
                money::text(&now)
            ),
        ));
    }
    Ok((
        BasketLine {
            id,
            basket_id,
            product_id,
            product_instance_id: instance.id,
            quantity: line.quantity,
            price,
            original_price: instance.price,
            tax_percentage: instance.tax_percentage,
            note: line.note.clone(),
            added_date: at,
            return_of: None,
            restock: true,
            client_id: None,
        },
        changed,
    ))
}

/// The sale's payments, completed at its time of sale in its till session.
fn payments(
    sale: &OfflineSale,
    basket: &BasketRecord,
    ids: &mut dyn Iterator<Item = i64>,
    at: i64,
) -> Vec<TransactionRecord> {
    sale.payments
        .iter()
        .map(|(_, p)| {
            let mut t = TransactionRecord::new(ids.next().unwrap_or(0), at);
            t.basket_id = basket.id;
            t.payment_type = p.payment_type.clone();
            t.amount = p.amount;
            t.tip = p.tip;
            t.register_id = basket.register_id;
            t.session_id = basket.session_id;
            t.employee_id = basket.employee_id;
            t.completed = true;
            t.complete_date = Some(at);
            t.occurred_at = Some(at);
            t
        })
        .collect()
}

/// Products this sale takes more of than the store has left (stock goes negative).
fn shortfalls(state: &MerchantState, basket: &BasketRecord) -> Vec<Shortfall> {
    let mut sold: BTreeMap<i64, i64> = BTreeMap::new();
    for line in basket.lines.iter().filter(|l| l.quantity > 0) {
        *sold.entry(line.product_id).or_default() += line.quantity;
    }
    sold.into_iter()
        .filter_map(|(product_id, quantity)| {
            let left = state.stock_level(basket.store_id, product_id).left();
            let after = left - quantity;
            (after < 0).then(|| Shortfall {
                store_id: basket.store_id,
                product_id,
                basket_id: basket.id,
                short: quantity.min(-after),
                level: after,
            })
        })
        .collect()
}
