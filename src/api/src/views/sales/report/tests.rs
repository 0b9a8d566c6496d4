use std::collections::HashMap;

use super::*;
use fixture::shop;

/// The report fixture the renderer's tests read.
mod fixture {
    use std::collections::HashMap;

    use domain::sales::pricing::{Discount, TaxAmount};
    use domain::sales::report::*;
    use rust_decimal::Decimal;

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    /// The fixture's baskets: two at a London store (a sale with a promotion and two rates, a
    /// bare refund), one at a Tokyo store.
    fn baskets(late: i64) -> [BasketRow; 3] {
        [
            BasketRow {
                id: 1,
                store_id: 9,
                complete_date: late,
                total: d("0.3"),
                total_tax: d("0.05"),
                receipt: Some(ReceiptFigures {
                    discounts: vec![Discount {
                        promotion_id: 4,
                        amount: 3,
                        line_ids: vec![1],
                        shares: vec![3],
                    }],
                    taxes: vec![
                        TaxAmount {
                            code: "GST".into(),
                            rate: d("0.05"),
                            included: false,
                            taxable: 27,
                            tax: 1,
                        },
                        TaxAmount {
                            code: String::new(),
                            rate: d("0.20"),
                            included: true,
                            taxable: 25,
                            tax: 5,
                        },
                    ],
                    discount: 3,
                    cash_rounding: -2,
                }),
            },
            BasketRow {
                id: 2,
                store_id: 9,
                complete_date: late,
                total: d("-0.1"),
                total_tax: d("-0.0167"),
                receipt: None,
            },
            BasketRow {
                id: 3,
                store_id: 10,
                complete_date: late,
                total: d("0.2"),
                total_tax: d("0"),
                receipt: Some(ReceiptFigures {
                    taxes: vec![TaxAmount {
                        code: "GST".into(),
                        rate: d("0.05"),
                        included: false,
                        taxable: 20,
                        tax: 1,
                    }],
                    ..ReceiptFigures::default()
                }),
            },
        ]
    }

    /// Three baskets at two stores (one a refund), their lines (one of a basket outside the
    /// range) and payments, and the stores' timezones.
    pub(super) fn shop() -> BasketReport {
        // 2026-03-28 23:30 UTC is already the 29th in Tokyo, still the 28th in London.
        let late = 1_774_740_600_000;
        let baskets = baskets(late);
        let lines = [
            LineRow {
                basket_id: 1,
                product_id: 5,
                quantity: 3,
                price: d("0.1"),
                linked: false,
            },
            LineRow {
                basket_id: 2,
                product_id: 5,
                quantity: -1,
                price: d("0.1"),
                linked: true,
            },
            LineRow {
                basket_id: 3,
                product_id: 6,
                quantity: 2,
                price: d("0.1"),
                linked: false,
            },
            LineRow {
                basket_id: 99,
                product_id: 6,
                quantity: 2,
                price: d("1"),
                linked: false,
            },
        ];
        let payments = [
            PaymentRow {
                basket_id: 1,
                payment_type: "CASH".into(),
                amount: 1,
                tip: 2,
                refund: false,
            },
            PaymentRow {
                basket_id: 3,
                payment_type: "CARD".into(),
                amount: 1,
                tip: 0,
                refund: false,
            },
            PaymentRow {
                basket_id: 2,
                payment_type: "CASH".into(),
                amount: -1,
                tip: 0,
                refund: true,
            },
        ];
        let zones = HashMap::from([
            (9, "Europe/London".to_owned()),
            (10, "Asia/Tokyo".to_owned()),
        ]);
        BasketReport::from_rows(&baskets, &lines, &payments, &zones)
    }
}

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
