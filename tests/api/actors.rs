//! The merchant actors under load (DESIGN §1): every answered write is durable and visible, a
//! read sent after a write's answer sees it, and reads never wait behind a write.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::contract::Checked;
use crate::helpers::TestApp;
use crate::{backend_tests, backend_tests_with};

async fn categories(app: &TestApp, token: &str) -> serde_json::Map<String, Value> {
    let res = app
        .api(Method::GET, "/category", token)
        .checked()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let body: Value = res.json().await.unwrap();
    body["categories"].as_object().unwrap().clone()
}

backend_tests! {
    async fn a_thousand_concurrent_posts_are_all_answered_stored_and_listed(app) {
        let token = app.owner_token().await;
        let writes = (0..1000).map(|i| {
            let req = app
                .api(Method::POST, "/category", &token)
                .json(&json!({"categories": {format!("k{i}"): {"title": format!("C{i}")}}}));
            async move { req.checked().await.map(|r| r.status()) }
        });
        let statuses = futures_util::future::join_all(writes).await;
        let created = statuses.iter().filter(|s| matches!(s, Ok(StatusCode::CREATED))).count();
        assert_eq!(created, 1000, "{:?}", statuses.iter().filter(|s| !matches!(s, Ok(StatusCode::CREATED))).take(3).collect::<Vec<_>>());
        let (stored,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM categories")
            .fetch_one(&app.sql)
            .await
            .unwrap();
        assert_eq!(stored, 1000);
        assert_eq!(categories(&app, &token).await.len(), 1000);
        let text = app.metrics_text().await;
        assert!(text.contains("actor_mailbox_wait_seconds_count"), "{text}");
        assert!(text.contains("merchant_write_batch_size_count"));
        assert!(text.contains(r#"cache_requests_total{cache="merchant",result="hit"}"#));
        assert!(text.contains(r#"cache_requests_total{cache="access_token",result="hit"}"#));
    }

    async fn a_read_sent_after_a_write_is_answered_sees_that_write(app) {
        let token = app.owner_token().await;
        for i in 0..25 {
            let res = app
                .api(Method::POST, "/category", &token)
                .json(&json!({"categories": {"k": {"title": format!("T{i}")}}}))
                .checked()
                .await
                .unwrap();
            let body: Value = res.json().await.unwrap();
            let id = body["categories"]["k"]["id"].as_i64().unwrap();
            let res = app
                .api(Method::GET, "/category", &token)
                .header("categoryIds", id.to_string())
                .checked()
                .await
                .unwrap();
            let body: Value = res.json().await.unwrap();
            assert_eq!(body["categories"][id.to_string()]["title"], format!("T{i}"));
        }
    }
}

backend_tests_with! { |s| s.test_write_delay_ms = 1500;
    async fn reads_do_not_wait_for_a_write_holding_its_transaction(app) {
        let token = app.owner_token().await;
        // Wake the merchant first so the timing below measures only the read.
        assert!(categories(&app, &token).await.is_empty());
        let slow = app
            .api(Method::POST, "/category", &token)
            .json(&json!({"categories": {"slow": {"title": "Slow"}}}));
        let started = Instant::now();
        let write = tokio::spawn(async move { slow.checked().await.unwrap().status() });
        tokio::time::sleep(Duration::from_millis(300)).await;

        let read_started = Instant::now();
        let seen = categories(&app, &token).await;
        let read_took = read_started.elapsed();
        assert!(!write.is_finished(), "the write is still inside its transaction");
        assert!(seen.is_empty(), "an uncommitted write is not visible");
        assert!(read_took < Duration::from_millis(250), "the read took {read_took:?}");

        assert_eq!(write.await.unwrap(), StatusCode::CREATED);
        assert!(started.elapsed() >= Duration::from_millis(1500));
        assert_eq!(categories(&app, &token).await.len(), 1);
    }
}

backend_tests! {
    async fn a_store_actor_that_panics_costs_one_500_and_is_restarted_from_the_database(app) {
        let token = app.owner_token().await;
        let merchant = app.tenant("demo").id;
        let store = app.tenant("demo").stores["high-street"];
        // Stock the database directly, as a later issue's invoices will, so the restarted
        // actor has something to reload.
        let res = app
            .api(Method::POST, "/product", &token)
            .json(&json!({"products": {"p": {"name": "Beans"}}}))
            .checked()
            .await
            .unwrap();
        let body: Value = res.json().await.unwrap();
        let product_id = body["products"]["p"]["id"].as_i64().unwrap();
        sqlx::query("INSERT INTO stock_levels (merchant_id, store_id, product_id, total_stock, stock_sold) VALUES ($1, $2, $3, 12, 2)")
            .bind(merchant)
            .bind(store)
            .bind(product_id)
            .execute(&app.sql)
            .await
            .unwrap();

        let hook = |action: &str| app.url(&format!("/__test/merchant/{merchant}/store/{store}/{action}"));
        let crashed = app.client.post(hook("crash")).checked().await.unwrap();
        assert_eq!(crashed.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body: Value = crashed.json().await.unwrap();
        assert_eq!(body["api"]["message"]["error"]["120"]["code"], "internalError");

        // The next request succeeds, answered by a new actor that read the database.
        let probe = app.client.post(hook("probe")).checked().await.unwrap();
        assert_eq!(probe.status(), StatusCode::OK);
        let body: Value = probe.json().await.unwrap();
        assert_eq!(body["stockedProducts"], 1);
        let res = app
            .api(Method::GET, "/product", &token)
            .header("productIds", product_id.to_string())
            .header("storeId", store.to_string())
            .checked()
            .await
            .unwrap();
        let body: Value = res.json().await.unwrap();
        let p = &body["products"][product_id.to_string()];
        assert_eq!((p["totalStock"].as_i64(), p["stockSold"].as_i64(), p["stockLeft"].as_i64()), (Some(12), Some(2), Some(10)));
        // The merchant's other data never noticed.
        assert_eq!(categories(&app, &token).await.len(), 0);
    }
}
