//! One process-wide SQLite writer with group commit, against a transaction per write contending
//! for SQLite's file lock (the performance issue asks which is better across merchants).
//!
//! Each mode gets a fresh database file (WAL, `synchronous = FULL`, as the server runs it) with
//! 64 merchants; `WRITERS` tasks, each writing for its own merchant, run small write
//! transactions (claim the merchant's next version: one UPDATE, then COMMIT) for `SECONDS`.
//! Printed: commits per second and the latency of one write with no one else writing, per
//! mode, and their ratios, measured in one run. `cargo bench --bench sqlite_writers`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use merchantd::db::{Db, PoolSettings, SqliteWrites};
use merchantd::metrics::Metrics;

const MERCHANTS: i64 = 64;
const WRITERS: usize = 64;
const SECONDS: u64 = 5;

struct Figures {
    writes_per_sec: f64,
    lone_write_ms: f64,
    commits: u64,
}

async fn measure(mode: SqliteWrites) -> Figures {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}/bench.db", dir.path().display());
    let metrics = Metrics::new();
    let pool = PoolSettings {
        sqlite_writes: mode,
        ..PoolSettings::default()
    };
    let db = Db::connect_with(&url, metrics.clone(), pool)
        .await
        .expect("connect");
    db.migrate().await.expect("migrate");
    sqlx::any::install_default_drivers();
    let raw = sqlx::AnyPool::connect(&url).await.expect("raw pool");
    for id in 1..=MERCHANTS {
        sqlx::query(
            "INSERT INTO merchants (id, manifest_key, name, created_at, updated_at) \
             VALUES ($1, $2, $3, 0, 0)",
        )
        .bind(id)
        .bind(format!("m{id}"))
        .bind(format!("Merchant {id}"))
        .execute(&raw)
        .await
        .expect("merchant");
    }
    raw.close().await;

    // One write at a time: its latency, median of 200.
    let mut lone = Vec::new();
    for _ in 0..200 {
        let started = Instant::now();
        write(&db, 1).await;
        lone.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    lone.sort_by(f64::total_cmp);

    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let tasks: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (db, stop, done) = (db.clone(), stop.clone(), done.clone());
            tokio::spawn(async move {
                let merchant = (w as i64 % MERCHANTS) + 1;
                while !stop.load(Ordering::Relaxed) {
                    write(&db, merchant).await;
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(SECONDS)).await;
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        task.await.expect("writer");
    }
    let elapsed = started.elapsed().as_secs_f64();
    let commits = metrics
        .render()
        .lines()
        .find_map(|l| l.strip_prefix("db_commits_total "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .unwrap_or(0.0) as u64;
    db.close().await;
    Figures {
        writes_per_sec: done.load(Ordering::Relaxed) as f64 / elapsed,
        lone_write_ms: lone[lone.len() / 2],
        commits,
    }
}

async fn write(db: &Db, merchant: i64) {
    let mut tx = db.begin().await.expect("begin");
    tx.claim_merchant(merchant).await.expect("claim");
    tx.commit().await.expect("commit");
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let shared = runtime.block_on(measure(SqliteWrites::Shared));
    let own = runtime.block_on(measure(SqliteWrites::PerTransaction));
    println!("SQLite writes, {WRITERS} writers over {MERCHANTS} merchants, {SECONDS} s, synchronous = FULL");
    println!("| mode | writes/s | commits | one write alone (p50) |");
    println!("|---|---|---|---|");
    for (name, f) in [
        ("one shared writer (group commit)", &shared),
        ("a transaction per write", &own),
    ] {
        println!(
            "| {name} | {:.0} | {} | {:.2} ms |",
            f.writes_per_sec, f.commits, f.lone_write_ms
        );
    }
    println!(
        "shared / per-transaction: {:.2} × the writes per second, {:.2} × the lone write's latency",
        shared.writes_per_sec / own.writes_per_sec.max(1e-9),
        shared.lone_write_ms / own.lone_write_ms.max(1e-9)
    );
}
