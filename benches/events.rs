//! What the change-event log buys and costs, measured in one run on the embedded SQLite
//! database and reported as medians and ratios (`cargo bench --bench events`):
//!
//! - a till keeping 10,000 products current: a full `GET /product` against a delta read
//!   (`changedSince`) after 50 changes, in time and in bytes;
//! - how soon a write reaches an open event stream (`GET /events`) after its answer.

use std::time::{Duration, Instant};

mod support;

use serde_json::{json, Value};

const PRODUCTS: usize = 10_000;
const FULL_READS: usize = 15;
const DELTA_READS: usize = 200;
const STREAMED_WRITES: usize = 100;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

struct Client {
    base: String,
    token: String,
    http: reqwest::Client,
}

impl Client {
    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .header("x-accept-version", "2.0")
    }

    /// (time, body bytes, x-merchant-sequence)
    async fn read_products(&self, since: Option<i64>) -> (Duration, usize, i64) {
        let started = Instant::now();
        let mut request = self.request(reqwest::Method::GET, "/product");
        if let Some(since) = since {
            request = request.header("changedSince", since.to_string());
        }
        let res = request.send().await.expect("read");
        assert_eq!(res.status(), 200);
        let sequence = res
            .headers()
            .get("x-merchant-sequence")
            .and_then(|v| v.to_str().ok()?.parse().ok())
            .unwrap_or(0);
        let body = res.bytes().await.expect("body");
        (started.elapsed(), body.len(), sequence)
    }

    async fn write(&self, method: reqwest::Method, path: &str, body: Value) -> Value {
        let res = self
            .request(method, path)
            .json(&body)
            .send()
            .await
            .expect("write");
        assert!(res.status().is_success(), "{}", res.status());
        res.json().await.expect("JSON")
    }
}

async fn start() -> (Client, support::Server) {
    let server = support::start().await;
    let client = Client {
        base: server.base.clone(),
        token: server.token.clone(),
        http: reqwest::Client::new(),
    };
    (client, server)
}

async fn seed(client: &Client) -> Vec<i64> {
    let mut ids = Vec::with_capacity(PRODUCTS);
    for batch in 0..PRODUCTS / 200 {
        let products: serde_json::Map<String, Value> = (0..200)
            .map(|i| {
                (
                    format!("p{i}"),
                    json!({"name": format!("Item {batch}-{i}"), "barcode": format!("B{batch}-{i}"),
                           "instances": {"i": {"price": "100", "taxPercentage": "0.200"}}}),
                )
            })
            .collect();
        let answer = client
            .write(
                reqwest::Method::POST,
                "/product",
                json!({"products": products}),
            )
            .await;
        ids.extend(
            answer["products"]
                .as_object()
                .unwrap()
                .values()
                .map(|p| p["id"].as_i64().unwrap()),
        );
    }
    ids
}

/// Time from a write's answer to its event on an open stream, per write.
async fn stream_lag(client: &Client) -> Vec<Duration> {
    let mut stream = client
        .request(reqwest::Method::GET, "/events")
        .header("types", "category")
        .send()
        .await
        .expect("stream");
    assert_eq!(stream.status(), 200);
    let mut buffer = String::new();
    let mut lags = Vec::with_capacity(STREAMED_WRITES);
    for i in 0..STREAMED_WRITES {
        client
            .write(
                reqwest::Method::POST,
                "/category",
                json!({"categories": {"k": {"title": format!("C{i}")}}}),
            )
            .await;
        let answered = Instant::now();
        loop {
            if let Some(at) = buffer.find("event: category.created") {
                if let Some(end) = buffer[at..].find("\n\n") {
                    buffer.drain(..at + end + 2);
                    break;
                }
            }
            let chunk = stream.chunk().await.expect("stream").expect("open");
            buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
        lags.push(answered.elapsed());
    }
    lags
}

fn main() {
    actix_rt::System::new().block_on(async {
        let (client, _server) = start().await;
        let seeding = Instant::now();
        let ids = seed(&client).await;
        let seeded = seeding.elapsed();
        println!(
            "  seeding {PRODUCTS} products through the API in batches of 200: {:.0} products/s",
            PRODUCTS as f64 / seeded.as_secs_f64()
        );
        // The same seeding on a build without the event log (benches/load/results/HISTORY.md,
        // "Change events: what the log costs and what it buys") is the
        // other half of the write-cost comparison; nothing after this needs it.
        if std::env::var_os("EVENTS_BENCH_SEED_ONLY").is_some() {
            return;
        }

        let mut full = Vec::with_capacity(FULL_READS);
        let (mut full_bytes, mut since) = (0, 0);
        for _ in 0..FULL_READS {
            let (took, bytes, sequence) = client.read_products(None).await;
            full.push(took);
            (full_bytes, since) = (bytes, sequence);
        }
        let renamed: serde_json::Map<String, Value> = ids[..50]
            .iter()
            .map(|id| (format!("r{id}"), json!({"id": id, "name": format!("Renamed {id}")})))
            .collect();
        client
            .write(reqwest::Method::PUT, "/product", json!({"products": renamed}))
            .await;
        let mut delta = Vec::with_capacity(DELTA_READS);
        let mut delta_bytes = 0;
        for _ in 0..DELTA_READS {
            let (took, bytes, _) = client.read_products(Some(since)).await;
            delta.push(took);
            delta_bytes = bytes;
        }
        let lags = stream_lag(&client).await;

        let (full, delta, lag) = (median(full), median(delta), median(lags));
        println!("merchantd change events, SQLite, {PRODUCTS} products, one run");
        println!("  GET /product, all {PRODUCTS}: median {:.2} ms, {full_bytes} bytes", ms(full));
        println!("  GET /product, changedSince after 50 changes: median {:.2} ms, {delta_bytes} bytes", ms(delta));
        println!(
            "  ratio full / delta: {:.0}x the time, {:.0}x the bytes",
            ms(full) / ms(delta),
            full_bytes as f64 / delta_bytes as f64
        );
        println!(
            "  a write's event on an open stream, after its answer: median {:.2} ms ({STREAMED_WRITES} writes)",
            ms(lag)
        );
    });
}
