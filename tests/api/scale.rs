//! Cost that does not grow with history, and group commit (the performance issue's promises):
//! after tens of thousands of finished sales the merchant's cached state holds only its window
//! while every read still answers exactly; hundreds of concurrent writes land exactly once in
//! far fewer commits, and a write that fails never fails its neighbours.

use std::collections::BTreeSet;

use futures_util::future::join_all;
use reqwest::{Method, StatusCode};
use serde_json::{json, Map, Value};

use crate::backend_tests;
use crate::helpers::{create_one, metric_value, send, TestApp};

/// A value of a metric on `/metrics`, summed over the series whose labels contain `labels`.
async fn metric(app: &TestApp, name: &str, labels: &str) -> f64 {
    metric_value(&app.metrics_text().await, name, labels)
}

/// `n` sale baskets of one free line each, created completed at `store` (a free sale needs no
/// payment), in batches of 200 from four clients at once. Their answers, by id.
async fn completed_sales(
    app: &TestApp,
    token: &str,
    store: i64,
    product: i64,
    n: usize,
) -> Vec<Value> {
    let batches: Vec<usize> = (0..n).step_by(200).collect();
    let mut all = Vec::with_capacity(n);
    for chunk in batches.chunks(4) {
        let sends = chunk.iter().map(|start| {
            let baskets: Map<String, Value> = (*start..(*start + 200).min(n))
                .map(|i| {
                    (
                        format!("b{i}"),
                        json!({"storeId": store, "completed": true,
                        "basketProducts": {"l": {"productId": product, "quantity": 1}}}),
                    )
                })
                .collect();
            send(
                app,
                Method::POST,
                "/basket",
                token,
                &[],
                Some(json!({"baskets": baskets})),
            )
        });
        for (status, body) in join_all(sends).await {
            assert_eq!(status, StatusCode::CREATED, "{body}");
            let saved = body["baskets"].as_object().unwrap();
            all.extend(saved.values().cloned());
        }
    }
    all.sort_by_key(|b| b["id"].as_i64());
    all
}

backend_tests! {
    async fn after_fifty_thousand_sales_the_cache_holds_its_window_and_old_sales_read_exactly(app) {
        let token = app.owner_token().await;
        let main = app.tenant("demo").stores["high-street"];
        let side = create_one(&app, &token, "/store", "stores", json!({"name": "Kiosk", "addressLine1": "1 Quay Street",
            "city": "Bristol", "postcode": "BS1 4DJ", "countryId": "GB"})).await["id"].as_i64().unwrap();
        let free = create_one(&app, &token, "/product", "products",
            json!({"name": "Tap water", "instances": {"a": {"price": "0", "taxPercentage": "0"}}})).await["id"].as_i64().unwrap();

        // A few sales at the side store first: the oldest history there.
        let side_sales = completed_sales(&app, &token, side, free, 3).await;
        let open = create_one(&app, &token, "/basket", "baskets",
            json!({"storeId": side, "basketProducts": {"l": {"productId": free, "quantity": 2}}})).await;
        let sales = completed_sales(&app, &token, main, free, 50_000).await;
        assert_eq!(sales.len(), 50_000);

        // The cached state holds at most the window of finished sales (1,000 by default), the
        // ones the last group of writes finished (the next group drops them: at most four
        // batches of 200 sent at once), and the one open basket.
        let cached = metric(&app, "merchant_cached_records", "kind=\"basket\"").await;
        println!("cached baskets after 50,003 completed sales: {cached}");
        assert!(cached <= 1_001.0 + 800.0, "{cached} baskets cached");
        assert!(cached >= 1.0);

        // By id: the oldest sales come back exactly as they were answered.
        let oldest: Vec<String> = sales[..300].iter().map(|b| b["id"].to_string()).collect();
        let (status, body) = send(&app, Method::GET, "/basket", &token, &[("basketIds", &oldest.join(","))], None).await;
        assert_eq!(status, StatusCode::OK);
        let found = body["baskets"].as_object().unwrap();
        assert_eq!(found.len(), 300);
        for sale in &sales[..300] {
            assert_eq!(&found[&sale["id"].to_string()], sale);
        }
        // And the same again from the history cache.
        let (_, again) = send(&app, Method::GET, "/basket", &token, &[("basketIds", &oldest[..5].join(","))], None).await;
        assert_eq!(again["baskets"].as_object().unwrap().len(), 5);

        // By filter: the side store's completed sales, exactly, and its open basket alone.
        let side_id = side.to_string();
        let (_, done) = send(&app, Method::GET, "/basket", &token, &[("storeIds", &side_id), ("completed", "true")], None).await;
        let done = done["baskets"].as_object().unwrap().clone();
        let expected: BTreeSet<String> = side_sales.iter().map(|b| b["id"].to_string()).collect();
        assert_eq!(done.keys().cloned().collect::<BTreeSet<_>>(), expected);
        for sale in &side_sales {
            assert_eq!(&done[&sale["id"].to_string()], sale);
        }
        let (_, still_open) = send(&app, Method::GET, "/basket", &token, &[("storeIds", &side_id), ("completed", "false")], None).await;
        assert_eq!(still_open["baskets"], json!({open["id"].to_string(): open}));

        // Every sale moved stock once.
        let (_, products) = send(&app, Method::GET, "/product", &token,
            &[("productIds", &free.to_string()), ("storeId", &main.to_string())], None).await;
        assert_eq!(products["products"][free.to_string()]["stockSold"], 50_000);

        // An old sale is still locked: the answer says it is completed, not that it is unknown.
        let first = sales[0]["id"].as_i64().unwrap();
        let (status, body) = send(&app, Method::PUT, "/basket", &token, &[],
            Some(json!({"baskets": {"late": {"id": first, "note": "too late"}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body["api"]["message"]["error"]["111:late"].is_object(), "{body}");
    }

    async fn concurrent_writes_are_committed_in_groups_and_a_failing_one_fails_alone(app) {
        let token = app.owner_token().await;
        // A store the actor knows but the database no longer has: a basket there passes
        // validation and then fails in the database (a foreign key), inside a group.
        let ghost = create_one(&app, &token, "/store", "stores", json!({"name": "Ghost", "addressLine1": "2 Quay Street",
            "city": "Bristol", "postcode": "BS1 4DJ", "countryId": "GB"})).await["id"].as_i64().unwrap();
        sqlx::query("DELETE FROM stores WHERE id = $1").bind(ghost).execute(&app.sql).await.unwrap();
        let commits_before = metric(&app, "db_commits_total", "").await;

        let categories = (0..500).map(|i| {
            let body = json!({"categories": {"c": {"title": format!("Group {i}")}}});
            send(&app, Method::POST, "/category", &token, &[], Some(body))
        });
        let invalid = (0..5).map(|i| {
            let body = json!({"categories": {"bad": {"title": format!("Orphan {i}"), "parentId": 999_999_999}}});
            send(&app, Method::POST, "/category", &token, &[], Some(body))
        });
        let failing = send(&app, Method::POST, "/basket", &token, &[], Some(json!({"baskets": {"g": {"storeId": ghost}}})));
        let (good, bad, failed) = tokio::join!(join_all(categories), join_all(invalid), failing);

        for (status, body) in &good {
            assert_eq!(*status, StatusCode::CREATED, "{body}");
        }
        for (status, body) in &bad {
            assert_eq!(*status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
            assert!(body["api"]["message"]["error"]["110:bad"].is_object(), "{body}");
        }
        assert_eq!(failed.0, StatusCode::INTERNAL_SERVER_ERROR, "{}", failed.1);
        assert!(failed.1["api"].is_object());

        // Every good write landed exactly once; nothing of the refused or failed ones did.
        let (_, listed) = send(&app, Method::GET, "/category", &token, &[], None).await;
        let titles: Vec<&str> = listed["categories"].as_object().unwrap().values()
            .filter_map(|c| c["title"].as_str()).collect();
        for i in 0..500 {
            let title = format!("Group {i}");
            assert_eq!(titles.iter().filter(|t| **t == title).count(), 1, "{title}");
        }
        assert!(!titles.iter().any(|t| t.starts_with("Orphan")));
        let (rows,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM baskets WHERE store_id = $1")
            .bind(ghost).fetch_one(&app.sql).await.unwrap();
        assert_eq!(rows, 0);

        let commits = metric(&app, "db_commits_total", "").await - commits_before;
        println!("506 concurrent writes made {commits} commits");
        assert!(commits < 250.0, "{commits} commits for 506 writes");
    }
}
