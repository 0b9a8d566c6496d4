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

/// The webhook settings of the process tests: loopback receivers, quick polls and retries.
pub(crate) const PROCESS_SETTINGS: [(&str, &str); 4] = [
    ("MERCHANTD_WEBHOOK_ALLOW_PRIVATE_ADDRESSES", "true"),
    ("MERCHANTD_WEBHOOK_POLL_MS", "50"),
    ("MERCHANTD_WEBHOOK_TIMEOUT_MS", "1000"),
    ("MERCHANTD_WEBHOOK_RETRY_BASE_MS", "100"),
];

mod delivery;
mod replicas;
