//! The basket report as `GET /report/basket` shows it (api-reference.md Reports).

use std::collections::BTreeMap;

use rust_decimal::Decimal;
use serde_json::{json, Map, Value};

use crate::domain::money;
use crate::domain::report::{BasketReport, Totals};

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
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::domain::report::tests::shop;

    #[test]
    fn sums_are_exact_and_refunds_count_with_their_sign() {
        let json = basket_report(&shop());
        assert_eq!(json["summary"]["grossTotal"], "0.4");
        assert_eq!(json["summary"]["taxTotal"], "0.0333");
        assert_eq!(json["summary"]["netTotal"], "0.3667");
        assert_eq!(json["summary"]["refundTotal"], "0.1");
        assert_eq!(json["summary"]["itemCount"], 4);
        assert_eq!(json["summary"]["basketCount"], 3);
        assert_eq!(json["summary"]["tipTotal"], "2");
        // The linked refund of basket 2 gave 1 back in cash.
        assert_eq!(
            json["summary"]["payments"],
            json!({"CASH": "0", "CARD": "1"})
        );
        assert_eq!(json["summary"]["refundPayments"], json!({"CASH": "1"}));
        assert_eq!(json["summary"]["linkedRefundTotal"], "0.1");
        assert_eq!(json["summary"]["unlinkedRefundTotal"], "0");
        assert_eq!(json["summary"]["discountTotal"], "3");
        assert_eq!(json["summary"]["cashRoundingTotal"], "-2");
        // Coded rates by code, an uncoded one by its rate; sums across stores.
        assert_eq!(
            json["summary"]["taxes"],
            json!({
                "GST": {"code": "GST", "rate": "0.05", "included": false, "taxable": "47", "tax": "2"},
                "0.2": {"code": "", "rate": "0.2", "included": true, "taxable": "25", "tax": "5"},
            })
        );
        assert_eq!(
            json["summary"]["promotions"],
            json!({"4": {"basketCount": 1, "discount": "3"}})
        );
        assert_eq!(json["stores"]["10"]["taxes"]["GST"]["taxable"], "20");
        assert_eq!(json["stores"]["10"]["promotions"], json!({}));
        assert_eq!(
            json["products"]["5"],
            json!({"quantity": 2, "gross": "0.2"})
        );
        assert!(json["products"].get("99").is_none());
        let days = |store: &str| -> Vec<String> {
            json["days"][store]
                .as_object()
                .map(|d| d.keys().cloned().collect())
                .unwrap_or_default()
        };
        assert_eq!(days("9"), ["2026-03-28"]);
        assert_eq!(days("10"), ["2026-03-29"]);
        assert_eq!(json["stores"]["10"]["payments"], json!({"CARD": "1"}));
    }

    #[test]
    fn an_empty_range_reads_zero() {
        let json = basket_report(&BasketReport::from_rows(&[], &[], &[], &HashMap::new()));
        assert_eq!(json["summary"]["grossTotal"], "0");
        assert_eq!(json["summary"]["payments"], json!({}));
        assert_eq!(json["stores"], json!({}));
    }
}
