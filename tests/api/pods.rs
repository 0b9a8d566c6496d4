//! Pods (docs/operations.md, "Pods"; issue 25, acceptance 1): two PostgreSQL databases, two
//! replicas serving both. While clients write at least 200 requests/s to a merchant (through one
//! replica) and to another (through the other, which streams the first one's events), the
//! merchant moves between the pods three times (`merchantd tenant move KEY --to
//! POD`). No acknowledged write is lost or doubled, every event reaches a webhook receiver and
//! an event stream that stay connected, once and in order, and the other merchant's requests
//! see no error. The write hold of each move is printed.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::contract::Checked;
use crate::crash::token_for_owner;
use crate::events::{Sse, Stream};
use crate::helpers::{binary, raw_pool, spawn_app_on, Backend, TestApp, TestDb};
use crate::process::serve_with;
use crate::webhooks::{logged, wait_for, Receiver, PROCESS_SETTINGS};

/// What one writer saw: (key, id) of each acknowledged write, the milliseconds each took,
/// and the answers that were not 201.
#[derive(Default)]
struct Written {
    acknowledged: Vec<(String, i64)>,
    millis: Vec<u128>,
    errors: Vec<String>,
}

/// Writes categories `{name}-0..` through `base` with an `Idempotency-Key` each, one every
/// `every`, until `stop`; each retried until acknowledged.
async fn write_until(
    base: String,
    token: String,
    name: &'static str,
    every: Duration,
    stop: Arc<AtomicBool>,
) -> Written {
    let client = reqwest::Client::new();
    let mut written = Written::default();
    let mut i = 0;
    while !stop.load(Ordering::SeqCst) {
        let key = format!("pod-{name}-{i}");
        i += 1;
        let started = Instant::now();
        loop {
            let sent = client
                .post(format!("{base}/category"))
                .bearer_auth(&token)
                .header("x-accept-version", "2.0")
                .header("Idempotency-Key", &key)
                .json(&json!({"categories": {"c": {"title": key}}}))
                .timeout(Duration::from_secs(10))
                .send()
                .await;
            match sent {
                Ok(res) if res.status() == StatusCode::CREATED => {
                    let body: Value = res.json().await.expect("JSON");
                    let id = body["categories"]["c"]["id"].as_i64().expect("an id");
                    written.acknowledged.push((key, id));
                    written.millis.push(started.elapsed().as_millis());
                    break;
                }
                Ok(res) => {
                    let status = res.status();
                    let body = res.text().await.unwrap_or_default();
                    written.errors.push(format!("{key}: {status} {body}"));
                }
                Err(e) => written.errors.push(format!("{key}: {e}")),
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tokio::time::sleep(every).await;
    }
    written
}

/// `merchantd tenant move KEY --to POD` on the fleet: the move's printed line. (Awaited: the
/// writers share this thread.)
async fn move_to(home: &TestDb, pods: &str, key: &str, pod: &str) -> Value {
    let out = tokio::process::Command::new(binary())
        .args([
            "tenant",
            "move",
            key,
            "--to",
            pod,
            "--database-url",
            &home.url,
        ])
        .env("MERCHANTD_PODS", pods)
        // Beside two replicas and the rest of the suite on one PostgreSQL (100 connections):
        // the move needs a few.
        .env("MERCHANTD_DATABASE_MAX_CONNECTIONS", "4")
        .output()
        .await
        .expect("merchantd");
    let said = String::from_utf8_lossy(&out.stderr);
    let said: Vec<&str> = said.lines().filter(|l| !l.contains("INFO")).collect();
    assert!(out.status.success(), "the move failed: {}", said.join("\n"));
    let printed = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(printed.trim()).expect("a JSON line")
}

async fn merchants_in(url: &str, merchant_id: i64) -> i64 {
    let pool = raw_pool(url).await;
    let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM merchants WHERE id = $1")
        .bind(merchant_id)
        .fetch_one(&pool)
        .await
        .unwrap();
    pool.close().await;
    n
}

fn percentile(sorted: &[u128], p: f64) -> u128 {
    if sorted.is_empty() {
        return 0;
    }
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

#[actix_rt::test]
async fn a_merchant_moves_between_pods_while_two_replicas_serve_it_and_nothing_is_lost() {
    let Some(home) = TestDb::new(Backend::Postgres).await else {
        return;
    };
    let pod_b = TestDb::new(Backend::Postgres).await.expect("a second pod");
    let pods = format!("b={}", pod_b.url);
    let mut settings = PROCESS_SETTINGS.to_vec();
    settings.push(("MERCHANTD_PODS", &pods));
    let receiver = Receiver::start().await;
    let a = serve_with(&home, "info", &settings);
    let b = serve_with(&home, "info", &settings);
    let (demo, demo_id, _) = token_for_owner(&home, "owner@demo.test").await;
    let (second, _, _) = token_for_owner(&home, "owner@second.test").await;

    let res = reqwest::Client::new()
        .post(a.url("/webhook"))
        .bearer_auth(&demo)
        .header("x-accept-version", "2.0")
        .json(&json!({"webhooks": {"w": {"url": receiver.url, "events": ["category"]}}}))
        .checked()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::CREATED);
    // An event stream on replica b from the start, connected through every move.
    let res = reqwest::Client::new()
        .get(b.url("/events"))
        .bearer_auth(&demo)
        .header("x-accept-version", "2.0")
        .header("Last-Event-ID", "0")
        .checked()
        .await
        .expect("GET /events");
    let streamed: Arc<Mutex<Vec<Sse>>> = Arc::default();
    let mut stream = Stream::of(res);
    let into = streamed.clone();
    actix_rt::spawn(async move {
        while let Some(event) = stream.next(Duration::from_secs(120)).await {
            into.lock().unwrap().push(event);
        }
    });

    // At least 200 writes a second (about 300): the moving merchant through replica a, another merchant
    // through replica b, which also streams the moving merchant's events. (Two replicas
    // writing one merchant flat out answer some writes 503 "retry" with or without a move:
    // tests/api/replicas.rs covers that; here every failure is the move's.)
    let stop = Arc::new(AtomicBool::new(false));
    let every = Duration::from_millis(15);
    let writers = [
        ("demo-1", a.url(""), demo.clone()),
        ("demo-2", a.url(""), demo.clone()),
        ("second-1", b.url(""), second.clone()),
        ("second-2", b.url(""), second.clone()),
    ]
    .map(|(name, base, token)| {
        actix_rt::spawn(write_until(base, token, name, every, stop.clone()))
    });
    tokio::time::sleep(Duration::from_millis(1500)).await;

    let mut moves = Vec::new();
    for pod in ["b", "home", "b"] {
        let moved = move_to(&home, &pods, "demo", pod).await;
        assert_eq!(moved["to"], pod, "{moved}");
        moves.push(moved);
        tokio::time::sleep(Duration::from_millis(1000)).await;
    }
    stop.store(true, Ordering::SeqCst);
    let mut results = BTreeMap::new();
    for (writer, name) in writers
        .into_iter()
        .zip(["demo-1", "demo-2", "second-1", "second-2"])
    {
        results.insert(name, writer.await.unwrap());
    }
    if results.values().any(|w| !w.errors.is_empty()) {
        for served in [a, b] {
            served.signal("-TERM");
            let (_, lines) = served.wait();
            for line in lines
                .iter()
                .filter(|l| l.contains("WARN") || l.contains("ERROR"))
            {
                eprintln!("SERVER {line}");
            }
        }
        panic!("requests failed during the moves (the servers' warnings are above)");
    }
    for name in ["second-1", "second-2"] {
        assert_eq!(
            results[name].errors,
            Vec::<String>::new(),
            "the other merchant's requests see no error"
        );
    }
    for name in ["demo-1", "demo-2"] {
        assert_eq!(
            results[name].errors,
            Vec::<String>::new(),
            "the moving merchant's writes wait, they do not fail"
        );
    }

    // The merchant is in pod b alone, with every acknowledged write once, with its id.
    assert_eq!(merchants_in(&home.url, demo_id).await, 0);
    assert_eq!(merchants_in(&pod_b.url, demo_id).await, 1);
    let directory = raw_pool(&home.url).await;
    let placed: Vec<(String,)> =
        sqlx::query_as("SELECT pod FROM merchant_placements WHERE merchant_id = $1")
            .bind(demo_id)
            .fetch_all(&directory)
            .await
            .unwrap();
    assert_eq!(
        placed,
        vec![("b".to_owned(),)],
        "the directory says where it is"
    );
    directory.close().await;
    let in_b = raw_pool(&pod_b.url).await;
    let stored: Vec<(String, i64)> = sqlx::query_as(
        "SELECT title, id FROM categories WHERE merchant_id = $1 AND title LIKE 'pod-demo-%'",
    )
    .bind(demo_id)
    .fetch_all(&in_b)
    .await
    .unwrap();
    let stored: BTreeMap<String, i64> = stored.into_iter().collect();
    let acknowledged: BTreeMap<String, i64> = ["demo-1", "demo-2"]
        .iter()
        .flat_map(|n| results[n].acknowledged.iter().cloned())
        .collect();
    assert!(acknowledged.len() > 100, "{}", acknowledged.len());
    assert_eq!(stored, acknowledged, "every acknowledged write, once");

    // Every category event reached the receiver once, in order; every event the stream.
    let categories: Vec<i64> = logged(&in_b, demo_id, "category.")
        .await
        .iter()
        .map(|e| e.0)
        .collect();
    wait_for(Duration::from_secs(60), "every delivery", || {
        receiver.accepted().len() >= categories.len()
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let delivered: Vec<i64> = receiver.accepted().iter().map(|r| r.seq()).collect();
    if delivered != categories {
        let mut seen = std::collections::BTreeSet::new();
        let twice: Vec<i64> = delivered
            .iter()
            .filter(|s| !seen.insert(**s))
            .copied()
            .collect();
        let missing: Vec<i64> = categories
            .iter()
            .filter(|s| !seen.contains(s))
            .copied()
            .collect();
        let out_of_order = delivered.windows(2).filter(|w| w[0] >= w[1]).count();
        panic!(
            "each event delivered once, in order: {} delivered, {} logged; twice {twice:?}, \
             missing {missing:?}, {out_of_order} out of order",
            delivered.len(),
            categories.len()
        );
    }
    let all: Vec<i64> = logged(&in_b, demo_id, "")
        .await
        .iter()
        .map(|e| e.0)
        .collect();
    wait_for(Duration::from_secs(30), "the stream to catch up", || {
        streamed.lock().unwrap().last().map(|e| e.id) == all.last().copied()
    })
    .await;
    let seen: Vec<i64> = streamed.lock().unwrap().iter().map(|e| e.id).collect();
    assert_eq!(
        seen, all,
        "the stream through the moves: every event once, in order"
    );

    let mut held: Vec<u128> = moves
        .iter()
        .map(|m| m["heldMilliseconds"].as_u64().unwrap_or(u64::MAX) as u128)
        .collect();
    held.sort_unstable();
    let mut waits: Vec<u128> = ["demo-1", "demo-2"]
        .iter()
        .flat_map(|n| results[n].millis.iter().copied())
        .collect();
    waits.sort_unstable();
    let writes: usize = results.values().map(|w| w.acknowledged.len()).sum();
    eprintln!(
        "pods: 3 moves, writes held {held:?} ms; the moving merchant's writes took p50 {} ms, \
         p99 {} ms, max {} ms; {writes} writes acknowledged in all; moves: {moves:?}",
        percentile(&waits, 0.5),
        percentile(&waits, 0.99),
        waits.last().copied().unwrap_or(0),
    );
    // Issue 25, acceptance 1: the write hold's p99 (of three moves: the longest) at most
    // 500 ms, in a debug build on a shared machine (about 80 ms measured).
    assert!(
        held.iter().all(|ms| *ms <= 500),
        "a write hold over 500 ms: {held:?}"
    );
    in_b.close().await;
}

/// `serve` on a home database with an empty pod b, the fixture merchants new to both.
async fn served_with_pod_b() -> Option<(TestApp, TestDb)> {
    let home = TestDb::new(Backend::Postgres).await?;
    let pod_b = TestDb::new(Backend::Postgres).await.expect("a second pod");
    let pod_url = pod_b.url.clone();
    let app = spawn_app_on(home, |s| s.pods = format!("b={pod_url}")).await;
    Some((app, pod_b))
}

const IN_POD: &str = "SELECT COUNT(*) FROM merchants WHERE manifest_key = $1";
const PLACED: &str = "SELECT merchant_id, pod FROM merchant_placements WHERE merchant_key = $1";

/// Merchant `k`'s rows: (at home, in pod b).
async fn rows(k: &str, home: &str, b: &str) -> (i64, i64) {
    (count(home, IN_POD, k).await, count(b, IN_POD, k).await)
}

/// Home's directory rows for merchant `key`: (merchant id, pod).
async fn placements(home: &str, key: &str) -> Vec<(i64, String)> {
    let pool = raw_pool(home).await;
    let placed = sqlx::query_as(PLACED).bind(key).fetch_all(&pool).await;
    pool.close().await;
    placed.unwrap()
}

/// The manifest of a merchant no database holds yet.
fn newco() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/newco.toml")
}

/// `merchantd tenant apply` puts a new manifest merchant in the pod holding fewest (b, empty,
/// while home holds demo and second), records it in home's directory, and applying it again
/// changes neither its pod nor its id.
#[actix_rt::test]
async fn tenant_apply_puts_a_new_manifest_merchant_in_the_pod_holding_fewest() {
    let Some((app, pod_b)) = served_with_pod_b().await else {
        return;
    };
    let (home, pods) = (app.database.url.clone(), format!("b={}", pod_b.url));
    let mut first = None;
    for round in ["applied", "applied again"] {
        let out = tokio::process::Command::new(binary())
            .args(["tenant", "apply"])
            .arg(newco())
            .args(["--database-url", &home])
            .env("MERCHANTD_PODS", &pods)
            .env("MERCHANTD_PBKDF2_ITERATIONS", "1000")
            .env("MERCHANTD_DATABASE_MAX_CONNECTIONS", "4")
            .output()
            .await
            .expect("merchantd");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{round}: {said}");
        let placed = placements(&home, "newco").await;
        let id = *first.get_or_insert(placed.first().map_or(0, |p| p.0));
        assert!(id >= 1 << 40, "pod b hands out ids from 2^40: {id}");
        assert_eq!(placed, [(id, "b".to_owned())], "{round}: home's directory");
        assert_eq!(merchants_in(&pod_b.url, id).await, 1, "{round}: its id");
        assert_eq!(rows("newco", &home, &pod_b.url).await, (0, 1), "{round}");
    }
}

/// The manifests `serve` applies at start create their new merchants at home, even when pod b
/// holds fewer: replicas starting together rely on home's unique key (decision 0057).
#[actix_rt::test]
async fn serve_creates_new_manifest_merchants_at_home_even_when_a_pod_holds_fewer() {
    let Some((app, pod_b)) = served_with_pod_b().await else {
        return;
    };
    let home = app.database.url.clone();
    // Home now holds demo and second, b none; a replica starts with one manifest more.
    let (pod_url, tenants) = (pod_b.url.clone(), app.database.dir().join("more"));
    let _again = spawn_app_on(TestDb::external(&home), |s| {
        s.pods = format!("b={pod_url}");
        s.tenants = tenants;
        std::fs::create_dir_all(&s.tenants).unwrap();
        std::fs::copy(newco(), s.tenants.join("newco.toml")).unwrap();
    })
    .await;
    for key in ["demo", "second", "newco"] {
        assert_eq!(rows(key, &home, &pod_b.url).await, (1, 0), "{key}");
        assert!(placements(&home, key).await.is_empty(), "{key}: no row");
    }
}

async fn count(url: &str, sql: &str, key: &str) -> i64 {
    let pool = raw_pool(url).await;
    let (n,): (i64,) = sqlx::query_as(sql)
        .bind(key)
        .fetch_one(&pool)
        .await
        .unwrap();
    pool.close().await;
    n
}

/// A merchant the operator creates goes to the pod holding fewest; it authorizes an
/// application and sells there, with its rows in that pod alone; the operator's move brings it
/// home with the same reads and tokens; suspended, its tokens get 403; and no other merchant's
/// token reaches its records, before or after.
#[actix_rt::test]
async fn an_operator_merchant_lives_in_the_pod_holding_fewest_and_moves_through_the_api() {
    use crate::helpers::{create_one, send};
    use crate::operator::{acme, operator, operator_token, signed_in};
    use reqwest::Method;

    let Some((app, pod_b)) = served_with_pod_b().await else {
        return;
    };
    let op = operator_token(&app.database.url).await;
    let (status, body) = operator(
        &app,
        Method::POST,
        "/operator/merchant",
        &op,
        &[],
        Some(json!({"merchants": {"a": acme("acme"), "taken": acme("demo")}})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let id = body["merchants"]["a"]["id"].as_i64().expect("an id");
    assert!(
        body["api"]["message"]
            .to_string()
            .contains("already has the key demo"),
        "a key of another pod is taken: {body}"
    );
    // Home holds the two manifests' merchants (`serve` made them: see the test above), pod b
    // none: the new one goes to b, with ids from b's range.
    assert_eq!(count(&pod_b.url, IN_POD, "acme").await, 1);
    assert_eq!(count(&app.database.url, IN_POD, "acme").await, 0);
    assert!(id >= 1 << 40, "pod b hands out ids from 2^40: {id}");

    let token = signed_in(&app, "acme").await;
    let (status, stores) = send(&app, Method::GET, "/store", &token, &[], None).await;
    assert_eq!(status, StatusCode::OK, "{stores}");
    let store: i64 = stores["stores"]
        .as_object()
        .expect("stores")
        .keys()
        .next()
        .expect("its store")
        .parse()
        .unwrap();
    let product = create_one(
        &app,
        &token,
        "/product",
        "products",
        json!({"name": "Hammer",
        "instances": {"i": {"name": "Standard", "price": "12.50", "taxPercentage": "0.200"}}}),
    )
    .await;
    let basket = create_one(
        &app,
        &token,
        "/basket",
        "baskets",
        json!({"storeId": store,
        "basketProducts": {"l": {"productId": product["id"], "quantity": 2}}}),
    )
    .await;
    create_one(
        &app,
        &token,
        "/transaction",
        "transactions",
        json!({"basketId": basket["id"],
        "type": "CASH", "amount": 2500, "completed": true}),
    )
    .await;
    let done = create_one(
        &app,
        &token,
        "/basket",
        "baskets",
        json!({"id": basket["id"], "completed": true}),
    )
    .await;
    assert_eq!(done["completed"], true, "{done}");
    let in_pod_b = "SELECT COUNT(*) FROM baskets b JOIN merchants m ON m.id = b.merchant_id \
                    WHERE m.manifest_key = $1";
    assert_eq!(count(&pod_b.url, in_pod_b, "acme").await, 1);
    // The token's use is written to its family in pod b (connected applications' "last used").
    let used = "SELECT COUNT(*) FROM oauth_families f JOIN merchants m ON m.id = f.merchant_id \
                WHERE m.manifest_key = $1 AND f.last_used_at IS NOT NULL";
    let deadline = Instant::now() + Duration::from_secs(10);
    while count(&pod_b.url, used, "acme").await == 0 {
        assert!(
            Instant::now() < deadline,
            "the use of acme's token was never recorded in pod b"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Realms apart across pods: the demo merchant's token reaches none of acme's records.
    let demo = app.owner_token().await;
    let pid = product["id"].to_string();
    let by_id = [("productIds", pid.as_str())];
    let (_, theirs) = send(&app, Method::GET, "/product", &demo, &by_id, None).await;
    assert_eq!(theirs["products"], json!({}), "{theirs}");
    let (status, before) = send(&app, Method::GET, "/product", &token, &by_id, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(before["products"][&pid]["name"], "Hammer", "{before}");

    // Moved home by the operator: the same token reads the same product.
    let ids = id.to_string();
    let (status, body) = operator(
        &app,
        Method::POST,
        "/operator/merchant/move",
        &op,
        &[("merchantIds", &ids), ("pod", "home")],
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["merchants"][&ids]["from"], "b", "{body}");
    assert!(
        body["merchants"][&ids]["heldMilliseconds"].is_u64(),
        "{body}"
    );
    assert_eq!(count(&pod_b.url, IN_POD, "acme").await, 0);
    assert_eq!(count(&app.database.url, IN_POD, "acme").await, 1);
    let placed = "SELECT COUNT(*) FROM merchant_placements WHERE merchant_key = $1";
    assert_eq!(
        count(&app.database.url, placed, "acme").await,
        0,
        "home needs no row"
    );
    let (status, after) = send(&app, Method::GET, "/product", &token, &by_id, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        after["products"], before["products"],
        "the same read after the move"
    );
    let (_, theirs) = send(&app, Method::GET, "/product", &demo, &by_id, None).await;
    assert_eq!(theirs["products"], json!({}), "{theirs}");
    // A move to where it is, or to a pod that is not configured, is refused.
    for pod in ["home", "nowhere"] {
        let (status, body) = operator(
            &app,
            Method::POST,
            "/operator/merchant/move",
            &op,
            &[("merchantIds", &ids), ("pod", pod)],
            None,
        )
        .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    }

    // Suspended (in the pod holding it), its token is refused.
    let (status, body) = operator(
        &app,
        Method::POST,
        "/operator/merchant/suspend",
        &op,
        &[("merchantIds", &ids)],
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _) = send(&app, Method::GET, "/product", &token, &by_id, None).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}
