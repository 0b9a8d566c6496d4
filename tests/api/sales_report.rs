//! `GET /report/sales` (docs/sales-report.md): the running totals completion keeps agree with
//! `/report/basket` for each store and grouping, hourly buckets add up to the daily ones, bad
//! headers are 400s that name them, and another merchant's sales never show.

use chrono::{Duration, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_tests;
use crate::helpers::{send, TestApp};
use crate::shop_day::{create, header_time, id, product, sell, store};

async fn sales(app: &TestApp, token: &str, headers: &[(&str, &str)]) -> Value {
    let (status, body) = send(app, Method::GET, "/report/sales", token, headers, None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["salesReport"].clone()
}

backend_tests! {
    async fn running_totals_agree_with_the_basket_report(app) {
        let token = app.owner_token().await;
        let a = store(&app, &token, "Bristol", "Europe/London").await;
        let b = store(&app, &token, "Tokyo", "Asia/Tokyo").await;
        let latte = product(&app, &token, "Latte", "300").await;
        let scone = product(&app, &token, "Scone", "249").await;
        let sale = sell(&app, &token, a, latte, 2, &[("CASH", 600, 0)]).await;
        sell(&app, &token, a, scone, 3, &[("CARD", 500, 0), ("CASH", 247, 0)]).await;
        sell(&app, &token, b, latte, 1, &[("CARD", 300, 10)]).await;
        // A linked return of one latte, refunded to its cash payment.
        let line: i64 = sale["basketProducts"].as_object().unwrap().keys().next().unwrap().parse().unwrap();
        let back = create(&app, &token, "/basket", "baskets", json!({"storeId": a,
            "basketProducts": {"r": {"returnOf": {"basketId": id(&sale), "lineId": line}, "quantity": -1}}})).await;
        let (_, paid) = send(&app, Method::GET, "/transaction", &token, &[("basketIds", &id(&sale).to_string())], None).await;
        let payment = paid["transactions"].as_object().unwrap().values().next().unwrap().clone();
        create(&app, &token, "/transaction", "transactions", json!({"basketId": id(&back), "refundOf": id(&payment), "amount": 300, "completed": true})).await;
        create(&app, &token, "/basket", "baskets", json!({"id": id(&back), "completed": true})).await;

        // Three local days around now cover both stores' today.
        let today = Utc::now().date_naive();
        let (from, to) = ((today - Duration::days(1)).to_string(), (today + Duration::days(2)).to_string());
        let by_store = sales(&app, &token, &[("reportFrom", &from), ("reportTo", &to)]).await;
        let utc = |d: chrono::NaiveDate| header_time(d.and_hms_opt(0, 0, 0).unwrap().and_utc());
        let (ufrom, uto) = (utc(today - Duration::days(2)), utc(today + Duration::days(3)));
        for s in [a, b] {
            let (status, body) = send(&app, Method::GET, "/report/basket", &token,
                &[("reportFrom", &ufrom), ("reportTo", &uto), ("storeIds", &s.to_string())], None).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            let r = &body["basketReport"]["summary"];
            let t = &by_store["totals"][s.to_string()];
            let minor = |v: &Value| v.as_str().unwrap().parse::<i64>().unwrap();
            assert_eq!(t["count"].as_i64(), r["basketCount"].as_i64(), "store {s}: {by_store} {r}");
            assert_eq!(t["quantity"].as_i64(), r["itemCount"].as_i64(), "store {s}");
            assert_eq!(t["amount"].as_i64(), Some(minor(&r["grossTotal"])), "store {s}");
            assert_eq!(t["tax"].as_i64(), Some(minor(&r["taxTotal"])), "store {s}");
            let pay = sales(&app, &token, &[("reportFrom", &from), ("reportTo", &to), ("groupBy", "paymentType"), ("storeIds", &s.to_string())]).await;
            // Both net of refunds.
            for (kind, amount) in r["payments"].as_object().unwrap() {
                assert_eq!(pay["totals"][kind]["amount"].as_i64(), Some(minor(amount)), "store {s} {kind}: {pay} {r}");
            }
        }
        assert_eq!(by_store["totals"][a.to_string()]["count"], 3, "two sales and a return: {by_store}");

        // Products, and hours that add up to the days.
        let products = sales(&app, &token, &[("reportFrom", &from), ("reportTo", &to), ("groupBy", "product")]).await;
        assert_eq!(products["totals"][latte.to_string()]["quantity"], 2, "2 + 1 sold, 1 returned: {products}");
        assert_eq!(products["totals"][scone.to_string()]["quantity"], 3);
        let hours = sales(&app, &token, &[("reportFrom", &from), ("reportTo", &to), ("period", "hour"), ("groupBy", "product")]).await;
        assert_eq!(hours["totals"], products["totals"]);
        assert!(hours["buckets"].as_object().unwrap().keys().all(|k| k.len() == 13 && k.contains('T')), "{hours}");

        // Another merchant sees none of it.
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let theirs = sales(&app, &other, &[("reportFrom", &from), ("reportTo", &to)]).await;
        assert_eq!(theirs, json!({"buckets": {}, "totals": {}}));
        let theirs = sales(&app, &other, &[("reportFrom", &from), ("reportTo", &to), ("storeIds", &a.to_string())]).await;
        assert_eq!(theirs["totals"], json!({}));
    }

    async fn bad_report_headers_are_named(app) {
        let token = app.owner_token().await;
        for (headers, problem) in [
            (vec![("reportTo", "2026-11-28")], "reportFrom: the header is missing."),
            (vec![("reportFrom", "2026-11-27"), ("reportTo", "2026-11-28"), ("period", "week")], "period: must be day or hour."),
            (vec![("reportFrom", "2026-11-27"), ("reportTo", "2026-11-28"), ("groupBy", "colour")], "groupBy: must be one of store, register"),
            (vec![("reportFrom", "2026-11-27 14:30:00"), ("reportTo", "2026-11-28")], "is not a whole hour."),
            (vec![("reportFrom", "2026-11-27 14:00:00"), ("reportTo", "2026-11-28")], "a daily report's range is whole days."),
            (vec![("reportFrom", "2026-11-29"), ("reportTo", "2026-11-28")], "reportFrom: is after reportTo."),
            (vec![("reportFrom", "2024-01-01"), ("reportTo", "2026-11-28")], "longer than 366 days"),
            (vec![("reportFrom", "27/11/2026"), ("reportTo", "2026-11-28")], "is not a local date"),
        ] {
            let (status, body) = send(&app, Method::GET, "/report/sales", &token, &headers, None).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{headers:?}: {body}");
            assert!(body.to_string().contains(problem), "{problem}: {body}");
        }
    }
}
