//! Deliveries across processes: a replica killed mid-delivery, and two replicas sharing the
//! endpoints.

use super::*;

db_tests! {
    // Acceptance 3: the server is killed with SIGKILL in the middle of deliveries and started
    // again: every committed event arrives, and a duplicate carries the same webhook-id (and
    // body) as the first delivery of its event.
    async fn sigkill_mid_delivery_loses_nothing_and_duplicates_keep_their_id(db) {
        sigkill_mid_delivery(&db).await;
    }
}

async fn sigkill_mid_delivery(db: &TestDb) {
    let settings = PROCESS_SETTINGS;
    let receiver = Receiver::start().await;
    receiver.shared.delay_ms.store(15, Ordering::SeqCst);
    let served = serve_with(db, "info", &settings);
    let (token, _) = crate::crash::token_for_demo_owner(db).await;
    let client = reqwest::Client::new();
    let post = |path: &str, body: Value| {
        client
            .post(served.url(path))
            .bearer_auth(&token)
            .header("x-accept-version", "2.0")
            .json(&body)
            .checked()
    };
    let res = post(
        "/webhook",
        json!({"webhooks": {"w": {"url": receiver.url, "events": ["category"]}}}),
    )
    .await
    .unwrap();
    assert_eq!(res.status(), StatusCode::CREATED);
    let body: Value = res.json().await.unwrap();
    let secret = body["webhooks"]["w"]["secret"].as_str().unwrap().to_owned();
    for i in 0..30 {
        let objects: serde_json::Map<String, Value> = (0..10)
            .map(|k| (format!("c{k}"), json!({"title": format!("killed-{i}-{k}")})))
            .collect();
        let res = post("/category", json!({"categories": objects}))
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::CREATED);
    }
    wait_for(Duration::from_secs(30), "deliveries under way", || {
        receiver.got().len() >= 40
    })
    .await;
    served.signal("-KILL");
    let _ = served.wait();
    let before_restart = receiver.got().len();
    assert!(
        before_restart < 300,
        "the kill came in the middle of the deliveries"
    );

    let served = serve_with(db, "info", &settings);
    let sql = crate::helpers::raw_pool(&db.url).await;
    let (merchant,): (i64,) =
        sqlx::query_as("SELECT merchant_id FROM employees WHERE email = 'owner@demo.test'")
            .fetch_one(&sql)
            .await
            .unwrap();
    let expected = logged(&sql, merchant, "category.").await;
    assert_eq!(
        expected.len(),
        300,
        "every write was committed before the kill"
    );
    let wanted: std::collections::BTreeSet<i64> = expected.iter().map(|e| e.0).collect();
    wait_for(
        Duration::from_secs(60),
        "every event after the restart",
        || {
            let seen: std::collections::BTreeSet<i64> =
                receiver.got().iter().map(Received::seq).collect();
            wanted.is_subset(&seen)
        },
    )
    .await;
    drop(served);
    let got = receiver.got();
    let mut first: BTreeMap<i64, &Received> = BTreeMap::new();
    let mut order = Vec::new();
    for received in &got {
        verify(received, &secret, merchant);
        match first.get(&received.seq()) {
            Some(earlier) => {
                assert_eq!(earlier.header("webhook-id"), received.header("webhook-id"));
                assert_eq!(
                    earlier.body, received.body,
                    "a duplicate is the same message"
                );
            }
            None => {
                first.insert(received.seq(), received);
                order.push(received.seq());
            }
        }
    }
    let mut sorted = order.clone();
    sorted.sort_unstable();
    assert_eq!(order, sorted, "first deliveries in the order of the log");
    let delivered: Vec<(i64, String, i64)> = first.values().map(|r| said(r)).collect();
    assert_eq!(delivered, expected, "every committed event, none invented");
    eprintln!(
        "sigkill: {} requests for {} events ({} duplicates), {before_restart} before the kill",
        got.len(),
        expected.len(),
        got.len() - expected.len()
    );
}

async fn succeeded_on(client: &reqwest::Client, served: &crate::process::Served) -> f64 {
    let text = client
        .get(served.url("/metrics"))
        .checked()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    crate::helpers::metric_value(&text, "webhook_deliveries_total", "result=\"succeeded\"")
}

// Two replicas on one PostgreSQL share the endpoints (leases claimed with SKIP LOCKED) and never
// send an attempt twice: every event reaches every endpoint exactly once, in order, and the
// replicas' success counts add up to exactly the deliveries made.
#[actix_rt::test]
async fn two_replicas_share_the_endpoints_and_send_each_event_once() {
    let Some(db) = TestDb::new(crate::helpers::Backend::Postgres).await else {
        return;
    };
    let receiver = Receiver::start().await;
    let a = serve_with(&db, "info", &PROCESS_SETTINGS);
    let b = serve_with(&db, "info", &PROCESS_SETTINGS);
    let (token, _) = crate::crash::token_for_demo_owner(&db).await;
    let client = reqwest::Client::new();
    let post = |on: &crate::process::Served, path: &str, body: Value| {
        client
            .post(on.url(path))
            .bearer_auth(&token)
            .header("x-accept-version", "2.0")
            .json(&body)
            .checked()
    };
    let endpoints = 4;
    for e in 0..endpoints {
        let url = format!("{}&endpoint={e}", receiver.url);
        let res = post(
            &a,
            "/webhook",
            json!({"webhooks": {"w": {"url": url, "events": ["category"]}}}),
        )
        .await
        .unwrap();
        assert_eq!(res.status(), StatusCode::CREATED);
    }
    for i in 0..150 {
        let on = if i % 2 == 0 { &a } else { &b };
        let res = post(
            on,
            "/category",
            json!({"categories": {"c": {"title": format!("replicated-{i}")}}}),
        )
        .await
        .unwrap();
        assert_eq!(res.status(), StatusCode::CREATED);
    }
    let total = 150 * endpoints;
    wait_for(Duration::from_secs(60), "every delivery", || {
        receiver.got().len() >= total
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let got = receiver.got();
    assert_eq!(got.len(), total, "no attempt sent twice");
    let mut per_endpoint: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    let sql = crate::helpers::raw_pool(&db.url).await;
    let (merchant,): (i64,) =
        sqlx::query_as("SELECT merchant_id FROM employees WHERE email = 'owner@demo.test'")
            .fetch_one(&sql)
            .await
            .unwrap();
    let expected: Vec<i64> = logged(&sql, merchant, "category.")
        .await
        .iter()
        .map(|e| e.0)
        .collect();
    for received in &got {
        per_endpoint
            .entry(received.endpoint.clone())
            .or_default()
            .push(received.seq());
    }
    assert_eq!(per_endpoint.len(), endpoints);
    for (endpoint, seqs) in &per_endpoint {
        assert_eq!(
            seqs, &expected,
            "endpoint {endpoint}: each event once, in order"
        );
    }
    let (on_a, on_b) = (
        succeeded_on(&client, &a).await,
        succeeded_on(&client, &b).await,
    );
    assert_eq!(
        on_a + on_b,
        total as f64,
        "the replicas' attempts add up to the deliveries"
    );
    eprintln!("two replicas: {on_a} deliveries from a, {on_b} from b");
}

backend_tests! {
    // The operator's suspension (docs/operator.md): a suspended merchant's webhooks wait (the
    // dispatcher does not claim its endpoints, though retries fall due every 100 ms here) and
    // resume from their cursors once it is resumed; its open event streams end.
    async fn a_suspended_merchants_webhooks_wait_and_its_event_streams_end(app) {
        let receiver = Receiver::start().await;
        let token = app.owner_token().await;
        let demo = app.tenant("demo").id.to_string();
        create(&app, &token, &receiver.url, json!(["category"])).await;
        categories(&app, &token, 1, 1).await;
        wait_for(Duration::from_secs(20), "the first delivery", || receiver.accepted().len() == 1).await;
        let mut stream = crate::events::Stream::open(&app, &token, &[]).await;

        // A delivery left failing, then the suspension, then the receiver back.
        receiver.fail(true);
        categories(&app, &token, 1, 1).await;
        wait_for(Duration::from_secs(20), "a failed attempt", || {
            receiver.got().iter().any(|r| r.status == 500)
        }).await;
        let op = crate::operator::operator_token(&app.database.url).await;
        let (status, body) = crate::operator::operator(&app, Method::POST,
            "/operator/merchant/suspend", &op, &[("merchantIds", &demo)], None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        // The stream's next token check (every 5 s) ends it.
        assert!(stream.ends_within(Duration::from_secs(8)).await, "the event stream ended");
        // An attempt may have been claimed before the suspension committed: let it land.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let attempts = receiver.got().len();
        receiver.fail(false);
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert_eq!(receiver.got().len(), attempts, "no delivery while suspended");
        assert!(receiver.accepted().len() == 1);

        let (status, _) = crate::operator::operator(&app, Method::POST,
            "/operator/merchant/resume", &op, &[("merchantIds", &demo)], None).await;
        assert_eq!(status, StatusCode::OK);
        wait_for(Duration::from_secs(20), "the waiting delivery", || receiver.accepted().len() == 2).await;
        let accepted = receiver.accepted();
        assert_eq!(accepted[1].seq(), accepted[0].seq() + 1, "from its cursor, in order");
    }
}
