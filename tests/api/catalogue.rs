//! The catalogue file (issue 13; docs/catalogue.md): `POST /product/import` and
//! `GET /product/export`, and `merchantd catalogue import|export` on the database. An export
//! imported into an empty merchant exports the same bytes; a file with refused rows names
//! exactly those rows and writes nothing.

use std::process::Command;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::contract::Checked;
use crate::helpers::{binary, create_one, send, tenants_dir, TestApp};
use crate::{backend_tests, db_tests};

/// Every feature of the file at once: instances on continuation rows, nested and repeated
/// categories, quoting, a formula-looking name, a product without instances or barcode, and
/// opening stock at two stores.
const RICH: &str =
    "product,barcode,category,instance,price,tax_rate,stock:High Street,stock:Market Square\n\
Latte,5012345678900,Drinks > Hot | Coffee,Eat in,300,0.200,12,4\n\
,,,Take away,280,0.200,,\n\
\"Tea, English\",,Drinks > Hot,,200,0.2,0,9\n\
=1+2,777,,Slice,41.7,0,1,\n\
Gift card,,Vouchers,,,,,\n";

async fn import(
    app: &TestApp,
    token: &str,
    csv: &str,
    headers: &[(&str, &str)],
) -> (StatusCode, Value) {
    let mut req = app
        .api(Method::POST, "/product/import", token)
        .header("content-type", "text/csv")
        .body(csv.to_owned());
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let res = req.checked().await.expect("import");
    let status = res.status();
    let text = res.text().await.expect("body");
    let body: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    (status, body)
}

async fn export(app: &TestApp, token: &str) -> String {
    let res = app
        .api(Method::GET, "/product/export", token)
        .checked()
        .await
        .expect("export");
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["content-type"], "text/csv; charset=utf-8");
    res.text().await.expect("csv")
}

async fn products(app: &TestApp, token: &str, store: Option<i64>) -> Value {
    let store = store.map(|s| s.to_string());
    let headers: Vec<(&str, &str)> = store.iter().map(|s| ("storeId", s.as_str())).collect();
    let (status, body) = send(app, Method::GET, "/product", token, &headers, None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["products"].clone()
}

async fn add_store(app: &TestApp, token: &str, name: &str) -> i64 {
    let store = create_one(
        app,
        token,
        "/store",
        "stores",
        json!({"name": name, "addressLine1": "1 Road", "city": "Leeds", "postcode": "LS1 1AA", "countryId": "GB"}),
    )
    .await;
    store["id"].as_i64().expect("store id")
}

fn by_name<'a>(products: &'a Value, name: &str) -> &'a Value {
    products
        .as_object()
        .and_then(|all| all.values().find(|p| p["name"] == name))
        .unwrap_or_else(|| panic!("no product {name} in {products}"))
}

backend_tests! {
    async fn an_export_imported_into_an_empty_merchant_exports_the_same_bytes(app) {
        let demo = app.owner_token().await;
        let second = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        // Both merchants get the same two stores.
        let market = add_store(&app, &demo, "Market Square").await;
        add_store(&app, &second, "High Street").await;

        let (status, body) = import(&app, &demo, RICH, &[]).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["import"]["products"], 4);
        assert_eq!(body["import"]["instances"], 4);
        assert_eq!(body["import"]["categories"], 4, "Drinks, Hot, Coffee, Vouchers");
        assert_eq!(body["import"]["stockCounts"].as_array().unwrap().len(), 2);

        // What the API reads back is what the file said.
        let read = products(&app, &demo, Some(market)).await;
        let latte = by_name(&read, "Latte");
        assert_eq!(latte["barcode"], "5012345678900");
        assert_eq!(latte["stockLeft"], 4);
        let prices: Vec<&str> = latte["instances"].as_object().unwrap().values().map(|i| i["price"].as_str().unwrap()).collect();
        assert_eq!(prices, ["300", "280"]);
        let titles: Vec<&str> = latte["categories"].as_object().unwrap().values().map(|t| t.as_str().unwrap()).collect();
        assert!(titles.contains(&"Hot") && titles.contains(&"Coffee"), "{latte}");
        assert_eq!(by_name(&read, "=1+2")["instances"].as_object().unwrap().len(), 1);
        assert_eq!(by_name(&read, "Gift card")["instances"], json!({}));
        assert_eq!(by_name(&read, "Tea, English")["stockLeft"], 9);

        let exported = export(&app, &demo).await;
        assert!(exported.starts_with("product,barcode,category,instance,price,tax_rate,stock:High Street,stock:Market Square\n"), "{exported}");
        assert!(exported.contains("'=1+2,777"), "a formula is exported behind a quote: {exported}");
        let (status, body) = import(&app, &second, &exported, &[]).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(export(&app, &second).await, exported);
        // And again: the same file into the merchant that has it is refused whole (barcodes).
        let (status, body) = import(&app, &demo, &exported, &[]).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(products(&app, &demo, None).await.as_object().unwrap().len(), 4);
    }

    async fn a_file_with_three_bad_rows_names_exactly_those_and_writes_nothing(app) {
        let token = app.owner_token().await;
        create_one(&app, &token, "/product", "products", json!({"name": "Old", "barcode": "900"})).await;
        let (_, before, headers) = crate::helpers::send_full(&app, Method::GET, "/product", &token, &[], None).await;
        let sequence = headers["x-merchant-sequence"].clone();
        let file = "product,barcode,category,instance,price,tax_rate,stock:High Street\n\
                    Mocha,111,Drinks,,300,0.2,1\n\
                    Cortado,900,Drinks,,300,0.2,1\n\
                    Flat white,112,Drinks,,abc,0.2,2\n\
                    Chai,113,Drinks,,300,0.2,\n\
                    ,,,Large,350,1.5,\n\
                    Espresso,114,Drinks,,200,0.2,3\n";
        let (status, body) = import(&app, &token, file, &[]).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        let rows: Vec<(u64, &str)> = body["import"]["problems"].as_array().unwrap().iter()
            .map(|p| (p["row"].as_u64().unwrap(), p["column"].as_str().unwrap()))
            .collect();
        assert_eq!(rows, [(3, "barcode"), (4, "price"), (6, "tax_rate")], "{body}");
        // A row refused as written (its stock) is also checked by the product's rules (its
        // price), so one report names everything wrong with it.
        let (_, both) = import(&app, &token, "product,price,tax_rate,stock:High Street\nTea,abc,0.2,lots\n", &[]).await;
        let columns: Vec<&str> = both["import"]["problems"].as_array().unwrap().iter()
            .map(|p| p["column"].as_str().unwrap()).collect();
        assert_eq!(columns, ["price", "stock:High Street"], "{both}");
        assert!(body["error"]["details"][0].as_str().unwrap().starts_with("row 3, barcode: \"900\" is already used by product "), "{body}");
        assert!(body["error"]["message"].as_str().unwrap().starts_with("3 of the file's rows were refused"), "{body}");
        assert!(body["api"]["message"]["error"]["110:row 4 price"].is_object(), "{body}");
        assert_eq!(body["import"]["written"], false);

        // Nothing moved: the same products, categories, stock and event log.
        let (_, after, headers) = crate::helpers::send_full(&app, Method::GET, "/product", &token, &[], None).await;
        assert_eq!(after["products"], before["products"]);
        assert_eq!(headers["x-merchant-sequence"], sequence, "no event was appended");
        let (_, categories) = send(&app, Method::GET, "/category", &token, &[], None).await;
        assert_eq!(categories["categories"], json!({}));

        // With skipInvalid the other products go in, and the refused rows are listed.
        let (status, body) = import(&app, &token, file, &[("skipInvalid", "true")]).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["import"]["products"], 2, "Mocha and Espresso: {body}");
        assert_eq!(body["import"]["skippedRows"], json!([3, 4, 5, 6]));
        let names: Vec<String> = products(&app, &token, None).await.as_object().unwrap().values()
            .map(|p| p["name"].as_str().unwrap().to_owned()).collect();
        assert_eq!(names, ["Old", "Mocha", "Espresso"]);
    }

    async fn an_import_is_one_change_to_the_event_log_and_may_be_retried_with_a_key(app) {
        let token = app.owner_token().await;
        let file = "product,price,tax_rate,stock:High Street\nBun,120,0,5\nRoll,90,0,\n";
        let send_keyed = || import(&app, &token, file, &[("Idempotency-Key", "import-1")]);
        let (status, first) = send_keyed().await;
        assert_eq!(status, StatusCode::CREATED, "{first}");
        let (status, again) = send_keyed().await;
        assert_eq!(status, StatusCode::CREATED, "{again}");
        assert_eq!(again["import"], first["import"], "the stored answer is replayed");
        assert_eq!(products(&app, &token, None).await.as_object().unwrap().len(), 2, "nothing twice");

        let res = app.api(Method::GET, "/events", &token)
            .header("Last-Event-ID", "0")
            .checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        let mut res = res;
        let mut seen = String::new();
        while !seen.contains("stock.changed") {
            let chunk = tokio::time::timeout(std::time::Duration::from_secs(5), res.chunk())
                .await
                .expect("events arrive")
                .expect("a chunk")
                .expect("bytes");
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
        for kind in ["product.created", "stock_count.created", "stock_count.completed", "stock.changed"] {
            assert!(seen.contains(kind), "{kind} in {seen}");
        }
    }

    async fn imports_and_exports_stay_inside_their_merchant(app) {
        let demo = app.owner_token().await;
        let second = app.token_for("second", "owner@second.test", "read write admin", 3600).await;
        let drinks = create_one(&app, &demo, "/category", "categories", json!({"title": "Drinks"})).await;
        let (status, body) = import(&app, &demo, "product,barcode,category\nCola,42,Drinks\n", &[]).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["import"]["categories"], 0, "demo's own Drinks was used");

        // The second merchant's import finds none of demo's categories, barcodes or stores.
        let (status, body) = import(&app, &second, "product,barcode,category\nCola,42,Drinks\n", &[]).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["import"]["categories"], 1, "a Drinks of its own");
        let (status, body) = import(&app, &second, "product,stock:High Street\nCake,1\n", &[]).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["error"]["details"][0], "row 1, stock:High Street: no store of this merchant is named \"High Street\".");

        let theirs = products(&app, &second, None).await;
        let cola = by_name(&theirs, "Cola");
        assert!(cola["categories"].get(drinks["id"].to_string()).is_none(), "{cola}");
        assert_eq!(export(&app, &demo).await, "product,barcode,category,instance,price,tax_rate,stock:High Street\nCola,42,Drinks,,,,0\n");
        assert_eq!(export(&app, &second).await, "product,barcode,category,instance,price,tax_rate,stock:Market Square\nCola,42,Drinks,,,,0\n");
    }

    async fn a_bad_import_request_gets_a_clear_error(app) {
        let token = app.owner_token().await;
        let res = app.api(Method::POST, "/product/import", &token)
            .json(&json!({"products": {}})).checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["error"]["details"][0], "Content-Type: send the catalogue file as text/csv (UTF-8).");

        for (file, says) in [
            ("", "the file is empty"),
            ("name,price\nTea,1\n", "unknown column \"name\""),
        ] {
            let (status, body) = import(&app, &token, file, &[]).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
            assert!(body["error"]["details"][0].as_str().unwrap().contains(says), "{body}");
        }
        let res = app.api(Method::POST, "/product/import", &token)
            .header("content-type", "text/csv")
            .body(b"product\nT\xffa\n".to_vec()).checked().await.unwrap();
        assert_eq!(res.status(), StatusCode::BAD_REQUEST);
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["error"]["details"][0], "row 2: is not UTF-8 text: save the file as CSV UTF-8.");
        // PostgreSQL stores no NUL in text: refused on both databases, never a 500.
        let (status, body) = import(&app, &token, "product\nT\u{0}ea\n", &[]).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["error"]["details"][0], "row 2: holds the NUL character (U+0000), which no text field may hold.");
        let (status, _) = import(&app, &token, "product\nTea\n", &[("skipInvalid", "yes")]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);

        // A guest reads the catalogue but cannot import one.
        let guest = app.token_for("second", "guest@second.test", "read", 3600).await;
        let (status, _) = import(&app, &guest, "product\nTea\n", &[]).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        assert_eq!(export(&app, &guest).await, "product,barcode,category,instance,price,tax_rate,stock:Market Square\n");
    }
}

fn cli(db_url: &str, args: &[&str]) -> std::process::Output {
    Command::new(binary())
        .args(args)
        .args(["--database-url", db_url])
        .output()
        .expect("run merchantd")
}

db_tests! {
    async fn the_command_line_imports_and_exports_through_the_same_rules(db) {
        let tenants = tenants_dir(db.dir());
        let applied = cli(&db.url, &["tenant", "apply", tenants.join("demo.toml").to_str().unwrap(), tenants.join("second.toml").to_str().unwrap()]);
        assert!(applied.status.success(), "{}", String::from_utf8_lossy(&applied.stderr));
        let file = db.dir().join("in.csv");
        std::fs::write(&file, "product,barcode,price,tax_rate,stock:High Street\nTea,1,200,0.2,4\nCake,1,300,0.2,\nScone,,abc,0,\n").unwrap();
        let path = file.to_str().unwrap();

        let refused = cli(&db.url, &["catalogue", "import", path, "--merchant", "demo"]);
        assert!(!refused.status.success());
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(stderr.contains("row 3, barcode: \"1\" is also the barcode of the product on row 2."), "{stderr}");
        assert!(stderr.contains("row 4, price: \"abc\" is not a decimal number."), "{stderr}");
        assert!(stderr.contains("2 rows were refused"), "{stderr}");

        let done = cli(&db.url, &["catalogue", "import", path, "--merchant", "demo", "--skip-invalid"]);
        assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
        let report: Value = serde_json::from_slice(&done.stdout).unwrap();
        assert_eq!(report["products"], 1);
        assert_eq!(report["skippedRows"], json!([3, 4]));

        let out = db.dir().join("out.csv");
        let exported = cli(&db.url, &["catalogue", "export", "--merchant", "demo", "--out", out.to_str().unwrap()]);
        assert!(exported.status.success(), "{}", String::from_utf8_lossy(&exported.stderr));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "product,barcode,category,instance,price,tax_rate,stock:High Street\nTea,1,,,200,0.2,4\n");
        let unknown = cli(&db.url, &["catalogue", "export", "--merchant", "nobody"]);
        assert!(String::from_utf8_lossy(&unknown.stderr).contains("no merchant has the key nobody"));
    }
}

/// On SQLite a running server keeps the catalogue in memory: the command refuses to write
/// beside it, and says what to do instead.
#[actix_rt::test]
async fn the_command_line_will_not_import_beside_a_server_on_sqlite() {
    let app = crate::helpers::spawn_app(crate::helpers::Backend::Sqlite)
        .await
        .expect("app");
    let file = app.database.dir().join("in.csv");
    std::fs::write(&file, "product\nTea\n").unwrap();
    let (url, path) = (app.database.url.clone(), file.to_str().unwrap().to_owned());
    let out = tokio::task::spawn_blocking(move || {
        cli(&url, &["catalogue", "import", &path, "--merchant", "demo"])
    })
    .await
    .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("POST /product/import"));
}
