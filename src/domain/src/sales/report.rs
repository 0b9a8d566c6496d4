//! The basket report (api-reference.md Reports; examples §2.15), read from the database, not the
//! actor caches. Indexed queries select the completed `sale` baskets of the range
//! (`baskets_store_completed`, or `baskets_completed` over every store) with their lines and
//! completed payments; the sums are taken here with exact decimals, as money is decimal text.
//!
//! What the figures mean, where the documents are silent: every line counts with its sign, so a
//! refund (a line with a negative quantity) lowers `itemCount`, `grossTotal`, `taxTotal` and
//! its product's `quantity` and `gross` — the report adds up the baskets' own `total` and
//! `totalTax` and agrees with `stockSold`. `refundTotal` is how much of that was refunded: the
//! positive sum of −(price × quantity) over the negative lines. `netTotal` = gross − tax;
//! `payments` sums `amount` (tips apart, in `tipTotal`; a linked refund's amount counts
//! negative) of completed, undeleted transactions by type. Days are local days of each store's
//! timezone. `stores` and `days` list only stores and days with baskets.
//!
//! The sale engine's figures come from each basket's frozen receipt (a basket completed before
//! the engine has none and adds nothing to them): discounts in all and per promotion, tax per
//! rate with its taxable amount, and the cash rounding. Refunds are reported apart by kind:
//! `linkedRefundTotal` for lines naming the sale line they return, `unlinkedRefundTotal` for the
//! bare negative lines kept for compatibility, and `refundPayments` for linked refund
//! transactions by type (already counted negative in `payments`).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::Deserialize;

use crate::catalogue::store::DEFAULT_TIMEZONE;
use crate::sales::pricing::{Discount, TaxAmount};

/// What a basket report covers: a merchant's completed sale baskets in `[from, to)` (epoch
/// milliseconds), at `stores` when given, else at every store.
#[derive(Clone, Copy, Debug)]
pub struct ReportRange<'a> {
    pub merchant_id: i64,
    pub from: i64,
    pub to: i64,
    pub stores: Option<&'a BTreeSet<i64>>,
}

/// The figures of one group of baskets.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Totals {
    pub basket_count: i64,
    pub item_count: i64,
    pub gross: Decimal,
    pub tax: Decimal,
    pub tips: i64,
    pub refunds: Decimal,
    /// The part of `refunds` from lines naming the sale line they return.
    pub linked_refunds: Decimal,
    /// Σ amount by payment type, in minor units.
    pub payments: BTreeMap<String, i64>,
    /// Σ amount of linked refund transactions by payment type (positive).
    pub refund_payments: BTreeMap<String, i64>,
    /// Σ discounts of the receipts.
    pub discount: i64,
    /// Σ cash rounding adjustments of the receipts.
    pub cash_rounding: i64,
    /// Tax per rate, keyed by the rate's code, or by the rate itself (`0.2`) when it has none.
    pub taxes: BTreeMap<String, RateTotals>,
    /// Discounts per promotion id.
    pub promotions: BTreeMap<i64, PromotionTotals>,
}

/// One tax rate's figures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RateTotals {
    pub code: String,
    pub rate: Decimal,
    pub included: bool,
    pub taxable: i64,
    pub tax: i64,
}

/// One promotion's figures: the baskets it discounted and by how much.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PromotionTotals {
    pub basket_count: i64,
    pub discount: i64,
}

/// What a basket's frozen receipt adds to the report; the stored JSON is the receipt's, the
/// lines are skipped.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ReceiptFigures {
    pub discounts: Vec<Discount>,
    pub taxes: Vec<TaxAmount>,
    pub discount: i64,
    pub cash_rounding: i64,
}

impl Totals {
    fn add(&mut self, other: &Totals) {
        self.basket_count += other.basket_count;
        self.item_count += other.item_count;
        self.gross += other.gross;
        self.tax += other.tax;
        self.tips += other.tips;
        self.refunds += other.refunds;
        self.linked_refunds += other.linked_refunds;
        for (kind, n) in &other.payments {
            *self.payments.entry(kind.clone()).or_default() += n;
        }
        for (kind, n) in &other.refund_payments {
            *self.refund_payments.entry(kind.clone()).or_default() += n;
        }
        self.discount += other.discount;
        self.cash_rounding += other.cash_rounding;
        for (key, r) in &other.taxes {
            self.add_rate(key.clone(), &r.code, r.rate, r.included, (r.taxable, r.tax));
        }
        for (id, p) in &other.promotions {
            let sum = self.promotions.entry(*id).or_default();
            sum.basket_count += p.basket_count;
            sum.discount += p.discount;
        }
    }

    /// Adds (taxable, tax) to the rate under `key`.
    fn add_rate(
        &mut self,
        key: String,
        code: &str,
        rate: Decimal,
        included: bool,
        (taxable, tax): (i64, i64),
    ) {
        let sum = self.taxes.entry(key).or_insert_with(|| RateTotals {
            code: code.to_owned(),
            rate,
            included,
            ..RateTotals::default()
        });
        sum.taxable += taxable;
        sum.tax += tax;
    }

    /// The figures of one receipt.
    fn add_receipt(&mut self, receipt: &ReceiptFigures) {
        self.discount += receipt.discount;
        self.cash_rounding += receipt.cash_rounding;
        for t in &receipt.taxes {
            let key = if t.code.is_empty() {
                t.rate.normalize().to_string()
            } else {
                t.code.clone()
            };
            self.add_rate(key, &t.code, t.rate, t.included, (t.taxable, t.tax));
        }
        for d in &receipt.discounts {
            let sum = self.promotions.entry(d.promotion_id).or_default();
            sum.basket_count += 1;
            sum.discount += d.amount;
        }
    }
}

/// A product's units and takings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProductTotals {
    pub quantity: i64,
    pub gross: Decimal,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct BasketReport {
    pub summary: Totals,
    pub stores: BTreeMap<i64, Totals>,
    /// Store → local day (`YYYY-MM-DD`) → figures.
    pub days: BTreeMap<i64, BTreeMap<String, Totals>>,
    pub products: BTreeMap<i64, ProductTotals>,
}

/// One completed sale basket of the range.
#[derive(Clone, Debug)]
pub struct BasketRow {
    pub id: i64,
    pub store_id: i64,
    pub complete_date: i64,
    pub total: Decimal,
    pub total_tax: Decimal,
    /// None for a basket completed before the sale engine.
    pub receipt: Option<ReceiptFigures>,
}

#[derive(Clone, Debug)]
pub struct LineRow {
    pub basket_id: i64,
    pub product_id: i64,
    pub quantity: i64,
    pub price: Decimal,
    /// The line names the sale line it returns (`returnOf`).
    pub linked: bool,
}

#[derive(Clone, Debug)]
pub struct PaymentRow {
    pub basket_id: i64,
    pub payment_type: String,
    /// Negative for a linked refund.
    pub amount: i64,
    pub tip: i64,
    /// A transaction refunding a payment (`refundOf`).
    pub refund: bool,
}

/// The local day of an instant in a store's timezone.
fn local_day(millis: i64, tz: chrono_tz::Tz) -> String {
    DateTime::<Utc>::from_timestamp_millis(millis)
        .map(|t| t.with_timezone(&tz).format("%Y-%m-%d").to_string())
        .unwrap_or_default()
}

impl BasketReport {
    /// Sums the rows. Lines and payments of baskets outside `baskets` are ignored (a basket
    /// completed between the queries).
    pub fn from_rows(
        baskets: &[BasketRow],
        lines: &[LineRow],
        payments: &[PaymentRow],
        timezones: &HashMap<i64, String>,
    ) -> Self {
        let mut per_basket: HashMap<i64, Totals> = baskets
            .iter()
            .map(|b| {
                let mut t = Totals {
                    basket_count: 1,
                    gross: b.total,
                    tax: b.total_tax,
                    ..Totals::default()
                };
                if let Some(receipt) = &b.receipt {
                    t.add_receipt(receipt);
                }
                (b.id, t)
            })
            .collect();
        let mut report = BasketReport::default();
        for l in lines {
            let Some(t) = per_basket.get_mut(&l.basket_id) else {
                continue;
            };
            let line_gross = l.price * Decimal::from(l.quantity);
            t.item_count += l.quantity;
            if l.quantity < 0 {
                t.refunds -= line_gross;
                if l.linked {
                    t.linked_refunds -= line_gross;
                }
            }
            let p = report.products.entry(l.product_id).or_default();
            p.quantity += l.quantity;
            p.gross += line_gross;
        }
        for p in payments {
            let Some(t) = per_basket.get_mut(&p.basket_id) else {
                continue;
            };
            *t.payments.entry(p.payment_type.clone()).or_default() += p.amount;
            if p.refund {
                *t.refund_payments.entry(p.payment_type.clone()).or_default() -= p.amount;
            }
            t.tips += p.tip;
        }
        for b in baskets {
            let Some(t) = per_basket.remove(&b.id) else {
                continue;
            };
            let tz = timezones
                .get(&b.store_id)
                .and_then(|name| name.parse().ok())
                .or_else(|| DEFAULT_TIMEZONE.parse().ok())
                .unwrap_or(chrono_tz::UTC);
            report.summary.add(&t);
            report.stores.entry(b.store_id).or_default().add(&t);
            report
                .days
                .entry(b.store_id)
                .or_default()
                .entry(local_day(b.complete_date, tz))
                .or_default()
                .add(&t);
        }
        report
    }
}
