//! Quotas per merchant (docs/operator.md, "Quotas"): live products (`quota_products`) and
//! uploaded bytes (`quota_storage_bytes`); a write past one is refused with 403 and its own
//! message (116, `quotaExceeded`) saying what the merchant holds, and nothing of it is stored.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_tests_with;
use crate::helpers::send;
use crate::operator::message_ids;
use crate::uploads::{upload, JPEG, PNG};

fn product(name: &str) -> Value {
    json!({"name": name, "instances": {"i": {"name": "Standard", "price": "1.00",
        "taxPercentage": "0.200"}}})
}

backend_tests_with! {
    |s| {
        s.quota_products = 3;
        s.quota_storage_bytes = 69 + 1;
    };
    async fn writes_past_a_quota_are_refused_with_116_and_store_nothing(app) {
        let token = app.owner_token().await;
        // Four in one request: three fit, the fourth is refused on its own.
        let (status, body) = send(&app, Method::POST, "/product", &token, &[], Some(json!({"products": {
            "a": product("A"), "b": product("B"), "c": product("C"), "d": product("D")}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(message_ids(&body), vec![116, 200, 200, 200], "{body}");
        let refused = body["api"]["message"]["error"]["116:d"].clone();
        assert_eq!(refused["code"], "quotaExceeded", "{body}");
        assert_eq!(refused["statusCode"], 403, "{body}");
        assert!(refused["details"].as_str().unwrap().contains("3 live products"), "{body}");
        assert!(body["products"].get("d").is_none(), "{body}");
        // At the quota, a create alone is refused; an update of a product is not.
        let (status, body) = send(&app, Method::POST, "/product", &token, &[],
            Some(json!({"products": {"e": product("E")}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(message_ids(&body), vec![116], "{body}");
        let (status, listed) = send(&app, Method::GET, "/product", &token, &[], None).await;
        assert_eq!(status, StatusCode::OK);
        let ids: Vec<String> = listed["products"].as_object().unwrap().keys().cloned().collect();
        assert_eq!(ids.len(), 3, "{listed}");
        let (status, body) = send(&app, Method::PUT, "/product", &token, &[],
            Some(json!({"products": {"u": {"id": ids[0].parse::<i64>().unwrap(), "name": "Renamed"}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        // A deleted product frees its place.
        let (status, _) = send(&app, Method::DELETE, "/product", &token, &[("productIds", &ids[1])], None).await;
        assert_eq!(status, StatusCode::RESET_CONTENT);
        let (status, body) = send(&app, Method::POST, "/product", &token, &[],
            Some(json!({"products": {"f": product("F")}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");

        // Files: the PNG fits (69 bytes of 70), the JPEG would not; the PNG again adds nothing.
        let (status, body) = upload(&app, &token, "dot.png", "image/png", PNG).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let (status, body) = upload(&app, &token, "logo.jpg", "image/jpeg", JPEG).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        assert_eq!(message_ids(&body), vec![116], "{body}");
        assert!(body["error"]["details"].to_string().contains("hold 69 bytes"), "{body}");
        let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM files").fetch_one(&app.sql).await.unwrap();
        assert_eq!(n, 1, "nothing of the refused file is stored");
        let (status, body) = upload(&app, &token, "dot.png", "image/png", PNG).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
}

backend_tests_with! {
    |s| s.quota_storage_bytes = 3 * (69 + 8);
    // Ten different files of 77 bytes sent at once against room for three: the check and the
    // insert are one step per merchant, so exactly three are stored and the rest refused
    // (before, each upload read what the merchant held on its own and several could pass).
    async fn uploads_at_once_never_pass_the_storage_quota_together(app) {
        let token = app.owner_token().await;
        let files: Vec<Vec<u8>> = (0..10).map(|i| [PNG, format!("{i:08}").as_bytes()].concat()).collect();
        let answers = futures_util::future::join_all(
            files.iter().map(|bytes| upload(&app, &token, "dot.png", "image/png", bytes)),
        )
        .await;
        let created = answers.iter().filter(|(status, _)| *status == StatusCode::CREATED).count();
        for (status, body) in &answers {
            assert!(matches!(*status, StatusCode::CREATED | StatusCode::FORBIDDEN), "{status} {body}");
        }
        assert_eq!(created, 3, "{answers:?}");
        let (held,): (i64,) = sqlx::query_as("SELECT CAST(SUM(size) AS BIGINT) FROM files")
            .fetch_one(&app.sql).await.unwrap();
        assert_eq!(held, 3 * (69 + 8));
    }
}
