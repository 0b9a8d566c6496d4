//! The catalogue file on the embedded SQLite database, measured in one run and reported as
//! medians and ratios (`cargo bench --bench catalogue`):
//!
//! - importing 10,000 products (a price instance each, a sixth with a second one, 20 nested
//!   categories, opening stock at the store) with `POST /product/import`, each run on a fresh
//!   server and database, against the same products sent as 50 batches of 200 through
//!   `POST /product`;
//! - the whole `merchantd catalogue import` command (process start, migrations, the
//!   merchant's load, the import) on a fresh database;
//! - exporting them again with `GET /product/export`, and that the export imports elsewhere.
//!
//! The target of issue 13 is an import of 10,000 products in under 2 seconds.

use std::fmt::Write as _;
use std::process::Command;
use std::time::{Duration, Instant};

mod support;

/// The allocator of the `merchantd` binary (src/main.rs), so the server measured here allocates
/// as the one deployed does (glibc's malloc made this import 2× slower).
#[cfg(feature = "jemalloc")]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use serde_json::{json, Value};

const PRODUCTS: usize = 10_000;
const RUNS: usize = 5;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The file: `product,barcode,category,instance,price,tax_rate,stock:High Street`.
fn catalogue() -> String {
    let mut csv =
        String::from("product,barcode,category,instance,price,tax_rate,stock:High Street\n");
    for i in 0..PRODUCTS {
        let category = format!("Group {} > Shelf {}", i % 4, i % 20);
        let _ = writeln!(
            csv,
            "Item {i},B{i:06},{category},Regular,{},0.200,{}",
            100 + i % 900,
            i % 50
        );
        if i % 6 == 0 {
            let _ = writeln!(csv, ",,,Large,{},0.200,", 150 + i % 900);
        }
    }
    csv
}

fn client() -> reqwest::Client {
    reqwest::Client::new()
}

fn request(
    server: &support::Server,
    method: reqwest::Method,
    path: &str,
) -> reqwest::RequestBuilder {
    client()
        .request(method, format!("{}{path}", server.base))
        .bearer_auth(&server.token)
        .header("x-accept-version", "2.0")
}

async fn import(server: &support::Server, csv: &str) -> (Duration, Value) {
    let started = Instant::now();
    let res = request(server, reqwest::Method::POST, "/product/import")
        .header("content-type", "text/csv")
        .body(csv.to_owned())
        .send()
        .await
        .expect("import");
    let status = res.status();
    let body: Value = res.json().await.expect("json");
    let took = started.elapsed();
    assert_eq!(status, 201, "{body}");
    (took, body)
}

/// The same products as API batches of 200 (no categories or stock: the cheaper work).
async fn batches(server: &support::Server) -> Duration {
    let started = Instant::now();
    for batch in 0..PRODUCTS / 200 {
        let products: serde_json::Map<String, Value> = (0..200)
            .map(|i| {
                let n = batch * 200 + i;
                (
                    format!("p{i}"),
                    json!({"name": format!("Item {n}"), "barcode": format!("B{n:06}"),
                           "instances": {"i": {"name": "Regular", "price": "100", "taxPercentage": "0.200"}}}),
                )
            })
            .collect();
        let res = request(server, reqwest::Method::POST, "/product")
            .json(&json!({"products": products}))
            .send()
            .await
            .expect("batch");
        assert_eq!(res.status(), 201);
    }
    started.elapsed()
}

/// The command, start to end, on a fresh database holding the demo tenant.
fn command(csv_path: &std::path::Path) -> Duration {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("cli.db").display());
    let bin = env!("CARGO_BIN_EXE_merchantd");
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/tenants/demo.toml");
    let applied = Command::new(bin)
        .args(["tenant", "apply", demo, "--database-url", &url])
        .env("MERCHANTD_PBKDF2_ITERATIONS", "1000")
        .output()
        .expect("tenant apply");
    assert!(applied.status.success());
    let started = Instant::now();
    let out = Command::new(bin)
        .args(["catalogue", "import"])
        .arg(csv_path)
        .args(["--merchant", "demo", "--database-url", &url])
        .output()
        .expect("catalogue import");
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

fn main() {
    let csv = catalogue();
    let dir = tempfile::tempdir().expect("temp dir");
    let csv_path = dir.path().join("catalogue.csv");
    std::fs::write(&csv_path, &csv).expect("write csv");
    println!(
        "catalogue: {PRODUCTS} products, {} rows, {} KiB",
        csv.lines().count() - 1,
        csv.len() / 1024
    );
    actix_rt::System::new().block_on(async {
        let (mut imports, mut apis, mut exports) = (Vec::new(), Vec::new(), Vec::new());
        let mut exported = String::new();
        for _ in 0..RUNS {
            let server = support::start().await;
            let (took, body) = import(&server, &csv).await;
            assert_eq!(body["import"]["products"], PRODUCTS);
            imports.push(took);
            let started = Instant::now();
            exported = request(&server, reqwest::Method::GET, "/product/export")
                .send()
                .await
                .expect("export")
                .text()
                .await
                .expect("csv");
            exports.push(started.elapsed());
            let fresh = support::start().await;
            apis.push(batches(&fresh).await);
        }
        let again = support::start().await;
        let (_, body) = import(&again, &exported).await;
        assert_eq!(body["import"]["products"], PRODUCTS, "the export imports");
        let import = median(imports);
        let api = median(apis);
        println!(
            "  POST /product/import, {PRODUCTS} products: median {:.0} ms ({:.0} products/s); target < 2000 ms",
            ms(import),
            PRODUCTS as f64 / import.as_secs_f64()
        );
        println!(
            "  the same products as 50 POST /product batches of 200: median {:.0} ms; import / batches = {:.2}",
            ms(api),
            import.as_secs_f64() / api.as_secs_f64()
        );
        println!(
            "  GET /product/export: median {:.0} ms, {} KiB",
            ms(median(exports)),
            exported.len() / 1024
        );
    });
    let commands: Vec<Duration> = (0..RUNS).map(|_| command(&csv_path)).collect();
    println!(
        "  merchantd catalogue import (the whole command): median {:.0} ms",
        ms(median(commands))
    );
}
