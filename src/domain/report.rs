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

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

use super::store::DEFAULT_TIMEZONE;

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
    /// Σ amount by payment type, in minor units.
    pub payments: BTreeMap<String, i64>,
}

impl Totals {
    fn add(&mut self, other: &Totals) {
        self.basket_count += other.basket_count;
        self.item_count += other.item_count;
        self.gross += other.gross;
        self.tax += other.tax;
        self.tips += other.tips;
        self.refunds += other.refunds;
        for (kind, n) in &other.payments {
            *self.payments.entry(kind.clone()).or_default() += n;
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
}

#[derive(Clone, Debug)]
pub struct LineRow {
    pub basket_id: i64,
    pub product_id: i64,
    pub quantity: i64,
    pub price: Decimal,
}

#[derive(Clone, Debug)]
pub struct PaymentRow {
    pub basket_id: i64,
    pub payment_type: String,
    pub amount: i64,
    pub tip: i64,
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
                let t = Totals {
                    basket_count: 1,
                    gross: b.total,
                    tax: b.total_tax,
                    ..Totals::default()
                };
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    /// Three baskets at two stores (one a refund), their lines (one of a basket outside the
    /// range) and payments, and the stores' timezones.
    pub(crate) fn shop() -> BasketReport {
        // 2026-03-28 23:30 UTC is already the 29th in Tokyo, still the 28th in London.
        let late = 1_774_740_600_000;
        let baskets = [
            BasketRow {
                id: 1,
                store_id: 9,
                complete_date: late,
                total: d("0.3"),
                total_tax: d("0.05"),
            },
            BasketRow {
                id: 2,
                store_id: 9,
                complete_date: late,
                total: d("-0.1"),
                total_tax: d("-0.0167"),
            },
            BasketRow {
                id: 3,
                store_id: 10,
                complete_date: late,
                total: d("0.2"),
                total_tax: d("0"),
            },
        ];
        let lines = [
            LineRow {
                basket_id: 1,
                product_id: 5,
                quantity: 3,
                price: d("0.1"),
            },
            LineRow {
                basket_id: 2,
                product_id: 5,
                quantity: -1,
                price: d("0.1"),
            },
            LineRow {
                basket_id: 3,
                product_id: 6,
                quantity: 2,
                price: d("0.1"),
            },
            LineRow {
                basket_id: 99,
                product_id: 6,
                quantity: 2,
                price: d("1"),
            },
        ];
        let payments = [
            PaymentRow {
                basket_id: 1,
                payment_type: "CASH".into(),
                amount: 1,
                tip: 2,
            },
            PaymentRow {
                basket_id: 3,
                payment_type: "CARD".into(),
                amount: 1,
                tip: 0,
            },
        ];
        let zones = HashMap::from([
            (9, "Europe/London".to_owned()),
            (10, "Asia/Tokyo".to_owned()),
        ]);
        BasketReport::from_rows(&baskets, &lines, &payments, &zones)
    }
}
