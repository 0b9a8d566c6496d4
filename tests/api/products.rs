//! `/product` (api-reference.md Product; examples §2.3): price instances that are never edited,
//! categories as an id → title map, filters, stock fields with `storeId`, barcode uniqueness.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_tests;
use crate::helpers::{send, TestApp};

async fn category(app: &TestApp, token: &str, title: &str) -> i64 {
    let (_, body) = send(
        app,
        Method::POST,
        "/category",
        token,
        &[],
        Some(json!({"categories": {"c": {"title": title}}})),
    )
    .await;
    body["categories"]["c"]["id"].as_i64().unwrap()
}

fn latte(category: i64) -> Value {
    json!({"name": "Latte", "categories": [category], "instances": {
        "eatin": {"name": "Eat in", "price": "300", "taxPercentage": "0.200"},
        "away": {"name": "Take away", "price": "280", "taxPercentage": "0.200"}}})
}

backend_tests! {
    async fn a_product_follows_the_worked_example(app) {
        let token = app.owner_token().await;
        let hot = category(&app, &token, "Hot drinks").await;
        let (status, body) = send(&app, Method::POST, "/product", &token, &[], Some(json!({"products": {"latte": latte(hot)}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let p = &body["products"]["latte"];
        let id = p["id"].as_i64().unwrap();
        assert_eq!(p["categories"], json!({hot.to_string(): "Hot drinks"}));
        let instances = p["instances"].as_object().unwrap();
        assert_eq!(instances.len(), 2);
        assert!(instances.values().any(|i| i["price"] == "300" && i["taxPercentage"] == "0.200"));
        assert_eq!(p["images"], json!([]));
        assert!(p["timestamp"].is_string());

        let store = app.tenant("demo").stores["high-street"].to_string();
        let ids = id.to_string();
        let hot_s = hot.to_string();
        let (status, body) = send(&app, Method::GET, "/product", &token,
            &[("productIds", &ids), ("categoryIds", &hot_s), ("storeId", &store)], None).await;
        assert_eq!(status, StatusCode::OK);
        let read = &body["products"][&ids];
        assert_eq!((read["totalStock"].as_f64(), read["stockSold"].as_f64(), read["stockLeft"].as_f64()), (Some(0.0), Some(0.0), Some(0.0)));
        let (_, body) = send(&app, Method::GET, "/product", &token, &[("productIds", &ids)], None).await;
        assert!(body["products"][&ids].get("totalStock").is_none(), "stock fields only with storeId");
        let other = category(&app, &token, "Cold").await.to_string();
        let (_, body) = send(&app, Method::GET, "/product", &token, &[("categoryIds", &other)], None).await;
        assert_eq!(body["products"], json!({}));
    }

    async fn a_price_change_drops_the_old_instance_and_adds_a_new_one(app) {
        let token = app.owner_token().await;
        let hot = category(&app, &token, "Hot drinks").await;
        let (_, body) = send(&app, Method::POST, "/product", &token, &[], Some(json!({"products": {"latte": latte(hot)}}))).await;
        let id = body["products"]["latte"]["id"].as_i64().unwrap();
        let instances = body["products"]["latte"]["instances"].as_object().unwrap().clone();
        let (keep, _) = instances.iter().find(|(_, i)| i["price"] == "300").unwrap();
        let keep: i64 = keep.parse().unwrap();

        let (status, body) = send(&app, Method::PUT, "/product", &token, &[],
            Some(json!({"products": {"p": {"id": id, "instances": {"keep": {"id": keep}, "new": {"name": "Take away", "price": "290", "taxPercentage": "0.200"}}}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let now: Vec<&Value> = body["products"]["p"]["instances"].as_object().unwrap().values().collect();
        assert_eq!(now.len(), 2);
        assert!(now.iter().any(|i| i["id"] == keep));
        assert!(now.iter().any(|i| i["price"] == "290"));
        assert!(!now.iter().any(|i| i["price"] == "280"), "the instance left out is deleted");

        let (status, body) = send(&app, Method::POST, "/product", &token, &[],
            Some(json!({"products": {"edit": {"id": id, "instances": {"k": {"id": keep, "price": "310"}}}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(body["api"]["message"]["error"]["110:edit"]["details"].as_str().unwrap().contains("never edited"));

        // Durable: a fresh read from the database (the next supervisor) sees the same.
        let (count,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM product_instances WHERE product_id = $1 AND delete_date IS NULL")
            .bind(id)
            .fetch_one(&app.sql)
            .await
            .unwrap();
        assert_eq!(count, 2);
    }

    async fn a_barcode_is_unique_among_live_products(app) {
        let token = app.owner_token().await;
        let (status, _) = send(&app, Method::POST, "/product", &token, &[], Some(json!({"products": {"a": {"name": "A", "barcode": "5012345678900"}}}))).await;
        assert_eq!(status, StatusCode::CREATED);
        let (status, body) = send(&app, Method::POST, "/product", &token, &[],
            Some(json!({"products": {"b": {"name": "B", "barcode": "5012345678900"}, "c": {"name": "C", "barcode": "1"}, "d": {"name": "D", "barcode": "1"}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["api"]["message"]["error"]["113:b"]["code"], "conflict");
        assert!(body["products"].get("c").is_some());
        assert_eq!(body["api"]["message"]["error"]["113:d"]["code"], "conflict", "a batch sees its own earlier objects");
    }

    async fn bad_products_are_named_and_nothing_is_stored(app) {
        let token = app.owner_token().await;
        let (status, body) = send(&app, Method::POST, "/product", &token, &[],
            Some(json!({"products": {"x": {"name": "X", "categories": [424242], "instances": {"i": {"price": "1.23456", "taxPercentage": "2"}}, "colour": "red"}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        let details = body["api"]["message"]["error"]["110:x"]["details"].as_str().unwrap();
        for needle in ["colour: unknown field", "categories: 424242 is not a category", "price:", "taxPercentage:"] {
            assert!(details.contains(needle), "{needle} in {details}");
        }
        let (count,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM products").fetch_one(&app.sql).await.unwrap();
        assert_eq!(count, 0);
    }

    async fn another_merchants_products_and_categories_do_not_exist_here(app) {
        let demo = app.owner_token().await;
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let theirs_cat = category(&app, &other, "Theirs").await;
        let (_, body) = send(&app, Method::POST, "/product", &other, &[], Some(json!({"products": {"t": latte(theirs_cat)}}))).await;
        let theirs = body["products"]["t"]["id"].as_i64().unwrap();
        let (_, before) = send(&app, Method::GET, "/product", &other, &[("deleted", "true")], None).await;

        let (_, body) = send(&app, Method::GET, "/product", &demo, &[("productIds", &theirs.to_string()), ("deleted", "true")], None).await;
        assert_eq!(body["products"], json!({}));
        let (status, _) = send(&app, Method::POST, "/product", &demo, &[], Some(json!({"products": {"x": latte(theirs_cat)}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "their category is not ours");
        for method in [Method::POST, Method::PUT] {
            let (status, body) = send(&app, method, "/product", &demo, &[], Some(json!({"products": {"x": {"id": theirs, "name": "Mine"}}}))).await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
            assert_eq!(body["api"]["message"]["error"]["110:x"]["details"], format!("id: product {theirs} does not exist."));
        }
        let (status, _) = send(&app, Method::DELETE, "/product", &demo, &[("productIds", &theirs.to_string())], None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (_, after) = send(&app, Method::GET, "/product", &other, &[("deleted", "true")], None).await;
        assert_eq!(before["products"], after["products"]);
    }
}

backend_tests! {
    async fn a_nul_character_in_any_string_is_refused_on_both_databases(app) {
        let token = app.owner_token().await;
        let (status, body) = send(
            &app,
            Method::POST,
            "/product",
            &token,
            &[],
            Some(json!({"products": {
                "a": {"name": "T\u{0}ea"},
                "b": {"name": "Tea", "instances": {"i": {"name": "x\u{0}", "price": "1", "taxPercentage": "0"}}},
            }})),
        )
        .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        let errors = &body["api"]["message"]["error"];
        assert_eq!(errors["110:a"]["details"], "name: must not contain the NUL character (U+0000).");
        assert_eq!(errors["110:b"]["details"], "instances: i: name: must not contain the NUL character (U+0000).");
    }
}
