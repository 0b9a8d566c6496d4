//! `/stock/reconcile` (api-reference.md Stock reconciliation; examples §2.14): required GET
//! headers, completing books shortfall and surplus once, a completed count never changes (111),
//! another merchant's counts, stores and products do not exist here, and the GET totals.

use chrono::{Duration, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::send;
use crate::helpers::{dump_database, TestApp};
use crate::shop_day::{count, create, header_time, id, product, receive, stock, store};
use crate::{backend_tests, backend_tests_with};

const PATH: &str = "/stock/reconcile";

/// `from`/`to` around now, and `storeIds`.
fn window(stores: &str) -> Vec<(&'static str, String)> {
    let now = Utc::now();
    vec![
        ("from", header_time(now - Duration::hours(1))),
        ("to", header_time(now + Duration::hours(1))),
        ("storeIds", stores.to_owned()),
    ]
}

async fn get(
    app: &TestApp,
    token: &str,
    headers: &[(&'static str, String)],
) -> (StatusCode, Value) {
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    send(app, Method::GET, PATH, token, &headers, None).await
}

fn details(body: &Value) -> String {
    body["error"]["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap().to_owned())
        .collect::<Vec<_>>()
        .join(" | ")
}

backend_tests! {
    async fn every_missing_or_malformed_header_is_named(app) {
        let token = app.owner_token().await;
        let (status, body) = get(&app, &token, &[]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(body["api"]["message"]["error"]["101"]["code"], "validationError");
        let all = details(&body);
        for name in ["from: the header is missing", "to: the header is missing", "storeIds: the header is missing"] {
            assert!(all.contains(name), "{name} in {all}");
        }

        let (status, body) = get(&app, &token, &[("from", "2026-03-28T00:00:00Z".into()), ("to", "2026-03-29 00:00:00".into()), ("storeIds", "9,abc".into())]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let all = details(&body);
        assert!(all.contains("from: \"2026-03-28T00:00:00Z\" is not a date-time"), "{all}");
        assert!(all.contains("storeIds: item \"abc\""), "{all}");
        assert!(!all.contains("to:"), "{all}");

        let (status, body) = get(&app, &token, &[("from", "2026-03-29 00:00:00".into()), ("to", "2026-03-28 00:00:00".into()), ("storeIds", "9".into())]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(details(&body).contains("from: 2026-03-29 00:00:00 is after to"), "{body}");

        let (status, body) = get(&app, &token, &[("from", "2026-03-28 00:00:00".into()), ("to", "2026-03-28 00:00:00".into()), ("storeIds", "9".into())]).await;
        assert_eq!(status, StatusCode::OK, "an empty range is not an error: {body}");
    }

    async fn a_completed_count_never_changes(app) {
        let token = app.owner_token().await;
        let shop = app.tenant("demo").stores["high-street"];
        let latte = product(&app, &token, "Latte", "300").await;
        receive(&app, &token, shop, latte, 10).await;
        let done = count(&app, &token, shop, latte, 8).await;
        let n = id(&done);
        // Identifiers taken for refused objects are skipped, not stored: leave the allocator out;
        // and the token's "last used", which the gate records on its own time.
        let data = || async {
            let mut rows = dump_database(&app.sql).await;
            rows.retain(|r| !r.starts_with("id_allocator") && !r.starts_with("oauth_families"));
            rows
        };
        let before = data().await;

        for (method, object) in [
            (Method::POST, json!({"id": n, "note": "recount"})),
            (Method::PUT, json!({"id": n, "products": {latte.to_string(): {"productId": latte, "quantity": 10}}})),
            (Method::POST, json!({"id": n, "completed": true})),
        ] {
            let (status, body) = send(&app, method, PATH, &token, &[], Some(json!({"stockReconciliations": {"x": object}}))).await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
            let record = &body["api"]["message"]["error"]["111:x"];
            assert_eq!(record["code"], "alreadyComplete", "{body}");
            assert_eq!(record["details"], format!("Count {n} is completed and cannot change."));
        }
        let (status, _) = send(&app, Method::DELETE, PATH, &token, &[("stockReconciliationIds", &n.to_string())], None).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(data().await, before, "nothing changed");
        assert_eq!(stock(&app, &token, shop, latte).await, (10, 2, 8));
    }

    async fn an_open_count_books_nothing_until_completed(app) {
        let token = app.owner_token().await;
        let shop = app.tenant("demo").stores["high-street"];
        let latte = product(&app, &token, "Latte", "300").await;
        let scone = product(&app, &token, "Scone", "250").await;
        receive(&app, &token, shop, latte, 10).await;
        let open = create(&app, &token, PATH, "stockReconciliations", json!({"storeId": shop,
            "products": {latte.to_string(): {"productId": latte, "quantity": 12, "costPrice": "41.7", "vatPercentage": "0.200"}}})).await;
        assert_eq!(open["completed"], false);
        let line = &open["products"][latte.to_string()];
        assert_eq!((line["expected"].clone(), line["counted"].clone(), line["costPrice"].clone()), (Value::Null, json!(12), json!("41.7")));
        assert_eq!(stock(&app, &token, shop, latte).await, (10, 0, 10));

        // Counted aisle by aisle: the second write adds a product and keeps the first.
        let (status, body) = send(&app, Method::PUT, PATH, &token, &[], Some(json!({"stockReconciliations": {"s": {"id": id(&open),
            "completed": true, "products": {scone.to_string(): {"productId": scone, "quantity": 4}}}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let done = &body["stockReconciliations"]["s"];
        assert_eq!(done["products"][latte.to_string()]["discrepancy"], 2);
        assert_eq!(done["products"][scone.to_string()]["discrepancy"], 4);
        assert_eq!(done["wastageBasketId"], Value::Null);
        let entries = done["surplusEntryIds"].as_array().unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(body["api"]["message"]["success"]["201:s"]["details"],
            format!("Count {}: 6 units over, booked as received stock.", id(&open)));
        assert_eq!(stock(&app, &token, shop, latte).await, (12, 0, 12));
        assert_eq!(stock(&app, &token, shop, scone).await, (4, 0, 4));
        let (rows,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM stock_surplus_entries WHERE reconciliation_id = $1")
            .bind(id(&open)).fetch_one(&app.sql).await.unwrap();
        assert_eq!(rows, 2);
    }

    async fn bad_counts_are_refused_with_each_problem_named(app) {
        let token = app.owner_token().await;
        let shop = app.tenant("demo").stores["high-street"];
        let latte = product(&app, &token, "Latte", "300").await;
        let (status, body) = send(&app, Method::POST, PATH, &token, &[], Some(json!({"stockReconciliations": {
            "a": {"products": {latte.to_string(): {"productId": latte, "quantity": -1}}, "colour": "red"},
            "b": {"storeId": shop, "completed": true},
            "c": {"storeId": shop, "products": {"123456789": {"productId": 123456789, "quantity": 1}}}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        let errors = &body["api"]["message"]["error"];
        let a = errors["110:a"]["details"].as_str().unwrap();
        for needle in ["storeId: required field is missing", "quantity: must be a non-negative integer", "colour: unknown field"] {
            assert!(a.contains(needle), "{needle} in {a}");
        }
        assert!(errors["110:b"]["details"].as_str().unwrap().contains("without products"));
        assert!(errors["110:c"]["details"].as_str().unwrap().contains("123456789 is not a product"));
        let (rows,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM stock_reconciliations").fetch_one(&app.sql).await.unwrap();
        assert_eq!(rows, 0);
    }

    async fn another_merchants_counts_stores_and_products_do_not_exist_here(app) {
        let demo = app.owner_token().await;
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let shop = app.tenant("demo").stores["high-street"];
        let market = app.tenant("second").stores["market"];
        let latte = product(&app, &demo, "Latte", "300").await;
        receive(&app, &demo, shop, latte, 10).await;
        let done = count(&app, &demo, shop, latte, 7).await;
        let n = id(&done);

        // Read: their GET of our store finds nothing, not even the store's key.
        let (status, body) = get(&app, &other, &window(&format!("{shop},{market}"))).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["stockReconciliations"], json!({}));
        assert_eq!(body["wastage"], json!({market.to_string(): {}}));
        assert_eq!(body["surplus"], json!({market.to_string(): {}}));

        // Write: our count, store and product are ids that do not exist for them.
        let (status, body) = send(&app, Method::POST, PATH, &other, &[], Some(json!({"stockReconciliations": {
            "u": {"id": n, "note": "mine now"},
            "s": {"storeId": shop},
            "p": {"storeId": market, "products": {latte.to_string(): {"productId": latte, "quantity": 1}}}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        let errors = &body["api"]["message"]["error"];
        assert_eq!(errors["110:u"]["details"], format!("id: count {n} does not exist."));
        assert!(errors["110:s"]["details"].as_str().unwrap().contains(&format!("{shop} is not a store of this merchant")));
        assert!(errors["110:p"]["details"].as_str().unwrap().contains(&format!("{latte} is not a product of this merchant")));
        let (status, _) = send(&app, Method::DELETE, PATH, &other, &[("stockReconciliationIds", &n.to_string())], None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);

        // Ours is intact, and their stock never moved.
        let (_, body) = get(&app, &demo, &window(&shop.to_string())).await;
        assert_eq!(body["stockReconciliations"][n.to_string()], done);
        let (rows,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM stock_levels WHERE merchant_id = $1")
            .bind(app.tenant("second").id).fetch_one(&app.sql).await.unwrap();
        assert_eq!(rows, 0);
    }

    async fn the_get_totals_wastage_and_surplus_per_store_and_product(app) {
        let token = app.owner_token().await;
        let a = app.tenant("demo").stores["high-street"];
        let b = store(&app, &token, "Harbourside", "Europe/London").await;
        let latte = product(&app, &token, "Latte", "300").await;
        let scone = product(&app, &token, "Scone", "250").await;
        receive(&app, &token, a, latte, 20).await;
        receive(&app, &token, b, scone, 5).await;
        count(&app, &token, a, latte, 18).await;
        count(&app, &token, a, latte, 15).await;
        let open = create(&app, &token, PATH, "stockReconciliations", json!({"storeId": a,
            "products": {latte.to_string(): {"productId": latte, "quantity": 0}}})).await;
        let over = count(&app, &token, b, scone, 9).await;
        assert_eq!(stock(&app, &token, a, latte).await, (20, 5, 15));
        assert_eq!(stock(&app, &token, b, scone).await, (9, 0, 9));

        let (status, body) = get(&app, &token, &window(&format!("{a},{b}"))).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let listed = body["stockReconciliations"].as_object().unwrap();
        assert_eq!(listed.len(), 3);
        assert!(!listed.contains_key(&id(&open).to_string()), "open counts are not listed");
        assert_eq!(body["wastage"], json!({a.to_string(): {latte.to_string(): 5}, b.to_string(): {}}));
        assert_eq!(body["surplus"], json!({a.to_string(): {}, b.to_string(): {scone.to_string(): 4}}));

        // Only the stores asked for, and only the range.
        let (_, body) = get(&app, &token, &window(&b.to_string())).await;
        assert_eq!(body["stockReconciliations"].as_object().unwrap().keys().collect::<Vec<_>>(), vec![&id(&over).to_string()]);
        let later = Utc::now() + Duration::hours(2);
        let (_, body) = get(&app, &token, &[("from", header_time(later)), ("to", header_time(later + Duration::hours(1))), ("storeIds", a.to_string())]).await;
        assert_eq!(body["stockReconciliations"], json!({}));
        assert_eq!(body["wastage"], json!({a.to_string(): {}}));
    }
}

backend_tests_with! { |s| s.merchant_idle_secs = 1;
    async fn a_count_after_the_merchant_restarts_compares_with_the_stored_stock(app) {
        let token = app.owner_token().await;
        let shop = app.tenant("demo").stores["high-street"];
        let latte = product(&app, &token, "Latte", "300").await;
        receive(&app, &token, shop, latte, 50).await;
        let first = count(&app, &token, shop, latte, 45).await;
        // Idle: the supervisor and its store actors stop; the next write starts them again and
        // must not read the stock as empty while the store's actor is still loading it.
        tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
        let second = count(&app, &token, shop, latte, 44).await;
        let line = &second["products"][latte.to_string()];
        assert_eq!((line["expected"].as_i64(), line["discrepancy"].as_i64()), (Some(45), Some(-1)), "{second}");
        assert_eq!(stock(&app, &token, shop, latte).await, (50, 6, 44));
        // And both counts, with their wastage baskets, were reloaded from the database.
        let (_, body) = get(&app, &token, &window(&shop.to_string())).await;
        assert_eq!(body["stockReconciliations"][id(&first).to_string()], first);
        assert_eq!(body["wastage"], json!({shop.to_string(): {latte.to_string(): 6}}));
        let wastage = first["wastageBasketId"].as_i64().unwrap().to_string();
        let (_, body) = send(&app, Method::GET, "/basket", &token, &[("basketIds", &wastage)], None).await;
        let basket = &body["baskets"][&wastage];
        assert_eq!(basket["type"], "wastage");
        // Priced like every basket, and kept through the restart: 5 units at 3.00, VAT 20 %
        // included (1500 / 6 = 250), no promotion (a wastage basket takes none).
        let receipt = &basket["receipt"];
        assert_eq!((receipt["subtotal"].as_i64(), receipt["tax"].as_i64(), receipt["discount"].as_i64()),
            (Some(1500), Some(250), Some(0)), "{basket}");
        assert_eq!(receipt["lines"][0]["lineId"], basket["basketProducts"].as_object().unwrap().values().next().unwrap()["id"]);
        assert_eq!(basket["totalTax"], "250");
    }
}
