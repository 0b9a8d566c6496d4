//! A simulated till day (issue 23, docs/tills.md) against the real binary: 2 stores, 3
//! registers, 2 sessions each, 600 sales from 16 concurrent clients paid in cash, by card or
//! both, linked returns, cash paid in and out, and a counted close. The server is SIGKILLed in
//! the middle of the morning and started again on the same database. Then every Z-report
//! figure equals the sum recomputed here from the raw baskets and payments, the expected cash
//! matches, and each register's receipt numbers are 1…n with no gap and no repeat. (Payments
//! count in the session that took them: a client cut off by the kill leaves paid baskets open.)

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::join_all;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use tokio::sync::Notify;

use crate::contract::Checked;
use crate::crash::token_for_demo_owner;
use crate::db_tests;
use crate::process::{serve, Served};

const CLIENTS: usize = 16;

pub(crate) struct Api {
    pub(crate) client: reqwest::Client,
    pub(crate) base: std::sync::RwLock<String>,
    pub(crate) token: String,
}

impl Api {
    /// The answer, or `None` when the server could not be reached (killed).
    pub(crate) async fn call(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, String)],
        body: Option<Value>,
    ) -> Option<(StatusCode, Value)> {
        let base = self.base.read().unwrap().clone();
        let mut req = self
            .client
            .request(method, format!("{base}{path}"))
            .bearer_auth(&self.token)
            .header("x-accept-version", "2.0");
        for (name, value) in headers {
            req = req.header(*name, value);
        }
        if let Some(body) = body {
            req = req.json(&body);
        }
        let res = req.checked().await.ok()?;
        let status = res.status();
        Some((status, res.json().await.ok()?))
    }

    /// POSTs one object; the saved object when answered 201.
    pub(crate) async fn create(&self, path: &str, plural: &str, object: Value) -> Option<Value> {
        let body = json!({ plural: {"k": object} });
        match self.call(Method::POST, path, &[], Some(body)).await? {
            (StatusCode::CREATED, body) => Some(body[plural]["k"].clone()),
            (status, body) => panic!("{path}: {status} {body}"),
        }
    }

    pub(crate) async fn get(&self, path: &str, headers: &[(&str, String)]) -> Value {
        let (status, body) = self.call(Method::GET, path, headers, None).await.unwrap();
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
        body
    }
}

fn id(v: &Value) -> i64 {
    v["id"].as_i64().expect("an id")
}

/// The shop: registers (with their store), products (with their categories), the second
/// employee.
struct Shop {
    registers: Vec<(i64, i64)>,
    products: Vec<(i64, Vec<i64>)>,
    clerk: i64,
}

async fn set_up(api: &Api, store_a: i64) -> Shop {
    let store_b = id(&api
        .create(
            "/store",
            "stores",
            json!({"name": "Harbourside", "addressLine1": "1 Quay",
            "city": "Bristol", "postcode": "BS1 4DJ", "countryId": "GB"}),
        )
        .await
        .unwrap());
    let mut registers = Vec::new();
    for (store, name) in [(store_a, "A1"), (store_a, "A2"), (store_b, "B1")] {
        let r = api
            .create(
                "/register",
                "registers",
                json!({"storeId": store, "name": name}),
            )
            .await
            .unwrap();
        registers.push((id(&r), store));
    }
    let hot = id(&api
        .create("/category", "categories", json!({"title": "Hot"}))
        .await
        .unwrap());
    let food = id(&api
        .create("/category", "categories", json!({"title": "Food"}))
        .await
        .unwrap());
    let mut products = Vec::new();
    for (name, price, cats) in [
        ("Latte", "315", vec![hot]),
        ("Scone", "249", vec![food]),
        ("Soup", "575", vec![hot, food]),
        ("Water", "120", vec![]),
    ] {
        let p = api
            .create(
                "/product",
                "products",
                json!({"name": name, "categories": cats,
            "instances": {"i": {"name": "Standard", "price": price, "taxPercentage": "0.200"}}}),
            )
            .await
            .unwrap();
        products.push((id(&p), cats));
    }
    let clerk = id(&api
        .create(
            "/employee",
            "employees",
            json!({"firstName": "Sam", "lastName": "Patel",
            "email": "sam@demo.test", "roleId": 3}),
        )
        .await
        .unwrap());
    Shop {
        registers,
        products,
        clerk,
    }
}

/// Opens a session at each register, with a paid in and a paid out.
async fn open_sessions(api: &Api, shop: &Shop) -> Vec<i64> {
    let mut sessions = Vec::new();
    for (register, _) in &shop.registers {
        let s = api
            .create(
                "/register/session",
                "sessions",
                json!({"registerId": register, "openingFloat": 10_000}),
            )
            .await
            .unwrap();
        assert_eq!(s["closed"], false, "{s}");
        for (kind, amount, reason) in [
            ("paidIn", 2_000, "Change from the bank"),
            ("paidOut", 750, "Window cleaner"),
        ] {
            api.create(
                "/register/cash",
                "cashMovements",
                json!({"sessionId": id(&s),
                "type": kind, "amount": amount, "reason": reason}),
            )
            .await
            .unwrap();
        }
        sessions.push(id(&s));
    }
    sessions
}

/// One sale (or, every seventh, a linked return of the client's last cash or card sale), as
/// far as the server answers; `None` once it cannot be reached.
async fn one_sale(
    api: &Api,
    shop: &Shop,
    client: usize,
    n: usize,
    last: &mut Option<(Value, Value)>,
) -> Option<()> {
    let (register, store) = shop.registers[client % shop.registers.len()];
    let employee = if client.is_multiple_of(2) {
        Value::Null
    } else {
        json!(shop.clerk)
    };
    if n % 7 == 6 {
        if let Some((sale, payment)) = last.take() {
            let line: i64 = sale["basketProducts"]
                .as_object()
                .unwrap()
                .keys()
                .next()
                .unwrap()
                .parse()
                .unwrap();
            let price = sale["basketProducts"][line.to_string()]["price"]
                .as_str()
                .unwrap()
                .parse::<i64>()
                .unwrap();
            let back = api.create("/basket", "baskets", json!({"storeId": store, "registerId": register,
                "basketProducts": {"r": {"returnOf": {"basketId": id(&sale), "lineId": line}, "quantity": -1}}})).await?;
            api.create(
                "/transaction",
                "transactions",
                json!({"basketId": id(&back),
                "refundOf": id(&payment), "amount": price, "completed": true}),
            )
            .await?;
            let done = api
                .create(
                    "/basket",
                    "baskets",
                    json!({"id": id(&back), "completed": true}),
                )
                .await?;
            assert_eq!(done["completed"], true, "{done}");
            return Some(());
        }
    }
    let (product, _) = &shop.products[(client + n) % shop.products.len()];
    let (other, _) = &shop.products[(client * 3 + n + 1) % shop.products.len()];
    let mut basket = json!({"storeId": store, "registerId": register,
        "basketProducts": {"a": {"productId": product, "quantity": 1 + (n % 3) as i64},
                           "b": {"productId": other, "quantity": 1}}});
    if !employee.is_null() {
        basket["employeeId"] = employee;
    }
    let basket = api.create("/basket", "baskets", basket).await?;
    let total = basket["receipt"]["total"].as_i64().unwrap();
    let kinds: Vec<(&str, i64)> = match n % 3 {
        0 => vec![("CASH", total)],
        1 => vec![("CARD", total)],
        _ => vec![("CASH", total / 2), ("CARD", total - total / 2)],
    };
    let mut first = None;
    for (kind, amount) in kinds {
        let t = api
            .create(
                "/transaction",
                "transactions",
                json!({"basketId": id(&basket),
            "type": kind, "amount": amount, "completed": true}),
            )
            .await?;
        first.get_or_insert(t);
    }
    let done = api
        .create(
            "/basket",
            "baskets",
            json!({"id": id(&basket), "completed": true}),
        )
        .await?;
    assert!(
        done["receiptNumber"].as_i64().is_some_and(|r| r > 0),
        "{done}"
    );
    if n % 3 != 2 {
        *last = Some((done, first.unwrap()));
    }
    Some(())
}

/// `sales` sales from 16 clients; `sold` counts the completed ones.
async fn sell(
    api: &Arc<Api>,
    shop: &Arc<Shop>,
    sales: usize,
    sold: &Arc<AtomicUsize>,
    kill_at: Option<(usize, Arc<Notify>)>,
) {
    let clients = (0..CLIENTS).map(|client| {
        let (api, shop, sold, kill_at) = (api.clone(), shop.clone(), sold.clone(), kill_at.clone());
        async move {
            let mut last = None;
            for n in 0..sales / CLIENTS + usize::from(client < sales % CLIENTS) {
                if one_sale(&api, &shop, client, n, &mut last).await.is_none() {
                    return;
                }
                let done = sold.fetch_add(1, Ordering::SeqCst) + 1;
                if let Some((at, notify)) = &kill_at {
                    if done == *at {
                        notify.notify_one();
                    }
                }
            }
        }
    });
    join_all(clients).await;
}

/// A session's figures recomputed from its raw baskets and their payments.
async fn recompute(api: &Api, shop: &Shop, session: i64) -> (Value, Vec<i64>) {
    let baskets = api
        .get("/basket", &[("sessionIds", session.to_string())])
        .await["baskets"]
        .clone();
    let baskets: Vec<Value> = baskets.as_object().unwrap().values().cloned().collect();
    // Payments count in the session that took them.
    let payments = api
        .get("/transaction", &[("sessionIds", session.to_string())])
        .await["transactions"]
        .clone();
    let payments: Vec<Value> = payments.as_object().unwrap().values().cloned().collect();
    let tally =
        |c: i64, q: i64, a: i64, t: i64| json!({"count": c, "quantity": q, "amount": a, "tax": t});
    let add = |book: &mut BTreeMap<String, [i64; 4]>, key: String, v: [i64; 4]| {
        let e = book.entry(key).or_default();
        for i in 0..4 {
            e[i] += v[i];
        }
    };
    let (mut sales, mut returns) = ([0i64; 4], [0i64; 4]);
    let (mut discounts, mut rounding) = (0, 0);
    let mut books: BTreeMap<&str, BTreeMap<String, [i64; 4]>> = BTreeMap::new();
    let mut numbers = Vec::new();
    let categories: BTreeMap<i64, &Vec<i64>> = shop.products.iter().map(|(p, c)| (*p, c)).collect();
    for b in baskets.iter().filter(|b| b["completed"] == true) {
        numbers.push(
            b["receiptNumber"]
                .as_i64()
                .expect("a completed basket at a register is numbered"),
        );
        let r = &b["receipt"];
        let lines = b["basketProducts"].as_object().unwrap();
        let units: i64 = lines
            .values()
            .map(|l| l["quantity"].as_i64().unwrap().abs())
            .sum();
        let (total, tax) = (r["total"].as_i64().unwrap(), r["tax"].as_i64().unwrap());
        let kind = if total < 0 { &mut returns } else { &mut sales };
        for (i, v) in [1, units, total, tax].into_iter().enumerate() {
            kind[i] += v;
        }
        discounts += r["discount"].as_i64().unwrap();
        rounding += r["cashRounding"].as_i64().unwrap();
        for t in r["taxes"].as_array().unwrap() {
            add(
                books.entry("taxes").or_default(),
                t["code"].as_str().unwrap().into(),
                [
                    1,
                    0,
                    t["taxable"].as_i64().unwrap(),
                    t["tax"].as_i64().unwrap(),
                ],
            );
        }
        let employee = b["employeeId"].as_i64().unwrap_or(0).to_string();
        add(
            books.entry("employees").or_default(),
            employee,
            [1, units, total, tax],
        );
        for amounts in r["lines"].as_array().unwrap() {
            let line = &lines[&amounts["lineId"].as_i64().unwrap().to_string()];
            let product = line["productId"].as_i64().unwrap();
            let mut cats = categories[&product].clone();
            if cats.is_empty() {
                cats.push(0);
            }
            for c in cats {
                add(
                    books.entry("categories").or_default(),
                    c.to_string(),
                    [
                        0,
                        line["quantity"].as_i64().unwrap(),
                        amounts["net"].as_i64().unwrap(),
                        amounts["tax"].as_i64().unwrap(),
                    ],
                );
            }
        }
    }
    for t in payments.iter().filter(|t| t["completed"] == true) {
        let book = if t["refundOf"].is_null() {
            "payments"
        } else {
            "refunds"
        };
        add(
            books.entry(book).or_default(),
            t["type"].as_str().unwrap().into(),
            [1, 0, t["amount"].as_i64().unwrap(), 0],
        );
    }
    let book = |name: &str| -> Value {
        books
            .get(name)
            .map(|b| {
                b.iter()
                    .map(|(k, v)| (k.clone(), tally(v[0], v[1], v[2], v[3])))
                    .collect::<serde_json::Map<_, _>>()
            })
            .map(Value::Object)
            .unwrap_or(json!({}))
    };
    let figures = json!({
        "sales": tally(sales[0], sales[1], sales[2], sales[3]),
        "returns": tally(returns[0], returns[1], returns[2], returns[3]),
        "discounts": discounts, "cashRounding": rounding,
        "payments": book("payments"), "refunds": book("refunds"), "taxes": book("taxes"),
        "employees": book("employees"), "categories": book("categories"),
        "paidIn": tally(1, 0, 2_000, 0), "paidOut": tally(1, 0, 750, 0),
    });
    numbers.sort_unstable();
    (figures, numbers)
}

/// Closes each session, counting the expected cash (one of them 5 short), and checks its
/// Z-report against the raw records.
async fn close_and_check(api: &Api, shop: &Shop, sessions: &[i64]) -> Vec<Vec<i64>> {
    let mut numbers = Vec::new();
    for (i, session) in sessions.iter().enumerate() {
        let (figures, mine) = recompute(api, shop, *session).await;
        let cash = |book: &str| figures[book]["CASH"]["amount"].as_i64().unwrap_or(0);
        let expected = 10_000 + cash("payments") - cash("refunds") + 2_000 - 750;
        let counted = expected - if i == 0 { 5 } else { 0 };
        let closed = api
            .create(
                "/register/session",
                "sessions",
                json!({"id": session,
            "closed": true, "countedCash": counted}),
            )
            .await
            .unwrap();
        assert_eq!(
            (
                closed["expectedCash"].as_i64(),
                closed["difference"].as_i64()
            ),
            (Some(expected), Some(counted - expected)),
            "{closed}"
        );
        let report = api
            .get(
                "/register/session/report",
                &[("sessionIds", session.to_string())],
            )
            .await;
        let z = &report["sessionReports"][session.to_string()];
        assert_eq!(z["kind"], "Z");
        assert_eq!(
            z["figures"], figures,
            "session {session}: Z-report against the raw records"
        );
        assert_eq!(z["cash"]["expected"].as_i64(), Some(expected));
        assert_eq!(
            (
                z["firstReceiptNumber"].as_i64(),
                z["lastReceiptNumber"].as_i64()
            ),
            (mine.first().copied(), mine.last().copied()),
            "{z}"
        );
        assert!(z["text"].as_str().unwrap().contains("Z-REPORT"));
        // A closed session never changes.
        let (status, _) = api
            .call(
                Method::POST,
                "/register/session",
                &[],
                Some(json!({"sessions": {"k": {"id": session, "closed": true, "countedCash": 1}}})),
            )
            .await
            .unwrap();
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        numbers.push(mine);
    }
    numbers
}

pub(crate) async fn restart(db: &crate::helpers::TestDb, served: Served, api: &Api) -> Served {
    served.signal("-KILL");
    let (status, _) = tokio::task::spawn_blocking(move || served.wait())
        .await
        .unwrap();
    assert!(!status.success(), "the server was killed");
    let again = serve(db, "info");
    *api.base.write().unwrap() = again.url("");
    again
}

db_tests! {
    async fn a_till_day_adds_up_across_a_kill(db) {
        let served = serve(&db, "info");
        let (token, store_a) = token_for_demo_owner(&db).await;
        let api = Arc::new(Api {
            client: reqwest::Client::builder().pool_max_idle_per_host(32)
                .timeout(Duration::from_secs(30)).build().unwrap(),
            base: std::sync::RwLock::new(served.url("")),
            token,
        });
        let shop = Arc::new(set_up(&api, store_a).await);

        // Morning: 300 sales, the server SIGKILLed after the 120th; the clients cut off stop.
        let morning = open_sessions(&api, &shop).await;
        let sold = Arc::new(AtomicUsize::new(0));
        let kill = Arc::new(Notify::new());
        let load = {
            let (api, shop, sold, kill) = (api.clone(), shop.clone(), sold.clone(), kill.clone());
            tokio::spawn(async move { sell(&api, &shop, 300, &sold, Some((120, kill))).await })
        };
        tokio::time::timeout(Duration::from_secs(300), kill.notified()).await.expect("120 sales");
        let served = restart(&db, served, &api).await;
        load.await.unwrap();
        // The rest of the morning on the restarted server.
        let before = sold.load(Ordering::SeqCst);
        assert!(before < 300, "the kill came mid-morning ({before} sales answered)");
        println!("{before} sales answered before the kill");
        sell(&api, &shop, 300 - before.min(300), &sold, None).await;
        let morning_numbers = close_and_check(&api, &shop, &morning).await;

        // Afternoon: new sessions, 300 sales, counted close.
        let afternoon = open_sessions(&api, &shop).await;
        let sold_pm = Arc::new(AtomicUsize::new(0));
        sell(&api, &shop, 300, &sold_pm, None).await;
        assert_eq!(sold_pm.load(Ordering::SeqCst), 300);
        let afternoon_numbers = close_and_check(&api, &shop, &afternoon).await;

        // Each register's numbers over the day: 1…n, no gap, no repeat.
        for (i, (register, _)) in shop.registers.iter().enumerate() {
            let mut all = morning_numbers[i].clone();
            all.extend(&afternoon_numbers[i]);
            let n = all.len() as i64;
            assert_eq!(all, (1..=n).collect::<Vec<_>>(), "register {register}: receipt numbers");
            assert!(n > 100, "register {register} sold all day ({n})");
            println!("register {register}: receipts 1..={n} ({} in the morning)", morning_numbers[i].len());
        }
        drop(served);
    }
}
