//! `/store` through the merchant actors: batch semantics, filters, soft deletes, tenant
//! isolation, single-flight activation and passivation (api-reference.md Store; DESIGN §1, §6).

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::contract::Checked;
use crate::helpers::{metric_value, send, TestApp};
use crate::{backend_tests, backend_tests_with};

fn kiosk() -> Value {
    json!({"name": "Station Kiosk", "addressLine1": "Unit 4, Temple Meads", "city": "Bristol",
           "postcode": "BS1 6QF", "countryId": "GB"})
}

async fn metric(app: &TestApp, name: &str) -> f64 {
    metric_value(&app.metrics_text().await, name, "")
}

backend_tests! {
    async fn a_store_lives_through_create_read_update_and_soft_delete(app) {
        let token = app.owner_token().await;
        let (status, body) = send(&app, Method::POST, "/store", &token, &[], Some(json!({"stores": {"kiosk": kiosk()}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let id = body["stores"]["kiosk"]["id"].as_i64().unwrap();
        assert_eq!(body["stores"]["kiosk"]["timezone"], "Europe/London");
        assert_eq!(body["api"]["message"]["success"]["200:kiosk"]["objectRef"], "kiosk");

        let ids = format!(" {id} ");
        let (status, body) = send(&app, Method::GET, "/store", &token, &[("storeIds", &ids)], None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["stores"].as_object().unwrap().len(), 1);
        assert_eq!(body["stores"][id.to_string()]["city"], "Bristol");

        let (status, body) = send(&app, Method::POST, "/store", &token, &[], Some(json!({"stores": {"u": {"id": id, "city": "Bath"}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["stores"]["u"]["city"], "Bath");
        assert_eq!(body["stores"]["u"]["postcode"], "BS1 6QF", "updates are partial");
        let (status, body) = send(&app, Method::PUT, "/store", &token, &[], Some(json!({"stores": {"p": {"id": id, "lat": "51.45"}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["stores"]["p"]["lat"], 51.45);
        assert_eq!(body["api"]["message"]["success"]["201:p"]["title"], "Updated");

        let (status, body) = send(&app, Method::DELETE, "/store", &token, &[("storeId", &id.to_string())], None).await;
        assert_eq!(status, StatusCode::RESET_CONTENT, "{body}");
        assert_eq!(body["api"]["message"]["success"][format!("205:{id}")]["objectRef"], id.to_string());
        let (_, body) = send(&app, Method::GET, "/store", &token, &[], None).await;
        assert!(body["stores"].get(id.to_string()).is_none(), "deleted stores leave lists");
        let (_, body) = send(&app, Method::GET, "/store", &token, &[("deleted", "true")], None).await;
        assert!(body["stores"][id.to_string()]["deleteDate"].is_string());
    }

    async fn one_good_and_one_bad_object_is_201_with_an_error_record(app) {
        let token = app.owner_token().await;
        let (status, body) = send(&app, Method::POST, "/store", &token, &[],
            Some(json!({"stores": {"good": kiosk(), "bad": {"name": "x", "notAField": 1}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert!(body["stores"].get("bad").is_none());
        let record = &body["api"]["message"]["error"]["110:bad"];
        assert_eq!(record["objectRef"], "bad");
        assert!(record["details"].as_str().unwrap().contains("notAField: unknown field"));
        assert!(body.get("error").is_none());
    }

    async fn every_object_bad_is_422_and_nothing_is_stored(app) {
        let token = app.owner_token().await;
        let (_, before) = send(&app, Method::GET, "/store", &token, &[("deleted", "true")], None).await;
        let (status, body) = send(&app, Method::POST, "/store", &token, &[],
            Some(json!({"stores": {"b1": {}, "b2": {"name": "x", "countryId": "GBR"}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["error"]["message"], "No object in the request was valid.");
        assert!(body["error"]["details"].as_array().unwrap().iter().any(|d| d.as_str().unwrap().starts_with("b2: countryId")));
        let (_, after) = send(&app, Method::GET, "/store", &token, &[("deleted", "true")], None).await;
        assert_eq!(before["stores"], after["stores"]);
    }

    async fn more_than_max_batch_objects_is_413_and_malformed_bodies_400_or_415(app) {
        let token = app.owner_token().await;
        let many: serde_json::Map<String, Value> = (0..201).map(|i| (format!("o{i}"), kiosk())).collect();
        let (status, body) = send(&app, Method::POST, "/store", &token, &[], Some(json!({"stores": many}))).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(body["api"]["message"]["error"]["107"]["code"], "payloadTooLarge");
        let res = app.api(Method::POST, "/store", &token).header("content-type", "application/json").body("{\"stores\": ").checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::BAD_REQUEST);
        let res = app.api(Method::POST, "/store", &token).header("content-type", "text/plain").body("x").checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let res = app.api(Method::PUT, "/store", &token).json(&json!({"stores": {"k": kiosk()}})).checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::UNPROCESSABLE_ENTITY, "PUT only updates");
    }

    async fn the_legacy_post_body_form_is_accepted(app) {
        let token = app.owner_token().await;
        let res = app
            .api(Method::POST, "/store", &token)
            .form(&[("postBody", json!({"stores": {"f": kiosk()}}).to_string())])
            .checked()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::CREATED);
    }

    async fn bad_filter_items_are_400_naming_header_and_item(app) {
        let token = app.owner_token().await;
        for value in ["1,,2", "a", "-1", "99999999999999999999"] {
            let (status, body) = send(&app, Method::GET, "/store", &token, &[("storeIds", value)], None).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{value}");
            let detail = body["error"]["details"][0].as_str().unwrap();
            assert!(detail.starts_with("storeIds: item"), "{detail}");
        }
        let (status, _) = send(&app, Method::GET, "/store", &token, &[("deleted", "yes")], None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
    }

    async fn another_merchants_stores_behave_as_if_they_did_not_exist(app) {
        let demo = app.owner_token().await;
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let (_, body) = send(&app, Method::POST, "/store", &other, &[], Some(json!({"stores": {"theirs": kiosk()}}))).await;
        let theirs = body["stores"]["theirs"]["id"].as_i64().unwrap();
        let (_, before) = send(&app, Method::GET, "/store", &other, &[("deleted", "true")], None).await;

        let (_, body) = send(&app, Method::GET, "/store", &demo, &[("storeIds", &theirs.to_string())], None).await;
        assert_eq!(body["stores"], json!({}));
        let (_, body) = send(&app, Method::GET, "/store", &demo, &[], None).await;
        assert!(body["stores"].get(theirs.to_string()).is_none());
        for method in [Method::POST, Method::PUT] {
            let (status, body) = send(&app, method, "/store", &demo, &[], Some(json!({"stores": {"x": {"id": theirs, "name": "Mine"}}}))).await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
            assert_eq!(body["api"]["message"]["error"]["110:x"]["details"], format!("id: store {theirs} does not exist."));
        }
        let (status, body) = send(&app, Method::DELETE, "/store", &demo, &[("storeIds", &theirs.to_string())], None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(body["api"]["message"]["error"][format!("104:{theirs}")]["details"], format!("Store {theirs} does not exist."));
        // An id that exists nowhere answers exactly the same.
        let (_, nowhere) = send(&app, Method::DELETE, "/store", &demo, &[("storeIds", "987654321")], None).await;
        assert_eq!(nowhere["api"]["message"]["error"]["104:987654321"]["details"], "Store 987654321 does not exist.");
        let (_, after) = send(&app, Method::GET, "/store", &other, &[("deleted", "true")], None).await;
        assert_eq!(before["stores"], after["stores"], "nothing of the other merchant changed");
    }

    async fn concurrent_first_requests_start_one_supervisor(app) {
        let token = app.owner_token().await;
        let requests = (0..200).map(|_| {
            let req = app.api(Method::GET, "/store", &token);
            async move { req.checked().await.unwrap().status() }
        });
        let statuses = futures_util::future::join_all(requests).await;
        assert!(statuses.iter().all(|s| *s == StatusCode::OK));
        assert_eq!(metric(&app, "merchant_actor_activations_total").await, 1.0);
        assert_eq!(metric(&app, "merchant_actors_active").await, 1.0);
    }

    async fn concurrent_writes_are_all_durable_and_visible(app) {
        let token = app.owner_token().await;
        let writes = (0..200).map(|i| {
            let req = app.api(Method::POST, "/store", &token).json(&json!({"stores": {format!("k{i}"): kiosk()}}));
            async move { req.checked().await.unwrap().status() }
        });
        let statuses = futures_util::future::join_all(writes).await;
        assert!(statuses.iter().all(|s| *s == StatusCode::CREATED), "{statuses:?}");
        let (_, body) = send(&app, Method::GET, "/store", &token, &[], None).await;
        assert_eq!(body["stores"].as_object().unwrap().len(), 201, "200 new stores and High Street");
        let (count,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM stores WHERE city = 'Bristol'")
            .fetch_one(&app.sql)
            .await
            .unwrap();
        assert_eq!(count, 200);
    }
}

backend_tests_with! { |s| s.merchant_idle_secs = 1;
    async fn an_idle_merchant_is_passivated_and_comes_back_with_its_data(app) {
        let token = app.owner_token().await;
        let (_, body) = send(&app, Method::POST, "/store", &token, &[], Some(json!({"stores": {"kiosk": kiosk()}}))).await;
        let id = body["stores"]["kiosk"]["id"].as_i64().unwrap();
        assert_eq!(metric(&app, "merchant_actors_active").await, 1.0);
        tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
        assert_eq!(metric(&app, "merchant_actors_active").await, 0.0, "passivated after 1 s idle");
        let (_, body) = send(&app, Method::GET, "/store", &token, &[("storeIds", &id.to_string())], None).await;
        assert_eq!(body["stores"][id.to_string()]["city"], "Bristol");
        assert_eq!(metric(&app, "merchant_actor_activations_total").await, 2.0);
    }
}
