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

#[actix_rt::test]
async fn a_write_answered_by_one_replica_is_read_on_the_other_within_a_second() {
    let Some(db) = postgres().await else { return };
    let p = pair(&db, &[]).await;
    let category = p
        .create(&p.a, "/category", "categories", json!({"title": "Drinks"}))
        .await;
    let id = category["id"].as_i64().unwrap();
    // B has the merchant cached from here on.
    let seen = within(Duration::from_secs(1), || async {
        p.category_title(&p.b, id).await.as_deref() == Some("Drinks")
    })
    .await;
    println!("a new category reached the other replica after {seen:?}");
    assert!(seen.is_some(), "B did not see A's new category within 1 s");

    for round in 0..5 {
        let (writer, reader) = if round % 2 == 0 {
            (&p.a, &p.b)
        } else {
            (&p.b, &p.a)
        };
        let title = format!("Drinks {round}");
        p.rename(writer, id, &title).await;
        let seen = within(Duration::from_secs(1), || async {
            p.category_title(reader, id).await.as_deref() == Some(title.as_str())
        })
        .await;
        println!("rename {round} reached the other replica after {seen:?}");
        assert!(
            seen.is_some(),
            "round {round}: the rename was not read on the other replica within 1 s"
        );
    }
    assert!(p.metric(&p.b, "merchant_reloads_total").await >= 1.0);
}

#[actix_rt::test]
async fn concurrent_writes_split_across_replicas_land_once_with_stock_exact() {
    let Some(db) = postgres().await else { return };
    let p = pair(&db, &[]).await;
    let product = p.product(&p.a).await;
    let supplier = p
        .create(
            &p.b,
            "/supplier",
            "suppliers",
            json!({"name": "Bean Brothers"}),
        )
        .await["id"]
        .as_i64()
        .unwrap();
    // Both replicas hold the merchant before the burst.
    assert_eq!(p.stock(&p.a, product).await, (0, 0, 0));
    assert_eq!(p.stock(&p.b, product).await, (0, 0, 0));

    let writes =
        (0..500).map(|i| p.receive(if i % 2 == 0 { &p.a } else { &p.b }, supplier, product, 1));
    let answers = join_all(writes).await;
    for (status, body) in &answers {
        assert_eq!(*status, StatusCode::CREATED, "{body}");
    }
    let (invoices,): (i64,) =
        sqlx::query_as("SELECT COUNT(*) FROM invoices WHERE supplier_id = $1")
            .bind(supplier)
            .fetch_one(&p.sql)
            .await
            .unwrap();
    assert_eq!(invoices, 500, "every write landed exactly once");
    assert_eq!(p.stored_stock(product).await, (500, 0), "in the database");
    p.both_show(product, (500, 0, 500)).await;
}

#[actix_rt::test]
async fn a_sale_on_one_replica_and_a_count_on_the_other_never_double_count() {
    let Some(db) = postgres().await else { return };
    let p = pair(&db, &[]).await;
    let product = p.product(&p.a).await;
    let supplier = p
        .create(
            &p.a,
            "/supplier",
            "suppliers",
            json!({"name": "Bean Brothers"}),
        )
        .await["id"]
        .as_i64()
        .unwrap();
    let (status, body) = p.receive(&p.a, supplier, product, 100).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    for sold in 1..=10 {
        // B holds the stock as it was; A sells one; B counts what is really on the shelf at
        // once. Validated against B's old stock, the count would book the sale again as
        // wastage.
        let current = within(Duration::from_secs(1), || async {
            p.stock(&p.b, product).await.2 == 100 - (sold - 1)
        })
        .await;
        assert!(current.is_some());
        p.sell_one(&p.a, product).await;
        let count = p.create(&p.b, "/stock/reconcile", "stockReconciliations", json!({"storeId": p.store,
            "completed": true, "products": {product.to_string(): {"productId": product, "quantity": 100 - sold}}})).await;
        assert_eq!(count["completed"], true, "{count}");
    }
    assert_eq!(
        p.stored_stock(product).await,
        (100, 10),
        "ten sales, and no count booked one of them again"
    );
    p.both_show(product, (100, 10, 90)).await;
}

#[actix_rt::test]
async fn a_revocation_on_one_replica_fails_the_token_on_the_other_within_a_second() {
    let Some(db) = postgres().await else { return };
    let p = pair(&db, &[]).await;
    // B has the token cached.
    let (status, _) = p.call(&p.b, Method::GET, "/category", &[], None).await;
    assert_eq!(status, StatusCode::OK);
    let revoked = p
        .client
        .post(p.a.url("/oauth/revoke"))
        .form(&[
            ("token", p.token.as_str()),
            ("client_id", "demo-pos"),
            ("client_secret", "demo-pos-secret"),
        ])
        .checked()
        .await
        .unwrap();
    assert_eq!(revoked.status(), StatusCode::OK);
    let refused = within(Duration::from_secs(1), || async {
        p.call(&p.b, Method::GET, "/category", &[], None).await.0 == StatusCode::UNAUTHORIZED
    })
    .await;
    println!("the revocation reached the other replica after {refused:?}");
    assert!(
        refused.is_some(),
        "the revoked token still works on B after 1 s"
    );
}

#[actix_rt::test]
async fn a_replica_that_lost_its_listening_connection_serves_nothing_stale() {
    let Some(db) = postgres().await else { return };
    // B waits two seconds before listening again: an outage long enough to write through.
    let p = pair(&db, &[("MERCHANTD_TEST_LISTEN_RETRY_MS", "2000")]).await;
    let category = p
        .create(&p.a, "/category", "categories", json!({"title": "v0"}))
        .await;
    let id = category["id"].as_i64().unwrap();
    assert_eq!(p.category_title(&p.b, id).await.as_deref(), Some("v0"));
    assert_eq!(p.metric(&p.b, "replica_listens_total").await, 1.0);

    let (terminated,): (i64,) = sqlx::query_as(
        "SELECT COUNT(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE application_name = $1) t",
    )
    .bind(format!("merchantd-listener-{}", p.b.pid()))
    .fetch_one(&p.sql)
    .await
    .unwrap();
    assert_eq!(
        terminated, 1,
        "B's listening connection was found and terminated"
    );
    let not_ready = within(Duration::from_secs(2), || async {
        reqwest::Client::new()
            .get(p.b.url("/health/ready"))
            .checked()
            .await
            .unwrap()
            .status()
            == StatusCode::SERVICE_UNAVAILABLE
    })
    .await;
    assert!(
        not_ready.is_some(),
        "B reports not ready while it cannot listen"
    );

    // While B cannot hear A, what A writes is still what B reads.
    for round in 1..=3 {
        let title = format!("v{round}");
        p.rename(&p.a, id, &title).await;
        assert_eq!(
            p.category_title(&p.b, id).await.as_deref(),
            Some(title.as_str()),
            "during the outage"
        );
    }
    // Once B listens again, it is ready and hears A as before.
    wait_ready(&p.b).await;
    assert_eq!(p.metric(&p.b, "replica_listens_total").await, 2.0);
    p.rename(&p.a, id, "after").await;
    let seen = within(Duration::from_secs(1), || async {
        p.category_title(&p.b, id).await.as_deref() == Some("after")
    })
    .await;
    assert!(seen.is_some(), "B hears A again after reconnecting");
}

#[actix_rt::test]
async fn a_manifest_applied_while_serving_reaches_the_replicas() {
    let Some(db) = postgres().await else { return };
    let p = pair(&db, &[]).await;
    let (_, stores) = p.call(&p.b, Method::GET, "/store", &[], None).await;
    let names: Vec<&str> = stores["stores"]
        .as_object()
        .unwrap()
        .values()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(names, ["High Street"]);
    // The demo manifest with its store renamed, applied by the CLI beside the two servers.
    let manifest = std::fs::read_to_string(crate::helpers::tenants_dir(db.dir()).join("demo.toml"))
        .unwrap()
        .replace("name = \"High Street\"", "name = \"High St\"");
    let file = db.dir().join("renamed.toml");
    std::fs::write(&file, manifest).unwrap();
    let out = std::process::Command::new(crate::helpers::binary())
        .args(["tenant", "apply"])
        .arg(&file)
        .args(["--database-url", &db.url])
        .env("MERCHANTD_PBKDF2_ITERATIONS", "1000")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for replica in [&p.a, &p.b] {
        let renamed = within(Duration::from_secs(1), || async {
            let (_, body) = p.call(replica, Method::GET, "/store", &[], None).await;
            body["stores"]
                .as_object()
                .unwrap()
                .values()
                .any(|s| s["name"] == "High St")
        })
        .await;
        assert!(
            renamed.is_some(),
            "a replica still shows the old store name"
        );
    }
}

/// A record of replica B, deleted or not, as JSON text.
async fn shown_on_b(p: &Pair, path: &str, header: &str, id: String) -> String {
    let (status, body) = p
        .call(
            &p.b,
            Method::GET,
            path,
            &[(header, &id), ("deleted", "true")],
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body.to_string()
}

#[actix_rt::test]
async fn an_erase_on_one_replica_leaves_nothing_personal_on_the_other() {
    let Some(db) = postgres().await else { return };
    let p = pair(&db, &[]).await;
    let product = p.product(&p.a).await;
    let customer = p
        .create(
            &p.a,
            "/customer",
            "customers",
            json!({"name": "Annabel Quigley", "email": "annabel.q@example.com"}),
        )
        .await;
    let customer = customer["id"].as_i64().unwrap();
    let basket = p
        .create(
            &p.a,
            "/basket",
            "baskets",
            json!({"storeId": p.store, "customerId": customer,
            "basketProducts": {"l": {"productId": product, "quantity": 1}}}),
        )
        .await;
    let basket = basket["id"].as_i64().unwrap();
    p.create(
        &p.a,
        "/transaction",
        "transactions",
        json!({"basketId": basket, "type": "CARD", "amount": 300, "completed": true}),
    )
    .await;
    p.create(
        &p.a,
        "/basket",
        "baskets",
        json!({"id": basket, "completed": true}),
    )
    .await;
    // A finished order: history, which a replica may keep in its cache once read.
    let order = p
        .create(
            &p.a,
            "/order",
            "orders",
            json!({"basketId": basket, "fulfilment": "collection",
            "customerName": "Annabel Quigley", "customerEmail": "annabel.q@example.com",
            "status": "completed"}),
        )
        .await;
    let order = order["id"].as_i64().unwrap().to_string();
    let customer_id = customer.to_string();
    let read = |what: &'static str| {
        let (path, header, id) = match what {
            "order" => ("/order", "orderIds", order.clone()),
            _ => ("/customer", "customerIds", customer_id.clone()),
        };
        shown_on_b(&p, path, header, id)
    };
    // B reads both before the erase (and has them cached, if it caches them).
    let seen = within(Duration::from_secs(2), || async {
        read("order").await.contains("annabel.q@example.com")
            && read("customer").await.contains("annabel.q@example.com")
    })
    .await;
    assert!(seen.is_some(), "B never showed the order and the customer");
    let (status, body) = p
        .call(
            &p.a,
            Method::POST,
            "/customer/erase",
            &[("customerIds", &customer_id)],
            None,
        )
        .await;
    assert_eq!(status, StatusCode::RESET_CONTENT, "{body}");
    let gone = within(Duration::from_secs(2), || async {
        let (order, customer) = (read("order").await, read("customer").await);
        !order.contains("annabel")
            && !customer.contains("annabel")
            && customer.contains("Erased customer")
    })
    .await;
    assert!(
        gone.is_some(),
        "B still shows personal data: {} {}",
        read("order").await,
        read("customer").await
    );
}

#[actix_rt::test]
async fn a_second_server_on_one_sqlite_file_refuses_to_start() {
    let db = TestDb::new(Backend::Sqlite).await.expect("sqlite db");
    let first = serve(&db, "info");
    let second = serve_command(&db)
        .env("RUST_LOG", "info")
        .output()
        .expect("run a second merchantd");
    assert!(!second.status.success(), "the second server started");
    let stderr = String::from_utf8_lossy(&second.stderr);
    let file = db.url.trim_start_matches("sqlite://");
    let file = file.split('?').next().unwrap();
    assert!(stderr.contains(file), "the error names the file: {stderr}");
    assert!(stderr.contains("already serving"), "{stderr}");
    // The first one is unharmed.
    let live = reqwest::Client::new()
        .get(first.url("/health/ready"))
        .checked()
        .await
        .unwrap();
    assert_eq!(live.status(), StatusCode::OK);
}

/// The operator suspends the merchant through replica A: every one of its tokens gets 403 (109)
/// on replica B too within a second (the token B cached included), and works again on both once
/// resumed.
#[actix_rt::test]
async fn a_suspension_reaches_every_replica_within_a_second() {
    let Some(db) = postgres().await else { return };
    let p = pair(&db, &[]).await;
    let op = crate::operator::operator_token(&db.url).await;
    let merchant_id: i64 =
        sqlx::query_scalar("SELECT id FROM merchants WHERE manifest_key = 'demo'")
            .fetch_one(&p.sql)
            .await
            .unwrap();
    for replica in [&p.a, &p.b] {
        let (status, _) = p.call(replica, Method::GET, "/category", &[], None).await;
        assert_eq!(status, StatusCode::OK, "the token is cached on both");
    }
    let operator = |path: &str| {
        p.client
            .post(p.a.url(path))
            .bearer_auth(&op)
            .header("merchantIds", merchant_id.to_string())
    };
    let res = operator("/operator/merchant/suspend")
        .checked()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let suspended_at = Instant::now();
    for replica in [&p.b, &p.a] {
        let refused = within(Duration::from_secs(1), || async {
            p.call(replica, Method::GET, "/category", &[], None).await.0 == StatusCode::FORBIDDEN
        })
        .await;
        assert!(
            refused.is_some(),
            "a replica still serves the suspended merchant"
        );
    }
    let took = suspended_at.elapsed();
    eprintln!(
        "suspension seen on both replicas after {} ms",
        took.as_millis()
    );
    let (_, body) = p.call(&p.b, Method::GET, "/category", &[], None).await;
    assert_eq!(crate::operator::message_ids(&body), vec![109], "{body}");
    let res = operator("/operator/merchant/resume")
        .checked()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    for replica in [&p.b, &p.a] {
        let served = within(Duration::from_secs(1), || async {
            p.call(replica, Method::GET, "/category", &[], None).await.0 == StatusCode::OK
        })
        .await;
        assert!(
            served.is_some(),
            "a replica still refuses the resumed merchant"
        );
    }
}
