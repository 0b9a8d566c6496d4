//! Writes across replicas: read on the other within a second, serialized per merchant, stock
//! exact, revocations heard, and nothing stale when a replica stops hearing the others.

use super::*;

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
