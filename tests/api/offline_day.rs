//! A shop day with the network down (issue 24 acceptance 1, docs/offline.md), against the real
//! binary: 1,000 products, 20 tills with open sessions go offline and keep selling (the last
//! units of some products, products then deleted, prices then changed), while 8 online clients
//! change prices and delete products. Five sessions are closed before the tills come back. The
//! tills then sync in random order, in batches of 5, each batch duplicated at random and sent
//! again until answered; the server is SIGKILLed after the 20th answer and started again.
//! Afterwards every sale is recorded exactly once (the baskets the answers named, before and
//! after the kill), stock is received − sold for every product (negative where oversold, the
//! shortfall events adding up to exactly what was oversold), the open sessions' X-reports, the
//! closed ones' supplementary figures and the hourly sales report equal a recomputation from the
//! sales the tills made, and the closed Z-reports show none of them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::join_all;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use tokio::sync::Notify;

use crate::crash::token_for_demo_owner;
use crate::db_tests;
use crate::process::serve;
use crate::till_day::{restart, Api};

const PRODUCTS: usize = 1_000;
const TILLS: usize = 20;
const SALES_PER_TILL: usize = 15;
const BATCH: usize = 5;
/// Products that start with 2 units each (the rest with none): the last units sell out.
const STOCKED: usize = 100;
const HOUR: i64 = 3_600_000;

/// A deterministic generator (xorshift): the same day every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

fn id(v: &Value) -> i64 {
    v["id"].as_i64().expect("an id")
}

fn iso(millis: i64) -> String {
    chrono::DateTime::<chrono::Utc>::from_timestamp_millis(millis)
        .unwrap()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// One sale as the till made it: (till, clientId, time of sale, lines (product, quantity,
/// unit price), total).
struct Sale {
    till: usize,
    client_id: String,
    at: i64,
    lines: Vec<(i64, i64, i64)>,
    total: i64,
    body: Value,
}

async fn post_many(api: &Api, path: &str, plural: &str, objects: Vec<Value>) -> Vec<Value> {
    let mut saved = Vec::new();
    for chunk in objects.chunks(200) {
        let body: serde_json::Map<String, Value> = chunk
            .iter()
            .enumerate()
            .map(|(i, o)| (format!("k{i:03}"), o.clone()))
            .collect();
        let (status, answer) = api
            .call(Method::POST, path, &[], Some(json!({ plural: body })))
            .await
            .unwrap();
        assert_eq!(status, StatusCode::CREATED, "{answer}");
        for i in 0..chunk.len() {
            saved.push(answer[plural][format!("k{i:03}")].clone());
        }
    }
    saved
}

/// The products (id, price), the registers and their open sessions.
async fn set_up(api: &Api, store: i64) -> (Vec<(i64, i64)>, Vec<(i64, i64)>) {
    let objects = (0..PRODUCTS)
        .map(|i| {
            json!({"name": format!("P{i:04}"), "instances": {"i": {"name": "Standard",
                "price": (100 + i % 400).to_string(), "taxPercentage": "0.200"}}})
        })
        .collect();
    let products: Vec<(i64, i64)> = post_many(api, "/product", "products", objects)
        .await
        .iter()
        .enumerate()
        .map(|(i, p)| (id(p), 100 + (i % 400) as i64))
        .collect();
    let supplier = api
        .create("/supplier", "suppliers", json!({"name": "Wholesale"}))
        .await
        .unwrap();
    let items: serde_json::Map<String, Value> = products[..STOCKED]
        .iter()
        .enumerate()
        .map(|(i, (p, _))| {
            (
                format!("i{i}"),
                json!({"productId": p, "quantity": 2, "unitPrice": "50", "vatPercentage": "0.200"}),
            )
        })
        .collect();
    let invoice = api
        .create(
            "/invoice",
            "invoices",
            json!({"storeId": store, "supplierId": id(&supplier),
            "reference": "OPEN", "completed": true, "items": items}),
        )
        .await
        .unwrap();
    assert_eq!(invoice["completed"], true, "{invoice}");
    let registers = post_many(
        api,
        "/register",
        "registers",
        (0..TILLS)
            .map(|t| json!({"storeId": store, "name": format!("T{t}")}))
            .collect(),
    )
    .await;
    let sessions = post_many(
        api,
        "/register/session",
        "sessions",
        registers
            .iter()
            .map(|r| json!({"registerId": id(r), "openingFloat": 0}))
            .collect(),
    )
    .await;
    let tills = registers
        .iter()
        .zip(&sessions)
        .map(|(r, s)| (id(r), id(s)))
        .collect();
    (products, tills)
}

/// What the tills sell while offline: mostly the stocked products (so some sell out), within
/// the last three hours, each till's sales in time order.
fn offline_sales(
    rng: &mut Rng,
    store: i64,
    products: &[(i64, i64)],
    tills: &[(i64, i64)],
) -> Vec<Sale> {
    let start = merchantd::domain::now_millis() - 3 * HOUR;
    let mut sales = Vec::new();
    for (t, (register, session)) in tills.iter().enumerate() {
        let mut at = start + rng.below(600_000) as i64;
        for n in 0..SALES_PER_TILL {
            at += 60_000 + rng.below(500_000) as i64;
            let lines: Vec<(i64, i64, i64)> = (0..1 + rng.below(3))
                .map(|_| {
                    let (p, price) = products[if rng.below(4) == 0 {
                        rng.below(PRODUCTS)
                    } else {
                        rng.below(STOCKED + 20)
                    }];
                    (p, 1 + rng.below(2) as i64, price)
                })
                .collect();
            let total = lines.iter().map(|(_, q, p)| q * p).sum();
            let client_id = format!("0ff1ce00-0000-4000-8000-{:06}{:06}", t, n);
            let basket_products: serde_json::Map<String, Value> = lines
                .iter()
                .enumerate()
                .map(|(i, (p, q, price))| {
                    (
                        format!("l{i}"),
                        json!({"productId": p, "quantity": q, "price": price.to_string()}),
                    )
                })
                .collect();
            let body = json!({"clientId": client_id, "occurredAt": iso(at), "storeId": store,
                "registerId": register, "sessionId": session, "basketProducts": basket_products,
                "payments": {"p": {"type": if n % 2 == 0 { "CASH" } else { "CARD" }, "amount": total}}});
            sales.push(Sale {
                till: t,
                client_id,
                at,
                lines,
                total,
                body,
            });
        }
    }
    sales
}

/// 8 online clients while the tills are offline: new prices (an instance replacing the old)
/// for 40 products the tills sell, 16 of them deleted.
async fn online_changes(api: &Arc<Api>, products: &[(i64, i64)]) {
    let clients = (0..8).map(|c| {
        let api = api.clone();
        let mine: Vec<i64> = (0..5).map(|k| products[(c * 5 + k) * 3].0).collect();
        async move {
            for (k, p) in mine.iter().enumerate() {
                let changed = api.create("/product", "products", json!({"id": p,
                    "instances": {"n": {"name": "Standard", "price": "999", "taxPercentage": "0.200"}}})).await.unwrap();
                assert_eq!(changed["id"], *p);
                if k % 5 < 2 {
                    let (status, body) = api.call(Method::DELETE, "/product", &[("productIds", p.to_string())], None).await.unwrap();
                    assert_eq!(status, StatusCode::RESET_CONTENT, "{body}");
                }
            }
        }
    });
    join_all(clients).await;
}

/// clientId → the basket each answer named; a clientId named twice must name one basket.
type Told = Arc<Mutex<BTreeMap<String, BTreeSet<i64>>>>;

/// Sends the batches from 8 concurrent senders, each batch until answered 201 (a batch cut off
/// by the kill is sent again to the restarted server); `answered` counts answers.
async fn sync_all(
    api: &Arc<Api>,
    batches: Vec<Vec<Value>>,
    told: &Told,
    answered: &Arc<AtomicUsize>,
    kill_at: (usize, Arc<Notify>),
) {
    let queue = Arc::new(Mutex::new(batches));
    let senders = (0..8).map(|_| {
        let (api, queue, told, answered, kill_at) = (
            api.clone(),
            queue.clone(),
            told.clone(),
            answered.clone(),
            kill_at.clone(),
        );
        async move {
            loop {
                let Some(batch) = queue.lock().unwrap().pop() else {
                    return;
                };
                let body: serde_json::Map<String, Value> = batch
                    .iter()
                    .map(|s| (s["clientId"].as_str().unwrap().to_owned(), s.clone()))
                    .collect();
                let answer = loop {
                    match api
                        .call(
                            Method::POST,
                            "/basket/sync",
                            &[],
                            Some(json!({"sales": body})),
                        )
                        .await
                    {
                        Some((StatusCode::CREATED, answer)) => break answer,
                        Some((status, answer)) if status.is_server_error() => {
                            let _ = answer;
                            tokio::time::sleep(Duration::from_millis(200)).await
                        }
                        Some((status, answer)) => panic!("sync: {status} {answer}"),
                        None => tokio::time::sleep(Duration::from_millis(200)).await,
                    }
                };
                assert!(answer["api"]["message"].get("error").is_none(), "{answer}");
                let mut told = told.lock().unwrap();
                for (client, basket) in answer["baskets"].as_object().unwrap() {
                    told.entry(client.clone()).or_default().insert(id(basket));
                }
                drop(told);
                if answered.fetch_add(1, Ordering::SeqCst) + 1 == kill_at.0 {
                    kill_at.1.notify_one();
                }
            }
        }
    });
    join_all(senders).await;
}

/// A tally as reports show it.
fn tally(count: i64, quantity: i64, amount: i64, tax: i64) -> Value {
    json!({"count": count, "quantity": quantity, "amount": amount, "tax": tax})
}

db_tests! {
    async fn twenty_tills_sell_offline_and_sync_across_a_kill(db) {
        let served = serve(&db, "info");
        let (token, store) = token_for_demo_owner(&db).await;
        let api = Arc::new(Api {
            client: reqwest::Client::builder().pool_max_idle_per_host(32).timeout(Duration::from_secs(30)).build().unwrap(),
            base: std::sync::RwLock::new(served.url("")),
            token,
        });
        let (products, tills) = set_up(&api, store).await;
        let mut rng = Rng(0x5eed_2024);
        let sales = offline_sales(&mut rng, store, &products, &tills);
        online_changes(&api, &products).await;
        let closed: BTreeSet<usize> = [1, 4, 9, 13, 18].into();
        for t in &closed {
            let closing = api.create("/register/session", "sessions", json!({"id": tills[*t].1, "closed": true, "countedCash": 0})).await.unwrap();
            assert_eq!(closing["closed"], true, "{closing}");
        }

        // Batches of 5 of one till's sales, shuffled, about a third sent twice.
        let mut batches: Vec<Vec<Value>> = Vec::new();
        for t in 0..TILLS {
            let mine: Vec<Value> = sales.iter().filter(|s| s.till == t).map(|s| s.body.clone()).collect();
            for chunk in mine.chunks(BATCH) {
                batches.push(chunk.to_vec());
                if rng.below(3) == 0 {
                    batches.push(chunk.to_vec());
                }
            }
        }
        for i in (1..batches.len()).rev() {
            batches.swap(i, rng.below(i + 1));
        }
        let told: Told = Arc::default();
        let answered = Arc::new(AtomicUsize::new(0));
        let kill = Arc::new(Notify::new());
        let syncing = {
            let (api, told, answered, kill) = (api.clone(), told.clone(), answered.clone(), kill.clone());
            tokio::spawn(async move { sync_all(&api, batches, &told, &answered, (20, kill)).await })
        };
        tokio::time::timeout(Duration::from_secs(120), kill.notified()).await.expect("20 batches answered");
        let before_kill: BTreeMap<String, BTreeSet<i64>> = told.lock().unwrap().clone();
        let served = restart(&db, served, &api).await;
        tokio::time::timeout(Duration::from_secs(300), syncing).await.expect("the syncs end").unwrap();

        // Every sale recorded exactly once: each clientId answered one basket, every time, and
        // what was told "recorded" before the kill is still there.
        let told = told.lock().unwrap().clone();
        assert_eq!(told.len(), sales.len());
        assert!(told.values().all(|ids| ids.len() == 1), "a clientId named two baskets");
        for (client, ids) in &before_kill {
            assert_eq!(told.get(client), Some(ids), "{client} was recorded before the kill");
        }
        let sessions = tills.iter().map(|(_, s)| s.to_string()).collect::<Vec<_>>().join(",");
        let baskets = api.get("/basket", &[("sessionIds", sessions)]).await;
        let baskets: Vec<&Value> = baskets["baskets"].as_object().unwrap().values().collect();
        assert_eq!(baskets.len(), sales.len(), "one basket per sale, no duplicate");
        let mut tax: BTreeMap<String, i64> = BTreeMap::new();
        for b in &baskets {
            let client = b["clientId"].as_str().unwrap();
            tax.insert(client.to_owned(), b["receipt"]["tax"].as_i64().unwrap());
            assert_eq!(told[client], BTreeSet::from([id(b)]));
            let sale = sales.iter().find(|s| s.client_id == client).unwrap();
            assert_eq!((b["completeDate"].as_str(), b["total"].as_str()), (Some(iso(sale.at).as_str()), Some(sale.total.to_string().as_str())), "{b}");
        }

        // Stock: received − sold for every product; the shortfalls add up to what was oversold.
        let mut sold: BTreeMap<i64, i64> = BTreeMap::new();
        for s in &sales {
            for (p, q, _) in &s.lines {
                *sold.entry(*p).or_default() += q;
            }
        }
        let ids = products.iter().map(|(p, _)| p.to_string()).collect::<Vec<_>>().join(",");
        let levels = api.get("/product", &[("productIds", ids), ("storeId", store.to_string()), ("deleted", "true".into())]).await;
        let sql = crate::helpers::raw_pool(&db.url).await;
        let events: Vec<String> = sqlx::query_scalar("SELECT data FROM events WHERE event_type = 'stock.shortfall'").fetch_all(&sql).await.unwrap();
        let mut short: BTreeMap<i64, i64> = BTreeMap::new();
        for e in &events {
            let e: Value = serde_json::from_str(e).unwrap();
            *short.entry(e["productId"].as_i64().unwrap()).or_default() += e["short"].as_i64().unwrap();
        }
        let mut oversold = 0;
        for (i, (p, _)) in products.iter().enumerate() {
            let received = if i < STOCKED { 2 } else { 0 };
            let units = sold.get(p).copied().unwrap_or(0);
            assert_eq!(levels["products"][p.to_string()]["stockLeft"].as_i64(), Some(received - units), "product {p}");
            assert_eq!(short.get(p).copied().unwrap_or(0), (units - received).max(0), "shortfalls of product {p}");
            oversold += i64::from(units > received);
        }
        assert!(oversold > 20, "the day oversold products: {oversold}");

        // The stock ledger (acceptance 3): for products the day sold and random past times,
        // the level `GET /stock/movement` gives is the replay of its movements, and the replay
        // of what the tills sold.
        let watched: Vec<i64> = products[..STOCKED].iter().map(|(p, _)| *p).filter(|p| sold.contains_key(p)).take(12).collect();
        let ids = watched.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        let ledger = api.get("/stock/movement", &[("productIds", ids.clone()), ("storeIds", store.to_string())]).await;
        let at = |m: &Value| chrono::DateTime::parse_from_rfc3339(m["occurredAt"].as_str().unwrap()).unwrap().timestamp_millis();
        for p in &watched {
            let book = &ledger["stockMovements"][store.to_string()][p.to_string()];
            let moves = book["movements"].as_array().unwrap();
            let lines = sales.iter().flat_map(|s| &s.lines).filter(|(product, _, _)| product == p).count();
            assert_eq!(moves.len(), lines + 1, "a movement per sale line and the delivery: {book}");
            assert_eq!(book["levelTo"], levels["products"][p.to_string()]["stockLeft"], "{book}");
            assert_eq!(book["levelTo"].as_i64().unwrap(), moves.iter().map(|m| m["quantity"].as_i64().unwrap()).sum::<i64>());
        }
        let first_sale = sales.iter().map(|s| s.at).min().unwrap();
        for _ in 0..8 {
            let t = first_sale - HOUR + rng.below(4 * 3_600) as i64 * 1000;
            let t = t - t % 1000;
            let when = chrono::DateTime::<chrono::Utc>::from_timestamp_millis(t).unwrap().format("%Y-%m-%d %H:%M:%S").to_string();
            let then = api.get("/stock/movement", &[("productIds", ids.clone()), ("movementTo", when.clone())]).await;
            for p in &watched {
                let all = ledger["stockMovements"][store.to_string()][p.to_string()]["movements"].as_array().unwrap();
                let replayed: i64 = all.iter().filter(|m| at(m) < t).map(|m| m["quantity"].as_i64().unwrap()).sum();
                let sold_before: i64 = sales.iter().filter(|s| s.at < t).flat_map(|s| &s.lines).filter(|(product, _, _)| product == p).map(|(_, q, _)| q).sum();
                let received = all.iter().filter(|m| m["reason"] == "receipt" && at(m) < t).map(|m| m["quantity"].as_i64().unwrap()).sum::<i64>();
                let level = then["stockMovements"][store.to_string()][p.to_string()]["levelTo"].as_i64().unwrap_or(0);
                assert_eq!(level, replayed, "product {p} at {when}");
                assert_eq!(level, received - sold_before, "product {p} at {when}");
            }
        }

        // Reports by time of sale: X-reports of the open sessions, supplementary figures of the
        // closed ones (whose Z-reports show none of these sales), and the hourly report.
        for (t, (_, session)) in tills.iter().enumerate() {
            let mine: Vec<&Sale> = sales.iter().filter(|s| s.till == t).collect();
            let units: i64 = mine.iter().flat_map(|s| &s.lines).map(|(_, q, _)| q).sum();
            let expected = tally(mine.len() as i64, units, mine.iter().map(|s| s.total).sum(), mine.iter().map(|s| tax[&s.client_id]).sum());
            let report = api.get("/register/session/report", &[("sessionIds", session.to_string())]).await;
            let r = &report["sessionReports"][session.to_string()];
            if closed.contains(&t) {
                assert_eq!(r["kind"], "Z");
                assert_eq!(r["figures"]["sales"], tally(0, 0, 0, 0), "{r}");
                assert_eq!(r["supplementary"]["figures"]["sales"], expected, "{r}");
                assert_eq!(r["supplementary"]["basketIds"].as_array().unwrap().len(), mine.len());
            } else {
                assert_eq!(r["kind"], "X");
                assert_eq!(r["figures"]["sales"], expected, "{r}");
            }
        }
        let first = sales.iter().map(|s| s.at).min().unwrap();
        let from = chrono::DateTime::<chrono::Utc>::from_timestamp_millis(first - first % HOUR).unwrap();
        let to = from + chrono::Duration::hours(5);
        let report = api.get("/report/sales", &[("reportFrom", from.format("%Y-%m-%d %H:00:00").to_string()),
            ("reportTo", to.format("%Y-%m-%d %H:00:00").to_string()), ("period", "hour".into()), ("groupBy", "store".into())]).await;
        let mut by_hour: BTreeMap<String, (i64, i64)> = BTreeMap::new();
        for s in &sales {
            let hour = chrono::DateTime::<chrono::Utc>::from_timestamp_millis(s.at).unwrap().format("%Y-%m-%dT%H").to_string();
            let e = by_hour.entry(hour).or_default();
            e.0 += 1;
            e.1 += s.total;
        }
        let buckets = report["salesReport"]["buckets"].as_object().unwrap();
        assert_eq!(buckets.len(), by_hour.len(), "{report}");
        for (hour, (count, amount)) in by_hour {
            let b = &buckets[&hour][store.to_string()];
            assert_eq!((b["count"].as_i64(), b["amount"].as_i64()), (Some(count), Some(amount)), "hour {hour}: {report}");
        }

        // Digests (acceptance 2): a till's copy built from the events it read agrees with the
        // server for every resource the day touched.
        let (_, headers) = {
            let res = api.client.get(format!("{}/category", api.base.read().unwrap())).bearer_auth(&api.token)
                .header("x-accept-version", "2.0").send().await.unwrap();
            (res.status(), res.headers().clone())
        };
        let upto = crate::events::sequence(&headers);
        let res = api.client.get(format!("{}/events", api.base.read().unwrap())).bearer_auth(&api.token)
            .header("x-accept-version", "2.0").header("Last-Event-ID", "0").send().await.unwrap();
        let events = crate::digest::events_json(&crate::events::Stream::of(res).take(upto as usize).await);
        assert_eq!(events.len() as i64, upto);
        for resource in ["basket", "transaction", "product", "session", "register", "invoice"] {
            let server = api.get("/digest", &[("resource", resource.into()), ("bucketSize", "100".into())]).await;
            assert!(server["digest"]["total"]["count"].as_i64().unwrap() > 0, "{server}");
            assert_eq!(server["digest"], crate::digest::local_digest(&events, resource, 100), "{resource}");
        }
        drop(served);
    }
}
