//! Baskets, transactions, orders and invoices (api-reference.md; examples §2.9–§2.13, §3.10):
//! life cycles, stock moved exactly once, and tenant isolation.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_tests;
use crate::contract::Checked;
use crate::helpers::{create_one as create, send, TestApp};

struct Shop {
    token: String,
    store: i64,
    product: i64,
    supplier: i64,
}

/// A latte at £3.00 (20 % VAT) and a supplier, at the demo merchant's High Street store.
async fn shop(app: &TestApp) -> Shop {
    let token = app.owner_token().await;
    let product = create(
        app,
        &token,
        "/product",
        "products",
        json!({"name": "Latte", "instances": {"i": {"price": "300", "taxPercentage": "0.200"}}}),
    )
    .await;
    let supplier = create(
        app,
        &token,
        "/supplier",
        "suppliers",
        json!({"name": "Bean Brothers Ltd"}),
    )
    .await;
    Shop {
        store: app.tenant("demo").stores["high-street"],
        product: product["id"].as_i64().unwrap(),
        supplier: supplier["id"].as_i64().unwrap(),
        token,
    }
}

async fn stock(app: &TestApp, s: &Shop) -> (i64, i64, i64) {
    let (_, body) = send(
        app,
        Method::GET,
        "/product",
        &s.token,
        &[
            ("productIds", &s.product.to_string()),
            ("storeId", &s.store.to_string()),
        ],
        None,
    )
    .await;
    let p = &body["products"][s.product.to_string()];
    (
        p["totalStock"].as_i64().unwrap(),
        p["stockSold"].as_i64().unwrap(),
        p["stockLeft"].as_i64().unwrap(),
    )
}

/// An open basket of `quantity` lattes.
async fn basket(app: &TestApp, s: &Shop, quantity: i64) -> i64 {
    let b = create(app, &s.token, "/basket", "baskets",
        json!({"storeId": s.store, "basketProducts": {"l": {"productId": s.product, "quantity": quantity}}})).await;
    b["id"].as_i64().unwrap()
}

async fn pay(app: &TestApp, s: &Shop, basket: i64, amount: i64) {
    create(
        app,
        &s.token,
        "/transaction",
        "transactions",
        json!({"basketId": basket, "type": "CARD", "amount": amount, "completed": true}),
    )
    .await;
}

backend_tests! {
    async fn an_invoice_received_and_a_basket_sold_move_stock_once(app) {
        let s = shop(&app).await;
        let invoice = create(&app, &s.token, "/invoice", "invoices", json!({"storeId": s.store, "supplierId": s.supplier,
            "reference": "BB-20931", "items": {"i1": {"productId": s.product, "quantity": 100, "unitPrice": "41.7", "vatPercentage": "0.200"}}})).await;
        assert_eq!((invoice["totalPrice"].as_str(), invoice["totalVat"].as_str(), invoice["totalIncVat"].as_str()), (Some("4170"), Some("834"), Some("5004")));
        assert_eq!(stock(&app, &s).await, (0, 0, 0), "an open invoice adds nothing");
        let id = invoice["id"].as_i64().unwrap();
        let (status, body) = send(&app, Method::POST, "/invoice", &s.token, &[], Some(json!({"invoices": {"recv": {"id": id, "completed": true}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["api"]["message"]["success"]["201:recv"]["details"], format!("Invoice {id} received."));
        assert_eq!(stock(&app, &s).await, (100, 0, 100));

        let b = basket(&app, &s, 2).await;
        let (_, body) = send(&app, Method::GET, "/basket", &s.token, &[("basketIds", &b.to_string())], None).await;
        assert_eq!(body["baskets"][b.to_string()]["total"], "600");
        assert_eq!(body["baskets"][b.to_string()]["totalTax"], "100");
        let (status, body) = send(&app, Method::POST, "/basket", &s.token, &[], Some(json!({"baskets": {"done": {"id": b, "completed": true}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(body["api"]["message"]["error"]["110:done"]["details"], "completed: Completed transactions cover 0 of 600.");
        assert_eq!(stock(&app, &s).await, (100, 0, 100), "an unpaid basket stays open and moves nothing");

        pay(&app, &s, b, 600).await;
        let (status, body) = send(&app, Method::POST, "/basket", &s.token, &[], Some(json!({"baskets": {"done": {"id": b, "completed": true}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["api"]["message"]["success"]["201:done"]["details"], format!("Basket {b} completed."));
        assert_eq!(stock(&app, &s).await, (100, 2, 98));
        let (count,): (i64,) = sqlx::query_as("SELECT stock_sold FROM stock_levels WHERE product_id = $1")
            .bind(s.product).fetch_one(&app.sql).await.unwrap();
        assert_eq!(count, 2, "the database holds what the actor shows");

        let order = create(&app, &s.token, "/order", "orders", json!({"basketId": b, "fulfilment": "collection", "customerName": "Alex Morgan"})).await;
        assert_eq!((order["status"].as_str(), order["storeId"].as_i64()), (Some("pending"), Some(s.store)));
        let o = order["id"].as_i64().unwrap();
        for status in ["accepted", "ready", "completed"] {
            let (code, body) = send(&app, Method::PUT, "/order", &s.token, &[], Some(json!({"orders": {"s": {"id": o, "status": status}}}))).await;
            assert_eq!(code, StatusCode::CREATED, "{body}");
        }
        let (_, body) = send(&app, Method::GET, "/order", &s.token, &[("storeIds", &s.store.to_string()), ("completed", "true")], None).await;
        assert!(body["orders"].get(o.to_string()).is_some());
    }

    async fn an_item_rewritten_with_another_scale_is_stored_as_sent(app) {
        let s = shop(&app).await;
        let invoice = create(&app, &s.token, "/invoice", "invoices", json!({"storeId": s.store, "supplierId": s.supplier,
            "items": {"i": {"productId": s.product, "quantity": 2, "unitPrice": "1", "vatPercentage": "0.2"}}})).await;
        let id = invoice["id"].as_i64().unwrap();
        let item = invoice["items"].as_object().unwrap().values().next().unwrap()["id"].as_i64().unwrap();
        // The same item with the same values written with more decimals: equal numbers, but
        // the answer shows what was sent, and so must the database.
        let (status, body) = send(&app, Method::PUT, "/invoice", &s.token, &[], Some(json!({"invoices": {"u": {"id": id,
            "items": {"i": {"id": item, "productId": s.product, "quantity": 2, "unitPrice": "1.00", "vatPercentage": "0.200"}}}}}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let (price, vat): (String, String) = sqlx::query_as(
            "SELECT unit_price, vat_percentage FROM invoice_items WHERE id = $1")
            .bind(item).fetch_one(&app.sql).await.unwrap();
        assert_eq!((price.as_str(), vat.as_str()), ("1.00", "0.200"));
    }

    async fn completed_records_never_change_and_orders_need_completed_baskets(app) {
        let s = shop(&app).await;
        let open = basket(&app, &s, 1).await;
        let (status, body) = send(&app, Method::POST, "/order", &s.token, &[], Some(json!({"orders": {"o1": {"basketId": open, "fulfilment": "collection"}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(body["api"]["message"]["error"]["112:o1"]["code"], "notComplete");

        let b = basket(&app, &s, 1).await;
        pay(&app, &s, b, 300).await;
        send(&app, Method::POST, "/basket", &s.token, &[], Some(json!({"baskets": {"d": {"id": b, "completed": true}}}))).await;
        let (status, body) = send(&app, Method::POST, "/basket", &s.token, &[], Some(json!({"baskets": {"x": {"id": b, "note": "add a cookie"}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(body["api"]["message"]["error"]["111:x"]["details"], format!("Basket {b} is completed and cannot change."));
        let (_, body) = send(&app, Method::GET, "/transaction", &s.token, &[("basketIds", &b.to_string())], None).await;
        let t: i64 = body["transactions"].as_object().unwrap().keys().next().unwrap().parse().unwrap();
        let (status, body) = send(&app, Method::PUT, "/transaction", &s.token, &[], Some(json!({"transactions": {"t": {"id": t, "amount": 1}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(body["api"]["message"]["error"]["111:t"]["code"], "alreadyComplete");
        let (status, _) = send(&app, Method::POST, "/transaction", &s.token, &[], Some(json!({"transactions": {"late": {"basketId": b, "type": "CASH", "amount": 5}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "a completed basket takes no more payments");
        let (status, _) = send(&app, Method::DELETE, "/basket", &s.token, &[("basketIds", &b.to_string())], None).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "a completed basket cannot be deleted");
        let (_, body) = send(&app, Method::GET, "/basket", &s.token, &[("basketIds", &b.to_string())], None).await;
        assert_eq!(body["baskets"][b.to_string()]["note"], Value::Null, "nothing changed");

        let (status, body) = send(&app, Method::DELETE, "/store", &s.token, &[("storeIds", &s.store.to_string())], None).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "the store still has an open basket: {body}");
    }

    async fn twenty_clients_completing_five_hundred_baskets_move_stock_exactly(app) {
        let s = shop(&app).await;
        let mut baskets = Vec::new();
        for i in 0..500 {
            let b = basket(&app, &s, 1 + (i % 3)).await;
            pay(&app, &s, b, 300 * (1 + (i % 3))).await;
            baskets.push((b, 1 + (i % 3)));
        }
        let expected: i64 = baskets.iter().map(|(_, q)| q).sum();
        let chunks: Vec<Vec<(i64, i64)>> = baskets.chunks(25).map(|c| c.to_vec()).collect();
        let clients = chunks.into_iter().map(|chunk| {
            let app = &app;
            let token = s.token.clone();
            async move {
                let mut statuses = Vec::new();
                for (b, _) in chunk {
                    // Each completion is sent twice at once: exactly one may win.
                    let first = app.api(Method::POST, "/basket", &token).json(&json!({"baskets": {"c": {"id": b, "completed": true}}})).checked();
                    let second = app.api(Method::POST, "/basket", &token).json(&json!({"baskets": {"c": {"id": b, "completed": true}}})).checked();
                    let (a, b2) = futures_util::future::join(first, second).await;
                    statuses.push((a.unwrap().status(), b2.unwrap().status()));
                }
                statuses
            }
        });
        let results: Vec<(StatusCode, StatusCode)> = futures_util::future::join_all(clients).await.into_iter().flatten().collect();
        assert_eq!(results.len(), 500);
        for (a, b) in &results {
            let created = [a, b].iter().filter(|s| ***s == StatusCode::CREATED).count();
            assert_eq!(created, 1, "one completion wins, the other is 111: {a} {b}");
        }
        assert_eq!(stock(&app, &s).await, (0, expected, -expected));
        let (sold,): (i64,) = sqlx::query_as("SELECT stock_sold FROM stock_levels WHERE product_id = $1")
            .bind(s.product).fetch_one(&app.sql).await.unwrap();
        assert_eq!(sold, expected);
    }

    async fn another_merchants_sales_records_do_not_exist_here(app) {
        let s = shop(&app).await;
        let b = basket(&app, &s, 1).await;
        pay(&app, &s, b, 300).await;
        let invoice = create(&app, &s.token, "/invoice", "invoices", json!({"storeId": s.store, "supplierId": s.supplier,
            "items": {"i": {"productId": s.product, "quantity": 1, "unitPrice": "1", "vatPercentage": "0"}}})).await;
        let inv = invoice["id"].as_i64().unwrap();
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let theirs_store = app.tenant("second").stores["market"];
        for (path, plural, header, id) in [("/basket", "baskets", "basketIds", b), ("/invoice", "invoices", "invoiceId", inv)] {
            let (_, body) = send(&app, Method::GET, path, &other, &[(header, &id.to_string()), ("deleted", "true")], None).await;
            assert_eq!(body[plural], json!({}), "{path}");
            let (status, body) = send(&app, Method::PUT, path, &other, &[], Some(json!({plural: {"x": {"id": id, "note": "mine"}}}))).await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{path}");
            assert!(body["api"]["message"]["error"]["110:x"]["details"].as_str().unwrap().ends_with("does not exist."));
            let (status, _) = send(&app, Method::DELETE, path, &other, &[(header, &id.to_string())], None).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        }
        // Their ids cannot be used in our records either.
        for (path, plural, object) in [
            ("/transaction", "transactions", json!({"basketId": b, "type": "CASH", "amount": 1})),
            ("/order", "orders", json!({"basketId": b, "fulfilment": "collection"})),
            ("/basket", "baskets", json!({"storeId": s.store})),
            ("/invoice", "invoices", json!({"storeId": theirs_store, "supplierId": s.supplier})),
        ] {
            let (status, _) = send(&app, Method::POST, path, &other, &[], Some(json!({plural: {"x": object}}))).await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{path}");
        }
        let (_, body) = send(&app, Method::GET, "/transaction", &other, &[("basketIds", &b.to_string())], None).await;
        assert_eq!(body["transactions"], json!({}));
        let (_, body) = send(&app, Method::GET, "/basket", &s.token, &[("basketIds", &b.to_string())], None).await;
        assert_eq!(body["baskets"][b.to_string()]["note"], Value::Null, "ours unchanged");
    }
}

crate::backend_tests_with! { |s| s.merchant_idle_secs = 1;
    async fn the_first_read_after_a_merchant_wakes_up_shows_its_stock(app) {
        let s = shop(&app).await;
        let invoice = create(&app, &s.token, "/invoice", "invoices", json!({"storeId": s.store, "supplierId": s.supplier,
            "items": {"i": {"productId": s.product, "quantity": 5, "unitPrice": "1", "vatPercentage": "0"}}, "completed": true})).await;
        assert_eq!(invoice["completed"], true);
        // Idle past merchant_idle_secs: the merchant and its store actors stop.
        tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
        // The very first request wakes it up; the stock must already be there.
        assert_eq!(stock(&app, &s).await, (5, 0, 5));
    }
}

backend_tests! {
    async fn a_completed_invoice_or_order_never_changes(app) {
        let s = shop(&app).await;
        let invoice = create(&app, &s.token, "/invoice", "invoices", json!({"storeId": s.store, "supplierId": s.supplier,
            "items": {"i": {"productId": s.product, "quantity": 4, "unitPrice": "2", "vatPercentage": "0.2"}}, "completed": true})).await;
        let inv = invoice["id"].as_i64().unwrap();
        let (status, body) = send(&app, Method::PUT, "/invoice", &s.token, &[],
            Some(json!({"invoices": {"x": {"id": inv, "items": {"i": {"productId": s.product, "quantity": 40, "unitPrice": "2", "vatPercentage": "0.2"}}}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(body["api"]["message"]["error"]["111:x"]["details"], format!("Invoice {inv} is completed and cannot change."));
        assert_eq!(stock(&app, &s).await, (4, 0, 4), "the stock it received stays as it was");

        let b = basket(&app, &s, 1).await;
        pay(&app, &s, b, 300).await;
        send(&app, Method::POST, "/basket", &s.token, &[], Some(json!({"baskets": {"d": {"id": b, "completed": true}}}))).await;
        let order = create(&app, &s.token, "/order", "orders", json!({"basketId": b, "fulfilment": "table", "tableNumber": "4"})).await;
        let o = order["id"].as_i64().unwrap();
        let (status, _) = send(&app, Method::PUT, "/order", &s.token, &[], Some(json!({"orders": {"c": {"id": o, "status": "cancelled"}}}))).await;
        assert_eq!(status, StatusCode::CREATED);
        let (status, body) = send(&app, Method::PUT, "/order", &s.token, &[], Some(json!({"orders": {"x": {"id": o, "note": "too late"}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(body["api"]["message"]["error"]["111:x"]["code"], "alreadyComplete");
        let (_, body) = send(&app, Method::GET, "/order", &s.token, &[("orderIds", &o.to_string())], None).await;
        assert_eq!((body["orders"][o.to_string()]["note"].clone(), body["orders"][o.to_string()]["completed"].clone()), (Value::Null, json!(true)));

        // Another merchant sees none of it.
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        for (path, plural) in [("/order", "orders"), ("/transaction", "transactions"), ("/invoice", "invoices"), ("/basket", "baskets")] {
            let (status, body) = send(&app, Method::GET, path, &other, &[("deleted", "true")], None).await;
            assert_eq!(status, StatusCode::OK);
            assert_eq!(body[plural], json!({}), "{path}");
        }
        let (status, _) = send(&app, Method::DELETE, "/order", &other, &[("orderIds", &o.to_string())], None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }
}

backend_tests! {
    async fn absurd_prices_and_quantities_are_refused_not_overflowed(app) {
        let s = shop(&app).await;
        for (path, plural, object) in [
            ("/basket", "baskets", json!({"storeId": s.store, "basketProducts": {"l": {"productId": s.product, "quantity": 9_000_000_000_000_000_000i64}}})),
            ("/basket", "baskets", json!({"storeId": s.store, "basketProducts": {"l": {"productId": s.product, "quantity": 1, "price": "99999999999999999999999999"}}})),
            ("/invoice", "invoices", json!({"storeId": s.store, "supplierId": s.supplier, "items": {"i": {"productId": s.product, "quantity": 9_000_000_000_000_000_000i64, "unitPrice": "1", "vatPercentage": "0"}}})),
            ("/transaction", "transactions", json!({"basketId": 1, "type": "CASH", "amount": 9_000_000_000_000_000_000i64})),
        ] {
            let (status, body) = send(&app, Method::POST, path, &s.token, &[], Some(json!({plural: {"x": object}}))).await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{path}: {body}");
        }
        // The merchant's actor is still serving.
        assert_eq!(stock(&app, &s).await, (0, 0, 0));
    }
}
