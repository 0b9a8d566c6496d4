//! The document's examples are real exchanges: a scenario that touches every record
//! collection and most other operations, each request sent to a live server and checked
//! against the document like every other. With `MERCHANTD_RECORD_EXAMPLES=1` the first
//! exchange of each operation and status is written to `src/openapi/examples.json`, which the
//! generator attaches (and its tests validate); without it the test checks that every
//! recorded example still comes from an operation this scenario reaches.
//!
//! The scenario also leaves one open record per collection, with the body that created it:
//! what `tests/api/boundaries.rs` sends each documented limit against.

use std::collections::BTreeMap;
use std::path::Path;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::contract::{template, Checked};
use crate::helpers::{spawn_app, Backend, TestApp};

/// An operation's path template, method and status.
type Key = (String, String, u16);

/// The exchanges of a run, the first of each operation and status kept: what was sent and
/// what came back.
#[derive(Default)]
pub struct Recorder {
    kept: BTreeMap<Key, (Option<Value>, Option<Value>)>,
}

impl Recorder {
    /// Sends one API request (token and version header), records it, and answers the status
    /// and JSON body.
    pub async fn send(
        &mut self,
        app: &TestApp,
        (method, path): (Method, &str),
        token: &str,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut req = app.api(method.clone(), path, token);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        if let Some(body) = &body {
            req = req.json(body);
        }
        let res = req.checked().await.expect("request");
        let status = res.status();
        let answer: Value = res.json().await.unwrap_or(Value::Null);
        self.keep(method.as_str(), path, status.as_u16(), body, answer.clone());
        (status, answer)
    }

    fn keep(&mut self, method: &str, path: &str, status: u16, body: Option<Value>, answer: Value) {
        let Some(template) = template(method, path) else {
            return;
        };
        let answer = Some(answer).filter(|a| !a.is_null());
        self.kept
            .entry((template, method.to_owned(), status))
            .or_insert((body, answer));
    }

    fn json(&self) -> Value {
        Value::Array(
            self.kept
                .iter()
                .map(|((path, method, status), (request, response))| {
                    json!({"method": method, "path": path, "status": status,
                           "request": request, "response": response})
                })
                .collect(),
        )
    }
}

/// One record left open per collection: its id and the object that created it.
pub type Open = BTreeMap<&'static str, (i64, Value)>;

fn id_of(body: &Value, plural: &str, key: &str) -> i64 {
    body[plural][key]["id"]
        .as_i64()
        .unwrap_or_else(|| panic!("no {plural}.{key}.id in {body}"))
}

/// Creates one record of `path` from `object` under the key `k`, expecting 201.
async fn create(
    rec: &mut Recorder,
    app: &TestApp,
    token: &str,
    (path, plural): (&'static str, &str),
    object: Value,
) -> i64 {
    let (status, body) = rec
        .send(
            app,
            (Method::POST, path),
            token,
            &[],
            Some(json!({ plural: {"k": object} })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{path}: {body}");
    id_of(&body, plural, "k")
}

/// The scenario: every record collection written, read, updated and deleted, the sales and
/// till operations, the OAuth endpoints and the errors. Answers the records it leaves open.
pub async fn scenario(app: &TestApp, rec: &mut Recorder) -> Open {
    let token = app.owner_token().await;
    let t = token.as_str();
    let mut open = Open::new();
    let mut made = |path: &'static str, id: i64, object: &Value| {
        open.insert(path, (id, object.clone()));
        id
    };

    let store = json!({"name": "Station Kiosk", "addressLine1": "Unit 4, Temple Meads",
        "city": "Bristol", "postcode": "BS1 6QF", "countryId": "GB", "timezone": "Europe/London"});
    let store_id = create(rec, app, t, ("/store", "stores"), store.clone()).await;
    made("/store", store_id, &store);
    let category = json!({"title": "Hot drinks"});
    let hot = create(rec, app, t, ("/category", "categories"), category.clone()).await;
    made("/category", hot, &category);
    let product = json!({"name": "Latte", "categories": [hot], "barcode": "5012345678900",
        "instances": {"eatin": {"name": "Eat in", "price": "300", "taxPercentage": "0.200"}}});
    let (status, body) = rec
        .send(
            app,
            (Method::POST, "/product"),
            t,
            &[],
            Some(json!({"products": {"latte": product.clone()}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let latte = id_of(&body, "products", "latte");
    let instance: i64 = body["products"]["latte"]["instances"]
        .as_object()
        .and_then(|i| i.keys().next())
        .and_then(|k| k.parse().ok())
        .unwrap_or_else(|| panic!("no instance in {body}"));
    made("/product", latte, &product);
    let supplier = json!({"name": "Bean Brothers Ltd", "vatNumber": "GB123456789"});
    let beans = create(rec, app, t, ("/supplier", "suppliers"), supplier.clone()).await;
    made("/supplier", beans, &supplier);
    let depot = json!({"supplierId": beans, "name": "Bristol depot", "city": "Bristol"});
    let depot_id = create(
        rec,
        app,
        t,
        ("/supplier/store", "supplierStores"),
        depot.clone(),
    )
    .await;
    made("/supplier/store", depot_id, &depot);
    let code =
        json!({"supplierId": beans, "productId": latte, "code": "BB-1001", "unitCost": "41.5"});
    let code_id = create(
        rec,
        app,
        t,
        ("/supplier/product", "supplierProducts"),
        code.clone(),
    )
    .await;
    made("/supplier/product", code_id, &code);
    let employee =
        json!({"firstName": "Sam", "lastName": "Patel", "email": "sam@demo.test", "roleId": 3});
    let sam = create(rec, app, t, ("/employee", "employees"), employee.clone()).await;
    made("/employee", sam, &employee);
    let application =
        json!({"name": "Till Sync", "redirectUris": ["https://till.example.com/oauth/callback"]});
    let till_app = create(
        rec,
        app,
        t,
        ("/application", "applications"),
        application.clone(),
    )
    .await;
    made("/application", till_app, &application);
    let webhook =
        json!({"url": "https://hooks.example.com/merchantd", "events": ["basket.completed"]});
    let hook = create(rec, app, t, ("/webhook", "webhooks"), webhook.clone()).await;
    made("/webhook", hook, &webhook);
    let promotion = json!({"title": "10% off hot drinks", "type": "percentage", "x": "10",
        "startDate": "2026-03-28 00:00:00", "categoryIds": [hot]});
    let promo = create(rec, app, t, ("/promotion", "promotions"), promotion.clone()).await;
    made("/promotion", promo, &promotion);
    let customer =
        json!({"name": "Alex Morgan", "email": "alex@example.com", "phone": "+44 117 496 0000"});
    let alex = create(rec, app, t, ("/customer", "customers"), customer.clone()).await;
    made("/customer", alex, &customer);
    let register = json!({"storeId": store_id, "name": "Till 1"});
    let till = create(rec, app, t, ("/register", "registers"), register.clone()).await;
    made("/register", till, &register);
    let session = json!({"registerId": till, "openingFloat": 10000});
    let session_id = create(
        rec,
        app,
        t,
        ("/register/session", "sessions"),
        session.clone(),
    )
    .await;
    made("/register/session", session_id, &session);
    let cash = json!({"sessionId": session_id, "type": "paidOut", "amount": 250, "reason": "Milk"});
    let cash_id = create(
        rec,
        app,
        t,
        ("/register/cash", "cashMovements"),
        cash.clone(),
    )
    .await;
    made("/register/cash", cash_id, &cash);
    let invoice = json!({"storeId": store_id, "supplierId": beans, "reference": "BB-20931",
        "items": {"i1": {"productId": latte, "quantity": 100, "unitPrice": "41.7", "vatPercentage": "0.200"}}});
    let invoice_id = create(rec, app, t, ("/invoice", "invoices"), invoice.clone()).await;
    made("/invoice", invoice_id, &invoice);

    // A sale, paid and completed, with an order; another basket left open.
    let basket = json!({"storeId": store_id, "registerId": till,
        "basketProducts": {"l1": {"productId": latte, "productInstanceId": instance, "quantity": 2}}});
    let sold = create(rec, app, t, ("/basket", "baskets"), basket.clone()).await;
    let payment = json!({"basketId": sold, "type": "CARD", "amount": 600, "completed": true});
    create(rec, app, t, ("/transaction", "transactions"), payment).await;
    create(
        rec,
        app,
        t,
        ("/basket", "baskets"),
        json!({"id": sold, "completed": true}),
    )
    .await;
    let order =
        json!({"basketId": sold, "fulfilment": "collection", "customerName": "Alex Morgan"});
    let order_id = create(rec, app, t, ("/order", "orders"), order.clone()).await;
    made("/order", order_id, &order);
    let basket_open = create(rec, app, t, ("/basket", "baskets"), basket.clone()).await;
    made("/basket", basket_open, &basket);
    let pending = json!({"basketId": basket_open, "type": "CASH", "amount": 100});
    let pending_id = create(
        rec,
        app,
        t,
        ("/transaction", "transactions"),
        pending.clone(),
    )
    .await;
    made("/transaction", pending_id, &pending);
    let count = json!({"storeId": store_id, "note": "Evening count",
        "products": {latte.to_string(): {"productId": latte, "quantity": 96}}});
    let count_id = create(
        rec,
        app,
        t,
        ("/stock/reconcile", "stockReconciliations"),
        count.clone(),
    )
    .await;
    made("/stock/reconcile", count_id, &count);

    reads_and_deletes(rec, app, t, &open).await;
    other_operations(rec, app, t, (store_id, latte, session_id, sold, alex, hook)).await;
    errors(rec, app, t).await;
    open
}

/// Every collection read, one record of each updated, a spare one deleted.
async fn reads_and_deletes(rec: &mut Recorder, app: &TestApp, t: &str, open: &Open) {
    let day = chrono::Utc::now().format("%Y-%m-%d").to_string();
    let (from, to) = (format!("{day} 00:00:00"), "2100-01-01 00:00:00".to_owned());
    let store = open["/store"].0.to_string();
    for path in open.keys() {
        let headers: Vec<(&str, &str)> = match *path {
            "/stock/reconcile" => vec![("from", &from), ("to", &to), ("storeIds", &store)],
            _ => vec![],
        };
        let (status, body) = rec.send(app, (Method::GET, path), t, &headers, None).await;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
    }
    let (status, body) = rec
        .send(app, (Method::PUT, "/category"), t, &[],
            Some(json!({"categories": {"rename": {"id": open["/category"].0, "title": "Hot drinks & tea"}}})))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let spare = create(
        rec,
        app,
        t,
        ("/category", "categories"),
        json!({"title": "Seasonal"}),
    )
    .await;
    let (status, body) = rec
        .send(
            app,
            (Method::DELETE, "/category"),
            t,
            &[("categoryIds", &spare.to_string())],
            None,
        )
        .await;
    assert_eq!(status, StatusCode::RESET_CONTENT, "{body}");
}

/// The operations beside the collections.
async fn other_operations(
    rec: &mut Recorder,
    app: &TestApp,
    t: &str,
    (store, latte, session, sold, customer, hook): (i64, i64, i64, i64, i64, i64),
) {
    let get = |path| (Method::GET, path);
    for path in ["/user", "/merchant"] {
        let (status, body) = rec.send(app, get(path), t, &[], None).await;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
    }
    let log = json!({"lastSync": "2026-03-28T17:45:00.000Z", "pendingBaskets": 0});
    let (status, body) = rec
        .send(
            app,
            (Method::POST, "/log"),
            t,
            &[
                ("tag", "sync"),
                ("object", "STORE"),
                ("identifier", &store.to_string()),
            ],
            Some(log),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = rec
        .send(
            app,
            get("/log"),
            t,
            &[
                ("tag", "sync"),
                ("object", "STORE"),
                ("identifier", &store.to_string()),
            ],
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let calculate = json!({"baskets": {"quote": {"storeId": store,
        "basketProducts": {"l": {"productId": latte, "quantity": 3}}}}});
    let (status, body) = rec
        .send(
            app,
            (Method::POST, "/basket/calculate"),
            t,
            &[],
            Some(calculate),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let sale = json!({"clientId": "0d9c6a1e-4f1b-4c55-9a43-2c8d2f0a7e11", "occurredAt": "2026-03-28T09:15:00.000Z",
        "storeId": store, "basketProducts": {"l": {"productId": latte, "quantity": 1, "price": "300"}},
        "payments": {"p": {"type": "CASH", "amount": 300}}});
    let (status, body) = rec
        .send(
            app,
            (Method::POST, "/basket/sync"),
            t,
            &[],
            Some(json!({"sales": {"s": sale}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let latte = latte.to_string();
    let today = chrono::Utc::now().date_naive();
    let from = format!("{} 00:00:00", today - chrono::Duration::days(300));
    let to = format!("{} 00:00:00", today + chrono::Duration::days(1));
    let reads: Vec<(&str, Vec<(&str, &str)>)> = vec![
        (
            "/digest",
            vec![("resource", "product"), ("bucketSize", "100")],
        ),
        ("/stock/movement", vec![("productIds", &latte)]),
        (
            "/report/basket",
            vec![("reportFrom", &from), ("reportTo", &to)],
        ),
    ];
    for (path, headers) in reads {
        let (status, body) = rec.send(app, get(path), t, &headers, None).await;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
    }
    let session = session.to_string();
    rec.send(
        app,
        get("/register/session/report"),
        t,
        &[("sessionIds", &session)],
        None,
    )
    .await;
    let (from, to) = (
        today.to_string(),
        (today + chrono::Duration::days(1)).to_string(),
    );
    rec.send(
        app,
        get("/report/sales"),
        t,
        &[("reportFrom", &from), ("reportTo", &to)],
        None,
    )
    .await;
    rec.send(
        app,
        get("/webhook/delivery"),
        t,
        &[("webhookId", &hook.to_string())],
        None,
    )
    .await;
    rec.send(
        app,
        get("/customer/export"),
        t,
        &[("customerId", &customer.to_string())],
        None,
    )
    .await;
    let _ = sold;
}

/// The error answers: a bad header, a refused body, no such route, no token.
async fn errors(rec: &mut Recorder, app: &TestApp, t: &str) {
    let (status, _) = rec
        .send(
            app,
            (Method::GET, "/product"),
            t,
            &[("productIds", "9, x")],
            None,
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = rec
        .send(
            app,
            (Method::POST, "/category"),
            t,
            &[],
            Some(json!({"categories": {"b1": {}}})),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let (status, _) = rec
        .send(app, (Method::GET, "/product"), "mcd_at_unknown", &[], None)
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

fn examples_file() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/openapi/examples.json")
}

#[actix_rt::test]
async fn the_documents_examples_are_real_answers() {
    let app = spawn_app(Backend::Sqlite).await.expect("app");
    let mut rec = Recorder::default();
    scenario(&app, &mut rec).await;
    let recorded = rec.json();
    if std::env::var_os("MERCHANTD_RECORD_EXAMPLES").is_some() {
        let mut text = serde_json::to_string_pretty(&recorded).unwrap();
        text.push('\n');
        std::fs::write(examples_file(), text).expect("write examples.json");
        return;
    }
    let checked_in: Value = serde_json::from_str(
        &std::fs::read_to_string(examples_file()).expect("src/openapi/examples.json"),
    )
    .expect("examples.json is JSON");
    let key = |e: &Value| format!("{} {} {}", e["method"], e["path"], e["status"]);
    let reached: Vec<String> = recorded.as_array().unwrap().iter().map(key).collect();
    for example in checked_in.as_array().unwrap() {
        assert!(
            reached.contains(&key(example)),
            "the example of {} no longer comes from the scenario: record again with \
             MERCHANTD_RECORD_EXAMPLES=1 cargo test --test api examples",
            key(example)
        );
    }
    assert_eq!(
        checked_in.as_array().unwrap().len(),
        reached.len(),
        "the scenario reaches operations the examples lack: record again with \
         MERCHANTD_RECORD_EXAMPLES=1 cargo test --test api examples"
    );
}
