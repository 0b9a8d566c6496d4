//! A 201 means durable, and nothing is half-applied: 2,000 concurrent writes (single objects,
//! batches, and sales completing with stock moves) against the real binary, which is killed
//! with SIGKILL in the middle of the load and started again on the same database.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::join_all;
use merchantd::db::Db;
use merchantd::domain::oauth::token::NewFamily;
use merchantd::metrics::Metrics;
use reqwest::StatusCode;
use serde_json::{json, Value};
use tokio::sync::Notify;

use crate::contract::Checked;
use crate::db_tests;
use crate::helpers::{raw_pool, TestDb};
use crate::process::serve;

/// What one write of the load was, and what its answer said.
enum Answered {
    /// A batch of categories `tag-0..n` answered 201.
    Categories { tag: String, n: usize },
    /// A sale of `quantity` units completed (basket id), answered 201.
    Sale { basket: i64, quantity: i64 },
    /// No 201 (refused, failed, or cut off by the kill).
    Not,
}

struct Api {
    client: reqwest::Client,
    base: String,
    token: String,
}

impl Api {
    /// POSTs a batch; the body when answered 201.
    async fn post(&self, path: &str, body: Value) -> Option<Value> {
        let res = self
            .client
            .post(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .header("x-accept-version", "2.0")
            .json(&body)
            .checked()
            .await
            .ok()?;
        if res.status() != StatusCode::CREATED {
            return None;
        }
        res.json().await.ok()
    }
}

pub async fn token_for_demo_owner(db: &TestDb) -> (String, i64) {
    let (token, _, store) = token_for_owner(db, "owner@demo.test").await;
    (token, store)
}

/// An admin access token of the employee whose email is `email`, issued in `db`, with the
/// merchant's id and its first store's.
pub async fn token_for_owner(db: &TestDb, email: &str) -> (String, i64, i64) {
    let sql = raw_pool(&db.url).await;
    let (merchant_id, employee_id, application_id, store): (i64, i64, i64, i64) = sqlx::query_as(
        "SELECT e.merchant_id, e.id, a.id, MIN(s.id) FROM employees e \
         JOIN applications a ON a.merchant_id = e.merchant_id \
         JOIN stores s ON s.merchant_id = e.merchant_id WHERE e.email = $1 \
         GROUP BY e.merchant_id, e.id, a.id LIMIT 1",
    )
    .bind(email)
    .fetch_one(&sql)
    .await
    .unwrap();
    sql.close().await;
    let database = Db::connect(&db.url, Metrics::new()).await.unwrap();
    let token = merchantd::crypto::random_token("mcd_at_");
    let family = NewFamily {
        id: uuid::Uuid::new_v4().to_string(),
        merchant_id,
        employee_id,
        application_id,
        scope: "admin".into(),
    };
    let expires = merchantd::domain::now_millis() + 3_600_000;
    database
        .issue_access_token(&family, &merchantd::crypto::sha256_hex(&token), expires)
        .await
        .unwrap();
    database.close().await;
    (token, merchant_id, store)
}

/// One write of the load: a category, a batch of ten, or a whole sale (basket, payment,
/// completion), by its number.
async fn one_write(api: &Api, i: usize, store: i64, product: i64) -> Answered {
    match i % 4 {
        0 => {
            let tag = format!("single-{i}");
            let body = json!({"categories": {"c": {"title": format!("{tag}-0")}}});
            match api.post("/category", body).await {
                Some(_) => Answered::Categories { tag, n: 1 },
                None => Answered::Not,
            }
        }
        1 => {
            let tag = format!("batch-{i}");
            let objects: serde_json::Map<String, Value> = (0..10)
                .map(|k| (format!("c{k}"), json!({"title": format!("{tag}-{k}")})))
                .collect();
            match api.post("/category", json!({"categories": objects})).await {
                Some(_) => Answered::Categories { tag, n: 10 },
                None => Answered::Not,
            }
        }
        _ => {
            let quantity = 1 + (i % 3) as i64;
            let Some(basket) = api
                .post(
                    "/basket",
                    json!({"baskets": {"b": {"storeId": store,
                    "basketProducts": {"l": {"productId": product, "quantity": quantity}}}}}),
                )
                .await
            else {
                return Answered::Not;
            };
            let id = basket["baskets"]["b"]["id"].as_i64().unwrap_or(0);
            let paid = api
                .post(
                    "/transaction",
                    json!({"transactions": {"t": {"basketId": id,
                    "type": "CARD", "amount": 300 * quantity, "completed": true}}}),
                )
                .await;
            if paid.is_none() {
                return Answered::Not;
            }
            match api
                .post(
                    "/basket",
                    json!({"baskets": {"d": {"id": id, "completed": true}}}),
                )
                .await
            {
                Some(_) => Answered::Sale {
                    basket: id,
                    quantity,
                },
                None => Answered::Not,
            }
        }
    }
}

db_tests! {
    async fn every_write_answered_201_survives_a_kill_and_none_is_half_applied(db) {
        let served = serve(&db, "info");
        let (token, store) = token_for_demo_owner(&db).await;
        let api = Arc::new(Api {
            client: reqwest::Client::builder()
                .pool_max_idle_per_host(64)
                .timeout(Duration::from_secs(30))
                .build()
                .unwrap(),
            base: served.url(""),
            token,
        });
        let product = api
            .post("/product", json!({"products": {"p": {"name": "Latte",
                "instances": {"i": {"price": "300", "taxPercentage": "0.200"}}}}}))
            .await
            .expect("a product")["products"]["p"]["id"]
            .as_i64()
            .unwrap();

        // The kill comes once a hundred sales have completed, with most of the load in flight.
        let sold = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let hundred = Arc::new(Notify::new());
        let writes = (0..2_000).map(|i| {
            let (api, sold, hundred) = (api.clone(), sold.clone(), hundred.clone());
            async move {
                let outcome = one_write(&api, i, store, product).await;
                if matches!(outcome, Answered::Sale { .. })
                    && sold.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 100
                {
                    hundred.notify_one();
                }
                outcome
            }
        });
        let load = tokio::spawn(join_all(writes));
        tokio::time::timeout(Duration::from_secs(120), hundred.notified())
            .await
            .expect("a hundred sales completed");
        served.signal("-KILL");
        let outcomes = load.await.unwrap();
        let (status, _) = tokio::task::spawn_blocking(move || served.wait()).await.unwrap();
        assert!(!status.success(), "the server was killed");

        // Started again on the same database: every 201 is there, whole.
        let again = serve(&db, "info");
        let sql = raw_pool(&db.url).await;
        let titles: Vec<(String,)> = sqlx::query_as("SELECT title FROM categories")
            .fetch_all(&sql)
            .await
            .unwrap();
        let mut per_tag: BTreeMap<String, usize> = BTreeMap::new();
        for (title,) in &titles {
            if let Some((tag, _)) = title.rsplit_once('-') {
                *per_tag.entry(tag.to_owned()).or_default() += 1;
            }
        }
        let (mut categories, mut sales) = (0, 0);
        for outcome in &outcomes {
            match outcome {
                Answered::Categories { tag, n } => {
                    categories += 1;
                    assert_eq!(per_tag.get(tag), Some(n), "{tag}: answered 201, then lost");
                }
                Answered::Sale { basket, quantity } => {
                    sales += 1;
                    let (completed, units): (i64, i64) = sqlx::query_as(
                        "SELECT b.completed, l.quantity FROM baskets b JOIN basket_lines l \
                         ON l.basket_id = b.id AND l.merchant_id = b.merchant_id WHERE b.id = $1",
                    )
                    .bind(basket)
                    .fetch_one(&sql)
                    .await
                    .unwrap();
                    assert_eq!((completed, units), (1, *quantity), "sale {basket}");
                }
                Answered::Not => {}
            }
        }
        // No batch is half there, whether it was answered or cut off.
        for (tag, n) in &per_tag {
            let whole = if tag.starts_with("batch-") { 10 } else { 1 };
            assert_eq!(*n, whole, "{tag} is half applied");
        }
        // Stock moved exactly for the completed sales, no more, no less.
        let (sold, completed_units): (i64, i64) = sqlx::query_as(
            "SELECT CAST((SELECT COALESCE(SUM(stock_sold), 0) FROM stock_levels \
              WHERE product_id = $1) AS BIGINT), \
             CAST((SELECT COALESCE(SUM(l.quantity), 0) FROM basket_lines l JOIN baskets b \
              ON b.id = l.basket_id AND b.merchant_id = l.merchant_id \
              WHERE l.product_id = $1 AND b.completed = 1) AS BIGINT)",
        )
        .bind(product)
        .fetch_one(&sql)
        .await
        .unwrap();
        assert_eq!(sold, completed_units, "stock equals the completed sales");
        println!(
            "{} writes answered 201 before the kill ({categories} category writes, {sales} sales); \
             {} of 2,000 were cut off",
            categories + sales,
            outcomes.iter().filter(|o| matches!(o, Answered::Not)).count()
        );
        assert!(sales >= 100, "the kill came mid-load");
        assert!(outcomes.iter().any(|o| matches!(o, Answered::Not)), "the kill came before the end");

        // And the restarted server reads what was written.
        let res = reqwest::Client::new()
            .get(again.url("/product"))
            .bearer_auth(&api.token)
            .header("x-accept-version", "2.0")
            .header("productIds", product.to_string())
            .header("storeId", store.to_string())
            .checked()
            .await
            .unwrap();
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["products"][product.to_string()]["stockSold"], sold);
    }
}
