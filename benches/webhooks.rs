//! What signed webhooks cost the write path and how fast they deliver, measured in one run on
//! the embedded SQLite database against a receiver on loopback (`cargo bench --bench webhooks`):
//!
//! - a single-object write (`POST /category`) with no endpoint, then with an endpoint whose
//!   deliveries are flowing: the dispatcher must not slow the hot path;
//! - delivery lag: from a write's 201 to its event at the receiver, writes 20 ms apart;
//! - throughput: a burst of writes from 8 clients, then the time until the last delivery.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{web, App, HttpResponse, HttpServer};
use futures_util::future::join_all;
use serde_json::{json, Value};

mod support;

const SINGLE_WRITES: usize = 400;
const SPACED_WRITES: usize = 100;
const SPACING: Duration = Duration::from_millis(20);
const BURST_WRITES: usize = 2_000;
const BURST_CLIENTS: usize = 8;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn percentile(mut samples: Vec<Duration>, p: f64) -> Duration {
    samples.sort();
    let at = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[at]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// When each category's event reached the receiver, by object id.
type Arrivals = Arc<Mutex<HashMap<i64, Instant>>>;

async fn receive(
    body: web::Bytes,
    arrivals: web::Data<Mutex<HashMap<i64, Instant>>>,
) -> HttpResponse {
    let now = Instant::now();
    if let Ok(event) = serde_json::from_slice::<Value>(&body) {
        if let Some(id) = event["objectId"].as_i64() {
            arrivals.lock().unwrap().entry(id).or_insert(now);
        }
    }
    HttpResponse::NoContent().finish()
}

async fn start_receiver() -> (String, Arrivals) {
    let arrivals: Arrivals = Arc::default();
    let data = web::Data::from(arrivals.clone());
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .default_service(web::to(receive))
    })
    .workers(1)
    .bind("127.0.0.1:0")
    .expect("bind the receiver");
    let port = server.addrs()[0].port();
    actix_rt::spawn(server.run());
    (format!("http://127.0.0.1:{port}/hook"), arrivals)
}

struct Client {
    base: String,
    token: String,
    http: reqwest::Client,
}

impl Client {
    /// Creates one category; gives its id and how long the write took.
    async fn category(&self, title: String) -> (i64, Duration) {
        let started = Instant::now();
        let res = self
            .http
            .post(format!("{}/category", self.base))
            .bearer_auth(&self.token)
            .header("x-accept-version", "2.0")
            .json(&json!({"categories": {"c": {"title": title}}}))
            .send()
            .await
            .expect("POST /category");
        let took = started.elapsed();
        assert_eq!(res.status(), 201);
        let body: Value = res.json().await.expect("JSON");
        (body["categories"]["c"]["id"].as_i64().expect("an id"), took)
    }

    async fn singles(&self, tag: &str) -> Vec<(i64, Duration, Instant)> {
        let mut out = Vec::with_capacity(SINGLE_WRITES);
        for i in 0..SINGLE_WRITES {
            let (id, took) = self.category(format!("{tag}-{i}")).await;
            out.push((id, took, Instant::now()));
        }
        out
    }
}

async fn wait_for(arrivals: &Arrivals, ids: &[i64]) -> Instant {
    loop {
        {
            let got = arrivals.lock().unwrap();
            if ids.iter().all(|id| got.contains_key(id)) {
                return ids
                    .iter()
                    .map(|id| got[id])
                    .max()
                    .unwrap_or_else(Instant::now);
            }
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

fn main() {
    actix_rt::System::new().block_on(async {
        let server = support::start_with(|s| s.webhook_allow_private_addresses = true).await;
        let client = Client {
            base: server.base.clone(),
            token: server.token.clone(),
            http: reqwest::Client::new(),
        };
        let (url, arrivals) = start_receiver().await;
        // Warm up the connection pool and the merchant's state.
        client.singles("warm").await;

        let without = client.singles("plain").await;
        let created = client
            .http
            .post(format!("{}/webhook", client.base))
            .bearer_auth(&client.token)
            .header("x-accept-version", "2.0")
            .json(&json!({"webhooks": {"w": {"url": url, "events": ["category"]}}}))
            .send()
            .await
            .expect("POST /webhook");
        assert_eq!(created.status(), 201);
        let with = client.singles("hooked").await;
        let ids: Vec<i64> = with.iter().map(|w| w.0).collect();
        wait_for(&arrivals, &ids).await;
        let mut spaced = Vec::with_capacity(SPACED_WRITES);
        for i in 0..SPACED_WRITES {
            let (id, _) = client.category(format!("spaced-{i}")).await;
            spaced.push((id, Instant::now()));
            tokio::time::sleep(SPACING).await;
        }
        let spaced_ids: Vec<i64> = spaced.iter().map(|s| s.0).collect();
        wait_for(&arrivals, &spaced_ids).await;
        let lags: Vec<Duration> = {
            let got = arrivals.lock().unwrap();
            spaced.iter().map(|(id, answered)| got[id].saturating_duration_since(*answered)).collect()
        };

        let burst_started = Instant::now();
        let per = BURST_WRITES / BURST_CLIENTS;
        let burst: Vec<Vec<i64>> = join_all((0..BURST_CLIENTS).map(|c| {
            let client = &client;
            async move {
                let mut ids = Vec::with_capacity(per);
                for i in 0..per {
                    ids.push(client.category(format!("burst-{c}-{i}")).await.0);
                }
                ids
            }
        }))
        .await;
        let written = burst_started.elapsed();
        let burst: Vec<i64> = burst.into_iter().flatten().collect();
        let last = wait_for(&arrivals, &burst).await;
        let delivered = last.saturating_duration_since(burst_started);

        let plain = median(without.iter().map(|w| w.1).collect());
        let hooked = median(with.iter().map(|w| w.1).collect());
        println!("merchantd signed webhooks, SQLite, receiver on loopback, one run");
        println!(
            "  POST /category, {SINGLE_WRITES} one at a time: median {:.3} ms without an endpoint, {:.3} ms with one delivering (ratio {:.2})",
            ms(plain),
            ms(hooked),
            ms(hooked) / ms(plain)
        );
        println!(
            "  delivery lag, 201 to receiver, writes {} ms apart: median {:.1} ms, p90 {:.1} ms",
            SPACING.as_millis(),
            ms(median(lags.clone())),
            ms(percentile(lags, 0.9))
        );
        println!(
            "  burst of {BURST_WRITES} writes from {BURST_CLIENTS} clients: written in {:.2} s ({:.0} writes/s), all delivered after {:.2} s ({:.0} deliveries/s, one endpoint, in order)",
            written.as_secs_f64(),
            BURST_WRITES as f64 / written.as_secs_f64(),
            delivered.as_secs_f64(),
            BURST_WRITES as f64 / delivered.as_secs_f64()
        );
    });
}
