//! Linked returns and refunds (docs/money-and-tax.md): a return line names the sale line it
//! gives back and can never give back more than was sold, even under concurrent returns;
//! restocked units go back to stock; a refund names the payment it gives money back on, to its
//! type, never more than was paid; other merchants' records are unknown ids.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_tests;
use crate::contract::Checked;
use crate::helpers::{send, TestApp};
use crate::shop_day::{create, id, product, receive, sell, stock};

fn return_line(sale: &Value, quantity: i64) -> Value {
    let line: i64 = sale["basketProducts"]
        .as_object()
        .and_then(|l| l.keys().next())
        .and_then(|k| k.parse().ok())
        .expect("a sale line");
    json!({"returnOf": {"basketId": id(sale), "lineId": line}, "quantity": quantity})
}

/// The payment of a completed sale basket.
async fn payment_of(app: &TestApp, token: &str, sale: &Value) -> Value {
    let (_, body) = send(
        app,
        Method::GET,
        "/transaction",
        token,
        &[("basketIds", &id(sale).to_string())],
        None,
    )
    .await;
    body["transactions"]
        .as_object()
        .and_then(|t| t.values().next().cloned())
        .expect("a payment")
}

async fn refund(
    app: &TestApp,
    token: &str,
    basket: i64,
    payment: &Value,
    extra: Value,
) -> (StatusCode, Value) {
    let mut refund =
        json!({"basketId": basket, "refundOf": payment["id"], "amount": 300, "completed": true});
    for (k, v) in extra.as_object().unwrap() {
        refund[k] = v.clone();
    }
    send(
        app,
        Method::POST,
        "/transaction",
        token,
        &[],
        Some(json!({"transactions": {"r": refund}})),
    )
    .await
}

backend_tests! {
    async fn concurrent_returns_give_back_at_most_what_was_sold_and_restock_it(app) {
        let token = app.owner_token().await;
        let store = app.tenant("demo").stores["high-street"];
        let latte = product(&app, &token, "Latte", "300").await;
        receive(&app, &token, store, latte, 20).await;
        let before = stock(&app, &token, store, latte).await;
        let sale = sell(&app, &token, store, latte, 10, &[("CARD", 3000, 0)]).await;
        assert_eq!(stock(&app, &token, store, latte).await.2, before.2 - 10);

        // 32 tills return one unit of the same line at once: exactly 10 are accepted.
        let requests = (0..32).map(|i| {
            let req = app.api(Method::POST, "/basket", &token).json(&json!({"baskets": {format!("r{i}"):
                {"storeId": store, "basketProducts": {"l": return_line(&sale, -1)}}}}));
            async move {
                let res = req.checked().await.unwrap();
                (res.status(), res.json::<Value>().await.unwrap())
            }
        });
        let answers = futures_util::future::join_all(requests).await;
        let accepted: Vec<i64> = answers.iter()
            .filter(|(s, _)| *s == StatusCode::CREATED)
            .map(|(_, b)| b["baskets"].as_object().unwrap().values().next().map(id).unwrap())
            .collect();
        assert_eq!(accepted.len(), 10, "{answers:?}");
        let refused = answers.iter().find(|(s, _)| *s != StatusCode::CREATED).expect("a refusal");
        assert!(refused.1.to_string().contains("only 0 unit(s) of line"), "{}", refused.1);

        // Each return refunds its unit on the sale's card payment and completes; the units go
        // back to stock.
        let payment = payment_of(&app, &token, &sale).await;
        for basket in &accepted {
            let (status, body) = refund(&app, &token, *basket, &payment, json!({})).await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
            let (status, body) = send(&app, Method::POST, "/basket", &token, &[],
                Some(json!({"baskets": {"c": {"id": basket, "completed": true}}}))).await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
            assert_eq!(body["baskets"]["c"]["receipt"]["total"], -300);
        }
        assert_eq!(stock(&app, &token, store, latte).await, before, "stock is as it was before the sale");
        // The day's report counts the refunds against the card: nothing was taken in the end.
        let hour = |h: i64| (chrono::Utc::now() + chrono::Duration::hours(h)).format("%Y-%m-%d %H:%M:%S").to_string();
        let (status, report) = send(&app, Method::GET, "/report/basket", &token,
            &[("reportFrom", &hour(-1)), ("reportTo", &hour(1)), ("storeIds", &store.to_string())], None).await;
        assert_eq!(status, StatusCode::OK, "{report}");
        assert_eq!(report["basketReport"]["summary"]["payments"]["CARD"], "0", "{report}");
        assert_eq!(report["basketReport"]["summary"]["grossTotal"], "0", "{report}");
        // Reported apart: ten linked returns of 300 and their ten refunds on the card; the
        // included rate's tax nets to nothing over the sale and its returns.
        let summary = &report["basketReport"]["summary"];
        assert_eq!((summary["refundTotal"].as_str(), summary["linkedRefundTotal"].as_str(),
            summary["unlinkedRefundTotal"].as_str()), (Some("3000"), Some("3000"), Some("0")), "{report}");
        assert_eq!(summary["refundPayments"], json!({"CARD": "3000"}), "{report}");
        assert_eq!(summary["taxes"]["0.2"]["tax"], "0", "{report}");

        // Nothing is left to refund of the payment, nor to return of the line.
        let extra = id(&create(&app, &token, "/basket", "baskets", json!({"storeId": store})).await);
        let (status, body) = refund(&app, &token, extra, &payment, json!({"amount": 1})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.to_string().contains(&format!("1 is more than is left to refund of payment {} (0).", payment["id"])), "{body}");
    }

    async fn refunds_go_back_to_the_payment_type_and_never_exceed_what_was_paid(app) {
        let token = app.owner_token().await;
        let store = app.tenant("demo").stores["high-street"];
        let latte = product(&app, &token, "Latte", "300").await;
        let sale = sell(&app, &token, store, latte, 2, &[("CARD", 600, 0)]).await;
        let payment = payment_of(&app, &token, &sale).await;
        let back = create(&app, &token, "/basket", "baskets",
            json!({"storeId": store, "basketProducts": {"l": return_line(&sale, -1)}})).await;
        assert_eq!(back["basketProducts"].as_object().unwrap().values().next().unwrap()["price"], "300", "the sale line's price");
        let dump = crate::helpers::dump_database(&app.sql).await;

        let (status, body) = refund(&app, &token, id(&back), &payment, json!({"amount": 601})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.to_string().contains("601 is more than is left to refund"), "{body}");
        let (status, body) = refund(&app, &token, id(&back), &payment, json!({"type": "CASH"})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.to_string().contains("a refund goes back to the payment's type (CARD)"), "{body}");
        assert_eq!(crate::helpers::dump_database(&app.sql).await, dump, "a refused refund changes nothing");

        // The type defaults to the payment's.
        let (status, body) = refund(&app, &token, id(&back), &payment, json!({})).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["transactions"]["r"]["type"], "CARD");
        // Refunding more than the return owes keeps the basket open.
        let (_, body) = refund(&app, &token, id(&back), &payment, json!({"amount": 1})).await;
        assert_eq!(body["transactions"]["r"]["refundOf"], payment["id"]);
        let (status, body) = send(&app, Method::POST, "/basket", &token, &[],
            Some(json!({"baskets": {"c": {"id": id(&back), "completed": true}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");

        // Written off instead of restocked: stock does not come back.
        let before = stock(&app, &token, store, latte).await;
        let mut line = return_line(&sale, -1);
        line["restock"] = json!(false);
        let waste = create(&app, &token, "/basket", "baskets", json!({"storeId": store, "basketProducts": {"l": line}})).await;
        let (status, body) = send(&app, Method::POST, "/basket", &token, &[],
            Some(json!({"baskets": {"c": {"id": id(&waste), "completed": true}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(stock(&app, &token, store, latte).await, before);
    }

    async fn another_merchants_sale_line_or_payment_is_an_unknown_id(app) {
        let token = app.owner_token().await;
        let store = app.tenant("demo").stores["high-street"];
        let second = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let market = app.tenant("second").stores["market"];
        let loaf = product(&app, &second, "Loaf", "250").await;
        let their_sale = sell(&app, &second, market, loaf, 3, &[("CARD", 750, 0)]).await;
        let their_payment = payment_of(&app, &second, &their_sale).await;

        let (status, body) = send(&app, Method::POST, "/basket", &token, &[], Some(json!({"baskets": {"b":
            {"storeId": store, "basketProducts": {"l": return_line(&their_sale, -1)}}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.to_string().contains(&format!("{} is not a completed sale basket of this merchant.", id(&their_sale))), "{body}");

        let mine = id(&create(&app, &token, "/basket", "baskets", json!({"storeId": store})).await);
        let (status, body) = refund(&app, &token, mine, &their_payment, json!({})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.to_string().contains(&format!("{} is not a completed payment of this merchant.", their_payment["id"])), "{body}");

        // Their sale can still be returned in full by them.
        let (status, body) = send(&app, Method::POST, "/basket", &second, &[], Some(json!({"baskets": {"b":
            {"storeId": market, "basketProducts": {"l": return_line(&their_sale, -3)}}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
}
