//! `merchantd tenant move` (docs/operations.md, "From SQLite to PostgreSQL"; issue 25,
//! acceptance 2 with the server on SQLite stopped for the switch): while clients keep writing,
//! the SQLite server stops, its merchants move into PostgreSQL, and a server there takes over.
//! No acknowledged write is lost or doubled, the same tokens keep working, a webhook receiver
//! gets every event once and in order, and an event-stream client that reconnects with its
//! `Last-Event-ID` misses none and sees none twice.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::contract::Checked;
use crate::crash::token_for_demo_owner;
use crate::events::{Sse, Stream};
use crate::helpers::{binary, raw_pool, tenants_dir, Backend, TestDb};
use crate::process::serve_with;
use crate::webhooks::{logged, wait_for, Receiver, PROCESS_SETTINGS};

/// `merchantd tenant move` from `from` to `to`: its status, standard output and error.
fn run_move(from: &str, to: &str) -> (bool, String, String) {
    let out = Command::new(binary())
        .args(["tenant", "move", "--to", to, "--database-url", from])
        .output()
        .expect("merchantd");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A copy of the SQLite database of `db` (stopped), as a URL.
fn copy_of(db: &TestDb, name: &str) -> String {
    let from = db.url.trim_start_matches("sqlite://").to_owned();
    let to = db.dir().join(format!("{name}.db"));
    std::fs::copy(&from, &to).expect("a copy of the file");
    let log = format!("{from}-wal");
    if std::path::Path::new(&log).exists() {
        std::fs::copy(&log, format!("{}-wal", to.display())).expect("a copy of its log");
    }
    format!("sqlite://{}", to.display())
}

async fn merchants_in(url: &str) -> i64 {
    let pool = raw_pool(url).await;
    let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM merchants")
        .fetch_one(&pool)
        .await
        .unwrap();
    pool.close().await;
    n
}

/// Writes categories `{writer}-0..n` with an `Idempotency-Key` each, to whichever server `base`
/// names at the time, retrying each until it is acknowledged: (key, id) of each.
async fn write_through(
    base: Arc<Mutex<String>>,
    token: String,
    writer: usize,
    n: usize,
) -> Vec<(String, i64)> {
    let client = reqwest::Client::new();
    let mut acknowledged = Vec::new();
    for i in 0..n {
        let key = format!("moving-{writer}-{i}");
        loop {
            let url = format!("{}/category", base.lock().unwrap());
            let sent = client
                .post(url)
                .bearer_auth(&token)
                .header("x-accept-version", "2.0")
                .header("Idempotency-Key", &key)
                .json(&json!({"categories": {"c": {"title": key}}}))
                .timeout(Duration::from_secs(5))
                .send()
                .await;
            if let Ok(res) = sent {
                if res.status() == StatusCode::CREATED {
                    let body: Value = res.json().await.expect("JSON");
                    let id = body["categories"]["c"]["id"].as_i64().expect("an id");
                    acknowledged.push((key, id));
                    break;
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    acknowledged
}

/// Reads a stream until it ends or nothing comes for `idle`.
async fn drain(mut stream: Stream, idle: Duration) -> Vec<Sse> {
    let mut seen = Vec::new();
    while let Some(event) = stream.next(idle).await {
        seen.push(event);
    }
    seen
}

async fn open_stream(base: &str, token: &str, last: i64) -> Stream {
    let res = reqwest::Client::new()
        .get(format!("{base}/events"))
        .bearer_auth(token)
        .header("x-accept-version", "2.0")
        .header("Last-Event-ID", last.to_string())
        .checked()
        .await
        .expect("GET /events");
    Stream::of(res)
}

#[actix_rt::test]
async fn merchants_move_from_the_sqlite_file_into_postgresql_without_losing_a_write_or_an_event() {
    let sqlite = TestDb::new(Backend::Sqlite).await.expect("a SQLite file");
    let Some(postgres) = TestDb::new(Backend::Postgres).await else {
        return;
    };
    let receiver = Receiver::start().await;
    let a = serve_with(&sqlite, "info", &PROCESS_SETTINGS);
    let (token, _) = token_for_demo_owner(&sqlite).await;
    let client = reqwest::Client::new();
    let res = client
        .post(a.url("/webhook"))
        .bearer_auth(&token)
        .header("x-accept-version", "2.0")
        .json(&json!({"webhooks": {"w": {"url": receiver.url, "events": ["category"]}}}))
        .checked()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::CREATED);
    let on_a = open_stream(&a.url(""), &token, 0).await;
    let streamed_on_a = actix_rt::spawn(drain(on_a, Duration::from_secs(60)));

    let base = Arc::new(Mutex::new(a.url("")));
    let writers: Vec<_> = (0..2)
        .map(|w| actix_rt::spawn(write_through(base.clone(), token.clone(), w, 60)))
        .collect();
    tokio::time::sleep(Duration::from_millis(800)).await;

    // The switch: the SQLite server stops (a request in flight finishes), the merchants move.
    let stopped = Instant::now();
    a.signal("-TERM");
    let (status, _) = a.wait();
    assert!(status.success(), "{status}");
    let shutdown_ms = stopped.elapsed().as_millis();

    // A target where a server has made merchants of its own is refused; nothing moves.
    let crowded = TestDb::new(Backend::Postgres).await.expect("PostgreSQL");
    let applied = Command::new(binary())
        .args(["tenant", "apply", "--database-url", &crowded.url])
        .arg(tenants_dir(crowded.dir()).join("demo.toml"))
        .output()
        .expect("merchantd");
    assert!(applied.status.success(), "{applied:?}");
    let (moved, _, said) = run_move(&sqlite.url, &crowded.url);
    assert!(!moved);
    assert!(
        said.contains("did not move there from this source"),
        "{said}"
    );
    // Two copies of the source as the move finds it, to stand for a move that stopped after
    // the target's commit and before the source's removal.
    let copies = ["stopped-1", "stopped-2"].map(|name| copy_of(&sqlite, name));

    let moving = Instant::now();
    let (moved, printed, said) = run_move(&sqlite.url, &postgres.url);
    assert!(moved, "{said}");
    let move_ms = moving.elapsed().as_millis();
    let moved: Vec<Value> = printed
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(
        merchants_in(&sqlite.url).await,
        0,
        "each merchant verified in the target leaves the source"
    );
    assert!(moved.iter().any(|m| m["key"] == "demo"), "{printed}");

    // Run again on a source the move left whole, the merchants are verified and removed there.
    let (finished, again, said) = run_move(&copies[0], &postgres.url);
    assert!(finished, "{said}");
    assert_eq!(again.lines().count(), moved.len(), "{again}");
    assert!(
        again
            .lines()
            .all(|l| l.contains("\"finishedEarlierCopy\":true")),
        "{again}"
    );
    assert_eq!(merchants_in(&copies[0]).await, 0);

    let b = serve_with(&postgres, "info", &PROCESS_SETTINGS);
    *base.lock().unwrap() = b.url("");
    let switched_ms = stopped.elapsed().as_millis();
    let mut acknowledged = BTreeMap::new();
    for writer in writers {
        for (key, id) in writer.await.unwrap() {
            assert!(acknowledged.insert(key, id).is_none());
        }
    }
    assert_eq!(acknowledged.len(), 120);

    // Every acknowledged write is there once, with the id it was acknowledged with.
    let target = raw_pool(&postgres.url).await;
    let stored: Vec<(String, i64)> = sqlx::query_as(
        "SELECT title, id FROM categories WHERE title LIKE 'moving-%' ORDER BY title",
    )
    .fetch_all(&target)
    .await
    .unwrap();
    let stored: BTreeMap<String, i64> = stored.into_iter().collect();
    assert_eq!(stored, acknowledged, "every acknowledged write, once");
    // Once the new server wrote, a source left whole is no longer the target's copy: nothing is
    // removed, and the command says why.
    let (finished, _, said) = run_move(&copies[1], &postgres.url);
    assert!(!finished);
    assert!(said.contains("now differ"), "{said}");
    assert_eq!(merchants_in(&copies[1]).await, moved.len() as i64);

    let (merchant,): (i64,) =
        sqlx::query_as("SELECT merchant_id FROM employees WHERE email = 'owner@demo.test'")
            .fetch_one(&target)
            .await
            .unwrap();
    let categories: Vec<i64> = logged(&target, merchant, "category.")
        .await
        .iter()
        .map(|e| e.0)
        .collect();
    assert!(categories.len() >= 120);
    wait_for(Duration::from_secs(60), "every delivery", || {
        receiver.accepted().len() >= categories.len()
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let delivered: Vec<i64> = receiver.accepted().iter().map(|r| r.seq()).collect();
    assert_eq!(delivered, categories, "each event delivered once, in order");

    // The stream on the SQLite server ended with it; resumed on PostgreSQL from the last id
    // seen, it carries the rest.
    let before = streamed_on_a.await.unwrap();
    let last = before.last().map_or(0, |e| e.id);
    let all: Vec<i64> = logged(&target, merchant, "")
        .await
        .iter()
        .map(|e| e.0)
        .collect();
    let mut after = open_stream(&b.url(""), &token, last).await;
    let mut seen: Vec<i64> = before.iter().map(|e| e.id).collect();
    while seen.last() != all.last() {
        match after.next(Duration::from_secs(10)).await {
            Some(event) => seen.push(event.id),
            None => break,
        }
    }
    assert_eq!(
        seen, all,
        "the stream across the move: every event once, in order"
    );
    let distinct: BTreeSet<i64> = seen.iter().copied().collect();
    assert_eq!(distinct.len(), seen.len());

    eprintln!(
        "tenant move: {} merchant(s) in {move_ms} ms (printed: {printed}); writes waited \
         {switched_ms} ms from the stop to the PostgreSQL server ({shutdown_ms} ms for the SQLite \
         server to exit); {} events streamed on SQLite, {} after",
        moved.len(),
        before.len(),
        seen.len() - before.len()
    );
}
