//! The sale engine: what a basket costs, as a receipt prints it. A pure function of the lines
//! (with their catalogue prices and rates), the promotions that may apply and the merchant's
//! settings — no I/O and no clock — so a till can run the same code offline. Every amount is
//! whole minor units; exact decimals live only inside one calculation (docs/money-and-tax.md).

mod exact;
mod offers;
mod settings;
mod tax;

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

pub use offers::Offer;
pub use settings::{Rounding, SaleSettings, TaxRate, TaxRounding};

/// A line as the engine prices it.
#[derive(Clone, Debug, PartialEq)]
pub struct SaleLine {
    pub id: i64,
    pub product_id: i64,
    pub category_ids: Vec<i64>,
    /// Negative for an unlinked refund line.
    pub quantity: i64,
    /// Minor units, possibly fractional (`"41.7"`).
    pub unit_price: Decimal,
    /// The rates the line carries, each saying whether the price includes it.
    pub taxes: Vec<LineTax>,
    /// A linked return's amount (negative), its share of what the sale line was charged; it
    /// takes no discount of its own.
    pub fixed_net: Option<i64>,
}

/// One rate of a line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineTax {
    /// The merchant's name for it (`GST`); empty for an instance's single `taxPercentage`.
    pub code: String,
    pub rate: Decimal,
    pub included: bool,
}

/// A line's amounts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LineAmounts {
    /// 0 for a line a calculation adds (it has no id yet).
    pub line_id: i64,
    /// The line's client key, in a calculation's answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Unit price × quantity, rounded.
    pub gross: i64,
    /// Its share of the basket's discounts.
    pub discount: i64,
    /// Gross − discount.
    pub net: i64,
    /// Its share of each rate's tax (included and added).
    pub tax: i64,
    /// Net + added tax: what the line costs the customer.
    pub total: i64,
}

/// A promotion's discount.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Discount {
    pub promotion_id: i64,
    pub amount: i64,
    /// The lines it is shared over, each with its share (same order as `shares`).
    pub line_ids: Vec<i64>,
    pub shares: Vec<i64>,
}

/// The tax of one rate over the basket.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaxAmount {
    pub code: String,
    pub rate: Decimal,
    pub included: bool,
    /// The amount the rate is charged on (net of tax).
    pub taxable: i64,
    pub tax: i64,
}

/// What paying the whole total in cash settles at.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cash {
    pub increment: i64,
    pub total: i64,
    /// Cash total − total (the books' rounding adjustment).
    pub rounding: i64,
}

/// A basket priced: what calculate answers and what completion records.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Receipt {
    pub lines: Vec<LineAmounts>,
    pub discounts: Vec<Discount>,
    pub taxes: Vec<TaxAmount>,
    /// Σ gross.
    pub subtotal: i64,
    /// Σ discounts.
    pub discount: i64,
    /// Σ tax of every rate.
    pub tax: i64,
    /// Σ tax of the rates added on.
    pub tax_added: i64,
    /// Subtotal − discount + added tax: what is due.
    pub total: i64,
    pub cash: Cash,
    /// Recorded at completion: the rounding the cash part of the payments settled with.
    pub cash_rounding: i64,
}

crate::json_cell!(Receipt, Receipt, "Receipt");

/// Prices `lines` under `settings`, applying `offers` (the promotions valid for this basket's
/// store and moment, automatic ones and those the basket names).
pub fn calculate(lines: &[SaleLine], offers: &[Offer], settings: &SaleSettings) -> Receipt {
    let mode = settings.rounding;
    let gross: Vec<i64> = lines
        .iter()
        .map(|l| {
            l.fixed_net
                .unwrap_or_else(|| mode.times(l.unit_price, l.quantity))
        })
        .collect();
    let discounts = offers::apply(lines, &gross, offers, mode);
    let mut line_discount = vec![0i64; lines.len()];
    for d in &discounts {
        for (id, share) in d.line_ids.iter().zip(&d.shares) {
            if let Some(i) = lines.iter().position(|l| l.id == *id) {
                line_discount[i] += share;
            }
        }
    }
    let net: Vec<i64> = gross
        .iter()
        .zip(&line_discount)
        .map(|(g, d)| g - d)
        .collect();
    let taxed = tax::compute(lines, &net, settings);
    let amounts: Vec<LineAmounts> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| LineAmounts {
            line_id: l.id,
            key: None,
            gross: gross[i],
            discount: line_discount[i],
            net: net[i],
            tax: taxed.line_tax[i],
            total: net[i] + taxed.line_added[i],
        })
        .collect();
    let subtotal = gross.iter().sum();
    let discount = line_discount.iter().sum::<i64>();
    let tax = taxed.rates.iter().map(|t| t.tax).sum();
    let tax_added = taxed
        .rates
        .iter()
        .filter(|t| !t.included)
        .map(|t| t.tax)
        .sum();
    let total = subtotal - discount + tax_added;
    let cash_total = cash_round(total, settings.cash_increment, mode);
    Receipt {
        lines: amounts,
        discounts,
        taxes: taxed.rates,
        subtotal,
        discount,
        tax,
        tax_added,
        total,
        cash: Cash {
            increment: settings.cash_increment,
            total: cash_total,
            rounding: cash_total - total,
        },
        cash_rounding: 0,
    }
}

/// `amount` to the nearest multiple of `increment`.
pub fn cash_round(amount: i64, increment: i64, mode: Rounding) -> i64 {
    if increment <= 1 {
        return amount;
    }
    mode.round(Decimal::from(amount) / Decimal::from(increment)) * increment
}

impl Receipt {
    /// What the payments must reach when `cash` of them is cash and `other` is not: the part
    /// left after the other payments is cash-rounded when cash pays it. The rounding is the
    /// second value.
    pub fn due(&self, cash: i64, other: i64, mode: Rounding) -> (i64, i64) {
        let left = self.total - other;
        if cash <= 0 || left <= 0 {
            return (self.total, 0);
        }
        let rounded = cash_round(left, self.cash.increment, mode);
        (other + rounded, rounded - left)
    }
}

/// Splits `total` into whole units in proportion to `exact` (which sums to about `total`): each
/// share is its exact value's floor, and the units left go to the largest remainders, earliest
/// first. The shares always sum to `total`.
pub fn apportion(exact: &[Decimal], total: i64) -> Vec<i64> {
    let mut shares = Vec::with_capacity(exact.len());
    let mut remainders = Vec::with_capacity(exact.len());
    for e in exact {
        let floor = e.floor();
        shares.push(i64::try_from(floor).unwrap_or(0));
        remainders.push(*e - floor);
    }
    share_out(shares, &remainders, total)
}

/// Gives the units `total` holds beyond Σ `shares` (the floors of exact amounts) to the
/// largest `remainders`, earliest first; the shares then sum to `total`.
fn share_out<R: Ord>(mut shares: Vec<i64>, remainders: &[R], total: i64) -> Vec<i64> {
    let mut left = total - shares.iter().sum::<i64>();
    if left == 0 {
        return shares;
    }
    if shares.is_empty() {
        return shares;
    }
    let mut order: Vec<usize> = (0..shares.len()).collect();
    order.sort_by(|a, b| remainders[*b].cmp(&remainders[*a]).then(a.cmp(b)));
    // `left` is in [0, n] when `total` rounds Σ exact; anything beyond (a total clamped far
    // from its exact sum) is spread round-robin: whole rounds to every share at once, then one
    // more to the first in order.
    let n = i64::try_from(order.len()).unwrap_or(i64::MAX);
    let (rounds, rest) = (left / n, left % n);
    for share in &mut shares {
        *share += rounds;
    }
    left = rest;
    for at in order {
        if left == 0 {
            break;
        }
        let step = left.signum();
        shares[at] += step;
        left -= step;
    }
    shares
}

#[cfg(test)]
mod receipts;

#[cfg(test)]
mod props;
