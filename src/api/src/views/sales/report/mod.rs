//! The basket report as `GET /report/basket` shows it (api-reference.md Reports).

use std::collections::BTreeMap;

use rust_decimal::Decimal;
use serde_json::{json, Map, Value};

use domain::money;
use domain::sales::report::{BasketReport, Totals};
use domain::sales::totals::{
    day_text, hour_text, Dimension, GroupColumn, Totals as SaleTotals, TotalsKey,
};

fn amount(d: Decimal) -> Value {
    Value::String(money::text(&d.normalize()))
}

fn totals(t: &Totals) -> Value {
    let minor = |m: &BTreeMap<String, i64>| -> Map<String, Value> {
        m.iter()
            .map(|(kind, n)| (kind.clone(), Value::String(n.to_string())))
            .collect()
    };
    let taxes: Map<String, Value> = t
        .taxes
        .iter()
        .map(|(key, r)| {
            let rate = json!({
                "code": r.code,
                "rate": money::text(&r.rate.normalize()),
                "included": r.included,
                "taxable": r.taxable.to_string(),
                "tax": r.tax.to_string(),
            });
            (key.clone(), rate)
        })
        .collect();
    let promotions: Map<String, Value> = t
        .promotions
        .iter()
        .map(|(id, p)| {
            let figures = json!({
                "basketCount": p.basket_count,
                "discount": p.discount.to_string(),
            });
            (id.to_string(), figures)
        })
        .collect();
    json!({
        "basketCount": t.basket_count,
        "itemCount": t.item_count,
        "grossTotal": amount(t.gross),
        "taxTotal": amount(t.tax),
        "netTotal": amount(t.gross - t.tax),
        "tipTotal": t.tips.to_string(),
        "refundTotal": amount(t.refunds),
        "linkedRefundTotal": amount(t.linked_refunds),
        "unlinkedRefundTotal": amount(t.refunds - t.linked_refunds),
        "payments": minor(&t.payments),
        "refundPayments": minor(&t.refund_payments),
        "discountTotal": t.discount.to_string(),
        "cashRoundingTotal": t.cash_rounding.to_string(),
        "taxes": taxes,
        "promotions": promotions,
    })
}

pub fn basket_report(report: &BasketReport) -> Value {
    let keyed = |m: &BTreeMap<i64, Totals>| -> Map<String, Value> {
        m.iter().map(|(k, t)| (k.to_string(), totals(t))).collect()
    };
    let days: Map<String, Value> = report
        .days
        .iter()
        .map(|(store, days)| {
            let days: Map<String, Value> =
                days.iter().map(|(d, t)| (d.clone(), totals(t))).collect();
            (store.to_string(), Value::Object(days))
        })
        .collect();
    let products: Map<String, Value> = report
        .products
        .iter()
        .map(|(id, p)| {
            (
                id.to_string(),
                json!({"quantity": p.quantity, "gross": amount(p.gross)}),
            )
        })
        .collect();
    json!({
        "summary": totals(&report.summary),
        "stores": keyed(&report.stores),
        "days": days,
        "products": products,
    })
}

#[cfg(test)]
mod tests;

/// How `GET /report/sales` groups its rows within each bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupBy {
    Store,
    Register,
    Employee,
    Category,
    Product,
    PaymentType,
    TaxRate,
}

impl GroupBy {
    /// Every grouping with the name the `groupBy` header gives it, in one table.
    const ALL: [(GroupBy, &'static str); 7] = [
        (GroupBy::Store, "store"),
        (GroupBy::Register, "register"),
        (GroupBy::Employee, "employee"),
        (GroupBy::Category, "category"),
        (GroupBy::Product, "product"),
        (GroupBy::PaymentType, "paymentType"),
        (GroupBy::TaxRate, "taxRate"),
    ];

    pub const NAMES: [&'static str; 7] = {
        let mut names = [""; 7];
        let mut i = 0;
        while i < names.len() {
            names[i] = Self::ALL[i].1;
            i += 1;
        }
        names
    };

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .find(|(_, name)| *name == text)
            .map(|(group, _)| *group)
    }

    /// The column the database sums the rows of a bucket by.
    pub fn column(self) -> GroupColumn {
        match self {
            GroupBy::Store => GroupColumn::Store,
            GroupBy::Register => GroupColumn::Register,
            GroupBy::Employee => GroupColumn::Employee,
            _ => GroupColumn::Item,
        }
    }

    /// The rows it reads.
    pub fn dimension(self) -> Dimension {
        match self {
            GroupBy::Store | GroupBy::Register | GroupBy::Employee => Dimension::Sale,
            GroupBy::Category => Dimension::Category,
            GroupBy::Product => Dimension::Product,
            GroupBy::PaymentType => Dimension::Payment,
            GroupBy::TaxRate => Dimension::Tax,
        }
    }

    fn key(self, row: &TotalsKey) -> String {
        match self {
            GroupBy::Store => row.store_id.to_string(),
            GroupBy::Register => row.register_id.to_string(),
            GroupBy::Employee => row.employee_id.to_string(),
            _ => row.item.clone(),
        }
    }
}

/// `salesReport`: `{"buckets": {"2026-11-27": {"<key>": totals}}, "totals": {"<key>": totals}}`,
/// the rows summed by bucket (local day, or hour `2026-11-27T14`) and by the grouping's key.
pub fn sales_report(rows: &[(TotalsKey, SaleTotals)], group: GroupBy) -> Value {
    let mut buckets: BTreeMap<i64, BTreeMap<String, SaleTotals>> = BTreeMap::new();
    let mut all: BTreeMap<String, SaleTotals> = BTreeMap::new();
    for (key, t) in rows {
        let k = group.key(key);
        buckets
            .entry(key.bucket)
            .or_default()
            .entry(k.clone())
            .or_default()
            .add(t);
        all.entry(k).or_default().add(t);
    }
    let hourly = rows.first().is_some_and(|(k, _)| k.hourly);
    let name = |b: i64| if hourly { hour_text(b) } else { day_text(b) };
    let shown = |m: &BTreeMap<String, SaleTotals>| -> Value {
        m.iter()
            .map(|(k, t)| (k.clone(), totals_json(t)))
            .collect::<serde_json::Map<_, _>>()
            .into()
    };
    json!({
        "buckets": buckets.iter().map(|(b, m)| (name(*b), shown(m))).collect::<serde_json::Map<_, _>>(),
        "totals": shown(&all),
    })
}

fn totals_json(t: &SaleTotals) -> Value {
    json!({"count": t.count, "quantity": t.quantity, "amount": t.amount, "tax": t.tax, "discount": t.discount})
}

/// Acceptance 2 of issue 23: for random baskets across a year and three time zones, the
/// report read from running totals (each basket's deltas merged by row, as the upsert does;
/// the rows of a range, as the query reads them) equals a recomputation from the baskets
/// themselves, for random ranges, stores, periods and groupings.
#[cfg(test)]
mod props {
    use std::collections::BTreeMap;

    use chrono::{NaiveDate, TimeZone, Timelike};
    use proptest::prelude::*;
    use rust_decimal::Decimal;

    use super::*;
    use domain::sales::basket::{BasketLine, BasketRecord, BasketType};
    use domain::sales::payment::TransactionRecord;
    use domain::sales::pricing::{LineAmounts, Receipt, TaxAmount};
    use domain::sales::totals::{local_bucket, sale_deltas, Deltas};

    const ZONES: [&str; 3] = ["Europe/London", "Asia/Kolkata", "America/New_York"];
    const START: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

    type Sale = (
        usize,
        i64,
        Vec<(i64, i64)>,
        Vec<(bool, i64, bool)>,
        i64,
        i64,
    );

    fn categories(product: i64) -> Vec<i64> {
        match product % 3 {
            0 => vec![],
            1 => vec![10],
            _ => vec![10, 11],
        }
    }

    fn basket(id: i64, (store, at, lines, _, register, employee): &Sale) -> BasketRecord {
        let mut amounts = Vec::new();
        let mut records = Vec::new();
        for (i, (product, quantity)) in lines.iter().enumerate() {
            let line_id = id * 100 + i as i64;
            let total = quantity * (100 + product);
            amounts.push(LineAmounts {
                line_id,
                gross: total,
                net: total,
                tax: total / 6,
                total,
                ..LineAmounts::default()
            });
            records.push(BasketLine {
                id: line_id,
                basket_id: id,
                product_id: *product,
                product_instance_id: 0,
                quantity: *quantity,
                price: Decimal::ZERO,
                original_price: Decimal::ZERO,
                tax_percentage: Decimal::ZERO,
                note: None,
                added_date: 0,
                return_of: None,
                restock: true,
                client_id: None,
            });
        }
        let total = amounts.iter().map(|a| a.total).sum();
        let tax = amounts.iter().map(|a| a.tax).sum();
        BasketRecord {
            id,
            store_id: *store as i64 + 1,
            basket_type: BasketType::Sale,
            lines: records,
            completed: true,
            complete_date: Some(START + at),
            register_id: (*register > 0).then_some(*register),
            employee_id: (*employee > 0).then_some(*employee),
            receipt: Some(Receipt {
                lines: amounts,
                taxes: vec![TaxAmount {
                    code: "VAT".into(),
                    taxable: total - tax,
                    tax,
                    ..TaxAmount::default()
                }],
                total,
                tax,
                ..Receipt::default()
            }),
            ..BasketRecord::default()
        }
    }

    fn payments(id: i64, sale: &Sale) -> Vec<TransactionRecord> {
        sale.3
            .iter()
            .map(|(card, amount, refund)| TransactionRecord {
                basket_id: id,
                payment_type: if *card { "CARD" } else { "CASH" }.into(),
                amount: *amount,
                refund_of: refund.then_some(1),
                completed: true,
                ..TransactionRecord::default()
            })
            .collect()
    }

    /// The recomputation: each basket's local day or hour from chrono-tz, its keys, summed.
    fn oracle(
        sales: &[Sale],
        (hourly, from, to): (bool, i64, i64),
        stores: &Option<Vec<i64>>,
        group: GroupBy,
    ) -> Value {
        let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap();
        let mut sums: BTreeMap<(i64, String), SaleTotals> = BTreeMap::new();
        for (i, sale) in sales.iter().enumerate() {
            let b = basket(i as i64 + 1, sale);
            if stores.as_ref().is_some_and(|s| !s.contains(&b.store_id)) {
                continue;
            }
            let zone: chrono_tz::Tz = ZONES[sale.0].parse().unwrap();
            let local = zone
                .timestamp_millis_opt(START + sale.1)
                .unwrap()
                .naive_local();
            let day = (local.date() - epoch).num_days();
            let bucket = if hourly {
                day * 24 + local.hour() as i64
            } else {
                day
            };
            if bucket < from || bucket >= to {
                continue;
            }
            let r = b.receipt.as_ref().unwrap();
            let mut add =
                |key: String, t: SaleTotals| sums.entry((bucket, key)).or_default().add(&t);
            let whole = SaleTotals {
                count: 1,
                quantity: sale.2.iter().map(|l| l.1).sum(),
                amount: r.total,
                tax: r.tax,
                discount: 0,
            };
            match group {
                GroupBy::Store => add(b.store_id.to_string(), whole),
                GroupBy::Register => add(sale.4.to_string(), whole),
                GroupBy::Employee => add(sale.5.to_string(), whole),
                GroupBy::TaxRate => add(
                    "VAT".into(),
                    SaleTotals {
                        count: 1,
                        amount: r.total - r.tax,
                        tax: r.tax,
                        ..SaleTotals::default()
                    },
                ),
                GroupBy::PaymentType => {
                    for p in payments(0, sale) {
                        let sign = if p.refund_of.is_some() { -1 } else { 1 };
                        add(
                            p.payment_type,
                            SaleTotals {
                                count: 1,
                                amount: sign * p.amount,
                                ..SaleTotals::default()
                            },
                        );
                    }
                }
                GroupBy::Product | GroupBy::Category => {
                    for (l, a) in b.lines.iter().zip(&r.lines) {
                        let t = SaleTotals {
                            count: 1,
                            quantity: l.quantity,
                            amount: a.total,
                            tax: a.tax,
                            discount: 0,
                        };
                        let keys = match group {
                            GroupBy::Product => vec![l.product_id],
                            _ if categories(l.product_id).is_empty() => vec![0],
                            _ => categories(l.product_id),
                        };
                        for k in keys {
                            add(k.to_string(), t);
                        }
                    }
                }
            }
        }
        shaped(&sums, hourly)
    }

    /// The oracle's sums as the report shows them.
    fn shaped(sums: &BTreeMap<(i64, String), SaleTotals>, hourly: bool) -> Value {
        let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap();
        let name = |b: i64| {
            let date = epoch + chrono::Duration::days(b.div_euclid(if hourly { 24 } else { 1 }));
            match hourly {
                true => format!("{}T{:02}", date.format("%Y-%m-%d"), b.rem_euclid(24)),
                false => date.format("%Y-%m-%d").to_string(),
            }
        };
        let mut buckets = serde_json::Map::new();
        let mut all: BTreeMap<String, SaleTotals> = BTreeMap::new();
        for ((b, key), t) in sums {
            let entry = buckets.entry(name(*b)).or_insert_with(|| json!({}));
            entry[key.as_str()] = totals_json(t);
            all.entry(key.clone()).or_default().add(t);
        }
        let all: serde_json::Map<String, Value> = all
            .iter()
            .map(|(k, t)| (k.clone(), totals_json(t)))
            .collect();
        json!({"buckets": buckets, "totals": all})
    }

    fn sale() -> impl Strategy<Value = Sale> {
        (
            0usize..3,
            0i64..365 * 86_400_000,
            prop::collection::vec((0i64..6, -2i64..5), 1..4),
            prop::collection::vec((any::<bool>(), 1i64..5000, prop::bool::weighted(0.2)), 0..3),
            0i64..3,
            0i64..3,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn reports_from_running_totals_equal_a_recomputation(
            sales in prop::collection::vec(sale(), 1..60),
            hourly in any::<bool>(),
            start in 20_450i64..20_820,
            days in 1i64..120,
            stores in prop::option::of(prop::collection::vec(1i64..4, 1..3)),
            group in 0usize..7,
        ) {
            let group = GroupBy::parse(GroupBy::NAMES[group]).unwrap();
            let mut table = Deltas::new();
            for (i, s) in sales.iter().enumerate() {
                let id = i as i64 + 1;
                let b = basket(id, s);
                let paid = payments(id, s);
                let at = local_bucket(START + s.1, ZONES[s.0]);
                sale_deltas(&b, &paid, &categories, at, &mut table);
            }
            let (from, to) = if hourly { (start * 24, (start + days) * 24) } else { (start, start + days) };
            let rows: Vec<(TotalsKey, SaleTotals)> = table
                .into_iter()
                .filter(|(k, _)| k.hourly == hourly && k.dimension == group.dimension())
                .filter(|(k, _)| k.bucket >= from && k.bucket < to)
                .filter(|(k, _)| stores.as_ref().is_none_or(|s| s.contains(&k.store_id)))
                .collect();
            let got = sales_report(&rows, group);
            prop_assert_eq!(got, oracle(&sales, (hourly, from, to), &stores, group));
        }
    }
}
