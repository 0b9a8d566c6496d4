//! Till sessions (docs/tills.md): one open session per register, cash paid in and out, a sale
//! at a register needs an open session and takes the register's next receipt number, the
//! X-report while open and the Z-report at the close, which then never changes; and another
//! merchant's registers, sessions and movements are out of reach.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_tests;
use crate::helpers::{create_one as create, send, TestApp};
use crate::shop_day::{id, product};

async fn register(app: &TestApp, token: &str, store: i64) -> i64 {
    id(&create(
        app,
        token,
        "/register",
        "registers",
        json!({"storeId": store, "name": "Till"}),
    )
    .await)
}

async fn open(app: &TestApp, token: &str, register: i64, float: i64) -> Value {
    create(
        app,
        token,
        "/register/session",
        "sessions",
        json!({"registerId": register, "openingFloat": float}),
    )
    .await
}

/// A basket at `register` of one unit of `product`, paid in cash, then completed: the answer
/// to the completing write.
async fn sale(
    app: &TestApp,
    token: &str,
    store: i64,
    register: i64,
    product: i64,
) -> (StatusCode, Value) {
    let basket = create(
        app,
        token,
        "/basket",
        "baskets",
        json!({"storeId": store, "registerId": register,
        "basketProducts": {"l": {"productId": product, "quantity": 1}}}),
    )
    .await;
    let total = basket["receipt"]["total"].as_i64().unwrap();
    create(
        app,
        token,
        "/transaction",
        "transactions",
        json!({"basketId": id(&basket), "type": "CASH", "amount": total, "completed": true}),
    )
    .await;
    send(
        app,
        Method::POST,
        "/basket",
        token,
        &[],
        Some(json!({"baskets": {"k": {"id": id(&basket), "completed": true}}})),
    )
    .await
}

pub(crate) async fn report(app: &TestApp, token: &str, session: i64) -> Value {
    let (status, body) = send(
        app,
        Method::GET,
        "/register/session/report",
        token,
        &[("sessionIds", &session.to_string())],
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["sessionReports"][session.to_string()].clone()
}

backend_tests! {
    async fn a_session_opens_sells_moves_cash_and_closes_for_good(app) {
        let token = app.owner_token().await;
        let store = app.tenant("demo").stores["high-street"];
        let till = register(&app, &token, store).await;
        let latte = product(&app, &token, "Latte", "300").await;

        // No open session: the sale is refused, and takes no number.
        let (status, body) = sale(&app, &token, store, till, latte).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.to_string().contains(&format!("completed: register {till} has no open session; open one first.")), "{body}");

        let session = open(&app, &token, till, 5_000).await;
        let s = id(&session);
        assert_eq!((session["closed"].as_bool(), session["firstReceiptNumber"].as_i64(), session["registerId"].as_i64()), (Some(false), Some(1), Some(till)), "{session}");
        assert!(session["employeeId"].as_i64().is_some(), "the token's employee opened it: {session}");
        let (status, body) = send(&app, Method::POST, "/register/session", &token, &[],
            Some(json!({"sessions": {"k": {"registerId": till, "openingFloat": 1}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(body.to_string().contains(&format!("registerId: register {till} already has session {s} open; close it first.")), "{body}");

        for _ in 0..2 {
            let (status, body) = sale(&app, &token, store, till, latte).await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
        }
        // A basket stays at its register, and an open till is not deleted.
        let open_basket = create(&app, &token, "/basket", "baskets", json!({"storeId": store, "registerId": till})).await;
        let (status, body) = send(&app, Method::PUT, "/basket", &token, &[],
            Some(json!({"baskets": {"k": {"id": id(&open_basket), "registerId": null}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(body.to_string().contains("registerId: a basket stays at its register."), "{body}");
        let (status, body) = send(&app, Method::DELETE, "/register", &token, &[("registerIds", &till.to_string())], None).await;
        assert_ne!(status, StatusCode::RESET_CONTENT, "{body}");
        assert!(body.to_string().contains(&format!("Register {till} has session {s} open; close it first.")), "{body}");
        let (_, body) = send(&app, Method::GET, "/basket", &token, &[("sessionIds", &s.to_string())], None).await;
        let mut numbers: Vec<i64> = body["baskets"].as_object().unwrap().values()
            .filter(|b| b["completed"] == true).map(|b| b["receiptNumber"].as_i64().unwrap()).collect();
        numbers.sort();
        assert_eq!(numbers, [1, 2], "{body}");
        let (_, body) = send(&app, Method::GET, "/transaction", &token, &[("sessionIds", &s.to_string())], None).await;
        let paid: Vec<&Value> = body["transactions"].as_object().unwrap().values().collect();
        assert_eq!(paid.len(), 2, "{body}");
        assert!(paid.iter().all(|t| t["registerId"] == till && t["employeeId"] == session["employeeId"]), "{body}");
        let paid_out = create(&app, &token, "/register/cash", "cashMovements",
            json!({"sessionId": s, "type": "paidOut", "amount": 250, "reason": "Milk"})).await;
        assert_eq!((paid_out["type"].as_str(), paid_out["amount"].as_i64()), (Some("paidOut"), Some(250)), "{paid_out}");
        let (status, body) = send(&app, Method::POST, "/register/cash", &token, &[],
            Some(json!({"cashMovements": {"k": {"sessionId": s, "type": "lost", "amount": 0}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        let text = body.to_string();
        for problem in ["type: must be paidIn or paidOut.", "amount: must be more than 0.", "reason: required field is missing."] {
            assert!(text.contains(problem), "{problem}: {body}");
        }

        // The X-report: the figures so far.
        let x = report(&app, &token, s).await;
        assert_eq!(x["kind"], "X");
        assert_eq!(x["figures"]["sales"], json!({"count": 2, "quantity": 2, "amount": 600, "tax": 100}), "{x}");
        assert_eq!(x["figures"]["payments"]["CASH"]["amount"], 600);
        assert_eq!(x["cash"]["expected"], 5_000 + 600 - 250);
        assert_eq!((x["firstReceiptNumber"].as_i64(), x["lastReceiptNumber"].as_i64()), (Some(1), Some(2)));
        assert!(x["text"].as_str().unwrap().starts_with("X-REPORT"), "{x}");

        // Closing needs the count; the denominations add up to it.
        let (status, body) = send(&app, Method::POST, "/register/session", &token, &[],
            Some(json!({"sessions": {"k": {"id": s, "closed": true}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(body.to_string().contains("countedCash: required to close the session."), "{body}");
        let (status, body) = send(&app, Method::POST, "/register/session", &token, &[],
            Some(json!({"sessions": {"k": {"id": s, "closed": true, "countedDenominations": {"2000": 2, "02000": 1}}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(body.to_string().contains("countedDenominations: 2000 is named twice."), "{body}");
        let (status, body) = send(&app, Method::POST, "/register/session", &token, &[],
Some(json!({"sessions": {"k": {"id": s, "closed": true, "countedDenominations": {"2000": 2, "1000": 1, "200": 1, "100": 3, "5": 9}}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let closed = &body["sessions"]["k"];
        assert_eq!((closed["countedCash"].as_i64(), closed["expectedCash"].as_i64(), closed["difference"].as_i64()), (Some(5_545), Some(5_350), Some(195)), "{closed}");
        assert_eq!(closed["lastReceiptNumber"], 2);
        assert!(body["api"]["message"]["success"].to_string().contains(&format!("Session {s} closed.")), "{body}");

        // A closed session never changes, takes no cash and no sale; its Z-report stays.
        let (status, _) = send(&app, Method::POST, "/register/session", &token, &[],
            Some(json!({"sessions": {"k": {"id": s, "closed": true, "countedCash": 1}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        let (status, body) = send(&app, Method::POST, "/register/cash", &token, &[],
            Some(json!({"cashMovements": {"k": {"sessionId": s, "type": "paidIn", "amount": 5, "reason": "late"}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(body.to_string().contains(&format!("sessionId: session {s} is closed.")), "{body}");
        let (status, _) = sale(&app, &token, store, till, latte).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        let z = report(&app, &token, s).await;
        assert_eq!(z["kind"], "Z");
        assert_eq!(z["figures"], x["figures"]);
        assert_eq!((z["cash"]["counted"].as_i64(), z["cash"]["difference"].as_i64()), (Some(5_545), Some(195)));

        // The next session numbers on from 3.
        let next = open(&app, &token, till, 0).await;
        assert_eq!(next["firstReceiptNumber"], 3);
        let (_, body) = sale(&app, &token, store, till, latte).await;
        assert_eq!(body["baskets"]["k"]["receiptNumber"], 3, "{body}");
        assert_eq!(body["baskets"]["k"]["sessionId"], id(&next));
    }

    async fn a_register_sells_only_its_own_stores_baskets(app) {
        let token = app.owner_token().await;
        let store = app.tenant("demo").stores["high-street"];
        let other = id(&create(&app, &token, "/store", "stores", json!({"name": "Kiosk", "addressLine1": "1 Quay", "city": "Bath", "postcode": "BA1 1AA", "countryId": "GB"})).await);
        let till = register(&app, &token, other).await;
        let (status, body) = send(&app, Method::POST, "/basket", &token, &[],
            Some(json!({"baskets": {"k": {"storeId": store, "registerId": till}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(body.to_string().contains(&format!("registerId: register {till} is at store {other}, not the basket's store.")), "{body}");
    }

    async fn another_merchants_tills_do_not_exist_here(app) {
        let demo = app.owner_token().await;
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let their_store = app.tenant("second").stores["market"];
        let their_till = register(&app, &other, their_store).await;
        let theirs = id(&open(&app, &other, their_till, 100).await);
        let movement = id(&create(&app, &other, "/register/cash", "cashMovements",
            json!({"sessionId": theirs, "type": "paidIn", "amount": 5, "reason": "float"})).await);

        let (status, body) = send(&app, Method::POST, "/register/session", &demo, &[],
            Some(json!({"sessions": {"k": {"registerId": their_till, "openingFloat": 1}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(body.to_string().contains(&format!("registerId: {their_till} is not a register of this merchant.")), "{body}");
        let (status, body) = send(&app, Method::POST, "/register/session", &demo, &[],
            Some(json!({"sessions": {"k": {"id": theirs, "closed": true, "countedCash": 0}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(body["api"]["message"]["error"]["110:k"]["details"], format!("id: session {theirs} does not exist."));
        let (status, body) = send(&app, Method::POST, "/register/cash", &demo, &[],
            Some(json!({"cashMovements": {"k": {"sessionId": theirs, "type": "paidOut", "amount": 5, "reason": "x"}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(body.to_string().contains(&format!("sessionId: {theirs} is not a session of this merchant.")), "{body}");
        let store = app.tenant("demo").stores["high-street"];
        let (status, body) = send(&app, Method::POST, "/basket", &demo, &[],
            Some(json!({"baskets": {"k": {"storeId": store, "registerId": their_till}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(body.to_string().contains(&format!("registerId: {their_till} is not a register of this merchant.")), "{body}");
        for (path, plural, header, id) in [("/register/session", "sessions", "sessionIds", theirs), ("/register/cash", "cashMovements", "cashMovementIds", movement)] {
            let (_, body) = send(&app, Method::GET, path, &demo, &[(header, &id.to_string())], None).await;
            assert_eq!(body[plural], json!({}), "{path}");
            let (status, _) = send(&app, Method::DELETE, path, &demo, &[(header, &id.to_string())], None).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        }
        let (_, body) = send(&app, Method::GET, "/register/session/report", &demo, &[("sessionIds", &theirs.to_string())], None).await;
        assert_eq!(body["sessionReports"], json!({}));
        let (_, body) = send(&app, Method::GET, "/register/session/report", &other, &[("sessionIds", &theirs.to_string())], None).await;
        assert_eq!(body["sessionReports"][theirs.to_string()]["figures"]["paidIn"]["amount"], 5, "theirs untouched");
    }
}

/// A market stall whose till needs no session (`sessions_required = false`).
const STALL: &str = r#"
[merchant]
key = "stall"
name = "Saturday Stall"

[sales]
sessions_required = false

[[stores]]
key = "market"
name = "Market Square"

[[users]]
email = "owner@stall.test"
password = "stall-owner-password"
role = "owner"

[[applications]]
name = "Stall Till"
client_id = "stall-till"
client_secret = "stall-till-secret-0123"
redirect_uris = ["https://till.stall.test/cb"]
"#;

fn with_stall(settings: &mut merchantd::config::Settings) {
    std::fs::write(settings.tenants.join("stall.toml"), STALL).expect("write stall.toml");
}

crate::backend_tests_with! { with_stall;
    async fn a_merchant_may_sell_at_a_register_without_a_session(app) {
        let token = app.token_for("stall", "owner@stall.test", "read write admin", 3600).await;
        let store = app.tenant("stall").stores["market"];
        let till = register(&app, &token, store).await;
        let latte = product(&app, &token, "Latte", "300").await;
        for n in 1..=2 {
            let (status, body) = sale(&app, &token, store, till, latte).await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
            let basket = &body["baskets"]["k"];
            assert_eq!((basket["receiptNumber"].as_i64(), basket["sessionId"].as_i64()), (Some(n), None), "{body}");
        }
        // A session opened later numbers on.
        assert_eq!(open(&app, &token, till, 0).await["firstReceiptNumber"], 3);
    }
}
