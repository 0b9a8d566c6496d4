//! Money and tax through the API (docs/money-and-tax.md): receipts a till can print, the
//! calculate call, completion recording exactly what calculate answered, cash rounding, named
//! tax rates from the manifest, and other merchants' baskets and promotions out of reach.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_tests;
use crate::backend_tests_with;
use crate::helpers::{create_one as create, send, TestApp};

/// A Vancouver coffee shop: prices before tax, GST 5 % and PST 7 % added, cash to the nickel.
const CANADA: &str = r#"
[merchant]
key = "canada"
name = "Maple Coffee Inc"

[sales]
prices_include_tax = false
cash_increment = 5
taxes = [{ code = "GST", rate = "0.05" }, { code = "PST", rate = "0.07" }]

[[stores]]
key = "granville"
name = "Granville Street"

[[users]]
email = "owner@maple.test"
password = "maple-owner-password"
role = "owner"

[[applications]]
name = "Maple Till"
client_id = "maple-till"
client_secret = "maple-till-secret-0123"
redirect_uris = ["https://till.maple.test/cb"]
"#;

fn with_canada(settings: &mut merchantd::config::Settings) {
    std::fs::write(settings.tenants.join("canada.toml"), CANADA).expect("write canada.toml");
}

async fn calculate(app: &TestApp, token: &str, basket: Value) -> (StatusCode, Value) {
    send(
        app,
        Method::POST,
        "/basket/calculate",
        token,
        &[],
        Some(json!({"baskets": {"k": basket}})),
    )
    .await
}

async fn pay(app: &TestApp, token: &str, basket: i64, kind: &str, amount: i64) {
    create(
        app,
        token,
        "/transaction",
        "transactions",
        json!({"basketId": basket, "type": kind, "amount": amount, "completed": true}),
    )
    .await;
}

async fn complete(app: &TestApp, token: &str, basket: i64) -> (StatusCode, Value) {
    send(
        app,
        Method::POST,
        "/basket",
        token,
        &[],
        Some(json!({"baskets": {"c": {"id": basket, "completed": true}}})),
    )
    .await
}

/// A receipt without what only a calculation carries (client keys, lines not yet numbered)
/// or only completion records (the cash rounding).
fn comparable(receipt: &Value) -> Value {
    let mut r = receipt.clone();
    for line in r["lines"].as_array_mut().into_iter().flatten() {
        if let Some(line) = line.as_object_mut() {
            line.remove("key");
            line.remove("lineId");
        }
    }
    for discount in r["discounts"].as_array_mut().into_iter().flatten() {
        if let Some(discount) = discount.as_object_mut() {
            discount.remove("lineIds");
        }
    }
    if let Some(r) = r.as_object_mut() {
        r.remove("cashRounding");
    }
    r
}

/// The summary of the basket report of `store` over the hours around now.
async fn report_summary(app: &TestApp, token: &str, store: i64) -> Value {
    let hour = |h: i64| {
        (chrono::Utc::now() + chrono::Duration::hours(h))
            .format("%Y-%m-%d %H:%M:%S")
            .to_string()
    };
    let (from, to, stores) = (hour(-1), hour(1), store.to_string());
    let query = [
        ("reportFrom", from.as_str()),
        ("reportTo", to.as_str()),
        ("storeIds", stores.as_str()),
    ];
    let (status, body) = send(app, Method::GET, "/report/basket", token, &query, None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["basketReport"]["summary"].clone()
}

backend_tests_with! { with_canada;
    async fn a_canadian_cash_sale_adds_gst_and_pst_and_settles_at_the_nickel(app) {
        let token = app.token_for("canada", "owner@maple.test", "read write admin", 3600).await;
        let store = app.tenant("canada").stores["granville"];
        let taxed = |name: &str, price: &str| json!({"name": name,
            "instances": {"i": {"price": price, "taxPercentage": "0", "taxCodes": ["GST", "PST"]}}});
        let muffin = create(&app, &token, "/product", "products", taxed("Muffin", "499")).await;
        assert_eq!(muffin["instances"].as_object().unwrap().values().next().unwrap()["taxCodes"], json!(["GST", "PST"]));
        let cookie = create(&app, &token, "/product", "products", taxed("Cookie", "200")).await;
        let body = json!({"storeId": store, "basketProducts": {
            "m": {"productId": muffin["id"], "quantity": 1},
            "c": {"productId": cookie["id"], "quantity": 2}}});

        let (status, answer) = calculate(&app, &token, body.clone()).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        let receipt = &answer["receipts"]["k"];
        // $8.99; GST 0.4495 → 0.45; PST 0.6293 → 0.63; $10.07, or $10.05 in cash.
        assert_eq!(receipt["taxes"], json!([
            {"code": "GST", "rate": "0.05", "included": false, "taxable": 899, "tax": 45},
            {"code": "PST", "rate": "0.07", "included": false, "taxable": 899, "tax": 63}]));
        assert_eq!((receipt["subtotal"].as_i64(), receipt["total"].as_i64()), (Some(899), Some(1007)));
        assert_eq!(receipt["cash"], json!({"increment": 5, "total": 1005, "rounding": -2}));
        let keys: Vec<&str> = receipt["lines"].as_array().unwrap().iter().map(|l| l["key"].as_str().unwrap()).collect();
        assert_eq!(keys, ["m", "c"], "lines carry their client keys");

        // Paid by card, the cent counts: 1005 is short.
        let by_card = create(&app, &token, "/basket", "baskets", body.clone()).await;
        let by_card = by_card["id"].as_i64().unwrap();
        pay(&app, &token, by_card, "CARD", 1005).await;
        let (status, refused) = complete(&app, &token, by_card).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
        assert!(refused.to_string().contains("Completed transactions cover 1005 of 1007."), "{refused}");

        // Paid in cash, 1005 settles it and the −2 ¢ is recorded.
        let basket = create(&app, &token, "/basket", "baskets", body).await;
        let id = basket["id"].as_i64().unwrap();
        assert_eq!(comparable(&basket["receipt"]), comparable(receipt), "an open basket shows what calculate answered");
        pay(&app, &token, id, "CASH", 1005).await;
        let (status, done) = complete(&app, &token, id).await;
        assert_eq!(status, StatusCode::CREATED, "{done}");
        let done = &done["baskets"]["c"];
        assert_eq!(done["receipt"]["cashRounding"], -2);
        assert_eq!(done["totalTax"], "108");
        assert_eq!(comparable(&done["receipt"]), comparable(receipt), "completion records what calculate answered");
        // Calculating a completed basket answers what completion recorded.
        let (_, again) = calculate(&app, &token, json!({"id": id})).await;
        assert_eq!(again["receipts"]["k"], done["receipt"]);
        // The day's report carries the tax per rate and the cash rounding.
        let summary = report_summary(&app, &token, store).await;
        assert_eq!(summary["taxes"], json!({
            "GST": {"code": "GST", "rate": "0.05", "included": false, "taxable": "899", "tax": "45"},
            "PST": {"code": "PST", "rate": "0.07", "included": false, "taxable": "899", "tax": "63"}}), "{summary}");
        assert_eq!((summary["cashRoundingTotal"].as_str(), summary["payments"]["CASH"].as_str()), (Some("-2"), Some("1005")));

        // A tax code the merchant does not declare is refused with the ones it does.
        let (status, bad) = send(&app, Method::POST, "/product", &token, &[], Some(json!({"products": {"p": {"name": "Tea",
            "instances": {"i": {"price": "100", "taxPercentage": "0", "taxCodes": ["HST"]}}}}}))).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}");
        assert!(bad.to_string().contains(r#"\"HST\" is not one of this merchant's tax codes (GST, PST)."#), "{bad}");
    }
}

backend_tests! {
    async fn receipts_print_whole_minor_units_and_promotions_are_applied(app) {
        let token = app.owner_token().await;
        let store = app.tenant("demo").stores["high-street"];
        let coffee = create(&app, &token, "/product", "products", json!({"name": "Filter coffee",
            "instances": {"i": {"price": "299", "taxPercentage": "0.200"}}})).await;
        let body = json!({"storeId": store, "basketProducts": {"l": {"productId": coffee["id"], "quantity": 1}}});
        let basket = create(&app, &token, "/basket", "baskets", body.clone()).await;
        // 2.99 includes 20 % VAT: 49.83 pence rounds to 50, not "49.8333".
        assert_eq!((basket["total"].as_str(), basket["totalTax"].as_str()), (Some("299"), Some("50")));
        assert_eq!(basket["receipt"]["taxes"][0]["taxable"], 249);

        // An automatic 10 % off everything applies to the next basket; one by hand stacks on
        // nothing unless it says so (the better one for the customer wins).
        let promotion = |title: &str, x: &str, automatic: bool| json!({"title": title, "type": "percentage", "x": x,
            "startDate": "2020-01-01 00:00:00", "automatic": automatic});
        create(&app, &token, "/promotion", "promotions", promotion("Ten off", "10", true)).await;
        let twenty = create(&app, &token, "/promotion", "promotions", promotion("Twenty off", "20", false)).await;
        let (_, answer) = calculate(&app, &token, body.clone()).await;
        assert_eq!(answer["receipts"]["k"]["discount"], 30, "{answer}");
        assert_eq!(answer["receipts"]["k"]["total"], 269);
        let mut with_twenty = body.clone();
        with_twenty["promotionIds"] = json!([twenty["id"]]);
        let (_, answer) = calculate(&app, &token, with_twenty.clone()).await;
        assert_eq!(answer["receipts"]["k"]["discount"], 60);
        assert_eq!(answer["receipts"]["k"]["discounts"][0]["promotionId"], twenty["id"]);

        // Paid what calculate said, the basket completes and records the same receipt.
        let b = create(&app, &token, "/basket", "baskets", with_twenty).await;
        let id = b["id"].as_i64().unwrap();
        pay(&app, &token, id, "CARD", 239).await;
        let (status, done) = complete(&app, &token, id).await;
        assert_eq!(status, StatusCode::CREATED, "{done}");
        assert_eq!(comparable(&done["baskets"]["c"]["receipt"]), comparable(&answer["receipts"]["k"]));
        assert_eq!(done["baskets"]["c"]["promotionIds"], json!([twenty["id"]]));
        // The report carries the discount, per promotion.
        let summary = report_summary(&app, &token, store).await;
        assert_eq!(summary["discountTotal"], "60", "{summary}");
        assert_eq!(summary["promotions"], json!({twenty["id"].to_string(): {"basketCount": 1, "discount": "60"}}));
    }

    async fn calculate_equals_what_completion_records_over_random_baskets(app) {
        let token = app.owner_token().await;
        let store = app.tenant("demo").stores["high-street"];
        let mut products = Vec::new();
        for (i, (price, rate)) in [("299", "0.200"), ("150", "0"), ("41.7", "0.050"), ("1250", "0.200"), ("99", "0.125")].iter().enumerate() {
            let p = create(&app, &token, "/product", "products", json!({"name": format!("P{i}"),
                "instances": {"i": {"price": price, "taxPercentage": rate}}})).await;
            products.push(p["id"].as_i64().unwrap());
        }
        create(&app, &token, "/promotion", "promotions", json!({"title": "Three for two", "type": "xForY", "x": 3, "y": 2,
            "productIds": [products[0], products[1]], "startDate": "2020-01-01 00:00:00", "automatic": true})).await;
        create(&app, &token, "/promotion", "promotions", json!({"title": "15 off", "type": "percentage", "x": "15",
            "productIds": [products[3]], "startDate": "2020-01-01 00:00:00", "automatic": true, "stackable": true})).await;
        let by_hand = create(&app, &token, "/promotion", "promotions", json!({"title": "10 off by hand", "type": "percentage",
            "x": "10", "startDate": "2020-01-01 00:00:00", "stackable": true})).await;
        // A small deterministic generator: the same baskets every run.
        let mut seed: u64 = 0x5eed;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for round in 0..8 {
            let mut lines = serde_json::Map::new();
            for l in 0..(1 + next(5)) {
                let quantity = if next(6) == 0 { -1 } else { 1 + next(4) as i64 };
                lines.insert(format!("l{l}"), json!({"productId": products[next(5) as usize], "quantity": quantity}));
            }
            let mut body = json!({"storeId": store, "basketProducts": lines});
            if next(2) == 0 {
                body["promotionIds"] = json!([by_hand["id"]]);
            }
            let (status, answer) = calculate(&app, &token, body.clone()).await;
            assert_eq!(status, StatusCode::OK, "{answer}");
            let calculated = answer["receipts"]["k"].clone();
            // A field beyond the common shape (a note) sends the body down the general reading
            // (src/domain/draft.rs): both readings price the basket alike, to the client keys.
            let mut noted = body.clone();
            noted["note"] = json!("read the general way");
            let (status, general) = calculate(&app, &token, noted).await;
            assert_eq!(status, StatusCode::OK, "{general}");
            assert_eq!(general["receipts"]["k"], calculated, "round {round}: both readings agree");
            let b = create(&app, &token, "/basket", "baskets", body).await;
            let id = b["id"].as_i64().unwrap();
            let total = calculated["total"].as_i64().unwrap();
            if total > 0 {
                pay(&app, &token, id, "CARD", total).await;
            }
            let (status, done) = complete(&app, &token, id).await;
            assert_eq!(status, StatusCode::CREATED, "round {round}: {done}");
            let recorded = &done["baskets"]["c"]["receipt"];
            assert_eq!(comparable(recorded), comparable(&calculated), "round {round}");
            let line_total: i64 = recorded["lines"].as_array().unwrap().iter().map(|l| l["total"].as_i64().unwrap()).sum();
            assert_eq!(line_total, total, "round {round}: the lines add up to the total");
        }
    }

    async fn calculate_refuses_bad_input_and_other_merchants_records(app) {
        let reader = app.token_for("demo", "owner@demo.test", "read", 3600).await;
        let store = app.tenant("demo").stores["high-street"];
        let second = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let their_store = app.tenant("second").stores["market"];
        let their_product = create(&app, &second, "/product", "products", json!({"name": "Loaf",
            "instances": {"i": {"price": "250", "taxPercentage": "0"}}})).await;
        let their_basket = create(&app, &second, "/basket", "baskets", json!({"storeId": their_store,
            "basketProducts": {"l": {"productId": their_product["id"], "quantity": 1}}})).await;
        let their_promotion = create(&app, &second, "/promotion", "promotions", json!({"title": "Half", "type": "percentage",
            "x": "50", "startDate": "2020-01-01 00:00:00"})).await;

        // Another merchant's basket, product, store and promotion are unknown ids here.
        let (status, body) = calculate(&app, &reader, json!({"id": their_basket["id"]})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.to_string().contains(&format!("id: {} is not a basket of this merchant.", their_basket["id"])), "{body}");
        let (status, body) = calculate(&app, &reader, json!({"storeId": store,
            "basketProducts": {"l": {"productId": their_product["id"], "quantity": 1}}})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.to_string().contains("is not a product of this merchant"), "{body}");
        let (status, body) = calculate(&app, &reader, json!({"storeId": their_store})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        let (status, body) = calculate(&app, &reader, json!({"storeId": store, "promotionIds": [their_promotion["id"]]})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.to_string().contains(&format!("{} is not a promotion of this merchant.", their_promotion["id"])), "{body}");

        // Malformed bodies: the batch dialect's own messages.
        let (status, body) = send(&app, Method::POST, "/basket/calculate", &reader, &[], Some(json!({"basket": {}}))).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let (status, body) = calculate(&app, &reader, json!({"storeId": store, "basketProducts": {"l": {"productId": 1, "quantity": 0}}})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.to_string().contains("must be a non-zero integer"), "{body}");
        // The smallest integer has no absolute value in 64 bits: refused, not a hang.
        let (status, body) = calculate(&app, &reader, json!({"storeId": store, "basketProducts": {"l": {"productId": 1, "quantity": i64::MIN}}})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.to_string().contains("must be a non-zero integer"), "{body}");

        // Reading scope is enough, and nothing was written: the other merchant's basket is as it was.
        let (status, _) = calculate(&app, &reader, json!({"storeId": store})).await;
        assert_eq!(status, StatusCode::OK);
        let (_, theirs) = send(&app, Method::GET, "/basket", &second, &[("basketIds", &their_basket["id"].to_string())], None).await;
        assert_eq!(theirs["baskets"][their_basket["id"].to_string()]["receipt"], their_basket["receipt"]);
    }
}
