//! A day at a shop, end to end (examples §2.9-§2.15): stock received on an invoice, three sales
//! and a refund, a stock count that books its shortfall as wastage, and the day's basket report
//! — each figure exact, and the merchant's other store untouched. The helpers here set up the
//! shop for the stock count and report tests too.

use chrono::{DateTime, Duration, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_tests;
use crate::helpers::{send, TestApp};

pub use crate::helpers::create_one as create;

pub fn id(record: &Value) -> i64 {
    record["id"].as_i64().expect("an id")
}

/// A store of the caller's merchant in `timezone`.
pub async fn store(app: &TestApp, token: &str, name: &str, timezone: &str) -> i64 {
    id(&create(
        app,
        token,
        "/store",
        "stores",
        json!({"name": name, "addressLine1": "1 Quay Street",
        "city": "Bristol", "postcode": "BS1 4DJ", "countryId": "GB", "timezone": timezone}),
    )
    .await)
}

/// A product with one price instance (tax included, 20 %).
pub async fn product(app: &TestApp, token: &str, name: &str, price: &str) -> i64 {
    id(&create(
        app,
        token,
        "/product",
        "products",
        json!({"name": name,
        "instances": {"i": {"name": "Standard", "price": price, "taxPercentage": "0.200"}}}),
    )
    .await)
}

/// Receives `quantity` units of a product at a store on a completed invoice.
pub async fn receive(app: &TestApp, token: &str, store: i64, product: i64, quantity: i64) {
    let supplier = id(&create(
        app,
        token,
        "/supplier",
        "suppliers",
        json!({"name": "Bean Brothers"}),
    )
    .await);
    let invoice = create(app, token, "/invoice", "invoices", json!({"storeId": store, "supplierId": supplier,
        "reference": "BB-20931", "completed": true,
        "items": {"i1": {"productId": product, "quantity": quantity, "unitPrice": "41.7", "vatPercentage": "0.200"}}})).await;
    assert_eq!(invoice["completed"], true, "{invoice}");
}

/// A completed sale basket of `quantity` units (negative: a refund), paid by `payments`
/// (type, amount, tip). Returns the basket as answered.
pub async fn sell(
    app: &TestApp,
    token: &str,
    store: i64,
    product: i64,
    quantity: i64,
    payments: &[(&str, i64, i64)],
) -> Value {
    let basket = create(
        app,
        token,
        "/basket",
        "baskets",
        json!({"storeId": store,
        "basketProducts": {"l1": {"productId": product, "quantity": quantity}}}),
    )
    .await;
    for (kind, amount, tip) in payments {
        create(
            app,
            token,
            "/transaction",
            "transactions",
            json!({"basketId": id(&basket),
            "type": kind, "amount": amount, "tip": tip, "completed": true}),
        )
        .await;
    }
    let (status, body) = send(
        app,
        Method::POST,
        "/basket",
        token,
        &[],
        Some(json!({"baskets": {"done": {"id": id(&basket), "completed": true}}})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body["baskets"]["done"].clone()
}

/// totalStock, stockSold and stockLeft of a product (deleted too) at a store.
pub async fn stock(app: &TestApp, token: &str, store: i64, product: i64) -> (i64, i64, i64) {
    let (status, body) = send(
        app,
        Method::GET,
        "/product",
        token,
        &[
            ("productIds", &product.to_string()),
            ("storeId", &store.to_string()),
            ("deleted", "true"),
        ],
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let p = &body["products"][product.to_string()];
    (
        p["totalStock"].as_i64().unwrap(),
        p["stockSold"].as_i64().unwrap(),
        p["stockLeft"].as_i64().unwrap(),
    )
}

/// A completed count of one product.
pub async fn count(app: &TestApp, token: &str, store: i64, product: i64, counted: i64) -> Value {
    create(
        app,
        token,
        "/stock/reconcile",
        "stockReconciliations",
        json!({"storeId": store,
        "completed": true, "note": "Evening count",
        "products": {product.to_string(): {"productId": product, "quantity": counted}}}),
    )
    .await
}

/// `YYYY-MM-DD HH:MM:SS` as the date headers take it.
pub fn header_time(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M:%S").to_string()
}

fn completed_at(record: &Value) -> DateTime<Utc> {
    record["completeDate"].as_str().unwrap().parse().unwrap()
}

backend_tests! {
    async fn a_day_at_the_shop_adds_up(app) {
        let token = app.owner_token().await;
        let a = app.tenant("demo").stores["high-street"];
        let b = store(&app, &token, "Harbourside", "Europe/London").await;
        let latte = product(&app, &token, "Latte", "300").await;

        // Morning: 100 lattes arrive at store A.
        receive(&app, &token, a, latte, 100).await;
        assert_eq!(stock(&app, &token, a, latte).await, (100, 0, 100));

        // Three sales and a refund.
        let first = sell(&app, &token, a, latte, 2, &[("CASH", 600, 0)]).await;
        sell(&app, &token, a, latte, 5, &[("CARD", 1000, 50), ("CASH", 500, 0)]).await;
        sell(&app, &token, a, latte, 1, &[("CARD", 300, 20)]).await;
        let refund = sell(&app, &token, a, latte, -1, &[]).await;
        assert_eq!((refund["total"].as_str(), refund["completed"].as_bool()), (Some("-300"), Some(true)));
        assert_eq!(stock(&app, &token, a, latte).await, (100, 7, 93));

        // Evening count: 90 on the shelf, 3 short → a completed wastage basket of 3.
        let counted = count(&app, &token, a, latte, 90).await;
        let line = &counted["products"][latte.to_string()];
        assert_eq!((line["expected"].as_i64(), line["counted"].as_i64(), line["discrepancy"].as_i64()), (Some(93), Some(90), Some(-3)), "{counted}");
        assert_eq!(counted["completed"], true);
        assert_eq!(counted["surplusEntryIds"], json!([]));
        let wastage_id = counted["wastageBasketId"].as_i64().expect("a wastage basket");
        assert_eq!(stock(&app, &token, a, latte).await, (100, 10, 90), "shown at once");

        let (_, body) = send(&app, Method::GET, "/basket", &token, &[("basketIds", &wastage_id.to_string())], None).await;
        let wastage = &body["baskets"][wastage_id.to_string()];
        assert_eq!((wastage["type"].as_str(), wastage["completed"].as_bool(), wastage["storeId"].as_i64()), (Some("wastage"), Some(true), Some(a)), "{body}");
        let lines: Vec<&Value> = wastage["basketProducts"].as_object().unwrap().values().collect();
        assert_eq!(lines.len(), 1);
        assert_eq!((lines[0]["productId"].as_i64(), lines[0]["quantity"].as_i64(), lines[0]["price"].as_str()), (Some(latte), Some(3), Some("300")));

        // The day's report: only the four completed sale baskets, not the wastage.
        let day = completed_at(&first).date_naive().and_hms_opt(0, 0, 0).unwrap().and_utc();
        let (from, to) = (header_time(day), header_time(day + Duration::days(1)));
        let a_s = a.to_string();
        let (status, body) = send(&app, Method::GET, "/report/basket", &token,
            &[("reportFrom", &from), ("reportTo", &to), ("storeIds", &a_s)], None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let report = &body["basketReport"];
        // Gross 8 × 300 − 300 refunded (a bare negative line: unlinked); tax 2100 × 0.2 / 1.2 =
        // 350, the receipts' one included rate; tips 50 + 20; no promotion, no cash rounding.
        let figures = json!({"basketCount": 4, "itemCount": 7, "grossTotal": "2100", "taxTotal": "350",
            "netTotal": "1750", "tipTotal": "70", "refundTotal": "300", "linkedRefundTotal": "0",
            "unlinkedRefundTotal": "300", "payments": {"CASH": "1100", "CARD": "1300"},
            "refundPayments": {}, "discountTotal": "0", "cashRoundingTotal": "0",
            "taxes": {"0.2": {"code": "", "rate": "0.2", "included": true, "taxable": "1750", "tax": "350"}},
            "promotions": {}});
        assert_eq!(report["summary"], figures, "{report}");
        assert_eq!(report["stores"], json!({a_s.clone(): figures.clone()}));
        let local = completed_at(&first).with_timezone(&chrono_tz::Europe::London).format("%Y-%m-%d").to_string();
        assert_eq!(report["days"], json!({a_s.clone(): {local: figures}}));
        assert_eq!(report["products"], json!({latte.to_string(): {"quantity": 7, "gross": "2100"}}));
        assert_eq!(body["api"]["message"], json!({}));

        // The count reads back with the day's wastage.
        let both = format!("{a},{b}");
        let (status, body) = send(&app, Method::GET, "/stock/reconcile", &token,
            &[("from", &from), ("to", &to), ("storeIds", &both)], None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["stockReconciliations"][id(&counted).to_string()], counted);
        assert_eq!(body["wastage"], json!({a_s.clone(): {latte.to_string(): 3}, b.to_string(): {}}));
        assert_eq!(body["surplus"], json!({a_s: {}, b.to_string(): {}}));

        // Store B saw none of it.
        assert_eq!(stock(&app, &token, b, latte).await, (0, 0, 0));
        let b_s = b.to_string();
        let (_, body) = send(&app, Method::GET, "/report/basket", &token,
            &[("reportFrom", &from), ("reportTo", &to), ("storeIds", &b_s)], None).await;
        assert_eq!(body["basketReport"]["summary"]["basketCount"], 0);
        assert_eq!(body["basketReport"]["stores"], json!({}));
        let (_, body) = send(&app, Method::GET, "/basket", &token, &[("storeIds", &b_s)], None).await;
        assert_eq!(body["baskets"], json!({}));

        // Durable: the stored stock agrees with what the actors showed.
        let (total, sold): (i64, i64) = sqlx::query_as(
            "SELECT total_stock, stock_sold FROM stock_levels WHERE store_id = $1 AND product_id = $2")
            .bind(a).bind(latte).fetch_one(&app.sql).await.unwrap();
        assert_eq!((total, sold), (100, 10));
    }
}
