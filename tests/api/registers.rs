//! `/register` (docs/registers.md): a store's tills in the spec's dialect — keyed batches, the
//! id and `storeIds` headers, soft delete with 205 — a register stays at its store, and another
//! merchant's registers and stores are out of reach.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_tests;
use crate::helpers::{create_one as create, send};
use crate::suppliers::ids_of;

const PATH: &str = "/register";

backend_tests! {
    async fn registers_belong_to_a_store_and_stay_there(app) {
        let token = app.owner_token().await;
        let store = app.tenant("demo").stores["high-street"];
        let (status, body) = send(&app, Method::POST, PATH, &token, &[], Some(json!({"registers": {
            "a": {"storeId": store, "name": "Till 1"},
            "b": {"storeId": store, "name": "Till 2"},
            "bad": {"name": "No store"}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let a = body["registers"]["a"]["id"].as_i64().unwrap();
        let b = body["registers"]["b"]["id"].as_i64().unwrap();
        let keys: Vec<&str> = body["registers"]["a"].as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["id", "storeId", "name", "activeDate", "deleteDate"]);
        assert_eq!(body["api"]["message"]["success"]["200:a"]["details"], format!("Register {a} created."));
        assert!(body["api"]["message"]["error"].to_string().contains("storeId: required field is missing."), "{body}");

        let (_, body) = send(&app, Method::GET, PATH, &token, &[("storeIds", &store.to_string())], None).await;
        assert_eq!(ids_of(&body, "registers"), [a, b]);
        let (status, body) = send(&app, Method::PUT, PATH, &token, &[],
            Some(json!({"registers": {"r": {"id": a, "name": "Front till", "storeId": store}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["registers"]["r"]["name"], "Front till");
        let other_store = create(&app, &token, "/store", "stores", json!({"name": "Kiosk", "addressLine1": "1 Quay", "city": "Bath", "postcode": "BA1 1AA", "countryId": "GB"})).await["id"].as_i64().unwrap();
        let (status, body) = send(&app, Method::PUT, PATH, &token, &[],
            Some(json!({"registers": {"r": {"id": a, "storeId": other_store}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.to_string().contains("storeId: a register stays at its store."), "{body}");

        let (status, _) = send(&app, Method::DELETE, PATH, &token, &[("registerIds", &b.to_string())], None).await;
        assert_eq!(status, StatusCode::RESET_CONTENT);
        let (_, body) = send(&app, Method::GET, PATH, &token, &[], None).await;
        assert_eq!(ids_of(&body, "registers"), [a]);
        let (_, body) = send(&app, Method::GET, PATH, &token, &[("deleted", "true")], None).await;
        assert!(body["registers"][b.to_string()]["deleteDate"].is_string(), "{body}");
    }

    async fn another_merchants_registers_and_stores_do_not_exist_here(app) {
        let demo = app.owner_token().await;
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let their_store = app.tenant("second").stores["market"];
        let theirs = create(&app, &other, PATH, "registers", json!({"storeId": their_store, "name": "Theirs"})).await;
        let theirs = theirs["id"].as_i64().unwrap();
        let (status, body) = send(&app, Method::POST, PATH, &demo, &[],
            Some(json!({"registers": {"x": {"storeId": their_store, "name": "Mine"}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.to_string().contains(&format!("storeId: {their_store} is not a store of this merchant.")), "{body}");
        let (_, body) = send(&app, Method::GET, PATH, &demo, &[("registerIds", &theirs.to_string())], None).await;
        assert_eq!(body["registers"], json!({}));
        let (status, body) = send(&app, Method::PUT, PATH, &demo, &[],
            Some(json!({"registers": {"x": {"id": theirs, "name": "Mine now"}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["api"]["message"]["error"]["110:x"]["details"], format!("id: register {theirs} does not exist."));
        let (status, _) = send(&app, Method::DELETE, PATH, &demo, &[("registerIds", &theirs.to_string())], None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (_, body) = send(&app, Method::GET, PATH, &other, &[], None).await;
        assert_eq!(body["registers"][theirs.to_string()]["name"], Value::from("Theirs"), "nothing of theirs changed");
    }
}
