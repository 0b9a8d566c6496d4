//! Deleting a merchant (docs/operator.md, "Deleting"): suspended at once, every row of it
//! removed by the sweep after the grace period (sign-ins and tokens included), other merchants
//! untouched; resumed before then, it is kept. And every table that names a merchant is one
//! the archive and the deletion know.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{create_one, send, TestApp};
use crate::operator::{acme, issue_token, message_ids, operator, operator_token, signed_in};
use crate::uploads::{upload, JPEG};
use crate::{backend_tests, backend_tests_with};
use merchantd::db::fleet::archive_rows::{LEFT_OUT, TABLES};

/// Rows naming `merchant` in every table that can.
async fn rows_of(app: &TestApp, merchant: i64) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    let tables = TABLES.iter().chain(LEFT_OUT.iter().map(|(t, _)| t));
    for table in tables {
        let column = match *table {
            "merchants" => "id",
            "oauth_codes" | "refresh_tokens" => continue,
            _ => "merchant_id",
        };
        let sql = format!("SELECT COUNT(*) FROM {table} WHERE {column} = $1");
        let (n,): (i64,) = sqlx::query_as(&sql)
            .bind(merchant)
            .fetch_one(&app.sql)
            .await
            .unwrap();
        out.push((table.to_string(), n));
    }
    for table in ["oauth_codes", "refresh_tokens"] {
        let sql = format!(
            "SELECT COUNT(*) FROM {table} t JOIN oauth_families f ON f.id = t.family_id \
             WHERE f.merchant_id = $1"
        );
        let (n,): (i64,) = sqlx::query_as(&sql)
            .bind(merchant)
            .fetch_one(&app.sql)
            .await
            .unwrap();
        out.push((table.to_string(), n));
    }
    out
}

async fn listed(app: &TestApp, op: &str, id: i64) -> Value {
    let (status, body) = operator(
        app,
        Method::GET,
        "/operator/merchant",
        op,
        &[("merchantIds", &id.to_string())],
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["merchants"][id.to_string()].clone()
}

backend_tests_with! {
    |s| {
        s.merchant_delete_grace_secs = 0;
        s.merchant_purge_interval_secs = 1;
    };
    async fn a_deleted_merchant_loses_every_row_and_no_one_else_does(app) {
        let op = operator_token(&app.database.url).await;
        let (status, body) = operator(&app, Method::POST, "/operator/merchant", &op, &[],
            Some(json!({"merchants": {"l": acme("leaving"), "s": acme("staying")}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let leaving = body["merchants"]["l"]["id"].as_i64().unwrap();
        let staying = body["merchants"]["s"]["id"].as_i64().unwrap();
        // The leaving merchant's owner signs in through the consent flow (a code, a sign-in
        // family and a refresh token stored); both owners share an email and password, and a
        // sign-in acts for the first merchant whose employee they match (DESIGN §5), so the
        // staying owner's token is issued directly.
        let token = signed_in(&app, "leaving").await;
        let kept = issue_token(&app, staying, body["merchants"]["s"]["users"]["owner@acme.test"].as_i64().unwrap(),
            body["merchants"]["s"]["applications"]["staying-pos"].as_i64().unwrap()).await;
        for t in [&token, &kept] {
            let category = create_one(&app, t, "/category", "categories", json!({"title": "Tools"})).await;
            create_one(&app, t, "/product", "products", json!({"name": "Saw",
                "categories": [category["id"]],
                "instances": {"i": {"name": "Standard", "price": "9.00", "taxPercentage": "0.200"}}})).await;
            let (status, body) = send(&app, Method::POST, "/log", t,
                &[("tag", "till"), ("object", "STORE"), ("identifier", "1")], Some(json!({"n": 1}))).await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
        }
        // The same bytes, uploaded by both: one name, each merchant's own row.
        let (status, body) = upload(&app, &token, "logo.jpg", "image/jpeg", JPEG).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let file_name = body["file"]["fileName"].as_str().expect("a file name").to_owned();
        let (status, body) = upload(&app, &kept, "logo.jpg", "image/jpeg", JPEG).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["file"]["fileName"], file_name.as_str());
        let before: i64 = rows_of(&app, leaving).await.iter().map(|(_, n)| n).sum();
        assert!(before > 15, "{:?}", rows_of(&app, leaving).await);
        let staying_before = rows_of(&app, staying).await;

        let (status, body) = operator(&app, Method::POST, "/operator/merchant/delete", &op,
            &[("merchantIds", &format!("{leaving},999999"))], None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let text = body["api"]["message"].to_string();
        assert!(text.contains(&format!("Merchant {leaving} is suspended and will be deleted after")), "{text}");
        assert!(text.contains("Merchant 999999 does not exist."), "{text}");
        // Its token stops at once: suspended (403), or already gone with its merchant (401).
        let (status, _) = send(&app, Method::GET, "/category", &token, &[], None).await;
        assert!(matches!(status, StatusCode::FORBIDDEN | StatusCode::UNAUTHORIZED), "{status}");

        // The sweep (every second here) removes every row of it.
        let mut left = Vec::new();
        for _ in 0..100 {
            left = rows_of(&app, leaving).await.into_iter().filter(|(_, n)| *n > 0).collect();
            if left.is_empty() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert!(left.is_empty(), "rows left: {left:?}");
        assert_eq!(listed(&app, &op, leaving).await, Value::Null);
        let (status, _) = send(&app, Method::GET, "/category", &token, &[], None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        // The other merchant keeps every row, and works.
        assert_eq!(rows_of(&app, staying).await, staying_before);
        let (status, body) = send(&app, Method::GET, "/product", &kept, &[], None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["products"].as_object().map(|p| p.len()), Some(1), "{body}");
        // The file both uploaded is still served: the deleted merchant's row went, not theirs.
        let res = app.client.get(app.url(&format!("/files/{file_name}"))).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        assert_eq!(res.bytes().await.unwrap().as_ref(), JPEG);
        // Deleting a merchant that is not there: 404.
        let (status, body) = operator(&app, Method::POST, "/operator/merchant/delete", &op,
            &[("merchantIds", &leaving.to_string())], None).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    }
}

backend_tests! {
    async fn a_deleted_merchant_resumed_in_its_grace_period_is_kept(app) {
        let op = operator_token(&app.database.url).await;
        let owner = app.owner_token().await;
        let demo = app.tenant("demo").id;
        let category = create_one(&app, &owner, "/category", "categories", json!({"title": "Kept"})).await;
        let (status, body) = operator(&app, Method::POST, "/operator/merchant/delete", &op,
            &[("merchantIds", &demo.to_string())], None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        // Thirty days from now by default, suspended meanwhile.
        let shown = listed(&app, &op, demo).await;
        let after = chrono::DateTime::parse_from_rfc3339(shown["deleteAfter"].as_str().expect("a date"))
            .unwrap();
        let days = (after.with_timezone(&chrono::Utc) - chrono::Utc::now()).num_hours() as f64 / 24.0;
        assert!((29.9..=30.1).contains(&days), "{shown}");
        assert!(shown["suspendDate"].is_string(), "{shown}");
        let (status, body) = send(&app, Method::GET, "/category", &owner, &[], None).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        assert_eq!(message_ids(&body), vec![109]);

        let (status, _) = operator(&app, Method::POST, "/operator/merchant/resume", &op,
            &[("merchantIds", &demo.to_string())], None).await;
        assert_eq!(status, StatusCode::OK);
        let shown = listed(&app, &op, demo).await;
        assert_eq!(shown["deleteAfter"], Value::Null, "{shown}");
        assert_eq!(shown["suspendDate"], Value::Null, "{shown}");
        let (status, body) = send(&app, Method::GET, "/category", &owner,
            &[("categoryIds", &category["id"].to_string())], None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["categories"][category["id"].to_string()]["title"], "Kept");
        // A merchant's token cannot delete anyone.
        let (status, _) = operator(&app, Method::POST, "/operator/merchant/delete", &owner,
            &[("merchantIds", &demo.to_string())], None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        // Nothing was removed by the sweep in between: the issue token still has its rows.
        let token = issue_token(&app, demo, app.tenant("demo").users["owner@demo.test"],
            *app.tenant("demo").applications.values().next().unwrap()).await;
        let (status, _) = send(&app, Method::GET, "/category", &token, &[], None).await;
        assert_eq!(status, StatusCode::OK);
    }

    async fn every_table_that_names_a_merchant_is_archived_or_left_out_for_a_reason(app) {
        let sql = match app.backend {
            crate::helpers::Backend::Sqlite => {
                "SELECT m.name FROM sqlite_master m JOIN pragma_table_info(m.name) c \
                 WHERE m.type = 'table' AND c.name = 'merchant_id' ORDER BY m.name"
            }
            crate::helpers::Backend::Postgres => {
                "SELECT table_name::text FROM information_schema.columns \
                 WHERE table_schema = current_schema() AND column_name = 'merchant_id' \
                 ORDER BY table_name"
            }
        };
        let named: Vec<(String,)> = sqlx::query_as(sql).fetch_all(&app.sql).await.unwrap();
        for (table,) in &named {
            let known = TABLES.contains(&table.as_str())
                || LEFT_OUT.iter().any(|(t, _)| t == table);
            assert!(known, "{table} names a merchant: add it to TABLES or LEFT_OUT in src/db/archive.rs");
        }
        // And every table listed exists and names its merchant.
        for table in TABLES.iter().skip(1).chain(LEFT_OUT.iter().map(|(t, _)| t)) {
            let by_family = ["oauth_codes", "refresh_tokens"].contains(table);
            assert!(by_family || named.iter().any(|(t,)| t == table), "{table}");
        }
    }
}
