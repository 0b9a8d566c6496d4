//! Running totals of sales (issue 23, docs/sales-report.md): what each completed sale basket
//! adds to the rows `GET /report/sales` sums, by the store's local day and local hour. The rows
//! are updated in the completing transaction, so a report is exact and costs what the range
//! holds, never what the history holds.

use std::collections::BTreeMap;

use chrono::{NaiveDate, TimeZone, Timelike};

use crate::sales::basket::{BasketRecord, BasketType};
use crate::sales::payment::TransactionRecord;

/// What a row counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dimension {
    /// Baskets, by register and employee (`item` is empty).
    Sale,
    /// Lines, by product id.
    Product,
    /// Lines, by category id ("0": none).
    Category,
    /// Payments less refunds, by payment type.
    Payment,
    /// Taxable amount and tax, by tax code.
    Tax,
}

impl Dimension {
    pub const ALL: [Dimension; 5] = [
        Dimension::Sale,
        Dimension::Product,
        Dimension::Category,
        Dimension::Payment,
        Dimension::Tax,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Dimension::Sale => "sale",
            Dimension::Product => "product",
            Dimension::Category => "category",
            Dimension::Payment => "payment",
            Dimension::Tax => "tax",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.as_str() == s)
    }
}

/// Which row a sale adds to.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TotalsKey {
    /// Hourly rows beside daily ones: a day's report reads 24 times fewer.
    pub hourly: bool,
    pub dimension: Dimension,
    /// The store's local day (days since 1970-01-01), or local hour (day × 24 + hour).
    pub bucket: i64,
    pub store_id: i64,
    pub item: String,
    /// Sale rows only (0 elsewhere, and for a basket with none).
    pub register_id: i64,
    pub employee_id: i64,
}

/// What a row holds. Amounts are minor units; returns count negative.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub count: i64,
    pub quantity: i64,
    pub amount: i64,
    pub tax: i64,
    pub discount: i64,
}

impl Totals {
    pub fn add(&mut self, other: &Totals) {
        self.count += other.count;
        self.quantity += other.quantity;
        self.amount += other.amount;
        self.tax += other.tax;
        self.discount += other.discount;
    }
}

/// What a report reads: one dimension of one merchant's rows over `[from, to)` buckets.
pub struct TotalsRange<'a> {
    pub merchant_id: i64,
    pub hourly: bool,
    pub dimension: Dimension,
    pub from: i64,
    pub to: i64,
    pub stores: Option<&'a [i64]>,
    /// The column the rows are summed by within each bucket.
    pub by: GroupColumn,
}

/// What a report groups the rows of a bucket by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupColumn {
    Store,
    Register,
    Employee,
    /// The row's own key (a product, category, payment type or tax code).
    Item,
}

/// Rows and what to add to each, merged by row.
pub type Deltas = BTreeMap<TotalsKey, Totals>;

/// The local day and hour of `millis` in the IANA zone `tz` (UTC when unknown): days since
/// 1970-01-01 and day × 24 + hour, as the store's clock on the wall reads.
pub fn local_bucket(millis: i64, tz: &str) -> (i64, i64) {
    let zone: chrono_tz::Tz = tz.parse().unwrap_or(chrono_tz::UTC);
    let Some(local) = zone.timestamp_millis_opt(millis).single() else {
        return (millis.div_euclid(86_400_000), millis.div_euclid(3_600_000));
    };
    let naive = local.naive_local();
    let day = (naive.date() - epoch()).num_days();
    (day, day * 24 + i64::from(naive.hour()))
}

fn epoch() -> NaiveDate {
    NaiveDate::from_ymd_opt(1970, 1, 1).unwrap_or_default()
}

/// A day number as its date (`2026-11-27`).
pub fn day_text(day: i64) -> String {
    (epoch() + chrono::Duration::days(day))
        .format("%Y-%m-%d")
        .to_string()
}

/// A date (`2026-11-27`) as its day number.
pub fn day_of(text: &str) -> Option<i64> {
    NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d")
        .ok()
        .map(|d| (d - epoch()).num_days())
}

/// A local wall-clock time as a report's range names it (`2026-11-27` or
/// `2026-11-27 14:00:00`): its local hour (day × 24 + hour), whole hours only.
pub fn local_hour_of(text: &str) -> Result<i64, String> {
    let text = text.trim();
    if let Some(day) = day_of(text) {
        return Ok(day * 24);
    }
    let at = chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S").map_err(|_| {
        format!("\"{text}\" is not a local date (2026-11-27) or hour (2026-11-27 14:00:00).")
    })?;
    if at.minute() != 0 || at.second() != 0 {
        return Err(format!("\"{text}\" is not a whole hour."));
    }
    let day = (at.date() - epoch()).num_days();
    Ok(day * 24 + i64::from(at.hour()))
}

/// A local hour number as a report names its bucket: `2026-11-27T14`.
pub fn hour_text(hour: i64) -> String {
    format!(
        "{}T{:02}",
        day_text(hour.div_euclid(24)),
        hour.rem_euclid(24)
    )
}

/// What a completed sale basket adds, daily and hourly, at its store's local `(day, hour)`.
/// Wastage and open baskets add nothing.
pub fn sale_deltas<'a>(
    basket: &BasketRecord,
    payments: impl IntoIterator<Item = &'a TransactionRecord>,
    categories: &dyn Fn(i64) -> Vec<i64>,
    (day, hour): (i64, i64),
    out: &mut Deltas,
) {
    let Some(receipt) = basket.receipt.as_ref().filter(|_| basket.completed) else {
        return;
    };
    if basket.basket_type != BasketType::Sale {
        return;
    }
    let mut rows: Vec<(Dimension, String, i64, i64, Totals)> = Vec::new();
    let units: i64 = basket.lines.iter().map(|l| l.quantity).sum();
    let (register, employee) = (
        basket.register_id.unwrap_or(0),
        basket.employee_id.unwrap_or(0),
    );
    rows.push((
        Dimension::Sale,
        String::new(),
        register,
        employee,
        Totals {
            count: 1,
            quantity: units,
            amount: receipt.total,
            tax: receipt.tax,
            discount: receipt.discount,
        },
    ));
    for (line, amounts) in basket.lines.iter().zip(&receipt.lines) {
        let t = Totals {
            count: 1,
            quantity: line.quantity,
            amount: amounts.total,
            tax: amounts.tax,
            discount: amounts.discount,
        };
        rows.push((Dimension::Product, line.product_id.to_string(), 0, 0, t));
        let mut ids = categories(line.product_id);
        if ids.is_empty() {
            ids.push(0);
        }
        for c in ids {
            rows.push((Dimension::Category, c.to_string(), 0, 0, t));
        }
    }
    for tax in &receipt.taxes {
        let t = Totals {
            count: 1,
            amount: tax.taxable,
            tax: tax.tax,
            ..Totals::default()
        };
        rows.push((Dimension::Tax, tax.code.clone(), 0, 0, t));
    }
    for p in payments.into_iter().filter(|p| p.completed) {
        let sign = if p.refund_of.is_some() { -1 } else { 1 };
        let t = Totals {
            count: 1,
            amount: sign * p.amount,
            ..Totals::default()
        };
        rows.push((Dimension::Payment, p.payment_type.clone(), 0, 0, t));
    }
    for (dimension, item, register_id, employee_id, totals) in rows {
        for (hourly, bucket) in [(false, day), (true, hour)] {
            let key = TotalsKey {
                hourly,
                dimension,
                bucket,
                store_id: basket.store_id,
                item: item.clone(),
                register_id,
                employee_id,
            };
            out.entry(key).or_default().add(&totals);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_days_and_hours_follow_the_stores_clock() {
        // 2026-11-27 23:30 UTC is the 28th at 08:30 in Tokyo, the 27th at 18:30 in New York.
        let millis = chrono::NaiveDate::from_ymd_opt(2026, 11, 27)
            .and_then(|d| d.and_hms_opt(23, 30, 0))
            .map(|t| t.and_utc().timestamp_millis())
            .unwrap();
        let (day, hour) = local_bucket(millis, "Asia/Tokyo");
        assert_eq!((day_text(day), hour - day * 24), ("2026-11-28".into(), 8));
        let (day, hour) = local_bucket(millis, "America/New_York");
        assert_eq!((day_text(day), hour - day * 24), ("2026-11-27".into(), 18));
        let (day, _) = local_bucket(millis, "Asia/Kolkata");
        assert_eq!(day_text(day), "2026-11-28");
        assert_eq!(day_of("2026-11-27"), Some(day - 1));
    }
}
