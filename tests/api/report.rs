//! `GET /report/basket` (api-reference.md Reports; examples §2.15): required headers, the
//! 366-day limit, from inclusive and to exclusive, days in each store's timezone, only completed
//! sale baskets, and one merchant's report never holding another's sales.

use chrono::{DateTime, Duration, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_tests;
use crate::helpers::{send, TestApp};
use crate::shop_day::{create, header_time, id, product, receive, sell, store};

const PATH: &str = "/report/basket";

async fn report(app: &TestApp, token: &str, headers: &[(&str, &str)]) -> (StatusCode, Value) {
    send(app, Method::GET, PATH, token, headers, None).await
}

fn details(body: &Value) -> String {
    body["error"]["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap().to_owned())
        .collect::<Vec<_>>()
        .join(" | ")
}

/// Moves a completed basket's completion time in the database (the report reads it there).
async fn complete_at(app: &TestApp, basket: i64, at: &str) {
    let at: DateTime<Utc> = at.parse().unwrap();
    sqlx::query("UPDATE baskets SET complete_date = $1 WHERE id = $2")
        .bind(at.timestamp_millis())
        .bind(basket)
        .execute(&app.sql)
        .await
        .unwrap();
}

backend_tests! {
    async fn every_missing_or_malformed_header_is_named(app) {
        let token = app.owner_token().await;
        let (status, body) = report(&app, &token, &[]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let all = details(&body);
        assert!(all.contains("reportFrom: the header is missing") && all.contains("reportTo: the header is missing"), "{all}");
        assert_eq!(body["api"]["message"]["error"]["101"]["objectRef"], "reportFrom,reportTo");

        for (from, to, stores, needle) in [
            ("2026-03-28T00:00:00Z", "2026-03-29 00:00:00", "9", "reportFrom: \"2026-03-28T00:00:00Z\" is not a date-time"),
            ("2026-03-28 00:00:00", "29/03/2026", "9", "reportTo: \"29/03/2026\" is not a date-time"),
            ("2026-03-28 00:00:00", "2026-03-29 00:00:00", "9,,1", "storeIds: item 2 is empty"),
            ("2026-03-29 00:00:00", "2026-03-28 00:00:00", "9", "reportFrom: 2026-03-29 00:00:00 is after reportTo"),
            ("2025-03-28 00:00:00", "2026-03-30 00:00:00", "9", "longer than 366 days"),
        ] {
            let (status, body) = report(&app, &token, &[("reportFrom", from), ("reportTo", to), ("storeIds", stores)]).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{from} {to} {stores}");
            assert!(details(&body).contains(needle), "{needle} in {body}");
        }

        // 366 days exactly (2028 is a leap year) is allowed; storeIds may be left out.
        let (status, body) = report(&app, &token, &[("reportFrom", "2027-03-28 00:00:00"), ("reportTo", "2028-03-28 00:00:00")]).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["basketReport"], json!({"summary": {"basketCount": 0, "itemCount": 0, "grossTotal": "0",
            "taxTotal": "0", "netTotal": "0", "tipTotal": "0", "refundTotal": "0", "linkedRefundTotal": "0",
            "unlinkedRefundTotal": "0", "payments": {}, "refundPayments": {}, "discountTotal": "0",
            "cashRoundingTotal": "0", "taxes": {}, "promotions": {}},
            "stores": {}, "days": {}, "products": {}}));
        let (status, _) = send(&app, Method::POST, PATH, &token, &[], Some(json!({}))).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    }

    async fn days_follow_each_stores_timezone_and_the_range_is_half_open(app) {
        let token = app.owner_token().await;
        let london = app.tenant("demo").stores["high-street"];
        let tokyo = store(&app, &token, "Shibuya", "Asia/Tokyo").await;
        let new_york = store(&app, &token, "SoHo", "America/New_York").await;
        let latte = product(&app, &token, "Latte", "300").await;
        for shop in [london, tokyo, new_york] {
            receive(&app, &token, shop, latte, 10).await;
        }
        let l1 = id(&sell(&app, &token, london, latte, 1, &[("CARD", 300, 0)]).await);
        let l2 = id(&sell(&app, &token, london, latte, 2, &[("CASH", 600, 0)]).await);
        let t1 = id(&sell(&app, &token, tokyo, latte, 1, &[("APP", 300, 0)]).await);
        let n1 = id(&sell(&app, &token, new_york, latte, 3, &[("CARD", 900, 0)]).await);
        let outside = id(&sell(&app, &token, london, latte, 4, &[("CASH", 1200, 0)]).await);
        // 23:30 UTC on the 28th is the 28th in London (GMT until 01:00 UTC on the 29th) and
        // the 29th in Tokyo; 03:00 UTC on the 29th is the 29th in London and still the 28th
        // in New York. The range ends at 2026-03-30 00:00:00, which is not in it.
        complete_at(&app, l1, "2026-03-28T23:30:00Z").await;
        complete_at(&app, l2, "2026-03-29T03:00:00Z").await;
        complete_at(&app, t1, "2026-03-28T23:30:00Z").await;
        complete_at(&app, n1, "2026-03-29T03:00:00Z").await;
        complete_at(&app, outside, "2026-03-30T00:00:00Z").await;

        let (status, body) = report(&app, &token, &[("reportFrom", "2026-03-28 00:00:00"), ("reportTo", "2026-03-30 00:00:00")]).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let r = &body["basketReport"];
        assert_eq!(r["summary"]["basketCount"], 4, "{r}");
        assert_eq!(r["summary"]["grossTotal"], "2100");
        assert_eq!(r["summary"]["payments"], json!({"CARD": "1200", "CASH": "600", "APP": "300"}));
        let days = |store: i64| -> Vec<String> {
            r["days"][store.to_string()].as_object().unwrap().keys().cloned().collect()
        };
        assert_eq!(days(london), ["2026-03-28", "2026-03-29"]);
        assert_eq!(days(tokyo), ["2026-03-29"]);
        assert_eq!(days(new_york), ["2026-03-28"]);
        assert_eq!(r["days"][london.to_string()]["2026-03-29"]["grossTotal"], "600");
        assert_eq!(r["stores"][new_york.to_string()]["itemCount"], 3);

        // From inclusive: starting at the basket's own instant still counts it.
        let (_, body) = report(&app, &token, &[("reportFrom", "2026-03-30 00:00:00"), ("reportTo", "2026-03-30 00:00:01"), ("storeIds", &london.to_string())]).await;
        assert_eq!(body["basketReport"]["summary"]["itemCount"], 4, "{body}");
        // storeIds narrows.
        let (_, body) = report(&app, &token, &[("reportFrom", "2026-03-28 00:00:00"), ("reportTo", "2026-03-30 00:00:00"), ("storeIds", &format!("{tokyo},{new_york}"))]).await;
        assert_eq!(body["basketReport"]["summary"]["basketCount"], 2);
        assert_eq!(body["basketReport"]["products"], json!({latte.to_string(): {"quantity": 4, "gross": "1200"}}));
    }

    async fn only_completed_sale_baskets_count(app) {
        let token = app.owner_token().await;
        let shop = app.tenant("demo").stores["high-street"];
        let latte = product(&app, &token, "Latte", "300").await;
        receive(&app, &token, shop, latte, 10).await;
        sell(&app, &token, shop, latte, 2, &[("CARD", 600, 0)]).await;
        create(&app, &token, "/basket", "baskets", json!({"storeId": shop,
            "basketProducts": {"l": {"productId": latte, "quantity": 1}}})).await;
        let wasted = create(&app, &token, "/basket", "baskets", json!({"storeId": shop, "type": "wastage",
            "basketProducts": {"l": {"productId": latte, "quantity": 1}}})).await;
        let (status, body) = send(&app, Method::POST, "/basket", &token, &[],
            Some(json!({"baskets": {"w": {"id": id(&wasted), "completed": true}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let now = Utc::now();
        let (from, to) = (header_time(now - Duration::hours(1)), header_time(now + Duration::hours(1)));
        let (_, body) = report(&app, &token, &[("reportFrom", &from), ("reportTo", &to)]).await;
        let summary = &body["basketReport"]["summary"];
        assert_eq!((summary["basketCount"].as_i64(), summary["itemCount"].as_i64(), summary["grossTotal"].as_str()), (Some(1), Some(2), Some("600")), "{body}");
    }

    async fn another_merchants_sales_are_not_in_the_report(app) {
        let demo = app.owner_token().await;
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let shop = app.tenant("demo").stores["high-street"];
        let market = app.tenant("second").stores["market"];
        let latte = product(&app, &demo, "Latte", "300").await;
        receive(&app, &demo, shop, latte, 10).await;
        sell(&app, &demo, shop, latte, 2, &[("CARD", 600, 0)]).await;
        let bun = product(&app, &other, "Bun", "120").await;
        receive(&app, &other, market, bun, 10).await;
        sell(&app, &other, market, bun, 1, &[("CASH", 120, 0)]).await;

        let now = Utc::now();
        let (from, to) = (header_time(now - Duration::hours(1)), header_time(now + Duration::hours(1)));
        let (_, body) = report(&app, &other, &[("reportFrom", &from), ("reportTo", &to)]).await;
        let r = &body["basketReport"];
        assert_eq!(r["summary"]["grossTotal"], "120", "{r}");
        assert_eq!(r["stores"].as_object().unwrap().keys().collect::<Vec<_>>(), vec![&market.to_string()]);
        assert_eq!(r["products"], json!({bun.to_string(): {"quantity": 1, "gross": "120"}}));
        // Our store named in their request is a store that does not exist.
        let (status, body) = report(&app, &other, &[("reportFrom", &from), ("reportTo", &to), ("storeIds", &shop.to_string())]).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["basketReport"]["summary"]["basketCount"], 0);
        assert_eq!(body["basketReport"]["stores"], json!({}));
    }
}
