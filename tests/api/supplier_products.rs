//! `/supplier/product`: a record of the registry's `plain` kind, whose declaration, migration
//! and registry line are all there is of it (docs/architecture.md, "Adding a record type").
//! Everything else here comes from the declaration: the write's checks and limits, the ids it
//! must name, the filters, the soft delete, the events and the isolation between merchants.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_tests;
use crate::helpers::{send, TestApp};
use crate::shop_day::product;

const PATH: &str = "/supplier/product";

async fn supplier(app: &TestApp, token: &str, name: &str) -> i64 {
    let (status, body) = send(
        app,
        Method::POST,
        "/supplier",
        token,
        &[],
        Some(json!({"suppliers": {"s": {"name": name}}})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body["suppliers"]["s"]["id"].as_i64().unwrap()
}

async fn write(app: &TestApp, token: &str, object: Value) -> (StatusCode, Value) {
    send(
        app,
        Method::POST,
        PATH,
        token,
        &[],
        Some(json!({"supplierProducts": {"k": object}})),
    )
    .await
}

backend_tests! {
    async fn a_supplier_product_is_written_read_filtered_and_deleted_by_its_declaration(app) {
        let token = app.owner_token().await;
        let beans = supplier(&app, &token, "Bean Brothers").await;
        let dairy = supplier(&app, &token, "Dairy Co").await;
        let latte = product(&app, &token, "Latte", "3.00").await;
        let (status, body) = write(&app, &token, json!({
            "supplierId": beans, "productId": latte, "code": "BB-1001", "unitCost": "41.5"})).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let made = &body["supplierProducts"]["k"];
        let id = made["id"].as_i64().unwrap();
        let keys: Vec<&str> = made.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["id", "supplierId", "productId", "code", "unitCost", "activeDate", "deleteDate"]);
        assert_eq!(made["unitCost"], "41.5");
        assert_eq!(body["api"]["message"]["success"]["200:k"]["details"], format!("Supplier product {id} created."));
        let (_, other) = write(&app, &token, json!({"supplierId": dairy, "productId": latte})).await;
        let milk = other["supplierProducts"]["k"]["id"].as_i64().unwrap();

        // The declared filters: by supplier, by product, by id.
        let (status, body) = send(&app, Method::GET, PATH, &token, &[("supplierIds", &beans.to_string())], None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["supplierProducts"].as_object().unwrap().len(), 1);
        assert_eq!(body["supplierProducts"][id.to_string()]["code"], "BB-1001");
        let (_, body) = send(&app, Method::GET, PATH, &token, &[("productIds", &latte.to_string())], None).await;
        assert_eq!(body["supplierProducts"].as_object().unwrap().len(), 2);

        // An update keeps what it leaves out; the ids stay checked.
        let (status, body) = write(&app, &token, json!({"id": id, "unitCost": "40"})).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["supplierProducts"]["k"]["code"], "BB-1001");
        assert_eq!(body["supplierProducts"]["k"]["unitCost"], "40");

        let (status, _) = send(&app, Method::DELETE, PATH, &token, &[("supplierProductIds", &id.to_string())], None).await;
        assert_eq!(status, StatusCode::RESET_CONTENT);
        let (_, body) = send(&app, Method::GET, PATH, &token, &[], None).await;
        let left: Vec<&String> = body["supplierProducts"].as_object().unwrap().keys().collect();
        assert_eq!(left, [&milk.to_string()]);
    }

    async fn a_supplier_product_is_refused_what_its_declaration_refuses(app) {
        let token = app.owner_token().await;
        let beans = supplier(&app, &token, "Bean Brothers").await;
        let latte = product(&app, &token, "Latte", "3.00").await;
        // A create gives every required field.
        let (status, body) = write(&app, &token, json!({"productId": latte})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.to_string().contains("supplierId: required field is missing."), "{body}");
        // An id names a live record of the collection it refers to.
        let (status, body) = write(&app, &token, json!({"supplierId": latte, "productId": latte})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.to_string().contains(&format!("supplierId: {latte} is not one of the merchant's suppliers.")), "{body}");
        // The declared limits, at the limit and one past it.
        let at_limit = "c".repeat(64);
        let (status, body) = write(&app, &token, json!({"supplierId": beans, "productId": latte, "code": at_limit})).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let past = "c".repeat(65);
        let (status, body) = write(&app, &token, json!({"supplierId": beans, "productId": latte, "code": past})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.to_string().contains("code: at most 64 characters."), "{body}");
        let (status, body) = write(&app, &token, json!({"supplierId": beans, "productId": latte, "unitCost": "-1"})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        let (status, body) = write(&app, &token, json!({"supplierId": beans, "productId": latte, "colour": "red"})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.to_string().contains("colour: unknown field."), "{body}");
    }

    async fn another_merchants_supplier_products_are_out_of_reach(app) {
        let token = app.owner_token().await;
        let beans = supplier(&app, &token, "Bean Brothers").await;
        let latte = product(&app, &token, "Latte", "3.00").await;
        let (_, body) = write(&app, &token, json!({"supplierId": beans, "productId": latte})).await;
        let id = body["supplierProducts"]["k"]["id"].as_i64().unwrap();
        let other = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        // Not read, not written, not deleted; its supplier and product are not the other's to name.
        let (status, body) = send(&app, Method::GET, PATH, &other, &[("supplierProductIds", &id.to_string())], None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["supplierProducts"].as_object().unwrap().len(), 0);
        let (status, body) = write(&app, &other, json!({"id": id, "code": "stolen"})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        let (status, body) = write(&app, &other, json!({"supplierId": beans, "productId": latte})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.to_string().contains("is not one of the merchant's suppliers"), "{body}");
        let (_, body) = send(&app, Method::DELETE, PATH, &other, &[("supplierProductIds", &id.to_string())], None).await;
        let _ = body;
        let (_, body) = send(&app, Method::GET, PATH, &token, &[("supplierProductIds", &id.to_string())], None).await;
        assert_eq!(body["supplierProducts"][id.to_string()]["code"], Value::Null);
        assert_eq!(body["supplierProducts"][id.to_string()]["deleteDate"], Value::Null);
    }
}
