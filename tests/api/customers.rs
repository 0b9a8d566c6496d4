//! `/customer` (docs/customers.md): the spec's dialect (keyed batches, id headers, soft delete
//! with 205), the `search` header, a basket's `customerId` and its `customerIds` filter, and
//! another merchant's customers out of reach.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_tests;
use crate::helpers::{create_one as create, send, TestApp};
use crate::suppliers::ids_of;

const PATH: &str = "/customer";

async fn search(app: &TestApp, token: &str, text: &str) -> Vec<i64> {
    let (status, body) = send(app, Method::GET, PATH, token, &[("search", text)], None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    ids_of(&body, "customers")
}

backend_tests! {
    async fn customers_are_written_in_batches_and_read_back_by_id(app) {
        let token = app.owner_token().await;
        let (status, body) = send(&app, Method::POST, PATH, &token, &[], Some(json!({"customers": {
            "ann": {"name": "Ann Lee", "email": "ann@example.com", "phone": "+44 20 7946 0018",
                    "marketingConsent": true, "attributes": {"tier": "gold"}},
            "bob": {"name": "Bob Marsh"},
            "bad": {"name": "Cy", "email": "cy at home"}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let ann = body["customers"]["ann"]["id"].as_i64().unwrap();
        let keys: Vec<&str> = body["customers"]["ann"].as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["id", "name", "email", "phone", "note", "marketingConsent", "attributes", "activeDate", "deleteDate", "eraseDate"]);
        assert_eq!(body["customers"]["ann"]["attributes"], json!({"tier": "gold"}));
        assert_eq!(body["customers"]["bob"]["marketingConsent"], false);
        assert_eq!(body["api"]["message"]["success"]["200:ann"]["details"], format!("Customer {ann} created."));
        assert!(body["api"]["message"]["error"].to_string().contains("\\\"cy at home\\\" is not an email address."), "{body}");
        assert!(body["customers"].get("bad").is_none());

        // Partial updates; null clears; PUT only updates.
        let (status, body) = send(&app, Method::PUT, PATH, &token, &[],
            Some(json!({"customers": {"u": {"id": ann, "note": "Oat milk", "attributes": null}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!((body["customers"]["u"]["note"].as_str(), body["customers"]["u"]["email"].as_str()),
            (Some("Oat milk"), Some("ann@example.com")));
        assert_eq!(body["customers"]["u"]["attributes"], Value::Null);
        let (_, body) = send(&app, Method::GET, PATH, &token, &[("customerIds", &ann.to_string())], None).await;
        assert_eq!(ids_of(&body, "customers"), [ann]);
        assert_eq!(body["customers"][ann.to_string()]["note"], "Oat milk");
    }

    async fn the_search_header_finds_names_emails_and_phones_by_their_first_letters(app) {
        let token = app.owner_token().await;
        let ann = create(&app, &token, PATH, "customers", json!({"name": "Ann Lee", "email": "ann@example.com",
            "phone": "+44 20 7946 0018"})).await["id"].as_i64().unwrap();
        let zoe = create(&app, &token, PATH, "customers", json!({"name": "Zoë Leeming",
            "email": "zoe@shop.test"})).await["id"].as_i64().unwrap();
        let max = create(&app, &token, PATH, "customers", json!({"name": "Max Power",
            "phone": "07700 900123"})).await["id"].as_i64().unwrap();
        assert_eq!(search(&app, &token, "lee").await, [ann, zoe], "a word of the name");
        assert_eq!(search(&app, &token, "ZOË").await, [zoe], "case and letters beyond ASCII");
        assert_eq!(search(&app, &token, "ann@").await, [ann]);
        assert_eq!(search(&app, &token, "07700900").await, [max], "a phone's digits");
        assert_eq!(search(&app, &token, "+44 207").await, [ann]);
        assert_eq!(search(&app, &token, "power tools").await, Vec::<i64>::new());
        // With the id header, both narrow.
        let (_, body) = send(&app, Method::GET, PATH, &token,
            &[("search", "lee"), ("customerIds", &zoe.to_string())], None).await;
        assert_eq!(ids_of(&body, "customers"), [zoe]);
        let long = "x".repeat(101);
        let (status, body) = send(&app, Method::GET, PATH, &token, &[("search", long.as_str())], None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(body["error"]["details"][0], "search: at most 100 characters.");
    }

    async fn a_basket_names_its_customer_and_baskets_filter_by_it(app) {
        let token = app.owner_token().await;
        let store = app.tenant("demo").stores["high-street"];
        let ann = create(&app, &token, PATH, "customers", json!({"name": "Ann"})).await["id"].as_i64().unwrap();
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let theirs = create(&app, &other, PATH, "customers", json!({"name": "Theirs"})).await["id"].as_i64().unwrap();
        let mine = create(&app, &token, "/basket", "baskets", json!({"storeId": store, "customerId": ann})).await;
        assert_eq!(mine["customerId"], ann);
        let anonymous = create(&app, &token, "/basket", "baskets", json!({"storeId": store})).await;
        assert_eq!(anonymous["customerId"], Value::Null);
        let (_, body) = send(&app, Method::GET, "/basket", &token, &[("customerIds", &ann.to_string())], None).await;
        assert_eq!(ids_of(&body, "baskets"), [mine["id"].as_i64().unwrap()], "a customer's purchase history");
        // Another merchant's customer is an unknown id here, on baskets and customers alike.
        let (status, body) = send(&app, Method::POST, "/basket", &token, &[],
            Some(json!({"baskets": {"b": {"storeId": store, "customerId": theirs}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.to_string().contains(&format!("customerId: {theirs} is not a customer of this merchant.")), "{body}");
        let (_, body) = send(&app, Method::GET, PATH, &token, &[("customerIds", &theirs.to_string())], None).await;
        assert_eq!(body["customers"], json!({}));
        let (status, body) = send(&app, Method::PUT, PATH, &token, &[],
            Some(json!({"customers": {"x": {"id": theirs, "name": "Mine now"}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["api"]["message"]["error"]["110:x"]["details"], format!("id: customer {theirs} does not exist."));
        let (status, _) = send(&app, Method::DELETE, PATH, &token, &[("customerIds", &theirs.to_string())], None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (_, body) = send(&app, Method::GET, PATH, &other, &[("search", "Theirs")], None).await;
        assert_eq!(body["customers"][theirs.to_string()]["name"], "Theirs", "nothing of theirs changed");
        // A deleted customer: 205, hidden unless `deleted`, and no basket may name it any more.
        let (status, _) = send(&app, Method::DELETE, PATH, &token, &[("customerIds", &ann.to_string())], None).await;
        assert_eq!(status, StatusCode::RESET_CONTENT);
        assert_eq!(search(&app, &token, "Ann").await, Vec::<i64>::new());
        let (_, body) = send(&app, Method::GET, PATH, &token, &[("deleted", "true")], None).await;
        assert!(body["customers"][ann.to_string()]["deleteDate"].is_string(), "{body}");
        let (status, _) = send(&app, Method::POST, "/basket", &token, &[],
            Some(json!({"baskets": {"b": {"storeId": store, "customerId": ann}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        // A basket that already named it keeps it when a till sends the basket again.
        let (status, body) = send(&app, Method::POST, "/basket", &token, &[],
            Some(json!({"baskets": {"b": {"id": mine["id"], "storeId": store, "customerId": ann, "note": "again"}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["baskets"]["b"]["customerId"], ann);
    }

    async fn an_order_is_for_its_baskets_customer_unless_it_names_another(app) {
        let token = app.owner_token().await;
        let store = app.tenant("demo").stores["high-street"];
        let latte = crate::shop_day::product(&app, &token, "Latte", "300").await;
        let ann = create(&app, &token, PATH, "customers", json!({"name": "Ann"})).await["id"].as_i64().unwrap();
        let bob = create(&app, &token, PATH, "customers", json!({"name": "Bob"})).await["id"].as_i64().unwrap();
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let theirs = create(&app, &other, PATH, "customers", json!({"name": "Theirs"})).await["id"].as_i64().unwrap();
        let sale = crate::shop_day::sell(&app, &token, store, latte, 1, &[("CASH", 300, 0)]).await;
        let (status, body) = send(&app, Method::POST, "/basket", &token, &[],
            Some(json!({"baskets": {"b": {"storeId": store, "customerId": ann}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let owned = sale["id"].as_i64().unwrap();
        let order = create(&app, &token, "/order", "orders", json!({"basketId": owned, "fulfilment": "collection", "customerId": bob})).await;
        assert_eq!(order["customerId"], bob, "{order}");
        let (_, body) = send(&app, Method::GET, "/order", &token, &[("customerIds", &bob.to_string())], None).await;
        assert_eq!(ids_of(&body, "orders"), [order["id"].as_i64().unwrap()]);
        let (_, body) = send(&app, Method::GET, "/order", &token, &[("customerIds", &ann.to_string())], None).await;
        assert_eq!(ids_of(&body, "orders"), Vec::<i64>::new());
        let (status, body) = send(&app, Method::POST, "/order", &token, &[],
            Some(json!({"orders": {"o": {"basketId": owned, "fulfilment": "collection", "customerId": theirs}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(body.to_string().contains(&format!("customerId: {theirs} is not a customer of this merchant.")), "{body}");
        // Without one, the order is for the basket's customer.
        let named = crate::shop_day::sell(&app, &token, store, latte, 1, &[("CASH", 300, 0)]).await;
        let (status, _) = send(&app, Method::PUT, "/basket", &token, &[],
            Some(json!({"baskets": {"b": {"id": named["id"], "customerId": ann}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "a completed basket is locked");
        let open = create(&app, &token, "/basket", "baskets", json!({"storeId": store, "customerId": ann,
            "basketProducts": {"l": {"productId": latte, "quantity": 1}}})).await;
        let id = open["id"].as_i64().unwrap();
        create(&app, &token, "/transaction", "transactions", json!({"basketId": id, "type": "CASH", "amount": 300, "completed": true})).await;
        create(&app, &token, "/basket", "baskets", json!({"id": id, "completed": true})).await;
        let order = create(&app, &token, "/order", "orders", json!({"basketId": id, "fulfilment": "collection"})).await;
        assert_eq!(order["customerId"], ann, "{order}");
    }
}
