//! Sales a till made offline (issue 24, docs/offline.md): `POST /basket/sync` records each sale
//! once per `clientId`, at the till's prices and time of sale, never refusing it for what
//! changed while the till was offline (a price, a deleted product, stock short, a session
//! closed since); each such change is a warning on the basket, and a shortfall is also a
//! `stock.shortfall` event. Another merchant's ids, and a session of another register, are
//! refused.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{create_one as create, send, TestApp};
use crate::shop_day::{id, product, receive, stock};
use crate::tills::report;
use crate::{backend_tests, backend_tests_with};

const HOUR: i64 = 3_600_000;

fn iso(millis: i64) -> String {
    chrono::DateTime::<chrono::Utc>::from_timestamp_millis(millis)
        .unwrap()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn uuid(n: u32) -> String {
    format!("00000000-0000-4000-8000-{n:012}")
}

/// A UUID with hex letters in upper case, as a till may print one; kept in lower case.
const SHOUTED: &str = "0D9C6A1E-4F1B-4C55-9A43-2C8D2F0A7E11";

async fn sync(app: &TestApp, token: &str, sales: Value) -> (StatusCode, Value) {
    send(
        app,
        Method::POST,
        "/basket/sync",
        token,
        &[],
        Some(json!({ "sales": sales })),
    )
    .await
}

fn warnings(basket: &Value) -> Vec<String> {
    basket["syncWarnings"]
        .as_array()
        .map(|w| {
            w.iter()
                .map(|w| w["code"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

async fn shortfall_events(app: &TestApp, product: i64) -> i64 {
    let sql = format!("SELECT COUNT(*) FROM events WHERE event_type = 'stock.shortfall' AND object_id = {product}");
    sqlx::query_scalar::<_, i64>(&sql)
        .fetch_one(&app.sql)
        .await
        .unwrap()
}

backend_tests! {
    async fn an_offline_sale_is_recorded_once_at_the_tills_prices_and_time(app) {
        let token = app.owner_token().await;
        let store = app.tenant("demo").stores["high-street"];
        let till = id(&create(&app, &token, "/register", "registers", json!({"storeId": store, "name": "Till"})).await);
        let session = id(&create(&app, &token, "/register/session", "sessions", json!({"registerId": till, "openingFloat": 0})).await);
        let latte = product(&app, &token, "Latte", "300").await;
        let scone = product(&app, &token, "Scone", "250").await;
        receive(&app, &token, store, latte, 1).await;

        // While the till is offline: the latte's price goes up, the scone is deleted.
        let (status, body) = send(&app, Method::POST, "/product", &token, &[], Some(json!({"products": {"p": {"id": latte,
            "instances": {"n": {"name": "Standard", "price": "350", "taxPercentage": "0.200"}}}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let (status, _) = send(&app, Method::DELETE, "/product", &token, &[("productIds", &scone.to_string())], None).await;
        assert_eq!(status, StatusCode::RESET_CONTENT);

        let sold_at = merchantd::domain::now_millis() - 2 * HOUR;
        let sales = json!({
            "a": {"clientId": uuid(1), "occurredAt": iso(sold_at), "storeId": store, "registerId": till, "sessionId": session,
                  "basketProducts": {"l": {"productId": latte, "quantity": 2, "price": "300"}},
                  "payments": {"p": {"type": "CASH", "amount": 600}}},
            "b": {"clientId": uuid(2), "occurredAt": iso(sold_at + 60_000), "storeId": store, "registerId": till,
                  "basketProducts": {"l": {"productId": scone, "quantity": 1, "price": "250"}},
                  "payments": {"p": {"type": "CARD", "amount": 200}}}
        });
        let (status, body) = sync(&app, &token, sales.clone()).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let a = &body["baskets"]["a"];
        let b = &body["baskets"]["b"];
        assert_eq!((a["completed"].as_bool(), a["clientId"].as_str()), (Some(true), Some(uuid(1).as_str())), "{a}");
        assert_eq!(a["completeDate"], iso(sold_at), "a sale counts at its time of sale: {a}");
        assert_eq!(a["occurredAt"], iso(sold_at));
        assert!(a["syncDate"].is_string());
        assert_eq!(a["total"], "600", "recorded at the till's price: {a}");
        assert_eq!((a["sessionId"].as_i64(), a["receiptNumber"].as_i64()), (Some(session), Some(1)), "{a}");
        assert_eq!(warnings(a), ["priceChanged", "stockShortfall"], "{a}");
        assert_eq!(warnings(b), ["productDeleted", "underpaid", "stockShortfall"], "{b}");
        assert_eq!(b["sessionId"], session, "a sale naming no session takes its register's open one: {b}");
        assert!(body["api"]["message"]["success"].to_string().contains(&format!("Sale {} recorded as basket {}, with 2 warning(s).", uuid(1), id(a))), "{body}");

        // Stock goes negative; the shortfall is an event.
        assert_eq!(stock(&app, &token, store, latte).await.2, -1);
        assert_eq!(stock(&app, &token, store, scone).await.2, -1);
        assert_eq!(shortfall_events(&app, latte).await, 1);

        // The same batch again, its keys in another order: the same baskets, nothing new.
        let again = json!({"b": sales["b"].clone(), "a": sales["a"].clone(), "c": sales["a"].clone()});
        let (status, body) = sync(&app, &token, again).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!((id(&body["baskets"]["a"]), id(&body["baskets"]["b"]), id(&body["baskets"]["c"])), (id(a), id(b), id(a)));
        assert!(body["api"]["message"]["success"].to_string().contains("was already recorded as basket"), "{body}");
        assert_eq!(stock(&app, &token, store, latte).await.2, -1, "a repeat moves no stock");
        assert_eq!(shortfall_events(&app, latte).await, 1);
        let (_, body) = send(&app, Method::GET, "/basket", &token, &[("sessionIds", &session.to_string())], None).await;
        assert_eq!(body["baskets"].as_object().unwrap().len(), 2, "{body}");

        // The same clientId with another body is refused, saying why.
        let mut changed = sales["a"].clone();
        changed["basketProducts"]["l"]["quantity"] = json!(3);
        let (status, body) = sync(&app, &token, json!({"a": changed})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.to_string().contains(&format!("clientId: sale {} was recorded as basket {} from a different body", uuid(1), id(a))), "{body}");

        // A session closed meanwhile still takes its sale; the Z-report does not change.
        let (status, body) = send(&app, Method::POST, "/register/session", &token, &[],
            Some(json!({"sessions": {"k": {"id": session, "closed": true, "countedCash": 600}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let before = report(&app, &token, session).await;
        assert!(before.get("supplementary").is_none(), "{before}");
        let late = json!({"l": {"clientId": uuid(3), "occurredAt": iso(sold_at + 120_000), "storeId": store, "registerId": till,
            "sessionId": session, "basketProducts": {"l": {"productId": latte, "quantity": 1, "price": "300"}},
            "payments": {"p": {"type": "CASH", "amount": 300}}}});
        let (status, body) = sync(&app, &token, late).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["baskets"]["l"]["sessionId"], session);
        assert!(warnings(&body["baskets"]["l"]).contains(&"sessionClosed".to_owned()), "{body}");
        let after = report(&app, &token, session).await;
        assert_eq!(after["figures"], before["figures"], "a closed Z-report never changes");
        assert_eq!(after["kind"], "Z");
        let late_id = id(&body["baskets"]["l"]);
        assert_eq!(after["supplementary"]["basketIds"], json!([late_id]), "{after}");
        assert_eq!(after["supplementary"]["figures"]["sales"], json!({"count": 1, "quantity": 1, "amount": 300, "tax": 50}), "{after}");
        assert_eq!(after["supplementary"]["figures"]["payments"]["CASH"]["amount"], 300, "{after}");
        let metrics = app.metrics_text().await;
        assert!(metrics.contains("offline_sales_received_total 3"), "{metrics}");
        assert!(metrics.contains("stock_shortfalls_total 3"), "{metrics}");
    }

    async fn a_basket_created_with_a_client_id_is_made_once(app) {
        let token = app.owner_token().await;
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let store = app.tenant("demo").stores["high-street"];
        let latte = product(&app, &token, "Latte", "300").await;
        let sold_at = merchantd::domain::now_millis() - HOUR;
        let kept = SHOUTED.to_ascii_lowercase();
        let basket = json!({"clientId": SHOUTED, "occurredAt": iso(sold_at), "storeId": store,
            "basketProducts": {"l": {"productId": latte, "quantity": 1}}});
        let first = create(&app, &token, "/basket", "baskets", basket.clone()).await;
        assert_eq!((first["clientId"].as_str(), first["occurredAt"].as_str()), (Some(kept.as_str()), Some(iso(sold_at).as_str())), "{first}");

        // Sent again (a retry after a lost answer), twice in one batch: the same basket, once.
        let (status, body) = send(&app, Method::POST, "/basket", &token, &[],
            Some(json!({"baskets": {"a": basket.clone(), "b": basket.clone()}}))).await;
        assert!(status.is_success(), "{body}");
        assert_eq!((id(&body["baskets"]["a"]), id(&body["baskets"]["b"])), (id(&first), id(&first)), "{body}");
        assert!(body.to_string().contains(&format!("clientId {kept} already made basket {}", id(&first))), "{body}");
        let (_, all) = send(&app, Method::GET, "/basket", &token, &[], None).await;
        assert_eq!(all["baskets"].as_object().unwrap().len(), 1, "{all}");

        // A line named by its clientId is changed, not added again, however often it is sent.
        let lines = json!({"baskets": {"a": {"id": id(&first),
            "basketProducts": {"x": {"productId": latte, "quantity": 1, "clientId": uuid(34)}}}}});
        let (status, body) = send(&app, Method::POST, "/basket", &token, &[], Some(lines.clone())).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let line = body["baskets"]["a"]["basketProducts"].as_object().unwrap().values().next().unwrap().clone();
        assert_eq!(line["clientId"], uuid(34), "{body}");
        let (_, body) = send(&app, Method::POST, "/basket", &token, &[], Some(lines)).await;
        let again = body["baskets"]["a"]["basketProducts"].as_object().unwrap();
        assert_eq!((again.len(), id(again.values().next().unwrap())), (1, id(&line)), "{body}");

        // A payment made under its clientId is taken once, at its time at the till.
        let payment = json!({"basketId": id(&first), "type": "CASH", "amount": 300, "completed": true,
            "clientId": uuid(33), "occurredAt": iso(sold_at)});
        let (status, body) = send(&app, Method::POST, "/transaction", &token, &[],
            Some(json!({"transactions": {"p": payment.clone(), "q": payment.clone()}}))).await;
        assert!(status.is_success(), "{body}");
        let paid = &body["transactions"]["p"];
        assert_eq!((id(&body["transactions"]["q"]), paid["completeDate"].as_str()), (id(paid), Some(iso(sold_at).as_str())), "{body}");
        let (_, body) = send(&app, Method::POST, "/transaction", &token, &[], Some(json!({"transactions": {"p": payment}}))).await;
        assert_eq!(id(&body["transactions"]["p"]), id(paid), "{body}");
        let (_, body) = send(&app, Method::GET, "/transaction", &token, &[("basketIds", &id(&first).to_string())], None).await;
        assert_eq!(body["transactions"].as_object().unwrap().len(), 1, "{body}");

        // Completed, it counts at its time of sale; the repeat still answers it as it is now.
        let (status, body) = send(&app, Method::POST, "/basket", &token, &[],
            Some(json!({"baskets": {"c": {"id": id(&first), "completed": true}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["baskets"]["c"]["completeDate"], iso(sold_at), "{body}");
        let (_, body) = send(&app, Method::POST, "/basket", &token, &[], Some(json!({"baskets": {"a": basket.clone()}}))).await;
        assert_eq!(body["baskets"]["a"]["completed"], true, "{body}");

        // The same clientId with another body is refused; a clientId never changes.
        let mut changed = basket.clone();
        changed["basketProducts"]["l"]["quantity"] = json!(2);
        let (status, body) = send(&app, Method::POST, "/basket", &token, &[], Some(json!({"baskets": {"a": changed}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.to_string().contains(&format!("clientId: {kept} already made basket {} from a different body", id(&first))), "{body}");
        // What a read shows may be sent back: a null clientId on a record without one changes nothing.
        let plain = create(&app, &token, "/basket", "baskets", json!({"storeId": store})).await;
        let (status, body) = send(&app, Method::PUT, "/basket", &token, &[], Some(json!({"baskets": {"a":
            {"id": id(&plain), "clientId": null, "occurredAt": null, "note": "echo"}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let twice = json!({"productId": latte, "quantity": 1, "clientId": uuid(35)});
        let (status, body) = send(&app, Method::PUT, "/basket", &token, &[], Some(json!({"baskets": {"a":
            {"id": id(&plain), "basketProducts": {"x": twice.clone(), "y": twice}}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.to_string().contains(&format!("another line of this write has clientId {}", uuid(35))), "{body}");
        let open = create(&app, &token, "/basket", "baskets", json!({"storeId": store, "clientId": uuid(31)})).await;
        let (status, body) = send(&app, Method::POST, "/basket", &token, &[],
            Some(json!({"baskets": {"a": {"id": id(&open), "clientId": uuid(32)}, "b": {"storeId": store, "clientId": "till-7"},
                        "c": {"storeId": store, "occurredAt": iso(merchantd::domain::now_millis() + 24 * HOUR)}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        for problem in ["clientId: a basket's clientId is set when it is created.", "clientId: \\\"till-7\\\" is not a UUID", "occurredAt: lies in the future"] {
            assert!(body.to_string().contains(problem), "{problem}: {body}");
        }

        // Another merchant's clientId is theirs: the same UUID makes a basket of each.
        let their_store = app.tenant("second").stores.values().next().copied().unwrap();
        let theirs = create(&app, &other, "/basket", "baskets", json!({"storeId": their_store, "clientId": kept})).await;
        assert_ne!(id(&theirs), id(&first));
        let (_, body) = send(&app, Method::GET, "/basket", &other, &[("basketIds", &id(&first).to_string())], None).await;
        assert!(body["baskets"].as_object().is_none_or(|b| b.is_empty()), "{body}");
    }

    async fn a_sale_sent_again_with_its_client_id_in_another_case_is_the_same_sale(app) {
        let token = app.owner_token().await;
        let store = app.tenant("demo").stores["high-street"];
        let latte = product(&app, &token, "Latte", "300").await;
        receive(&app, &token, store, latte, 5).await;
        let kept = SHOUTED.to_ascii_lowercase();
        let sold_at = merchantd::domain::now_millis() - HOUR;
        let sale = |client_id: &str| json!({"clientId": client_id, "occurredAt": iso(sold_at), "storeId": store,
            "basketProducts": {"l": {"productId": latte, "quantity": 1, "price": "300"}},
            "payments": {"p": {"type": "CASH", "amount": 300}}});

        // Synced in upper case, then again in lower case: one sale.
        let (status, first) = sync(&app, &token, json!({"a": sale(SHOUTED)})).await;
        assert_eq!(status, StatusCode::CREATED, "{first}");
        let basket = id(&first["baskets"]["a"]);
        assert_eq!(first["baskets"]["a"]["clientId"], kept, "{first}");
        let (status, again) = sync(&app, &token, json!({"a": sale(&kept)})).await;
        assert_eq!(status, StatusCode::CREATED, "{again}");
        assert_eq!(id(&again["baskets"]["a"]), basket, "{again}");
        assert!(again["api"]["message"]["success"].to_string().contains(&format!("Sale {kept} was already recorded as basket {basket}.")), "{again}");
        assert_eq!(stock(&app, &token, store, latte).await.2, 4, "a repeat moves no stock");
        assert!(app.metrics_text().await.contains("offline_sales_received_total 1"), "one sale received");

        // Created online in upper case, then again in lower case, a line's clientId too: one basket.
        let online = |client_id: &str, line: &str| json!({"clientId": client_id, "occurredAt": iso(sold_at), "storeId": store,
            "basketProducts": {"l": {"productId": latte, "quantity": 1, "clientId": line}}});
        let shouted_line = "6F9619FF-8B86-D011-B42D-00CF4FC964FF";
        let made = create(&app, &token, "/basket", "baskets", online(&SHOUTED.replace("0D9C", "1D9C"), shouted_line)).await;
        let (status, body) = send(&app, Method::POST, "/basket", &token, &[], Some(json!({"baskets":
            {"a": online(&kept.replace("0d9c", "1d9c"), &shouted_line.to_ascii_lowercase())}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(id(&body["baskets"]["a"]), id(&made), "{body}");
        assert!(body.to_string().contains(&format!("already made basket {}; nothing was written again", id(&made))), "{body}");
        let (_, all) = send(&app, Method::GET, "/basket", &token, &[], None).await;
        assert_eq!(all["baskets"].as_object().unwrap().len(), 2, "{all}");
        assert_eq!(stock(&app, &token, store, latte).await.2, 4, "an open basket moves no stock");
    }

    async fn what_the_till_knew_is_still_checked(app) {
        let token = app.owner_token().await;
        let store = app.tenant("demo").stores["high-street"];
        let latte = product(&app, &token, "Latte", "300").await;
        let till = id(&create(&app, &token, "/register", "registers", json!({"storeId": store, "name": "A"})).await);
        let other_till = id(&create(&app, &token, "/register", "registers", json!({"storeId": store, "name": "B"})).await);
        let other_session = id(&create(&app, &token, "/register/session", "sessions", json!({"registerId": other_till, "openingFloat": 0})).await);
        let now = merchantd::domain::now_millis();
        let line = json!({"l": {"productId": latte, "quantity": 1}});
        let (status, body) = sync(&app, &token, json!({
            "wrongSession": {"clientId": uuid(10), "occurredAt": iso(now), "storeId": store, "registerId": till, "sessionId": other_session, "basketProducts": line},
            "noClient": {"occurredAt": iso(now), "storeId": store, "basketProducts": line},
            "future": {"clientId": uuid(11), "occurredAt": iso(now + 24 * HOUR), "storeId": store, "basketProducts": line},
            "unknownProduct": {"clientId": uuid(12), "occurredAt": iso(now), "storeId": store, "basketProducts": {"l": {"productId": 999_999_999, "quantity": 1}}}
        })).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        let text = body.to_string();
        for problem in [
            format!("sessionId: session {other_session} is not a session of register {till}."),
            "clientId: required: the UUID the till gave the sale.".to_owned(),
            "occurredAt: lies in the future".to_owned(),
            "basketProducts.l.productId: 999999999 is not a product of this merchant.".to_owned(),
        ] {
            assert!(text.contains(&problem), "{problem}: {body}");
        }
        let (status, body) = send(&app, Method::GET, "/stock/movement", &token, &[("movementTo", "yesterday")], None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(body.to_string().contains("productIds: the header is missing."), "{body}");
        assert!(body.to_string().contains("movementTo: \\\"yesterday\\\" is not a date-time"), "{body}");
        let (status, body) = send(&app, Method::POST, "/basket/sync", &token, &[], Some(json!({"sales": []}))).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(shortfall_events(&app, latte).await, 0);
    }

    async fn another_merchants_ids_and_sales_are_out_of_reach(app) {
        let token = app.owner_token().await;
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let store = app.tenant("demo").stores["high-street"];
        let their_store = app.tenant("second").stores.values().next().copied().unwrap();
        let latte = product(&app, &token, "Latte", "300").await;
        let theirs = product(&app, &other, "Tea", "200").await;
        let now = merchantd::domain::now_millis();
        let sale = |store: i64, product: i64| json!({"clientId": uuid(20), "occurredAt": iso(now), "storeId": store,
            "basketProducts": {"l": {"productId": product, "quantity": 1}}});
        // Their store, their product: unknown ids here.
        let (status, body) = sync(&app, &token, json!({"a": sale(their_store, latte), "b": sale(store, theirs)})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.to_string().contains(&format!("storeId: {their_store} is not a store of this merchant.")), "{body}");
        assert!(body.to_string().contains(&format!("basketProducts.l.productId: {theirs} is not a product of this merchant.")), "{body}");
        // A clientId is unique per merchant: the same UUID makes a basket of each.
        let (status, mine) = sync(&app, &token, json!({"a": sale(store, latte)})).await;
        assert_eq!(status, StatusCode::CREATED, "{mine}");
        let (status, body) = sync(&app, &other, json!({"a": sale(their_store, theirs)})).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_ne!(id(&body["baskets"]["a"]), id(&mine["baskets"]["a"]));
        assert!(body["api"]["message"]["success"].to_string().contains("recorded as basket"), "{body}");
        assert!(!body.to_string().contains("already"), "{body}");
        let (_, body) = send(&app, Method::GET, "/basket", &other, &[("basketIds", &id(&mine["baskets"]["a"]).to_string())], None).await;
        assert_eq!(body["baskets"], json!({}), "{body}");
    }
}

backend_tests_with! { |s| s.sales_window = 4;
    async fn a_group_of_repeats_larger_than_the_cached_window_answers_every_sale(app) {
        // The writer caches the 4 most recent finished sales. A sync repeating 12 older ones
        // brings all 12 back from history for its group: none may be pushed out before it
        // is matched (it would be taken for a new sale, and the unique index would fail the
        // whole sync).
        let token = app.owner_token().await;
        let store = app.tenant("demo").stores["high-street"];
        let latte = product(&app, &token, "Latte", "300").await;
        let now = merchantd::domain::now_millis();
        let sales: serde_json::Map<String, Value> = (0..12)
            .map(|n| (format!("s{n}"), json!({"clientId": uuid(100 + n), "occurredAt": iso(now - i64::from(n) * 1000),
                "storeId": store, "basketProducts": {"l": {"productId": latte, "quantity": 1, "price": "300"}}})))
            .collect();
        let (status, first) = sync(&app, &token, Value::Object(sales.clone())).await;
        assert_eq!(status, StatusCode::CREATED, "{first}");
        let (status, again) = sync(&app, &token, Value::Object(sales)).await;
        assert_eq!(status, StatusCode::CREATED, "{again}");
        for n in 0..12 {
            let key = format!("s{n}");
            assert_eq!(id(&again["baskets"][&key]), id(&first["baskets"][&key]), "{again}");
        }
        assert_eq!(again["api"]["message"]["success"].to_string().matches("was already recorded as basket").count(), 12, "{again}");
        assert_eq!(stock(&app, &token, store, latte).await.2, -12, "the repeats moved no stock");
    }
}
