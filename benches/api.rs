//! End-to-end latency of the API on the embedded SQLite database, measured in one run and
//! reported as medians and ratios (the machine is small and noisy; absolute numbers travel
//! badly, ratios less so). Run with `cargo bench --bench api`.
//!
//! What it shows: a read answered from the merchant actor's snapshot against a write that goes
//! through the actor and a database transaction, and whether reads slow down while writes are
//! running (they should not: reads never enter the actor's mailbox).

use std::time::{Duration, Instant};

mod support;

use serde_json::json;

const READS: usize = 400;
const WRITES: usize = 200;
const PRODUCTS: usize = 200;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn p99(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[(samples.len() * 99 / 100).min(samples.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

struct Bench {
    base: String,
    token: String,
    client: reqwest::Client,
}

impl Bench {
    async fn get_products(&self) -> Duration {
        let started = Instant::now();
        let res = self
            .client
            .get(format!("{}/product", self.base))
            .bearer_auth(&self.token)
            .header("x-accept-version", "2.0")
            .send()
            .await
            .expect("request");
        assert_eq!(res.status(), 200);
        let _ = res.bytes().await.expect("body");
        started.elapsed()
    }

    async fn post_category(&self, i: usize) -> Duration {
        let started = Instant::now();
        let res = self
            .client
            .post(format!("{}/category", self.base))
            .bearer_auth(&self.token)
            .header("x-accept-version", "2.0")
            .json(&json!({"categories": {"k": {"title": format!("Bench {i}")}}}))
            .send()
            .await
            .expect("request");
        assert_eq!(res.status(), 201);
        let _ = res.bytes().await.expect("body");
        started.elapsed()
    }
}

fn main() {
    actix_rt::System::new().block_on(async {
        let server = support::start().await;
        let bench = Bench {
            base: server.base.clone(),
            token: server.token.clone(),
            client: reqwest::Client::new(),
        };

        // A catalogue worth reading: 200 products with two price instances each.
        for chunk in 0..(PRODUCTS / 100) {
            let products: serde_json::Map<String, serde_json::Value> = (0..100)
                .map(|i| {
                    (
                        format!("p{chunk}-{i}"),
                        json!({"name": format!("Product {chunk}-{i}"), "instances": {
                            "a": {"price": "300", "taxPercentage": "0.200"},
                            "b": {"price": "280", "taxPercentage": "0.200"}}}),
                    )
                })
                .collect();
            let res = bench
                .client
                .post(format!("{}/product", bench.base))
                .bearer_auth(&bench.token)
                .header("x-accept-version", "2.0")
                .json(&json!({"products": products}))
                .send()
                .await
                .expect("seed");
            assert_eq!(res.status(), 201);
        }

        let mut reads = Vec::with_capacity(READS);
        for _ in 0..READS {
            reads.push(bench.get_products().await);
        }
        let mut writes = Vec::with_capacity(WRITES);
        for i in 0..WRITES {
            writes.push(bench.post_category(i).await);
        }

        // Reads while four writers keep the actor and the database busy.
        let busy = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let writers: Vec<_> = (0..4)
            .map(|w| {
                let busy = busy.clone();
                let b = Bench {
                    base: bench.base.clone(),
                    token: bench.token.clone(),
                    client: bench.client.clone(),
                };
                actix_rt::spawn(async move {
                    let mut i = 0;
                    while busy.load(std::sync::atomic::Ordering::Relaxed) {
                        b.post_category(10_000 * (w + 1) + i).await;
                        i += 1;
                    }
                    i
                })
            })
            .collect();
        let mut loaded_reads = Vec::with_capacity(READS);
        for _ in 0..READS {
            loaded_reads.push(bench.get_products().await);
        }
        busy.store(false, std::sync::atomic::Ordering::Relaxed);
        let mut background_writes = 0;
        for w in writers {
            background_writes += w.await.unwrap_or(0);
        }

        let (read, write, loaded) = (median(reads.clone()), median(writes.clone()), median(loaded_reads.clone()));
        println!("merchantd API latency, SQLite, {PRODUCTS} products, one run");
        println!("  GET /product (200 products, {READS} sequential): median {:.2} ms, p99 {:.2} ms", ms(read), ms(p99(reads)));
        println!("  POST /category (1 object, {WRITES} sequential): median {:.2} ms, p99 {:.2} ms", ms(write), ms(p99(writes)));
        println!(
            "  GET /product while 4 writers run ({background_writes} writes meanwhile): median {:.2} ms, p99 {:.2} ms",
            ms(loaded),
            ms(p99(loaded_reads))
        );
        println!("  ratio write / read (idle): {:.2}", ms(write) / ms(read));
        println!("  ratio read under writes / read idle: {:.2}", ms(loaded) / ms(read));
    });
}
