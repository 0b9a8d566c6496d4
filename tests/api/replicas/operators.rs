//! What operators and owners change reaches every replica: manifests, erasures, suspensions;
//! and a second server on one SQLite file refuses to start.

use super::*;

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
