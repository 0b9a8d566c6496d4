//! A basket priced with what the merchant's state knows: each line's rates from its price
//! instance and the merchant's `[sales]` settings, the promotions valid for the basket's store
//! at this moment (automatic ones and those it names), and the sale engine of `domain::sales::pricing`.

use rust_decimal::Decimal;
use serde_json::{Map, Value};

use crate::merchant::state::MerchantState;
use domain::catalogue::product::ProductRecord;
use domain::catalogue::promotion::PromotionRecord;
use domain::catalogue::store::StoreRecord;
use domain::customers::customer::CustomerRecord;
use domain::dates;
use domain::people::employee::EmployeeRecord;
use domain::sales::basket::{
    BasketContext, BasketLine, BasketRecord, BasketType, InstancePrice, ReturnOf, Returnable, Till,
};
use domain::sales::draft::Draft;
use domain::sales::payment::TransactionRecord;
use domain::sales::pricing::{self, LineTax, Offer, Receipt, SaleLine, SaleSettings};
use domain::Refusal;

/// Runs `f` with what basket rules need of the merchant at `now`.
pub fn with_context<T>(
    state: &MerchantState,
    now: i64,
    caller: i64,
    f: impl FnOnce(&BasketContext<'_>) -> T,
) -> T {
    let store_exists = |id| state.find::<StoreRecord>(id).is_some();
    let customer_exists = |id| state.find::<CustomerRecord>(id).is_some();
    let instance = |p, i| instance_of(state, p, i);
    let paid = |b| paid(state, b);
    let returnable = |b, r: &ReturnOf| returnable(state, b, r);
    let promotion = |b: &BasketRecord, id| check_promotion(state, b, id, now);
    let price = |b: &BasketRecord| price(state, b, now);
    let register = |id| crate::till::session::register_store(state, id);
    let open_session = |register| crate::till::session::open_session(state, register);
    let last_receipt = |register| crate::till::session::last_receipt(state, register);
    let employee_exists = |id| state.find::<EmployeeRecord>(id).is_some();
    f(&BasketContext {
        store_exists: &store_exists,
        customer_exists: &customer_exists,
        instance: &instance,
        paid: &paid,
        returnable: &returnable,
        promotion: &promotion,
        price: &price,
        rounding: state.sales.rounding,
        till: Till {
            register: &register,
            open_session: &open_session,
            last_receipt: &last_receipt,
            employee_exists: &employee_exists,
            caller,
            sessions_required: state.sales.sessions_required,
        },
    })
}

/// `POST /basket/calculate` for one basket: the receipt of `fields` written on a new basket, or
/// on the open basket their `id` names, without writing anything. A completed basket answers
/// the receipt completion recorded. Lines sent in the body carry their client key.
pub fn calculate(
    state: &MerchantState,
    mut fields: Map<String, Value>,
    now: i64,
) -> Result<Receipt, Refusal> {
    // Nothing is written: a calculation never completes a basket.
    fields.remove("completed");
    let keys = line_keys(&fields);
    let (base, creating) = match fields.remove("id") {
        None | Some(Value::Null) => (BasketRecord::new(0, now), true),
        Some(id) => {
            let basket = id
                .as_i64()
                .and_then(|id| state.entry::<BasketRecord>(id))
                .map(|e| e.record())
                .filter(|b| b.delete_date.is_none())
                .ok_or_else(|| {
                    Refusal::Invalid(vec![format!("id: {id} is not a basket of this merchant.")])
                })?;
            if basket.completed {
                return Ok(basket.receipt.clone().unwrap_or_default());
            }
            (basket.clone(), false)
        }
    };
    let mut ids = TEMPORARY_IDS..;
    let basket = with_context(state, now, 0, |ctx| {
        base.apply(fields, &mut ids, ctx, now, creating)
    })
    .map_err(Refusal::Invalid)?;
    let mut receipt = basket.receipt.unwrap_or_default();
    let mut fresh = TEMPORARY_IDS;
    for (key, id) in keys {
        let id = id.unwrap_or_else(|| {
            fresh += 1;
            fresh - 1
        });
        if let Some(line) = receipt.lines.iter_mut().find(|l| l.line_id == id) {
            line.key = Some(key);
            if id >= TEMPORARY_IDS {
                line.line_id = 0;
            }
        }
    }
    Ok(receipt)
}

/// [`calculate`] for a new basket in the common shape, built without the generic field rules;
/// `None` when any of its values breaks a rule (an unknown store, product or promotion, a
/// product with several instances, a quantity out of range), so the caller asks [`calculate`]
/// for the refusal and its message. Both build the same basket, so both price it alike.
pub fn calculate_draft(state: &MerchantState, draft: &Draft, now: i64) -> Option<Receipt> {
    state.find::<StoreRecord>(draft.store_id)?;
    let mut basket = BasketRecord::new(0, now);
    basket.store_id = draft.store_id;
    let mut lines = Vec::with_capacity(draft.basket_products.0.len());
    for (at, (_, line)) in (TEMPORARY_IDS..).zip(&draft.basket_products.0) {
        // `unsigned_abs`: `i64::MIN.abs()` overflows.
        if line.quantity == 0 || line.quantity.unsigned_abs() > domain::money::MAX_QUANTITY as u64 {
            return None;
        }
        let instance = instance_of(state, line.product_id, line.product_instance_id).ok()?;
        lines.push(BasketLine {
            id: at,
            basket_id: 0,
            product_id: instance.product_id,
            product_instance_id: instance.instance_id,
            quantity: line.quantity,
            price: instance.price,
            original_price: instance.price,
            tax_percentage: instance.tax_percentage,
            note: None,
            added_date: now,
            return_of: None,
            restock: true,
            client_id: None,
        });
    }
    basket.lines = lines;
    for id in draft.promotion_ids.iter().flatten() {
        check_promotion(state, &basket, *id, now).ok()?;
        if !basket.promotion_ids.contains(id) {
            basket.promotion_ids.push(*id);
        }
    }
    let mut receipt = price(state, &basket, now);
    for (line, (key, _)) in receipt.lines.iter_mut().zip(&draft.basket_products.0) {
        line.key = Some((*key).to_owned());
        line.line_id = 0;
    }
    Some(receipt)
}

/// Where a calculation numbers the lines it adds (never an id the merchant's records hold).
const TEMPORARY_IDS: i64 = 1 << 60;

/// The client key of each line in the body, with its id when it names one, in body order.
fn line_keys(fields: &Map<String, Value>) -> Vec<(String, Option<i64>)> {
    match fields.get("basketProducts") {
        Some(Value::Object(entries)) => entries
            .iter()
            .map(|(k, e)| (k.clone(), e.get("id").and_then(Value::as_i64)))
            .collect(),
        _ => Vec::new(),
    }
}

/// The price instance a basket line sells.
fn instance_of(
    state: &MerchantState,
    product_id: i64,
    wanted: Option<i64>,
) -> Result<InstancePrice, String> {
    let product = state
        .find::<ProductRecord>(product_id)
        .ok_or_else(|| format!("product {product_id} is not a product of this merchant."))?;
    let mut live = product.live_instances();
    let instance = match wanted {
        Some(id) => live
            .find(|i| i.id == id)
            .ok_or_else(|| format!("{id} is not a live instance of product {product_id}."))?,
        None => match (live.next(), live.next()) {
            (Some(only), None) => only,
            (None, _) => return Err(format!("product {product_id} has no price instance.")),
            (Some(_), Some(_)) => {
                return Err(format!(
                    "required: product {product_id} has several instances."
                ))
            }
        },
    };
    Ok(InstancePrice {
        product_id,
        instance_id: instance.id,
        price: instance.price,
        tax_percentage: instance.tax_percentage,
    })
}

/// Σ amount of a basket's completed payments, (cash, other). An open basket's payments are all
/// cached.
fn paid(state: &MerchantState, basket_id: i64) -> (i64, i64) {
    let Some(ids) = state.index.transactions_by_basket.get(&basket_id) else {
        return (0, 0);
    };
    ids.iter()
        .filter_map(|id| state.find::<TransactionRecord>(*id))
        .filter(|t| t.completed)
        .fold((0, 0), |(cash, other), t| {
            // A refund gives its amount back.
            let amount = if t.refund_of.is_some() {
                -t.amount
            } else {
                t.amount
            };
            if t.payment_type == "CASH" {
                (cash + amount, other)
            } else {
                (cash, other + amount)
            }
        })
}

/// The completed sale basket and its sold line a return names.
fn sale_line_of<'s>(
    state: &'s MerchantState,
    r: &ReturnOf,
) -> Result<(&'s BasketRecord, &'s BasketLine), String> {
    let sale = state
        .entry::<BasketRecord>(r.basket_id)
        .map(|e| e.record())
        .filter(|b| b.delete_date.is_none() && b.completed && b.basket_type == BasketType::Sale)
        .ok_or_else(|| {
            format!(
                "{} is not a completed sale basket of this merchant.",
                r.basket_id
            )
        })?;
    let line = sale
        .lines
        .iter()
        .find(|l| l.id == r.line_id && l.quantity > 0 && l.return_of.is_none())
        .ok_or_else(|| {
            format!(
                "{} is not a sold line of basket {}.",
                r.line_id, r.basket_id
            )
        })?;
    Ok((sale, line))
}

/// Units of sale line `line` given back by baskets other than `basket`.
fn returned_elsewhere(state: &MerchantState, basket: i64, line: i64) -> i64 {
    let own: i64 = state
        .entry::<BasketRecord>(basket)
        .map(|e| e.record())
        .filter(|b| b.delete_date.is_none())
        .map(|b| {
            b.lines
                .iter()
                .filter(|l| l.return_of.is_some_and(|r| r.line_id == line))
                .map(|l| -l.quantity)
                .sum()
        })
        .unwrap_or(0);
    state.returned.get(&line).copied().unwrap_or(0) - own
}

/// What a line of `basket` returning `r` needs of the sale line.
fn returnable(state: &MerchantState, basket: i64, r: &ReturnOf) -> Result<Returnable, String> {
    let (_, line) = sale_line_of(state, r)?;
    Ok(Returnable {
        instance: InstancePrice {
            product_id: line.product_id,
            instance_id: line.product_instance_id,
            price: line.original_price,
            tax_percentage: line.tax_percentage,
        },
        price: line.price,
        left: line.quantity - returned_elsewhere(state, basket, r.line_id),
    })
}

/// What a return line refunds: its share of what the sale line cost after discounts. Shares
/// are taken cumulatively (what all returns so far refund, less what the earlier ones did), so
/// returning every unit refunds exactly what the line was charged.
fn refund_share(state: &MerchantState, basket: i64, line: &BasketLine) -> Option<i64> {
    let r = line.return_of?;
    let (sale, sold) = sale_line_of(state, &r).ok()?;
    let net = sale
        .receipt
        .as_ref()?
        .lines
        .iter()
        .find(|l| l.line_id == sold.id)?
        .net;
    let before = returned_elsewhere(state, basket, r.line_id);
    let share = |units: i64| {
        state
            .sales
            .rounding
            .round(Decimal::from(net) * Decimal::from(units) / Decimal::from(sold.quantity))
    };
    Some(share(before) - share(before - line.quantity))
}

/// The basket's receipt at `now`.
pub fn price(state: &MerchantState, basket: &BasketRecord, now: i64) -> Receipt {
    let lines: Vec<SaleLine> = basket
        .lines
        .iter()
        .map(|l| sale_line(state, basket.id, l))
        .collect();
    let offers: Vec<Offer> = if basket.basket_type == BasketType::Sale {
        let weekday = weekday(state, basket.store_id, now);
        state
            .live::<PromotionRecord>()
            .filter(|p| p.automatic || basket.promotion_ids.contains(&p.id))
            .filter(|p| p.applies_to_sale(basket.store_id, now, weekday))
            .map(PromotionRecord::offer)
            .collect()
    } else {
        Vec::new()
    };
    pricing::calculate(&lines, &offers, &state.sales)
}

/// Why promotion `id` cannot be applied to `basket` by hand at `now`, if it cannot.
pub fn check_promotion(
    state: &MerchantState,
    basket: &BasketRecord,
    id: i64,
    now: i64,
) -> Result<(), String> {
    let promotion = state
        .find::<PromotionRecord>(id)
        .ok_or_else(|| format!("{id} is not a promotion of this merchant."))?;
    if promotion.applies_to_sale(basket.store_id, now, weekday(state, basket.store_id, now)) {
        Ok(())
    } else {
        Err(format!(
            "promotion {id} does not apply at store {} now (its dates, days or stores).",
            basket.store_id
        ))
    }
}

/// The day of the week at the store, 0 = Sunday.
fn weekday(state: &MerchantState, store_id: i64, now: i64) -> i64 {
    let zone = state
        .find::<StoreRecord>(store_id)
        .map_or("UTC", |s| s.timezone.as_str());
    dates::weekday(now, zone)
}

/// A basket line as the engine prices it. Instances are never edited and never forgotten, so
/// the line's rates are those of the instance it sold, even after the product changed.
fn sale_line(state: &MerchantState, basket: i64, line: &BasketLine) -> SaleLine {
    let product = state
        .entry::<ProductRecord>(line.product_id)
        .map(|e| e.record());
    let codes = product
        .and_then(|p| {
            p.instances
                .iter()
                .find(|i| i.id == line.product_instance_id)
        })
        .map_or(&[][..], |i| i.tax_codes.as_slice());
    SaleLine {
        id: line.id,
        product_id: line.product_id,
        category_ids: product.map(|p| p.category_ids.clone()).unwrap_or_default(),
        quantity: line.quantity,
        unit_price: line.price,
        taxes: line_taxes(&state.sales, codes, line),
        fixed_net: refund_share(state, basket, line),
    }
}

fn line_taxes(settings: &SaleSettings, codes: &[String], line: &BasketLine) -> Vec<LineTax> {
    if codes.is_empty() {
        return vec![LineTax {
            code: String::new(),
            rate: line.tax_percentage,
            included: settings.prices_include_tax,
        }];
    }
    codes
        .iter()
        .filter_map(|code| settings.tax(code))
        .map(|t| LineTax {
            code: t.code.clone(),
            rate: t.rate,
            included: t.included.unwrap_or(settings.prices_include_tax),
        })
        .collect()
}
