//! A customer's export and erase (docs/customers.md, "Export and erase"): the export holds
//! every record naming the customer; after the erase no personal value is left anywhere in
//! the database (customer, orders, event payloads, logs, stored answers), the sales and
//! reports are unchanged, the erase is an event, and another merchant can do neither.

use chrono::{Duration, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_tests;
use crate::helpers::{dump_database, send, send_full, TestApp};
use crate::shop_day::{create, header_time, id, product, store};

/// What the merchant holds about the customer, each looked for after the erase.
const PERSONAL: [&str; 6] = [
    "Annabel Quigley",
    "annabel.q@example.com",
    "+44 20 7946 0999",
    "allergic to hazelnuts",
    "platinum-tier-7",
    "14 Quigley Lane",
];

/// A completed sale to customer `customer`: a basket naming it, one cash payment.
async fn sell_to(app: &TestApp, token: &str, store: i64, product: i64, customer: i64) -> Value {
    let basket = create(
        app,
        token,
        "/basket",
        "baskets",
        json!({"storeId": store, "customerId": customer,
        "basketProducts": {"l1": {"productId": product, "quantity": 2}}}),
    )
    .await;
    create(
        app,
        token,
        "/transaction",
        "transactions",
        json!({"basketId": id(&basket), "type": "CASH", "amount": 600, "completed": true}),
    )
    .await;
    create(
        app,
        token,
        "/basket",
        "baskets",
        json!({"id": id(&basket), "completed": true}),
    )
    .await
}

async fn export(app: &TestApp, token: &str, customer: i64) -> Value {
    let (status, body) = send(
        app,
        Method::GET,
        "/customer/export",
        token,
        &[("customerId", &customer.to_string())],
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

/// The reports a merchant reads, for comparing before and after.
async fn reports(app: &TestApp, token: &str) -> (Value, Value) {
    let today = Utc::now().date_naive();
    let (from, to) = (
        (today - Duration::days(1)).to_string(),
        (today + Duration::days(2)).to_string(),
    );
    let (status, sales) = send(
        app,
        Method::GET,
        "/report/sales",
        token,
        &[
            ("reportFrom", &from),
            ("reportTo", &to),
            ("groupBy", "paymentType"),
        ],
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{sales}");
    let utc = |d: chrono::NaiveDate| header_time(d.and_hms_opt(0, 0, 0).unwrap().and_utc());
    let (status, basket) = send(
        app,
        Method::GET,
        "/report/basket",
        token,
        &[
            ("reportFrom", &utc(today - Duration::days(2))),
            ("reportTo", &utc(today + Duration::days(3))),
        ],
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{basket}");
    (sales["salesReport"].clone(), basket["basketReport"].clone())
}

/// Every personal value found in `text`, ignoring case.
fn quoted(text: &str) -> Vec<&'static str> {
    let text = text.to_lowercase();
    PERSONAL
        .iter()
        .copied()
        .filter(|p| text.contains(&p.to_lowercase()))
        .collect()
}

backend_tests! {
    async fn an_export_holds_everything_and_an_erase_leaves_nothing_personal(app) {
        let token = app.owner_token().await;
        let shop = store(&app, &token, "Bristol", "Europe/London").await;
        let latte = product(&app, &token, "Latte", "300").await;
        // Created with a key: the stored answer quotes the customer too.
        let (status, body, _) = send_full(&app, Method::POST, "/customer", &token,
            &[("Idempotency-Key", "new-customer-1")],
            Some(json!({"customers": {"c": {"name": PERSONAL[0], "email": PERSONAL[1], "phone": PERSONAL[2],
                "note": PERSONAL[3], "marketingConsent": true, "attributes": {"tier": PERSONAL[4]}}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let ann = body["customers"]["c"]["id"].as_i64().unwrap();
        let bob = create(&app, &token, "/customer", "customers", json!({"name": "Bob Marsh", "email": "bob@example.com"})).await;
        let sale = sell_to(&app, &token, shop, latte, ann).await;
        let other_sale = sell_to(&app, &token, shop, latte, id(&bob)).await;
        let order = create(&app, &token, "/order", "orders", json!({"basketId": id(&sale), "fulfilment": "delivery",
            "customerName": PERSONAL[0], "customerEmail": PERSONAL[1], "customerPhone": PERSONAL[2],
            "deliveryAddress": PERSONAL[5], "note": "ring twice"})).await;
        assert_eq!(order["customerId"], ann, "{order}");
        let (status, body) = send(&app, Method::POST, "/log", &token,
            &[("tag", "crm"), ("object", "customer"), ("identifier", &ann.to_string())],
            Some(json!({"message": format!("Receipt emailed to {}", PERSONAL[1].to_uppercase())}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let before = reports(&app, &token).await;

        // The export: the customer, its basket and payment, its order, the events about them
        // and the log quoting it; nothing of Bob's.
        let all = export(&app, &token, ann).await;
        assert_eq!(all["customers"][ann.to_string()]["email"], PERSONAL[1], "{all}");
        let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(&all["baskets"]), [id(&sale).to_string()]);
        assert_eq!(all["transactions"].as_object().unwrap().len(), 1, "{all}");
        assert_eq!(keys(&all["orders"]), [id(&order).to_string()]);
        let types: Vec<&str> = all["events"].as_array().unwrap().iter().map(|e| e["type"].as_str().unwrap()).collect();
        for wanted in ["customer.created", "basket.created", "basket.completed", "order.created"] {
            assert!(types.contains(&wanted), "{wanted}: {types:?}");
        }
        assert_eq!(all["logs"].as_object().unwrap().len(), 1, "{all}");
        let text = all.to_string();
        assert_eq!(quoted(&text), PERSONAL.to_vec(), "the export holds every personal value");
        assert!(!text.contains("bob@example.com"), "nothing of another customer: {text}");
        assert!(all["baskets"].get(id(&other_sale).to_string()).is_none());

        // The erase: 205, an event, and then nothing personal anywhere.
        let (status, body) = send(&app, Method::POST, "/customer/erase", &token,
            &[("customerIds", &ann.to_string())], None).await;
        assert_eq!(status, StatusCode::RESET_CONTENT, "{body}");
        assert_eq!(body["api"]["message"]["success"][format!("205:{ann}")]["details"], format!("Customer {ann} erased."), "{body}");
        let dump = dump_database(&app.sql).await.join("\n");
        let left: Vec<&str> = dump.lines().filter(|l| !quoted(l).is_empty()).collect();
        assert!(left.is_empty(), "personal data left in the database: {left:#?}");
        assert!(dump.contains("bob@example.com"), "another customer keeps its data");

        let (_, body) = send(&app, Method::GET, "/customer", &token,
            &[("customerIds", &ann.to_string()), ("deleted", "true")], None).await;
        let erased = &body["customers"][ann.to_string()];
        assert_eq!((erased["name"].as_str(), erased["email"].as_str(), erased["marketingConsent"].as_bool()),
            (Some("Erased customer"), None, Some(false)), "{body}");
        assert!(erased["eraseDate"].is_string() && erased["deleteDate"].is_string(), "{body}");
        let after = export(&app, &token, ann).await;
        assert_eq!(quoted(&after.to_string()), Vec::<&str>::new(), "{after}");
        assert_eq!(keys(&after["baskets"]), [id(&sale).to_string()], "the sale stays");
        let kept = &after["orders"][id(&order).to_string()];
        assert_eq!((kept["customerId"].as_i64(), kept["note"].as_str(), kept["customerName"].as_str()),
            (Some(ann), Some("ring twice"), None), "{after}");
        let last = after["events"].as_array().unwrap().last().unwrap().clone();
        assert_eq!((last["type"].as_str(), last["objectId"].as_i64()), (Some("customer.erased"), Some(ann)), "{last}");
        assert_eq!(reports(&app, &token).await, before, "reports are unchanged");
        // A replay of the create answers the anonymous text.
        let (status, body, _) = send_full(&app, Method::POST, "/customer", &token,
            &[("Idempotency-Key", "new-customer-1")],
            Some(json!({"customers": {"c": {"name": PERSONAL[0], "email": PERSONAL[1], "phone": PERSONAL[2],
                "note": PERSONAL[3], "marketingConsent": true, "attributes": {"tier": PERSONAL[4]}}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["customers"]["c"]["id"].as_i64(), Some(ann));
        assert!(!body["customers"]["c"].to_string().contains(PERSONAL[1]), "{body}");
        // Contact details written into its order again are erased by a second erase.
        let (status, body) = send(&app, Method::POST, "/order", &token, &[],
            Some(json!({"orders": {"o": {"id": id(&order), "customerPhone": PERSONAL[2], "deliveryAddress": PERSONAL[5]}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let (status, body) = send(&app, Method::POST, "/customer/erase", &token,
            &[("customerIds", &ann.to_string())], None).await;
        assert_eq!(status, StatusCode::RESET_CONTENT, "{body}");
        let dump = dump_database(&app.sql).await.join("\n");
        let left: Vec<&str> = dump.lines().filter(|l| !quoted(l).is_empty()).collect();
        assert!(left.is_empty(), "personal data left after the second erase: {left:#?}");
    }

    async fn an_erase_replaces_whole_words_and_leaves_other_records_intact(app) {
        let token = app.owner_token().await;
        // A name that is part of JSON keys ("created", "completed") and of other words.
        let ted = create(&app, &token, "/customer", "customers", json!({"name": "Ted"})).await;
        let (status, body, _) = send_full(&app, Method::POST, "/customer", &token, &[("Idempotency-Key", "bob-1")],
            Some(json!({"customers": {"b": {"name": "Bob Tedder", "note": "created by Ted"}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let (status, body) = send(&app, Method::POST, "/log", &token,
            &[("tag", "crm"), ("object", "customer"), ("identifier", "Ted")],
            Some(json!({"created": "yes", "by": "Ted", "for": "Tedder"}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let (status, body) = send(&app, Method::POST, "/customer/erase", &token,
            &[("customerId", &id(&ted).to_string())], None).await;
        assert_eq!(status, StatusCode::RESET_CONTENT, "{body}");
        // Another customer's stored answer still replays, its words intact but the quote gone.
        let (status, body, _) = send_full(&app, Method::POST, "/customer", &token, &[("Idempotency-Key", "bob-1")],
            Some(json!({"customers": {"b": {"name": "Bob Tedder", "note": "created by Ted"}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["customers"]["b"]["name"], "Bob Tedder", "{body}");
        assert_eq!(body["customers"]["b"]["note"], "created by [erased]", "{body}");
        // The log keeps its keys and other words; its id follows its identifier.
        let (status, body) = send(&app, Method::GET, "/log", &token,
            &[("tag", "crm"), ("object", "customer"), ("identifier", "[erased]")], None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let logs: Vec<&Value> = body["logs"].as_object().unwrap().values().collect();
        assert_eq!(logs.len(), 1, "{body}");
        assert_eq!(logs[0]["data"], json!({"created": "yes", "by": "[erased]", "for": "Tedder"}));
        assert!(logs[0]["id"].as_str().unwrap().starts_with("customer-[erased]:"), "{body}");
    }

    async fn export_and_erase_are_for_administrators_of_the_customers_merchant(app) {
        let token = app.owner_token().await;
        let ann = create(&app, &token, "/customer", "customers", json!({"name": "Ann Private", "email": "ann.p@example.com"})).await;
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let ann_id = id(&ann).to_string();
        let (status, body) = send(&app, Method::GET, "/customer/export", &other, &[("customerId", &ann_id)], None).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        assert!(!body.to_string().contains("ann.p@example.com"), "{body}");
        let (status, body) = send(&app, Method::POST, "/customer/erase", &other, &[("customerIds", &ann_id)], None).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        let (_, body) = send(&app, Method::GET, "/customer", &token, &[("customerIds", &ann_id)], None).await;
        assert_eq!(body["customers"][&ann_id]["email"], "ann.p@example.com", "untouched: {body}");
        // Reading and writing is not enough.
        let clerk = app.token_for("demo", "owner@demo.test", "read write", 3600).await;
        let (status, _) = send(&app, Method::GET, "/customer/export", &clerk, &[("customerId", &ann_id)], None).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let (status, _) = send(&app, Method::POST, "/customer/erase", &clerk, &[("customerIds", &ann_id)], None).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        // Bad headers name themselves.
        let (status, body) = send(&app, Method::GET, "/customer/export", &token, &[], None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(body["error"]["details"][0], "customerId: the header is required.", "{body}");
        let (status, body) = send(&app, Method::GET, "/customer/export", &token, &[("customerIds", "1,2")], None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let (status, body) = send(&app, Method::POST, "/customer/erase", &token, &[("customerIds", "x")], None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    }
}
