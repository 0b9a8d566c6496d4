//! The operator API (docs/operator.md): a realm of its own (operator tokens work on
//! `/operator/...` only, merchants' tokens never there), merchants created from manifests sent as
//! JSON that can authorize an application and sell, usage per merchant, and suspension: every
//! token of a suspended merchant gets 403 (109), its data kept, until it is resumed.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_tests;
use crate::helpers::{binary, create_one, metric_value, send, TestApp};
use crate::oauth_support::{approved_code, pkce_pair, token_json, Authorize};

/// A token of the operator's, made by the command line as an operator would.
pub async fn operator_token(database_url: &str) -> String {
    let out = tokio::process::Command::new(binary())
        .args([
            "operator",
            "token",
            "--name",
            "fleet-ops",
            "--database-url",
            database_url,
        ])
        .output()
        .await
        .expect("merchantd operator token");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let token = printed["token"].as_str().expect("a token").to_owned();
    assert!(token.starts_with("mop_"), "{printed}");
    // Printed once; never written to standard error (logs).
    assert!(!String::from_utf8_lossy(&out.stderr).contains(&token));
    token
}

/// An operator request without the version header (the operator API needs none).
pub async fn operator(
    app: &TestApp,
    method: Method,
    path: &str,
    token: &str,
    headers: &[(&str, &str)],
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut req = app.client.request(method, app.url(path)).bearer_auth(token);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    if let Some(body) = body {
        req = req.json(&body);
    }
    let res = crate::contract::Checked::checked(req)
        .await
        .expect("request");
    let status = res.status();
    let body: Value = res.json().await.expect("JSON");
    assert_eq!(body["api"]["codeBaseVersion"], "2.0", "{body}");
    (status, body)
}

/// An access token of `merchant`'s employee for its application, as the consent flow stores one.
pub async fn issue_token(app: &TestApp, merchant: i64, employee: i64, application: i64) -> String {
    issue_token_on(&app.db, merchant, employee, application).await
}

/// [`issue_token`] in database `db` (a pod's).
pub async fn issue_token_on(
    db: &merchantd::db::Db,
    merchant: i64,
    employee: i64,
    application: i64,
) -> String {
    let token = merchantd::crypto::random_token("mcd_at_");
    let family = merchantd::domain::oauth::token::NewFamily {
        id: uuid::Uuid::new_v4().to_string(),
        merchant_id: merchant,
        employee_id: employee,
        application_id: application,
        scope: "read write admin".into(),
    };
    db.issue_access_token(
        &family,
        &merchantd::crypto::sha256_hex(&token),
        merchantd::domain::now_millis() + 3_600_000,
    )
    .await
    .expect("a token");
    token
}

pub fn acme(key: &str) -> Value {
    json!({
        "merchant": {"key": key, "name": "Acme Hardware"},
        "stores": [{"key": "main", "name": "Main Street"}],
        "users": [{"email": "owner@acme.test", "password": "acme-owner-password", "role": "owner"}],
        "applications": [{"name": "Acme POS", "client_id": format!("{key}-pos"),
                          "client_secret": "acme-pos-secret-123",
                          "redirect_uris": ["http://127.0.0.1:8976/callback"]}],
    })
}

/// An access token of the owner of merchant `key` (made by [`acme`]) for its application,
/// through the consent flow (codes, sign-in families and refresh tokens stored as for a till).
pub async fn signed_in(app: &TestApp, key: &str) -> String {
    let (verifier, challenge) = pkce_pair();
    let request = Authorize {
        client_id: format!("{key}-pos"),
        redirect_uri: "http://127.0.0.1:8976/callback".into(),
        scope: "read write admin".into(),
        state: Some("s-1".into()),
        code_challenge: Some(challenge),
        email: "owner@acme.test".into(),
        password: "acme-owner-password".into(),
    };
    let code = approved_code(app, &request).await;
    let (status, tokens, _) = token_json(
        app,
        json!({"grant_type": "authorization_code", "code": code,
               "redirect_uri": "http://127.0.0.1:8976/callback", "client_id": format!("{key}-pos"),
               "client_secret": "acme-pos-secret-123", "code_verifier": verifier}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    tokens["access_token"].as_str().expect("a token").to_owned()
}

/// The ids of the answer's message records, errors and successes alike.
pub fn message_ids(body: &Value) -> Vec<i64> {
    let mut ids: Vec<i64> = ["error", "success"]
        .iter()
        .filter_map(|kind| body["api"]["message"][kind].as_object())
        .flat_map(|records| records.values().filter_map(|r| r["id"].as_i64()))
        .collect();
    ids.sort();
    ids
}

backend_tests! {
    async fn operator_and_merchant_tokens_are_realms_apart(app) {
        let op = operator_token(&app.database.url).await;
        let owner = app.owner_token().await;
        // A merchant's token (even an owner's with admin scope) is unknown to the operator API.
        let (status, body) =
            operator(&app, Method::GET, "/operator/merchant", &owner, &[], None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
        assert_eq!(body["error"]["code"], 401);
        // The operator's token is unknown to the merchant API, whatever the route.
        for path in ["/product", "/merchant", "/store"] {
            let (status, body) = send(&app, Method::GET, path, &op, &[], None).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{path}: {body}");
        }
        // Without a token, or with a made-up one of the right shape.
        let (status, _) = operator(&app, Method::GET, "/operator/merchant", "mop_nothing", &[], None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        let res = app.client.get(app.url("/operator/merchant")).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
        // With it: the demo merchant, listed with its usage.
        let (status, body) = operator(&app, Method::GET, "/operator/merchant", &op, &[], None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let demo = app.tenant("demo").id;
        let listed = &body["merchants"][demo.to_string()];
        assert_eq!(listed["key"], "demo", "{body}");
        assert_eq!(listed["suspendDate"], Value::Null);
        // Unknown routes of the realm are 404 behind its gate, not the merchant API's.
        let (status, _) = operator(&app, Method::GET, "/operator/nothing", &op, &[], None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (status, _) = operator(&app, Method::GET, "/operator/nothing", &owner, &[], None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }

    async fn a_merchant_created_by_the_operator_authorizes_an_application_and_sells(app) {
        let op = operator_token(&app.database.url).await;
        let (status, body) = operator(
            &app,
            Method::POST,
            "/operator/merchant",
            &op,
            &[],
            Some(json!({"merchants": {
                "a": acme("acme"),
                "taken": acme("demo"),
                "bad": {"merchant": {"key": "bad one", "name": "Bad"}},
                "null": {"merchant": {"key": "nully", "name": "Null"}, "stores": null},
            }})),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let created = &body["merchants"]["a"];
        let merchant_id = created["id"].as_i64().expect("an id");
        assert!(created["stores"]["main"].is_i64(), "{body}");
        assert!(body["merchants"].get("taken").is_none());
        let text = body["api"]["message"].to_string();
        assert!(text.contains(&format!("Merchant {merchant_id} created.")), "{text}");
        // One message per object: created, key taken (113), invalid key (110), a null (110).
        assert_eq!(message_ids(&body), vec![110, 110, 113, 200], "{body}");
        assert!(text.contains("already has the key demo"), "{text}");
        assert!(text.contains("merchants.null") && text.contains("stores"), "{text}");
        // No password or secret is echoed.
        assert!(!text.contains("acme-owner-password") && !text.contains("acme-pos-secret-123"));

        // The new merchant's owner signs in to its application through the consent flow.
        let token = signed_in(&app, "acme").await;

        // And sells: a product, a basket, a cash payment, the completion.
        let (status, stores) = send(&app, Method::GET, "/store", &token, &[], None).await;
        assert_eq!(status, StatusCode::OK);
        let store: i64 = stores["stores"].as_object().expect("stores").keys().next()
            .expect("its store").parse().unwrap();
        let product = create_one(&app, &token, "/product", "products", json!({"name": "Hammer",
            "instances": {"i": {"name": "Standard", "price": "12.50", "taxPercentage": "0.200"}}})).await;
        let basket = create_one(&app, &token, "/basket", "baskets", json!({"storeId": store,
            "basketProducts": {"l": {"productId": product["id"], "quantity": 2}}})).await;
        create_one(&app, &token, "/transaction", "transactions", json!({"basketId": basket["id"],
            "type": "CASH", "amount": 2500, "completed": true})).await;
        let done = create_one(&app, &token, "/basket", "baskets",
            json!({"id": basket["id"], "completed": true})).await;
        assert_eq!(done["completed"], true, "{done}");

        // The operator sees what it holds and did (requests counted by this replica).
        let id = merchant_id.to_string();
        let (status, body) = operator(&app, Method::GET, "/operator/merchant", &op,
            &[("merchantIds", &id)], None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["merchants"].as_object().map(|m| m.len()), Some(1), "{body}");
        let usage = &body["merchants"][&id]["usage"];
        assert_eq!(usage["products"], 1, "{body}");
        assert_eq!(usage["sales"], 1, "{body}");
        assert!(usage["requests"].as_u64().unwrap() >= 5, "{body}");
        assert!(usage["writes"].as_u64().unwrap() >= 4, "{body}");
        assert_eq!(body["merchants"][&id]["name"], "Acme Hardware");
        // The busiest merchants are in /metrics by rank, not one series per merchant; on the
        // API's own port without their ids.
        let metrics = app.metrics_text().await;
        assert!(metric_value(&metrics, "merchantd_top_merchant_requests", "rank=\"1\"") >= 5.0,
            "{metrics}");
        assert!(!metrics.contains("merchant_id="), "{metrics}");
        // The same key again is a conflict, and so is a client id another merchant registered
        // or another object of the request takes: refused each (113), never a 500.
        let mut reused = acme("fresh");
        reused["applications"][0]["client_id"] = json!("acme-pos");
        let mut twice = acme("twice");
        twice["applications"][0]["client_id"] = json!("fresh2-pos");
        let (status, body) = operator(&app, Method::POST, "/operator/merchant", &op, &[],
            Some(json!({"merchants": {"again": acme("acme"), "reused": reused,
                                      "first": acme("fresh2"), "second": twice}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(message_ids(&body), vec![113, 113, 113, 200], "{body}");
        assert!(body["merchants"]["first"]["id"].is_i64(), "{body}");
        let text = body["api"]["message"].to_string();
        assert!(text.contains("already registered by another merchant"), "{text}");
        assert!(text.contains("used by another object of the request"), "{text}");
        // A refused object leaves nothing behind: its key is still free.
        let (status, body) = operator(&app, Method::POST, "/operator/merchant", &op, &[],
            Some(json!({"merchants": {"now": acme("twice")}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }

    async fn the_merchant_list_comes_a_page_at_a_time(app) {
        let op = operator_token(&app.database.url).await;
        let (status, body) = operator(&app, Method::POST, "/operator/merchant", &op, &[],
            Some(json!({"merchants": {"a": acme("p1"), "b": acme("p2"), "c": acme("p3")}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        // The test's tenants and these three, by id, two a page.
        let mut seen = Vec::new();
        let mut after: Option<i64> = None;
        for _ in 0..10 {
            let after_text = after.map(|a| a.to_string());
            let mut headers = vec![("limit", "2")];
            if let Some(a) = &after_text {
                headers.push(("afterId", a.as_str()));
            }
            let (status, body) = operator(&app, Method::GET, "/operator/merchant", &op, &headers, None).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            let page: Vec<i64> = body["merchants"].as_object().unwrap().keys()
                .map(|k| k.parse().unwrap()).collect();
            assert!(page.len() <= 2, "{body}");
            seen.extend(page);
            after = body["nextAfterId"].as_i64();
            if after.is_none() {
                break;
            }
        }
        let mut sorted = seen.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(seen, sorted, "by id, none twice");
        assert_eq!(seen.len(), app.tenants.len() + 3, "{seen:?}");
        assert_eq!(after, None, "the last page says so");
        for (name, value) in [("limit", "0"), ("limit", "1001"), ("afterId", "-1"), ("afterId", "x")] {
            let (status, body) = operator(&app, Method::GET, "/operator/merchant", &op, &[(name, value)], None).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{name}={value}: {body}");
            assert!(body["error"]["details"].to_string().contains(name), "{body}");
        }
    }

    async fn a_suspended_merchants_tokens_get_403_until_it_is_resumed(app) {
        let op = operator_token(&app.database.url).await;
        let owner = app.owner_token().await;
        let (status, body) = operator(&app, Method::POST, "/operator/merchant", &op, &[],
            Some(json!({"merchants": {"a": acme("other")}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        // The other merchant's owner, with a token of its own (issued as the consent flow would).
        let other_id = body["merchants"]["a"]["id"].as_i64().unwrap();
        let other_owner = body["merchants"]["a"]["users"]["owner@acme.test"].as_i64().unwrap();
        let other_app = body["merchants"]["a"]["applications"]["other-pos"].as_i64().unwrap();
        let other = issue_token(&app, other_id, other_owner, other_app).await;
        let (status, _) = send(&app, Method::GET, "/category", &other, &[], None).await;
        assert_eq!(status, StatusCode::OK);
        let demo = app.tenant("demo").id.to_string();
        let product = create_one(&app, &owner, "/category", "categories", json!({"title": "Kept"})).await;
        // Warm: the token is cached before the suspension.
        let (status, _) = send(&app, Method::GET, "/category", &owner, &[], None).await;
        assert_eq!(status, StatusCode::OK);

        let (status, body) = operator(&app, Method::POST, "/operator/merchant/suspend", &op,
            &[("merchantIds", &format!("{demo}, 999999"))], None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let text = body["api"]["message"].to_string();
        assert!(text.contains(&format!("Merchant {demo} suspended.")), "{text}");
        assert!(text.contains("Merchant 999999 does not exist."), "{text}");
        for (method, path) in [(Method::GET, "/category"), (Method::POST, "/category"), (Method::GET, "/user")] {
            let body = (method == Method::POST).then(|| json!({"categories": {"k": {"title": "No"}}}));
            let (status, answer) = send(&app, method, path, &owner, &[], body).await;
            assert_eq!(status, StatusCode::FORBIDDEN, "{path}: {answer}");
            assert_eq!(message_ids(&answer), vec![109], "{answer}");
            assert!(answer["api"]["message"].to_string().contains("suspended"), "{answer}");
        }
        let (status, body) = operator(&app, Method::GET, "/operator/merchant", &op,
            &[("merchantIds", &demo)], None).await;
        assert_eq!(status, StatusCode::OK);
        assert!(body["merchants"][&demo]["suspendDate"].is_string(), "{body}");
        // Only the merchant named is suspended.
        let (status, body) = send(&app, Method::GET, "/category", &other, &[], None).await;
        assert_eq!(status, StatusCode::OK, "{body}");

        let (status, _) = operator(&app, Method::POST, "/operator/merchant/resume", &op,
            &[("merchantIds", &demo)], None).await;
        assert_eq!(status, StatusCode::OK);
        let (status, body) = send(&app, Method::GET, "/category", &owner,
            &[("categoryIds", &product["id"].to_string())], None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["categories"][product["id"].to_string()]["title"], "Kept", "{body}");
        // Ids that name no merchant: 404; no header: 400.
        let (status, _) = operator(&app, Method::POST, "/operator/merchant/suspend", &op,
            &[("merchantIds", "999998")], None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (status, _) = operator(&app, Method::POST, "/operator/merchant/suspend", &op, &[], None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        // An operator token stops working once revoked, or once it expired.
        let hash = merchantd::crypto::sha256_hex(&op);
        for column in ["expires_at", "revoked_at"] {
            let other_op = operator_token(&app.database.url).await;
            let other_hash = merchantd::crypto::sha256_hex(&other_op);
            sqlx::query(&format!("UPDATE operator_tokens SET {column} = 1 WHERE hash = $1"))
                .bind(&other_hash)
                .execute(&app.sql)
                .await
                .unwrap();
            let (status, _) = operator(&app, Method::GET, "/operator/merchant", &other_op, &[], None).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{column}");
        }
        let (status, _) = operator(&app, Method::GET, "/operator/merchant", &op, &[], None).await;
        assert_eq!(status, StatusCode::OK, "{hash}: the first token still works");
    }
}
