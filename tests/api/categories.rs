//! `/category` (api-reference.md Category; examples §2.2, §3.1, §3.2).

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_tests;
use crate::helpers::send;

backend_tests! {
    async fn categories_follow_the_worked_example(app) {
        let token = app.owner_token().await;
        let (status, body) = send(&app, Method::POST, "/category", &token, &[],
            Some(json!({"categories": {"hot": {"title": "Hot drinks"}, "cold": {"title": "Cold drinks"}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let hot = body["categories"]["hot"]["id"].as_i64().unwrap();
        let cold = body["categories"]["cold"]["id"].as_i64().unwrap();
        assert_eq!(body["categories"]["cold"]["parentId"], Value::Null);
        assert_eq!(body["api"]["message"]["success"]["200:hot"]["details"], format!("Category {hot} created."));

        let (status, body) = send(&app, Method::PUT, "/category", &token, &[],
            Some(json!({"categories": {"rename": {"id": cold, "title": "Cold drinks & juices", "parentId": hot}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["categories"]["rename"]["parentId"], hot);

        let (status, body) = send(&app, Method::GET, "/category", &token, &[("categoryIds", &cold.to_string())], None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["categories"][cold.to_string()]["title"], "Cold drinks & juices");

        let (status, _) = send(&app, Method::DELETE, "/category", &token, &[("categoryId", &cold.to_string())], None).await;
        assert_eq!(status, StatusCode::RESET_CONTENT);
        let (_, body) = send(&app, Method::GET, "/category", &token, &[], None).await;
        assert!(body["categories"].get(cold.to_string()).is_none());
    }

    async fn every_bad_object_is_named_in_a_422(app) {
        let token = app.owner_token().await;
        let (status, body) = send(&app, Method::POST, "/category", &token, &[],
            Some(json!({"categories": {"b1": {}, "b2": {"parentId": 1}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        let details: Vec<&str> = body["error"]["details"].as_array().unwrap().iter().map(|d| d.as_str().unwrap()).collect();
        assert!(details.contains(&"b1: title: required field is missing."), "{details:?}");
        assert!(details.contains(&"b2: parentId: 1 is not a category of this merchant."), "{details:?}");
        assert_eq!(body["api"]["message"]["error"]["110:b2"]["objectRef"], "b2");
    }

    async fn a_category_cannot_become_its_own_ancestor(app) {
        let token = app.owner_token().await;
        let (_, body) = send(&app, Method::POST, "/category", &token, &[], Some(json!({"categories": {"a": {"title": "A"}}}))).await;
        let a = body["categories"]["a"]["id"].as_i64().unwrap();
        let (_, body) = send(&app, Method::POST, "/category", &token, &[], Some(json!({"categories": {"b": {"title": "B", "parentId": a}}}))).await;
        let b = body["categories"]["b"]["id"].as_i64().unwrap();
        let (status, body) = send(&app, Method::POST, "/category", &token, &[], Some(json!({"categories": {"loop": {"id": a, "parentId": b}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(body["api"]["message"]["error"]["110:loop"]["details"].as_str().unwrap().contains("its own ancestor"));
    }

    async fn another_merchants_category_is_not_a_parent_and_not_visible(app) {
        let demo = app.owner_token().await;
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let (_, body) = send(&app, Method::POST, "/category", &other, &[], Some(json!({"categories": {"t": {"title": "Theirs"}}}))).await;
        let theirs = body["categories"]["t"]["id"].as_i64().unwrap();
        let (status, body) = send(&app, Method::POST, "/category", &demo, &[], Some(json!({"categories": {"c": {"title": "Mine", "parentId": theirs}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(body["api"]["message"]["error"]["110:c"]["details"], format!("parentId: {theirs} is not a category of this merchant."));
        let (_, body) = send(&app, Method::GET, "/category", &demo, &[("categoryIds", &theirs.to_string()), ("deleted", "true")], None).await;
        assert_eq!(body["categories"], json!({}));
        let (status, _) = send(&app, Method::PUT, "/category", &demo, &[], Some(json!({"categories": {"x": {"id": theirs, "title": "Stolen"}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        let (status, _) = send(&app, Method::DELETE, "/category", &demo, &[("categoryIds", &theirs.to_string())], None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (_, body) = send(&app, Method::GET, "/category", &other, &[], None).await;
        assert_eq!(body["categories"][theirs.to_string()]["title"], "Theirs");
    }
}
