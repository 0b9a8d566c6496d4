//! Several `merchantd serve` processes on one PostgreSQL (DESIGN §1 Scale-out): a write
//! answered by one replica is read on another within a second, writes for one merchant stay
//! serialized across replicas, revocations reach every replica's token cache, and a replica
//! that stops hearing the others serves nothing stale. And SQLite, which serves one process,
//! refuses a second.

use std::time::{Duration, Instant};

use futures_util::future::join_all;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::contract::Checked;
use crate::helpers::{metric_value, raw_pool, Backend, TestDb};
use crate::process::{serve, serve_command, serve_with, Served};

/// Two replicas of the demo merchant's API and a token valid on both.
struct Pair {
    a: Served,
    b: Served,
    token: String,
    client: reqwest::Client,
    sql: sqlx::AnyPool,
    store: i64,
}

async fn pair(db: &TestDb, b_settings: &[(&str, &str)]) -> Pair {
    // One after the other: both migrate and apply the manifests at start-up.
    let a = serve(db, "info");
    let b = serve_with(db, "info", b_settings);
    let (token, store) = crate::crash::token_for_demo_owner(db).await;
    let sql = raw_pool(&db.url).await;
    for replica in [&a, &b] {
        wait_ready(replica).await;
    }
    Pair {
        a,
        b,
        token,
        client: reqwest::Client::new(),
        sql,
        store,
    }
}

async fn wait_ready(replica: &Served) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let ready = reqwest::Client::new()
            .get(replica.url("/health/ready"))
            .checked()
            .await
            .unwrap();
        if ready.status() == StatusCode::OK {
            return;
        }
        assert!(Instant::now() < deadline, "the replica never became ready");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

impl Pair {
    async fn call(
        &self,
        on: &Served,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut req = self
            .client
            .request(method, on.url(path))
            .bearer_auth(&self.token)
            .header("x-accept-version", "2.0");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        if let Some(body) = body {
            req = req.json(&body);
        }
        let res = req.checked().await.unwrap();
        let status = res.status();
        (status, res.json().await.unwrap())
    }

    /// POSTs one object and returns it as answered.
    async fn create(&self, on: &Served, path: &str, plural: &str, object: Value) -> Value {
        let (status, body) = self
            .call(
                on,
                Method::POST,
                path,
                &[],
                Some(json!({ plural: {"k": object} })),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "POST {path}: {body}");
        body[plural]["k"].clone()
    }

    async fn category_title(&self, on: &Served, id: i64) -> Option<String> {
        let (status, body) = self
            .call(
                on,
                Method::GET,
                "/category",
                &[("categoryIds", &id.to_string())],
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body["categories"][id.to_string()]["title"]
            .as_str()
            .map(str::to_owned)
    }

    async fn rename(&self, on: &Served, id: i64, title: &str) {
        let (status, body) = self
            .call(
                on,
                Method::PUT,
                "/category",
                &[],
                Some(json!({"categories": {"c": {"id": id, "title": title}}})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }

    /// `(totalStock, stockSold, stockLeft)` of a product at the store, as `on` shows it.
    async fn stock(&self, on: &Served, product: i64) -> (i64, i64, i64) {
        let (_, body) = self
            .call(
                on,
                Method::GET,
                "/product",
                &[
                    ("productIds", &product.to_string()),
                    ("storeId", &self.store.to_string()),
                ],
                None,
            )
            .await;
        let p = &body["products"][product.to_string()];
        (
            p["totalStock"].as_i64().unwrap(),
            p["stockSold"].as_i64().unwrap(),
            p["stockLeft"].as_i64().unwrap(),
        )
    }

    /// `(total_stock, stock_sold)` of a product at the store, in the database.
    async fn stored_stock(&self, product: i64) -> (i64, i64) {
        sqlx::query_as(
            "SELECT total_stock, stock_sold FROM stock_levels \
             WHERE product_id = $1 AND store_id = $2",
        )
        .bind(product)
        .bind(self.store)
        .fetch_one(&self.sql)
        .await
        .unwrap()
    }

    /// Both replicas show `expected` stock for the product within a second.
    async fn both_show(&self, product: i64, expected: (i64, i64, i64)) {
        for replica in [&self.a, &self.b] {
            let shown = within(Duration::from_secs(1), || async {
                self.stock(replica, product).await == expected
            })
            .await;
            assert!(
                shown.is_some(),
                "a replica shows {:?}",
                self.stock(replica, product).await
            );
        }
    }

    async fn product(&self, on: &Served) -> i64 {
        self.create(on, "/product", "products",
            json!({"name": "Latte", "instances": {"i": {"price": "300", "taxPercentage": "0.200"}}}))
            .await["id"]
            .as_i64()
            .unwrap()
    }

    /// A completed invoice receiving `quantity` units at the store.
    fn receive(
        &self,
        on: &Served,
        supplier: i64,
        product: i64,
        quantity: i64,
    ) -> impl std::future::Future<Output = (StatusCode, Value)> + '_ {
        let body = json!({"invoices": {"r": {"storeId": self.store, "supplierId": supplier,
            "reference": "R", "completed": true,
            "items": {"i": {"productId": product, "quantity": quantity, "unitPrice": "1", "vatPercentage": "0.200"}}}}});
        let url = on.url("/invoice");
        async move {
            let res = self
                .client
                .post(url)
                .bearer_auth(&self.token)
                .header("x-accept-version", "2.0")
                .json(&body)
                .checked()
                .await
                .unwrap();
            let status = res.status();
            (status, res.json().await.unwrap())
        }
    }

    /// One unit sold and paid at the store, completed.
    async fn sell_one(&self, on: &Served, product: i64) {
        let basket = self
            .create(
                on,
                "/basket",
                "baskets",
                json!({"storeId": self.store,
            "basketProducts": {"l": {"productId": product, "quantity": 1}}}),
            )
            .await;
        let id = basket["id"].as_i64().unwrap();
        self.create(
            on,
            "/transaction",
            "transactions",
            json!({"basketId": id, "type": "CARD", "amount": 300, "completed": true}),
        )
        .await;
        self.create(
            on,
            "/basket",
            "baskets",
            json!({"id": id, "completed": true}),
        )
        .await;
    }

    async fn metric(&self, on: &Served, name: &str) -> f64 {
        let text = reqwest::Client::new()
            .get(on.url("/metrics"))
            .checked()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        metric_value(&text, name, "")
    }
}

/// Polls until `check` holds, for at most `limit`; returns how long it took.
async fn within<F, Fut>(limit: Duration, mut check: F) -> Option<Duration>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let started = Instant::now();
    while started.elapsed() < limit {
        if check().await {
            return Some(started.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    None
}

async fn postgres() -> Option<TestDb> {
    TestDb::new(Backend::Postgres).await
}

mod operators;
mod writes;
