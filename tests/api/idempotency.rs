//! `Idempotency-Key` on writes: a repeat of the same request gets the first answer without the
//! work being done again, even while the first is still being written and after a restart;
//! the same key with another request is refused (422, 114).

use futures_util::future::join_all;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::contract::Checked;
use crate::helpers::{raw_pool, send_full, TestApp};
use crate::process::serve;
use crate::{backend_tests, db_tests};

fn latte(name: &str) -> Value {
    json!({"products": {"p": {"name": name,
        "instances": {"i": {"price": "300", "taxPercentage": "0.200"}}}}})
}

async fn products_named(app: &TestApp, name: &str) -> i64 {
    let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM products WHERE name = $1")
        .bind(name)
        .fetch_one(&app.sql)
        .await
        .unwrap();
    n
}

/// The parts of an answer a replay must repeat (the envelope's timing and request id differ).
fn essence(body: &Value) -> Value {
    let mut body = body.clone();
    if let Some(api) = body.get_mut("api").and_then(Value::as_object_mut) {
        api.remove("executionTime_milliSeconds");
    }
    body
}

fn replayed(headers: &reqwest::header::HeaderMap) -> bool {
    headers
        .get("idempotent-replayed")
        .is_some_and(|v| v == "true")
}

backend_tests! {
    async fn twenty_concurrent_repeats_of_one_key_create_one_record_and_get_one_answer(app) {
        let token = app.owner_token().await;
        let key = uuid::Uuid::new_v4().to_string();
        let headers = [("Idempotency-Key", key.as_str())];
        let sends = (0..20).map(|_| {
            send_full(&app, Method::POST, "/product", &token, &headers, Some(latte("Flat white")))
        });
        let answers = join_all(sends).await;
        assert_eq!(products_named(&app, "Flat white").await, 1, "one record");
        let first = essence(&answers[0].1);
        for (status, body, _) in &answers {
            assert_eq!(*status, StatusCode::CREATED, "{body}");
            assert_eq!(essence(body), first, "every repeat gets the same answer");
        }
        let fresh = answers.iter().filter(|(_, _, h)| !replayed(h)).count();
        assert_eq!(fresh, 1, "one answer was made, the others replayed it");

        // Later, the same key and body: the same answer again, still one record.
        let (status, body, headers) = send_full(&app, Method::POST, "/product", &token,
            &[("Idempotency-Key", &key)], Some(latte("Flat white"))).await;
        assert_eq!((status, essence(&body)), (StatusCode::CREATED, first));
        assert!(replayed(&headers));
        assert_eq!(products_named(&app, "Flat white").await, 1);
    }

    async fn the_same_key_with_another_request_is_422_with_message_114(app) {
        let token = app.owner_token().await;
        let key = "order-1234-create";
        let (status, _, _) = send_full(&app, Method::POST, "/product", &token,
            &[("Idempotency-Key", key)], Some(latte("Mocha"))).await;
        assert_eq!(status, StatusCode::CREATED);
        let (status, body, _) = send_full(&app, Method::POST, "/product", &token,
            &[("Idempotency-Key", key)], Some(latte("Cortado"))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["error"]["code"], 422, "{body}");
        assert!(body["api"]["message"]["error"]["114"].is_object(), "{body}");
        assert_eq!(products_named(&app, "Cortado").await, 0, "nothing written");
        // Another method or path under the key is another request too.
        let (status, _, _) = send_full(&app, Method::PUT, "/product", &token,
            &[("Idempotency-Key", key)], Some(latte("Mocha"))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    }

    async fn a_repeated_delete_answers_as_the_first_did(app) {
        let token = app.owner_token().await;
        let (_, body, _) = send_full(&app, Method::POST, "/category", &token, &[],
            Some(json!({"categories": {"c": {"title": "Seasonal"}}}))).await;
        let id = body["categories"]["c"]["id"].to_string();
        let headers = [("categoryIds", id.as_str()), ("Idempotency-Key", "delete-seasonal")];
        let (first, body, _) = send_full(&app, Method::DELETE, "/category", &token, &headers, None).await;
        assert_eq!(first, StatusCode::RESET_CONTENT, "{body}");
        let (again, repeat, h) = send_full(&app, Method::DELETE, "/category", &token, &headers, None).await;
        assert_eq!((again, essence(&repeat)), (first, essence(&body)), "not a 404 the second time");
        assert!(replayed(&h));
        // Without the key the same delete finds nothing left.
        let (status, _, _) = send_full(&app, Method::DELETE, "/category", &token,
            &[("categoryIds", id.as_str())], None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }

    async fn keys_belong_to_their_merchant(app) {
        let demo = app.owner_token().await;
        let second = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        for token in [&demo, &second] {
            let (status, body, headers) = send_full(&app, Method::POST, "/product", token,
                &[("Idempotency-Key", "same-key")], Some(latte("Espresso"))).await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
            assert!(!replayed(&headers), "another merchant's key is another key");
        }
        assert_eq!(products_named(&app, "Espresso").await, 2);
    }

    async fn malformed_keys_and_keys_on_applications_are_400(app) {
        let token = app.owner_token().await;
        let long = "k".repeat(256);
        for bad in ["", "has space", "tab\there", long.as_str()] {
            let res = app.api(Method::POST, "/product", &token)
                .header("Idempotency-Key", bad)
                .json(&latte("Nope"))
                .checked().await.unwrap();
            assert_eq!(res.status(), StatusCode::BAD_REQUEST, "{bad:?}");
            let body: Value = res.json().await.unwrap();
            assert!(body["error"]["details"][0].as_str().unwrap().starts_with("Idempotency-Key"), "{body}");
        }
        let (status, body, _) = send_full(&app, Method::POST, "/application", &token,
            &[("Idempotency-Key", "app-1")],
            Some(json!({"applications": {"a": {"name": "Till", "redirectUris": ["https://till.example/cb"]}}}))).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(products_named(&app, "Nope").await, 0);
    }
}

db_tests! {
    async fn a_repeat_after_a_crash_and_restart_gets_the_stored_answer(db) {
        let served = serve(&db, "info");
        let (token, _) = crate::crash::token_for_demo_owner(&db).await;
        let client = reqwest::Client::new();
        let post = |url: String| {
            client.post(url).bearer_auth(&token).header("x-accept-version", "2.0")
                .header("Idempotency-Key", "till-7-sale-42").json(&latte("Macchiato")).checked()
        };
        let first = post(served.url("/product")).await.unwrap();
        assert_eq!(first.status(), StatusCode::CREATED);
        let first: Value = first.json().await.unwrap();
        served.signal("-KILL");
        let _ = tokio::task::spawn_blocking(move || served.wait()).await.unwrap();

        let again = serve(&db, "info");
        let repeat = post(again.url("/product")).await.unwrap();
        assert_eq!(repeat.status(), StatusCode::CREATED);
        assert_eq!(repeat.headers()["idempotent-replayed"], "true");
        let repeat: Value = repeat.json().await.unwrap();
        assert_eq!(essence(&repeat), essence(&first));
        let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM products WHERE name = 'Macchiato'")
            .fetch_one(&raw_pool(&db.url).await).await.unwrap();
        assert_eq!(n, 1);
    }
}
