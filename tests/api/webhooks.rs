//! Signed webhooks (events issue, acceptance 1, 2, 3 and 6): a receiver on loopback records
//! every request and the tests verify each signature with the Standard Webhooks project's own
//! library (`standardwebhooks`), never with our code.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use futures_util::future::join_all;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::contract::Checked;
use crate::helpers::{send, send_full, TestApp, TestDb};
use crate::process::serve_with;
use crate::{backend_tests, backend_tests_with, db_tests};

/// One request the receiver got.
#[derive(Clone, Debug)]
pub(crate) struct Received {
    /// The path and query it was sent to.
    endpoint: String,
    headers: reqwest::header::HeaderMap,
    body: Vec<u8>,
    /// What the receiver answered.
    status: u16,
}

impl Received {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }

    pub(crate) fn seq(&self) -> i64 {
        self.json()["sequence"].as_i64().expect("a sequence")
    }

    pub(crate) fn header(&self, name: &str) -> &str {
        self.headers[name].to_str().expect("a text header")
    }
}

#[derive(Default)]
struct Shared {
    got: Mutex<Vec<Received>>,
    failing: AtomicBool,
    delay_ms: AtomicU64,
}

/// A webhook receiver on a random loopback port.
pub(crate) struct Receiver {
    pub(crate) url: String,
    shared: Arc<Shared>,
    handle: actix_web::dev::ServerHandle,
}

async fn receive(req: HttpRequest, body: web::Bytes, shared: web::Data<Shared>) -> HttpResponse {
    let delay = shared.delay_ms.load(Ordering::SeqCst);
    if delay > 0 {
        tokio::time::sleep(Duration::from_millis(delay)).await;
    }
    let mut headers = reqwest::header::HeaderMap::new();
    for (name, value) in req.headers() {
        let name = reqwest::header::HeaderName::from_bytes(name.as_str().as_bytes()).unwrap();
        let value = reqwest::header::HeaderValue::from_bytes(value.as_bytes()).unwrap();
        headers.append(name, value);
    }
    let failing = shared.failing.load(Ordering::SeqCst);
    let status = if failing { 500 } else { 204 };
    shared.got.lock().unwrap().push(Received {
        endpoint: req.uri().to_string(),
        headers,
        body: body.to_vec(),
        status,
    });
    if failing {
        HttpResponse::InternalServerError().body("receiver down for maintenance")
    } else {
        HttpResponse::NoContent().finish()
    }
}

impl Receiver {
    pub(crate) async fn start() -> Self {
        let shared = Arc::new(Shared::default());
        let data = web::Data::from(shared.clone());
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .default_service(web::to(receive))
        })
        .workers(1)
        .bind("127.0.0.1:0")
        .expect("bind the receiver");
        let port = server.addrs()[0].port();
        let server = server.run();
        let handle = server.handle();
        actix_rt::spawn(server);
        Self {
            url: format!("http://127.0.0.1:{port}/hooks/merchantd?key=receiver-credential"),
            shared,
            handle,
        }
    }

    fn got(&self) -> Vec<Received> {
        self.shared.got.lock().unwrap().clone()
    }

    /// The deliveries the receiver accepted, in arrival order.
    pub(crate) fn accepted(&self) -> Vec<Received> {
        self.got().into_iter().filter(|r| r.status == 204).collect()
    }

    fn fail(&self, failing: bool) {
        self.shared.failing.store(failing, Ordering::SeqCst);
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let handle = self.handle.clone();
        actix_rt::spawn(async move { handle.stop(false).await });
    }
}

/// Creates an endpoint; gives its id and the secret shown once.
async fn create(app: &TestApp, token: &str, url: &str, events: Value) -> (i64, String) {
    let (status, body, headers) = send_full(
        app,
        Method::POST,
        "/webhook",
        token,
        &[],
        Some(json!({"webhooks": {"w": {"url": url, "events": events, "description": "test receiver"}}})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(headers["cache-control"], "no-store");
    let hook = &body["webhooks"]["w"];
    let secret = hook["secret"]
        .as_str()
        .expect("the secret, once")
        .to_owned();
    assert!(secret.starts_with("whsec_"), "{secret}");
    (hook["id"].as_i64().unwrap(), secret)
}

/// Waits (at most `within`) for `done`, polling.
pub(crate) async fn wait_for(within: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// The merchant's logged events whose type starts with `prefix`: (sequence, type, object id).
pub(crate) async fn logged(
    sql: &sqlx::AnyPool,
    merchant_id: i64,
    prefix: &str,
) -> Vec<(i64, String, i64)> {
    sqlx::query_as(
        "SELECT seq, event_type, object_id FROM events \
         WHERE merchant_id = $1 AND event_type LIKE $2 ORDER BY seq",
    )
    .bind(merchant_id)
    .bind(format!("{prefix}%"))
    .fetch_all(sql)
    .await
    .unwrap()
}

/// What a delivery says: (sequence, type, object id).
fn said(received: &Received) -> (i64, String, i64) {
    let body = received.json();
    (
        body["sequence"].as_i64().unwrap(),
        body["type"].as_str().unwrap().to_owned(),
        body["objectId"].as_i64().unwrap(),
    )
}

/// Checks a delivery's signature with the Standard Webhooks library and its id's form.
fn verify(received: &Received, secret: &str, merchant_id: i64) {
    let hook = standardwebhooks::Webhook::new(secret).expect("a Standard Webhooks secret");
    hook.verify(&received.body, &received.headers)
        .unwrap_or_else(|e| {
            panic!(
                "signature of {} does not verify: {e:?}",
                received.header("webhook-id")
            )
        });
    assert_eq!(
        received.header("webhook-id"),
        format!("msg_{merchant_id}_{}", received.seq())
    );
    assert_eq!(received.header("content-type"), "application/json");
}

async fn categories(app: &TestApp, token: &str, n: usize, workers: usize) {
    let per = n / workers;
    join_all((0..workers).map(|w| async move {
        for i in 0..per {
            let title = format!("hooked-{w}-{i}");
            let (status, body) = send(
                app,
                Method::POST,
                "/category",
                token,
                &[],
                Some(json!({"categories": {"c": {"title": title}}})),
            )
            .await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
        }
    }))
    .await;
}

backend_tests! {
    // Acceptance 1: 1,000 writes, every event delivered once, in order, each signature
    // verified by the Standard Webhooks library; events the filter leaves out never come.
    async fn a_thousand_writes_arrive_signed_in_order_and_none_missing(app) {
        let receiver = Receiver::start().await;
        let token = app.owner_token().await;
        let merchant = app.tenant("demo").id;
        let (hook, secret) = create(&app, &token, &receiver.url, json!(["category"])).await;
        categories(&app, &token, 1_000, 8).await;
        let (status, _) = send(&app, Method::POST, "/product", &token, &[],
            Some(json!({"products": {"p": {"name": "Not delivered"}}}))).await;
        assert_eq!(status, StatusCode::CREATED);
        let expected = logged(&app.sql, merchant, "category.").await;
        assert_eq!(expected.len(), 1_000);
        wait_for(Duration::from_secs(90), "1,000 deliveries", || receiver.got().len() >= 1_000).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let got = receiver.got();
        let delivered: Vec<(i64, String, i64)> = got.iter().map(said).collect();
        assert_eq!(delivered, expected, "exactly the logged events, in order, once each");
        for received in &got {
            verify(received, &secret, merchant);
        }
        let (status, body) = send(&app, Method::GET, "/webhook/delivery", &token,
            &[("webhookId", &hook.to_string()), ("status", "succeeded"), ("limit", "1000")], None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let listed = body["deliveries"].as_array().unwrap();
        assert_eq!(listed.len(), 1_000);
        assert_eq!(listed[0]["sequence"], expected.last().unwrap().0, "newest first");
        assert_eq!(listed[0]["attempts"][0]["statusCode"], 204);
        assert_eq!(listed[0]["messageId"], format!("msg_{merchant}_{}", expected.last().unwrap().0));
        let metrics = app.metrics_text().await;
        assert!(crate::helpers::metric_value(&metrics, "webhook_deliveries_total", "result=\"succeeded\"") >= 1_000.0);
        assert!(metrics.contains("webhook_delivery_latency_seconds_count"));
        assert!(metrics.contains("webhook_queue_depth"));
    }

    // Acceptance 2: a receiver down for a while gets every event after retries, in order; the
    // attempts are listed with their statuses.
    async fn a_receiver_that_fails_for_a_while_gets_everything_in_order(app) {
        let receiver = Receiver::start().await;
        receiver.fail(true);
        let token = app.owner_token().await;
        let merchant = app.tenant("demo").id;
        let (hook, secret) = create(&app, &token, &receiver.url, json!(["category.created"])).await;
        categories(&app, &token, 20, 1).await;
        wait_for(Duration::from_secs(20), "four failed attempts", || receiver.got().len() >= 4).await;
        let first = receiver.got()[0].seq();
        assert!(receiver.got().iter().all(|r| r.seq() == first), "nothing overtakes a failing delivery");
        receiver.fail(false);
        wait_for(Duration::from_secs(30), "20 accepted deliveries", || receiver.accepted().len() >= 20).await;
        let expected = logged(&app.sql, merchant, "category.created").await;
        let accepted: Vec<(i64, String, i64)> = receiver.accepted().iter().map(said).collect();
        assert_eq!(accepted, expected);
        let failed_tries = receiver.got().iter().filter(|r| r.status == 500).count();
        for received in receiver.got() {
            verify(&received, &secret, merchant);
        }
        let (status, body) = send(&app, Method::GET, "/webhook/delivery", &token,
            &[("webhookId", &hook.to_string()), ("limit", "1000")], None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let head = body["deliveries"].as_array().unwrap().iter()
            .find(|d| d["sequence"] == first).expect("the first delivery is listed");
        assert_eq!(head["status"], "succeeded");
        let statuses: Vec<i64> = head["attempts"].as_array().unwrap().iter()
            .map(|a| a["statusCode"].as_i64().unwrap()).collect();
        assert_eq!(statuses.len(), failed_tries + 1, "{head}");
        assert!(statuses[..failed_tries].iter().all(|s| *s == 500) && statuses[failed_tries] == 204, "{statuses:?}");
        assert_eq!(head["attempts"][0]["response"], "receiver down for maintenance");
        assert!(head["attempts"][0]["durationMs"].is_i64());
        assert_eq!(head["attemptCount"], failed_tries as i64 + 1);
        let metrics = app.metrics_text().await;
        assert!(crate::helpers::metric_value(&metrics, "webhook_deliveries_total", "result=\"retrying\"") >= 4.0);
    }

    // Rotating the secret: deliveries carry both signatures through the overlap, so a
    // receiver holding either verifies them.
    async fn a_rotated_secret_signs_beside_the_old_one(app) {
        let receiver = Receiver::start().await;
        let token = app.owner_token().await;
        let merchant = app.tenant("demo").id;
        let (hook, old) = create(&app, &token, &receiver.url, json!(["category"])).await;
        let (status, body, headers) = send_full(&app, Method::PUT, "/webhook", &token, &[],
            Some(json!({"webhooks": {"r": {"id": hook, "rotateSecret": true}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(headers["cache-control"], "no-store");
        let new = body["webhooks"]["r"]["secret"].as_str().unwrap().to_owned();
        assert_ne!(new, old);
        let (_, listed) = send(&app, Method::GET, "/webhook", &token, &[], None).await;
        assert!(!listed.to_string().contains("whsec_"), "a read never shows a secret: {listed}");
        categories(&app, &token, 1, 1).await;
        wait_for(Duration::from_secs(20), "a delivery", || !receiver.got().is_empty()).await;
        let received = &receiver.got()[0];
        assert_eq!(received.header("webhook-signature").split(' ').count(), 2);
        verify(received, &old, merchant);
        verify(received, &new, merchant);
        let events = logged(&app.sql, merchant, "webhook.").await;
        let kinds: Vec<&str> = events.iter().map(|e| e.1.as_str()).collect();
        assert_eq!(kinds, ["webhook.created", "webhook.updated", "webhook.secret_rotated"]);
        // Events reach `read` streams and other endpoints: they show the URL's origin only,
        // never its path or query (where a receiver's credentials may be).
        let (data,): (String,) = sqlx::query_as(
            "SELECT data FROM events WHERE merchant_id = $1 AND event_type = 'webhook.created'")
            .bind(merchant).fetch_one(&app.sql).await.unwrap();
        let shown: Value = serde_json::from_str(&data).unwrap();
        assert!(receiver.url.contains("receiver-credential"));
        assert_eq!(shown["url"].as_str().unwrap(), receiver.url.split("/hooks").next().unwrap());
        assert!(!data.contains("receiver-credential"), "{data}");
    }

    // Isolation: another merchant neither sees nor touches an endpoint or its deliveries, and
    // a token without admin cannot even read them.
    async fn another_merchants_webhooks_are_invisible_and_untouchable(app) {
        let receiver = Receiver::start().await;
        let demo = app.owner_token().await;
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let (hook, _) = create(&app, &demo, &receiver.url, json!([])).await;
        let id = hook.to_string();
        let (status, body) = send(&app, Method::GET, "/webhook", &other, &[("webhookIds", &id), ("deleted", "true")], None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["webhooks"], json!({}));
        let (status, _) = send(&app, Method::GET, "/webhook/delivery", &other, &[("webhookId", &id)], None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (status, _) = send(&app, Method::POST, "/webhook/resend", &other, &[],
            Some(json!({"webhookId": hook, "sequences": [1]}))).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (status, _) = send(&app, Method::PUT, "/webhook", &other, &[],
            Some(json!({"webhooks": {"x": {"id": hook, "url": "http://127.0.0.1:1/stolen", "rotateSecret": true}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        let (status, _) = send(&app, Method::DELETE, "/webhook", &other, &[("webhookIds", &id)], None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (_, body) = send(&app, Method::GET, "/webhook", &demo, &[("webhookId", &id)], None).await;
        assert_eq!(body["webhooks"][&id]["url"], receiver.url);
        let reader = app.token_for("demo", "owner@demo.test", "read write", 3600).await;
        let (status, _) = send(&app, Method::GET, "/webhook", &reader, &[], None).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let (status, _) = send(&app, Method::GET, "/webhook/delivery", &reader, &[("webhookId", &id)], None).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let (status, body) = send(&app, Method::GET, "/webhook/delivery", &demo, &[("status", "lost")], None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let details = body["error"]["details"].to_string();
        assert!(details.contains("webhookId: the header is missing.") && details.contains("status: must be pending, succeeded or failed."), "{details}");
    }
}

backend_tests_with! {
    |s| s.webhook_retry_for_secs = 1;
    // An endpoint failing for the whole retry window is turned off, with `webhook.disabled`
    // saying why; turned on again, its failed delivery can be resent.
    async fn an_endpoint_failing_past_the_window_is_turned_off_and_can_resend(app) {
        let receiver = Receiver::start().await;
        receiver.fail(true);
        let token = app.owner_token().await;
        let merchant = app.tenant("demo").id;
        let (hook, _) = create(&app, &token, &receiver.url, json!(["category"])).await;
        categories(&app, &token, 1, 1).await;
        let id = hook.to_string();
        let mut record = Value::Null;
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            let (_, body) = send(&app, Method::GET, "/webhook", &token, &[("webhookId", &id)], None).await;
            record = body["webhooks"][&id].clone();
            if record["active"] == false {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(record["active"], false, "{record}");
        let reason = record["disabledReason"].as_str().unwrap();
        assert!(reason.contains("the last attempt: HTTP 500"), "{reason}");
        let disabled = logged(&app.sql, merchant, "webhook.disabled").await;
        assert_eq!(disabled.len(), 1);
        // The endpoint is turned off during the last attempt, whose outcome (the delivery
        // failed) is written with the dispatcher's batch right after: wait for it.
        let mut body = Value::Null;
        while Instant::now() < deadline {
            body = send(&app, Method::GET, "/webhook/delivery", &token,
                &[("webhookId", &id), ("status", "failed")], None).await.1;
            if !body["deliveries"].as_array().unwrap().is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let failed = body["deliveries"].as_array().unwrap();
        assert_eq!(failed.len(), 1, "{body}");
        let seq = failed[0]["sequence"].as_i64().unwrap();

        receiver.fail(false);
        let (status, body) = send(&app, Method::PUT, "/webhook", &token, &[],
            Some(json!({"webhooks": {"on": {"id": hook, "active": true}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert!(body["webhooks"]["on"]["disabledReason"].is_null());
        let (status, body) = send(&app, Method::POST, "/webhook/resend", &token, &[],
            Some(json!({"webhookId": hook, "sequences": [seq]}))).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["resent"], json!([seq]));
        wait_for(Duration::from_secs(20), "the resent delivery", || {
            receiver.accepted().iter().any(|r| r.seq() == seq)
        }).await;
        let (status, _) = send(&app, Method::POST, "/webhook/resend", &token, &[],
            Some(json!({"webhookId": hook, "sequences": [seq + 1000]}))).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }
}

backend_tests_with! {
    |s| s.webhook_allow_private_addresses = false;
    // Acceptance 6: URLs at loopback, private, link-local and metadata addresses are refused
    // with a message that says why and which setting allows them.
    async fn private_addresses_are_refused_unless_allowed(app) {
        let token = app.owner_token().await;
        let (status, body) = send(&app, Method::POST, "/webhook", &token, &[],
            Some(json!({"webhooks": {
                "loop": {"url": "http://127.0.0.1:9000/hook"},
                "lan": {"url": "https://10.1.2.3/hook"},
                "meta": {"url": "http://169.254.169.254/latest/meta-data/"},
                "name": {"url": "http://localhost:8080/hook"},
                "v6": {"url": "http://[::1]/hook"}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        let details = body["error"]["details"].to_string();
        for expected in [
            "loop: url: 127.0.0.1 is a loopback address; webhooks are delivered to public addresses only (an operator can allow others with the setting webhook_allow_private_addresses).",
            "lan: url: 10.1.2.3 is a private address",
            "meta: url: 169.254.169.254 is a link-local (cloud metadata) address",
            "name: url: localhost is a loopback address",
            "v6: url: ::1 is a loopback address",
        ] {
            assert!(details.contains(expected), "{expected} in {details}");
        }
        assert!(!body.to_string().contains("whsec_"), "no secret for refused objects");
        // A public address is taken (its events filter keeps the dispatcher from calling it).
        let (status, body) = send(&app, Method::POST, "/webhook", &token, &[],
            Some(json!({"webhooks": {"w": {"url": "https://93.184.216.34/hook", "events": ["stock_count.completed"]}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
}

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

/// The webhook settings of the process tests: loopback receivers, quick polls and retries.
pub(crate) const PROCESS_SETTINGS: [(&str, &str); 4] = [
    ("MERCHANTD_WEBHOOK_ALLOW_PRIVATE_ADDRESSES", "true"),
    ("MERCHANTD_WEBHOOK_POLL_MS", "50"),
    ("MERCHANTD_WEBHOOK_TIMEOUT_MS", "1000"),
    ("MERCHANTD_WEBHOOK_RETRY_BASE_MS", "100"),
];

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
