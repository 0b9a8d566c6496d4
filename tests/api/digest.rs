//! Reconciliation digests (issue 24 acceptance 2, docs/digest.md): a client's copy built from
//! the change events it read gives the digest `GET /digest` answers, for every resource, in
//! Rust and in the Python reference (`docs/digest.py`); one record changed on the server makes
//! exactly its bucket differ; another merchant's records are never counted.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::process::{Command, Stdio};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_tests;
use crate::events::{sequence, Stream};
use crate::helpers::{create_one as create, send, send_full, TestApp};
use crate::shop_day::{id, product};

const RESOURCES: [&str; 6] = [
    "category",
    "product",
    "basket",
    "transaction",
    "register",
    "session",
];

/// What the client keeps of each event: its sequence, type and record.
pub(crate) fn events_json(events: &[crate::events::Sse]) -> Vec<Value> {
    events
        .iter()
        .map(|e| json!({"sequence": e.id, "type": e.kind, "objectId": e.data["objectId"]}))
        .collect()
}

/// The digest computed here, as docs/digest.md defines it.
pub(crate) fn local_digest(events: &[Value], resource: &str, size: i64) -> Value {
    let mut last: BTreeMap<i64, i64> = BTreeMap::new();
    for e in events {
        if e["type"].as_str().unwrap().split('.').next() == Some(resource) {
            let id = e["objectId"].as_i64().unwrap();
            let seq = e["sequence"].as_i64().unwrap();
            let kept = last.entry(id).or_default();
            *kept = (*kept).max(seq);
        }
    }
    let hash = |id: i64, seq: i64| {
        let text = format!("{resource}:{id}:{seq}");
        let digest = merchantd::crypto::sha256_hex(&text);
        u64::from_str_radix(&digest[..8], 16).unwrap()
    };
    let mut buckets: BTreeMap<i64, (i64, u64)> = BTreeMap::new();
    for (id, seq) in &last {
        let b = buckets.entry(id / size * size).or_default();
        b.0 += 1;
        b.1 = b.1.wrapping_add(hash(*id, *seq));
    }
    let shown = |count: i64, sum: u64| json!({"count": count, "hash": format!("{sum:016x}")});
    let total = buckets
        .values()
        .fold((0, 0u64), |(c, s), (n, h)| (c + n, s.wrapping_add(*h)));
    json!({"resource": resource, "bucketSize": size,
        "buckets": buckets.iter().map(|(k, (c, s))| (k.to_string(), shown(*c, *s))).collect::<serde_json::Map<_, _>>(),
        "total": shown(total.0, total.1)})
}

fn python_digest(events: &[Value], resource: &str, size: i64) -> Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/digest.py");
    let mut child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs docs/digest.py");
    let input = json!({"resource": resource, "bucketSize": size, "events": events});
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).unwrap()
}

pub(crate) async fn server_digest(app: &TestApp, token: &str, resource: &str, size: i64) -> Value {
    let (status, body) = send(
        app,
        Method::GET,
        "/digest",
        token,
        &[("resource", resource), ("bucketSize", &size.to_string())],
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["digest"].clone()
}

/// Every event of the merchant so far, read from `GET /events` from the start.
pub(crate) async fn read_events(app: &TestApp, token: &str) -> Vec<Value> {
    let (_, _, headers) = send_full(app, Method::GET, "/category", token, &[], None).await;
    let upto = sequence(&headers);
    let mut stream = Stream::open(app, token, &[("Last-Event-ID", "0")]).await;
    let events = stream.take(upto as usize).await;
    assert_eq!(events.last().map(|e| e.id), Some(upto));
    events_json(&events)
}

backend_tests! {
    async fn a_copy_built_from_the_events_gives_the_servers_digest(app) {
        let token = app.owner_token().await;
        let store = app.tenant("demo").stores["high-street"];
        let mut categories = Vec::new();
        for title in ["Hot", "Cold", "Food", "Cakes", "Tea", "Juice"] {
            categories.push(id(&create(&app, &token, "/category", "categories", json!({"title": title})).await));
        }
        let latte = product(&app, &token, "Latte", "300").await;
        let scone = product(&app, &token, "Scone", "250").await;
        send(&app, Method::PUT, "/category", &token, &[], Some(json!({"categories": {"k": {"id": categories[1], "title": "Iced"}}}))).await;
        send(&app, Method::DELETE, "/product", &token, &[("productIds", &scone.to_string())], None).await;
        let till = id(&create(&app, &token, "/register", "registers", json!({"storeId": store, "name": "T"})).await);
        create(&app, &token, "/register/session", "sessions", json!({"registerId": till, "openingFloat": 0})).await;
        let now = merchantd::domain::now_millis();
        let at = chrono::DateTime::<chrono::Utc>::from_timestamp_millis(now - 60_000).unwrap().to_rfc3339();
        let (status, body) = send(&app, Method::POST, "/basket/sync", &token, &[], Some(json!({"sales": {
            "s": {"clientId": "1d1d1d1d-0000-4000-8000-000000000001", "occurredAt": at, "storeId": store, "registerId": till,
                  "basketProducts": {"l": {"productId": latte, "quantity": 1}}, "payments": {"p": {"type": "CARD", "amount": 300}}}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");

        let events = read_events(&app, &token).await;
        for resource in RESOURCES {
            for size in [10, 10_000] {
                let server = server_digest(&app, &token, resource, size).await;
                assert!(server["total"]["count"].as_i64().unwrap() > 0, "{resource}: {server}");
                assert_eq!(server, local_digest(&events, resource, size), "{resource} by {size}");
                assert_eq!(server, python_digest(&events, resource, size), "{resource} by {size}, Python");
            }
        }

        // One record changed on the server: exactly its bucket differs.
        let before = local_digest(&events, "category", 10);
        let changed = categories[4];
        send(&app, Method::PUT, "/category", &token, &[], Some(json!({"categories": {"k": {"id": changed, "title": "Green tea"}}}))).await;
        let after = server_digest(&app, &token, "category", 10).await;
        let differ: Vec<&String> = after["buckets"].as_object().unwrap().iter()
            .filter(|(k, v)| before["buckets"][k.as_str()] != **v)
            .map(|(k, _)| k)
            .collect();
        assert_eq!(differ, [&(changed / 10 * 10).to_string()], "{before} {after}");
        assert_eq!(after["total"]["count"], before["total"]["count"]);
        // The client reads the events since, and agrees again.
        assert_eq!(after, local_digest(&read_events(&app, &token).await, "category", 10));
    }

    async fn digests_are_per_merchant_and_bad_headers_are_named(app) {
        let token = app.owner_token().await;
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        create(&app, &token, "/category", "categories", json!({"title": "Demo only"})).await;
        let theirs = server_digest(&app, &other, "category", 10_000).await;
        assert_eq!(theirs["total"], json!({"count": 0, "hash": "0000000000000000"}), "{theirs}");
        assert_eq!(theirs["buckets"], json!({}));
        let (status, body) = send(&app, Method::GET, "/digest", &token, &[("resource", "nope"), ("bucketSize", "7")], None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let text = body.to_string();
        assert!(text.contains("resource: \\\"nope\\\" is not one of"), "{body}");
        assert!(text.contains("bucketSize: must be one of"), "{body}");
        let (status, body) = send(&app, Method::GET, "/digest", &token, &[], None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(body.to_string().contains("resource: the header is missing."), "{body}");
    }

    async fn a_merchant_whose_digests_are_read_is_followed_in_the_background(app) {
        let token = app.owner_token().await;
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let (demo, second) = (app.tenant("demo").id, app.tenant("second").id);
        // Demo's integrator compares digests; nobody reads the second merchant's.
        server_digest(&app, &token, "category", 10_000).await;
        for n in 0..5 {
            create(&app, &token, "/category", "categories", json!({"title": format!("C{n}")})).await;
        }
        create(&app, &other, "/category", "categories", json!({"title": "Theirs"})).await;
        let watermark = |merchant: i64| {
            let sql = format!("SELECT (SELECT seq FROM digest_watermarks WHERE merchant_id = {merchant}), \
                               (SELECT MAX(seq) FROM events WHERE merchant_id = {merchant})");
            let pool = app.sql.clone();
            async move { sqlx::query_as::<_, (Option<i64>, Option<i64>)>(&sql).fetch_one(&pool).await.unwrap() }
        };
        // Without another digest read, demo's digests reach the end of its log.
        let mut seen = watermark(demo).await;
        for _ in 0..100 {
            if seen.0.is_some() && seen.0 == seen.1 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            seen = watermark(demo).await;
        }
        assert!(seen.1.is_some_and(|last| last >= 5), "{seen:?}");
        assert_eq!(seen.0, seen.1, "the followed merchant's digests caught up with its log: {seen:?}");
        // The other merchant's writes cost no digest work: its log is not followed.
        let theirs = watermark(second).await;
        assert_eq!(theirs.0, None, "{theirs:?}");
        assert!(theirs.1.is_some(), "{theirs:?}");
        // And what the follower kept is what a read answers.
        let events = read_events(&app, &token).await;
        assert_eq!(server_digest(&app, &token, "category", 10_000).await, local_digest(&events, "category", 10_000));
    }
}
