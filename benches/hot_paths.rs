//! Criterion micro-benchmarks of the hot paths behind the load benchmark (`benches/load/`):
//! parsing an id-list header, finding and rendering products in a snapshot (10 and 10,000,
//! with stock columns), a write applied to a snapshot of 10,000 products, an access-token
//! look-up with a warm cache and the use the gate notes for it. Run with
//! `cargo bench --bench hot_paths`.

use std::collections::BTreeSet;
use std::hint::black_box;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use merchantd::domain::catalogue::product::{InstanceRecord, ProductRecord};
use merchantd::engine::merchant::state::MerchantState;
use merchantd::http::filters::parse_id_list;
use rust_decimal::Decimal;

const PRODUCTS: i64 = 10_000;

/// The server's allocator and options (src/main.rs), so memory figures match it.
#[cfg(feature = "jemalloc")]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[cfg(feature = "jemalloc")]
#[allow(non_upper_case_globals)]
#[export_name = "_rjem_malloc_conf"]
pub static malloc_conf: &[u8; 60] =
    b"background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0\0";

fn product(id: i64) -> ProductRecord {
    let mut p = ProductRecord::new(id, 1_774_740_600_000);
    p.name = format!("Product {id}");
    p.barcode = Some(format!("50{id:011}"));
    p.tags = Some("bench,coffee".into());
    p.instances = vec![InstanceRecord {
        id: id + 1_000_000,
        product_id: id,
        name: None,
        price: Decimal::new(300 + id % 50, 2),
        tax_percentage: Decimal::new(200, 3),
        size: None,
        tags: None,
        tax_codes: Vec::new(),
        active_date: Some(1_774_740_600_000),
        delete_date: None,
    }];
    p
}

fn catalogue() -> MerchantState {
    let mut state = MerchantState::new(1, Arc::from("http://127.0.0.1:8080"), 1_000);
    for id in 1..=PRODUCTS {
        state.put(product(id));
    }
    state
}

fn ids_header(n: i64) -> String {
    (0..n)
        .map(|i| (1 + i * 997 % PRODUCTS).to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn benches(c: &mut Criterion) {
    use merchantd::views::records::collection;
    let header = ids_header(10);
    c.bench_function("parse productIds (10 ids)", |b| {
        b.iter(|| parse_id_list("productIds", black_box(&header)))
    });

    // The API's rate limits on every request (the defaults, far from their ceiling here).
    use merchantd::http::rate::{ApiLimits, Limit};
    let limits = ApiLimits::new(
        Limit {
            per_second: 1_000_000_000,
            burst: 1_000_000_000,
        },
        Limit {
            per_second: 1_000_000_000,
            burst: 1_000_000_000,
        },
        prometheus::IntCounterVec::new(prometheus::Opts::new("l", "l"), &["limit"])
            .expect("counter"),
    );
    c.bench_function("rate limits: token and merchant buckets", |b| {
        b.iter(|| limits.check(black_box("2f1c0d8e-family"), black_box(42)))
    });

    let rss = || {
        std::fs::read_to_string("/proc/self/statm")
            .ok()
            .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
            .unwrap_or(0)
            * 4096
    };
    let before = rss();
    let state = catalogue();
    let after = rss();
    let mut warm_all = String::new();
    collection(&state, state.products.values(), &mut warm_all);
    drop(warm_all);
    let rendered = rss();
    eprintln!(
        "memory: {} B per product cached, {} B more once rendered",
        (after - before) / PRODUCTS as u64,
        (rendered - after) / PRODUCTS as u64
    );
    // Render every product once so reads measure the cached path, as a warm server does.
    let mut warm = String::new();
    collection(&state, state.products.values(), &mut warm);
    let ids: BTreeSet<i64> = parse_id_list("productIds", &header).expect("ids");
    c.bench_function("render 10 products by id", |b| {
        b.iter(|| {
            let mut out = String::with_capacity(4096);
            collection(
                &state,
                ids.iter().filter_map(|id| state.products.get(id)),
                &mut out,
            );
            out
        })
    });
    // Ten ids at random each time, as the load benchmark asks: the lookups miss the caches.
    let sets: Vec<Vec<i64>> = (0..4_096_i64)
        .map(|s| {
            (0..10)
                .map(|i| 1 + (s * 7_919 + i * 104_729) % PRODUCTS)
                .collect()
        })
        .collect();
    let mut next = 0;
    c.bench_function("render 10 random products by id", |b| {
        b.iter(|| {
            next = (next + 1) % sets.len();
            let mut out = String::with_capacity(8192);
            collection(
                &state,
                sets[next].iter().filter_map(|id| state.products.get(id)),
                &mut out,
            );
            out
        })
    });
    c.bench_function("render 10,000 products", |b| {
        b.iter(|| {
            let mut out = String::with_capacity(4 << 20);
            collection(&state, state.products.values(), &mut out);
            out
        })
    });
    c.bench_function("price a 20-line basket: 2 rates added, 2 promotions", |b| {
        use merchantd::domain::catalogue::promotion::PromotionType;
        use merchantd::domain::sales::pricing::{self, LineTax, Offer, SaleLine, SaleSettings};
        let rate = |code: &str, r: i64| LineTax {
            code: code.into(),
            rate: Decimal::new(r, 2),
            included: false,
        };
        let lines: Vec<SaleLine> = (0..20)
            .map(|i| SaleLine {
                id: i,
                product_id: i % 7,
                category_ids: vec![i % 3],
                quantity: 1 + i % 3,
                unit_price: Decimal::new(150 + 37 * i, 0),
                taxes: vec![rate("GST", 5), rate("PST", 7)],
                fixed_net: None,
            })
            .collect();
        let offer = |id, kind, x, stackable| Offer {
            id,
            kind,
            x: Decimal::new(x, 0),
            y: Some(Decimal::new(2, 0)),
            product_ids: vec![1, 2, 3],
            category_ids: vec![],
            stackable,
        };
        let offers = [
            offer(1, PromotionType::Percentage, 10, false),
            offer(2, PromotionType::XForY, 3, true),
        ];
        let settings = SaleSettings {
            prices_include_tax: false,
            cash_increment: 5,
            ..SaleSettings::default()
        };
        b.iter(|| pricing::calculate(&lines, &offers, &settings))
    });
    c.bench_function("stock level of 10 products", |b| {
        b.iter(|| {
            ids.iter()
                .map(|id| state.stock_level(1, *id).left())
                .sum::<i64>()
        })
    });

    // What a write costs the state: clone the snapshot, change one product, publish.
    let published = Arc::new(state);
    c.bench_function("write one product into a 10,000-product snapshot", |b| {
        b.iter(|| {
            let mut next = (*published).clone();
            let mut changed = product(4_242);
            changed.name = "Renamed".into();
            next.put(changed);
            Arc::new(next)
        })
    });

    token_lookup(c);
    activation(c);
}

/// What a merchant's activation reads: 10,000 products with their instances, from SQLite.
fn activation(c: &mut Criterion) {
    use merchantd::db::{Db, Record};
    use merchantd::metrics::Metrics;

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("activation.db").display());
    let (db, merchant) = runtime.block_on(async {
        let db = Db::connect(&url, Metrics::new()).await.expect("db");
        db.migrate().await.expect("migrate");
        let tenants = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tenants");
        let files = merchantd::tenants::manifests_in(&tenants).expect("manifests");
        let applied = merchantd::tenants::apply_files(&db, &files, 1_000)
            .await
            .expect("tenants");
        let merchant = applied[0].id;
        let mut tx = db.begin().await.expect("tx");
        for id in 1..=PRODUCTS {
            product(10_000_000 + id)
                .persist(&mut tx, merchant, true)
                .await
                .expect("product");
        }
        tx.commit().await.expect("commit");
        (db, merchant)
    });
    // Resident memory of the loaded catalogue, once what loading freed has been given back.
    let rss = || {
        std::fs::read_to_string("/proc/self/statm")
            .ok()
            .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
            .unwrap_or(0)
            * 4096
    };
    std::thread::sleep(std::time::Duration::from_secs(2));
    let before = rss();
    let loaded = runtime
        .block_on(ProductRecord::load(&db, merchant))
        .expect("load");
    let mut state = MerchantState::new(merchant, Arc::from(""), 1_000);
    for p in loaded {
        state.put(p);
    }
    std::thread::sleep(std::time::Duration::from_secs(2));
    eprintln!(
        "memory: a loaded catalogue holds {} B per product",
        (rss() - before) / PRODUCTS as u64
    );
    drop(state);
    let mut group = c.benchmark_group("activation");
    group.sample_size(10);
    group.bench_function("load 10,000 products with instances", |b| {
        b.iter(|| {
            runtime
                .block_on(ProductRecord::load(&db, merchant))
                .expect("load")
        })
    });
    group.bench_function("index 10,000 loaded products into a state", |b| {
        let loaded = runtime
            .block_on(ProductRecord::load(&db, merchant))
            .expect("load");
        b.iter(|| {
            let mut state = MerchantState::new(merchant, Arc::from(""), 1_000);
            for p in loaded.iter().cloned() {
                state.put(p);
            }
            state
        })
    });
    group.finish();
}

/// An API request's token check with a warm cache: hash the token, find it, no database.
fn token_lookup(c: &mut Criterion) {
    use merchantd::db::Db;
    use merchantd::domain::oauth::token::NewFamily;
    use merchantd::engine::TokenActors;
    use merchantd::metrics::Metrics;

    let system = actix_rt::System::new();
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    let token = "mcd_at_benchbenchbenchbenchbenchbenchbench";
    let tokens = system.block_on(async {
        let metrics = Metrics::new();
        let db = Db::connect(&url, metrics.clone()).await.expect("db");
        db.migrate().await.expect("migrate");
        let tenants = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tenants");
        let files = merchantd::tenants::manifests_in(&tenants).expect("manifests");
        let applied = merchantd::tenants::apply_files(&db, &files, 1_000)
            .await
            .expect("tenants");
        let demo = &applied[0];
        let family = NewFamily {
            id: "bench".into(),
            merchant_id: demo.id,
            employee_id: *demo.users.values().next().expect("a user"),
            application_id: *demo.applications.values().next().expect("an application"),
            scope: "read".into(),
        };
        let hash = merchantd::crypto::sha256_hex(token);
        db.issue_access_token(&family, &hash, merchantd::domain::now_millis() + 3_600_000)
            .await
            .expect("token");
        let tokens = TokenActors::start(std::sync::Arc::new(db), 1, &metrics);
        tokens
            .access_token(&hash)
            .await
            .expect("warm")
            .expect("found");
        tokens
    });
    c.bench_function("access token look-up (warm cache)", |b| {
        b.iter(|| {
            system.block_on(async {
                let hash = merchantd::crypto::sha256_hex(black_box(token));
                tokens.access_token(&hash).await.expect("lookup")
            })
        })
    });
    // What the gate adds for "last used" (connected applications): the family's stamp,
    // checked and almost always found less than a minute old, so nothing is queued.
    c.bench_function("noting a token family's use (within the minute)", |b| {
        let now = merchantd::domain::now_millis();
        b.iter(|| tokens.note_use(black_box("bench"), 1, black_box(now)))
    });
}

criterion_group!(hot_paths, benches);
criterion_main!(hot_paths);
