//! A merchant's archive (docs/operator.md, "Export and import"): exported by the operator from
//! one database and imported into an empty one, every read of the merchant answers the same
//! bytes there, and its archive exported again is the same archive. A cut archive, one whose rows
//! name another merchant, one reaching a table an archive never holds, and a second import are
//! refused with nothing stored.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::backend_tests;
use crate::helpers::{
    binary, create_one, raw_pool, send, spawn_app, spawn_app_on, spawn_app_with, Backend, TestApp,
    TestDb,
};
use crate::operator::{acme, issue_token, issue_token_on, message_ids, operator, operator_token};
use crate::uploads::{upload, JPEG};

/// Reads compared between the two databases: every collection without a required filter.
const READS: [&str; 22] = [
    "/store",
    "/category",
    "/product",
    "/supplier",
    "/customer",
    "/register",
    "/register/session",
    "/employee",
    "/application",
    "/webhook",
    "/promotion",
    "/basket",
    "/transaction",
    "/order",
    "/invoice",
    "/stock/reconcile",
    "/user",
    "/merchant",
    "/log",
    "/product/export",
    "/stock/movement",
    "/report/basket",
];

/// Each read's status and body, without the envelope's `api` (its execution time differs).
async fn reads(app: &TestApp, token: &str) -> Vec<(String, StatusCode, String)> {
    let mut out = Vec::new();
    for path in READS {
        let res = app.api(Method::GET, path, token).send().await.expect(path);
        let status = res.status();
        let text = res.text().await.expect("a body");
        let body = match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(mut fields)) => {
                fields.remove("api");
                Value::Object(fields).to_string()
            }
            _ => text,
        };
        out.push((path.to_owned(), status, body));
    }
    out
}

async fn export(app: &TestApp, op: &str, merchant: i64) -> String {
    let res = app
        .client
        .get(app.url("/operator/merchant/export"))
        .bearer_auth(op)
        .header("merchantIds", merchant.to_string())
        .send()
        .await
        .expect("export");
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        res.headers()["content-type"].to_str().unwrap(),
        "application/x-ndjson"
    );
    res.text().await.expect("the archive")
}

async fn import(app: &TestApp, op: &str, archive: String) -> (StatusCode, Value) {
    import_into(app, op, archive, None).await
}

/// An import into the fleet's pod `pod` (no header when `None`).
async fn import_into(
    app: &TestApp,
    op: &str,
    archive: String,
    pod: Option<&str>,
) -> (StatusCode, Value) {
    let mut req = app
        .client
        .post(app.url("/operator/merchant/import"))
        .bearer_auth(op)
        .header("content-type", "application/x-ndjson");
    if let Some(pod) = pod {
        req = req.header("pod", pod);
    }
    let res = req.body(archive).send().await.expect("import");
    let status = res.status();
    (status, res.json().await.expect("JSON"))
}

/// The archive's lines after its header (which carries the export's date).
fn rows_of(archive: &str) -> Vec<&str> {
    archive.lines().skip(1).collect()
}

/// The greatest value of any table's `id` column in an archive.
fn greatest_id(archive: &str) -> i64 {
    let mut column = None;
    let mut greatest = 0;
    for line in archive.lines().skip(1) {
        let value: Value = serde_json::from_str(line).expect("JSON");
        if let Some(columns) = value["columns"].as_array() {
            column = columns.iter().position(|c| c == "id");
        } else if let (Some(i), Some(cells)) = (column, value.as_array()) {
            greatest = greatest.max(cells[i].as_i64().unwrap_or(0));
        }
    }
    greatest
}

/// An empty database of the same kind, with a server and no tenant.
async fn empty_app(like: &TestApp) -> (TestApp, tempfile::TempDir) {
    let tenants = tempfile::tempdir().expect("a folder");
    let path = tenants.path().to_owned();
    let app = spawn_app_with(like.backend, move |s| s.tenants = path)
        .await
        .expect("a second database");
    (app, tenants)
}

/// The merchant a test moves, and what reads it.
struct Moving {
    id: i64,
    owner: i64,
    application: i64,
    token: String,
    file_name: String,
}

/// A merchant created by the operator with a day's worth of data: catalogue, a sale, a
/// customer, a log, a file.
async fn populate(app: &TestApp, op: &str) -> Moving {
    let (status, body) = operator(
        app,
        Method::POST,
        "/operator/merchant",
        op,
        &[],
        Some(json!({"merchants": {"a": acme("moving")}})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let created = &body["merchants"]["a"];
    let id = created["id"].as_i64().unwrap();
    let owner = created["users"]["owner@acme.test"].as_i64().unwrap();
    let application = created["applications"]["moving-pos"].as_i64().unwrap();
    let store = created["stores"]["main"].as_i64().unwrap();
    let token = issue_token(app, id, owner, application).await;

    let category = create_one(
        app,
        &token,
        "/category",
        "categories",
        json!({"title": "Tools"}),
    )
    .await;
    let product = create_one(
        app,
        &token,
        "/product",
        "products",
        json!({"name": "Hammer",
        "categories": [category["id"]],
        "instances": {"i": {"name": "Standard", "price": "12.50", "taxPercentage": "0.200"}}}),
    )
    .await;
    let basket = create_one(
        app,
        &token,
        "/basket",
        "baskets",
        json!({"storeId": store,
        "basketProducts": {"l": {"productId": product["id"], "quantity": 2}}}),
    )
    .await;
    create_one(
        app,
        &token,
        "/transaction",
        "transactions",
        json!({"basketId": basket["id"],
        "type": "CASH", "amount": 2500, "completed": true}),
    )
    .await;
    create_one(
        app,
        &token,
        "/basket",
        "baskets",
        json!({"id": basket["id"], "completed": true}),
    )
    .await;
    create_one(
        app,
        &token,
        "/customer",
        "customers",
        json!({"name": "Ann Lee", "email": "ann@example.com", "phone": "+44 20 7946 0018"}),
    )
    .await;
    let (status, body) = send(
        app,
        Method::POST,
        "/log",
        &token,
        &[("tag", "till"), ("object", "STORE"), ("identifier", "1")],
        Some(json!({"open": true})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = upload(app, &token, "logo.jpg", "image/jpeg", JPEG).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let file_name = body["file"]["fileName"]
        .as_str()
        .expect("a file name")
        .to_owned();
    Moving {
        id,
        owner,
        application,
        token,
        file_name,
    }
}

backend_tests! {
    async fn an_exported_merchant_imported_into_an_empty_database_reads_the_same(app) {
        let op = operator_token(&app.database.url).await;
        let Moving { id, owner, application, token, file_name } = populate(&app, &op).await;
        let before = reads(&app, &token).await;
        assert!(before.iter().filter(|(_, s, _)| *s == StatusCode::OK).count() >= 18, "{before:?}");

        // A merchant's token cannot reach the export; the operator's does.
        let res = app.client.get(app.url("/operator/merchant/export")).bearer_auth(&token)
            .header("merchantIds", id.to_string()).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
        let archive = export(&app, &op, id).await;
        let header: Value = serde_json::from_str(archive.lines().next().unwrap()).unwrap();
        assert_eq!(header["merchantId"], id, "{header}");
        assert_eq!(header["key"], "moving");
        assert!(archive.lines().last().unwrap().starts_with("{\"end\":"), "{archive}");
        // Only this merchant's rows: not the demo merchant's employees.
        let demo = app.tenant("demo").id;
        assert!(!archive.contains("owner@demo.test"));
        // Tokens are not: applications authorize again.
        assert!(!archive.contains("\"table\":\"access_tokens\""));
        // Unknown merchant: 404; no id or two: 400.
        let (status, _) = operator(&app, Method::GET, "/operator/merchant/export", &op,
            &[("merchantIds", "999999")], None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (status, _) = operator(&app, Method::GET, "/operator/merchant/export", &op,
            &[("merchantIds", &format!("{id},{demo}"))], None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);

        let (target, _tenants) = empty_app(&app).await;
        let target_op = operator_token(&target.database.url).await;
        // Refused, nothing stored: a cut archive, rows of another merchant, a table an archive
        // never holds, a body that is not an archive, another media type.
        let lines: Vec<&str> = archive.lines().collect();
        let cut = lines[..lines.len() - 1].join("\n");
        let (status, body) = import(&target, &target_op, cut).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(body["error"].to_string().contains("cut"), "{body}");
        let mut other = header.clone();
        other["merchantId"] = json!(id + 1_000_000);
        other["key"] = json!("someone-else");
        let forged = format!("{other}\n{}", lines[1..].join("\n"));
        let (status, body) = import(&target, &target_op, forged).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(body["error"].to_string().contains("another merchant"), "{body}");
        let sneaky = format!("{}\n{{\"table\":\"operator_tokens\",\"columns\":[\"hash\"]}}\n{}",
            lines[0], lines[1..].join("\n"));
        let (status, body) = import(&target, &target_op, sneaky).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(body["error"].to_string().contains("line 2"), "{body}");
        let (status, body) = import(&target, &target_op, "not an archive\n".into()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let res = target.client.post(target.url("/operator/merchant/import")).bearer_auth(&target_op)
            .header("content-type", "application/json").body(archive.clone()).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let (count,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM merchants")
            .fetch_one(&target.sql).await.unwrap();
        assert_eq!(count, 0, "a refused import leaves nothing");

        let (status, body) = import(&target, &target_op, archive.clone()).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let imported = &body["merchants"][id.to_string()];
        assert_eq!(imported["key"], "moving", "{body}");
        assert!(imported["rows"].as_i64().unwrap() > 20, "{body}");
        assert_eq!(message_ids(&body), vec![200], "{body}");

        // The same reads, byte for byte, with a token of the same employee and application.
        let moved = issue_token(&target, id, owner, application).await;
        let after = reads(&target, &moved).await;
        for ((path, status, body), (_, status_after, body_after)) in before.iter().zip(&after) {
            assert_eq!(status, status_after, "{path}");
            assert_eq!(body, body_after, "{path}");
        }
        let image = |app: &TestApp| app.client.get(app.url(&format!("/files/{file_name}"))).send();
        let (a, b) = (image(&app).await.unwrap(), image(&target).await.unwrap());
        assert_eq!(a.status(), StatusCode::OK);
        assert_eq!(a.bytes().await.unwrap(), b.bytes().await.unwrap());
        // Exported again, the archive is the same rows.
        let again = export(&target, &target_op, id).await;
        assert_eq!(rows_of(&again), rows_of(&archive));
        // New records get ids past the archive's.
        let newer = create_one(&target, &moved, "/category", "categories", json!({"title": "New"})).await;
        assert!(newer["id"].as_i64().unwrap() > greatest_id(&archive), "{newer}");
        // A second import of the merchant is a conflict (113).
        let (status, body) = import(&target, &target_op, archive).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(message_ids(&body), vec![113], "{body}");
    }
}

/// The way out of the embedded default: the command line exports the merchant from the SQLite
/// file (beside its running server) and imports it into a fresh PostgreSQL database, and a
/// server there answers every read as the SQLite one did.
#[actix_rt::test]
async fn a_merchant_leaves_the_sqlite_file_for_postgresql_by_the_command_line() {
    let app = spawn_app(Backend::Sqlite).await.expect("sqlite test app");
    let Some(postgres) = TestDb::new(Backend::Postgres).await else {
        return;
    };
    let op = operator_token(&app.database.url).await;
    let moving = populate(&app, &op).await;
    let before = reads(&app, &moving.token).await;
    let file = app.database.dir().join("moving.ndjson");
    let file = file.to_str().expect("a UTF-8 path");
    let run = |args: Vec<&str>| {
        let out = std::process::Command::new(binary())
            .args(&args)
            .output()
            .expect("merchantd");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("UTF-8")
    };
    run(vec![
        "tenant",
        "export",
        "moving",
        "--out",
        file,
        "--database-url",
        &app.database.url,
    ]);
    let printed = run(vec![
        "tenant",
        "import",
        file,
        "--database-url",
        &postgres.url,
    ]);
    let printed: Value = serde_json::from_str(&printed).expect("JSON");
    assert_eq!(printed["id"], moving.id, "{printed}");
    // Importing it twice is refused, and says why.
    let out = std::process::Command::new(binary())
        .args(["tenant", "import", file, "--database-url", &postgres.url])
        .output()
        .expect("merchantd");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("already has"));

    let tenants = tempfile::tempdir().expect("a folder");
    let path = tenants.path().to_owned();
    let target = spawn_app_on(postgres, move |s| s.tenants = path).await;
    let token = issue_token(&target, moving.id, moving.owner, moving.application).await;
    let after = reads(&target, &token).await;
    assert_eq!(before, after);
    let res = target
        .client
        .get(target.url(&format!("/files/{}", moving.file_name)))
        .send()
        .await
        .unwrap();
    assert_eq!(res.bytes().await.unwrap().as_ref(), JPEG);
}

/// A fleet's import: an archive goes into the pod it names (`pod`), the directory places it
/// there, every read answers the same bytes, and that pod's allocator stays in its own range
/// (the archive's ids are home's); a second import, into any pod, is refused (113), as is a
/// pod that does not exist.
#[actix_rt::test]
async fn an_archive_imported_into_a_pod_of_a_fleet_reads_the_same_there() {
    use merchantd::db::Db;
    use merchantd::metrics::Metrics;

    let Some(app) = spawn_app(Backend::Postgres).await else {
        return;
    };
    let op = operator_token(&app.database.url).await;
    let Moving {
        id,
        owner,
        application,
        token,
        ..
    } = populate(&app, &op).await;
    let before = reads(&app, &token).await;
    let archive = export(&app, &op, id).await;

    let tenants = tempfile::tempdir().expect("a folder");
    let home = TestDb::new(Backend::Postgres)
        .await
        .expect("a home database");
    let pod_b = TestDb::new(Backend::Postgres).await.expect("a second pod");
    let (path, url) = (tenants.path().to_owned(), pod_b.url.clone());
    let fleet = spawn_app_on(home, move |s| {
        s.tenants = path;
        s.pods = format!("b={url}");
    })
    .await;
    let fleet_op = operator_token(&fleet.database.url).await;

    let (status, body) = import_into(&fleet, &fleet_op, archive.clone(), Some("nowhere")).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body.to_string().contains("no pod named nowhere"), "{body}");
    let (status, body) = import_into(&fleet, &fleet_op, archive.clone(), Some("b")).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    // Its rows in pod b alone, and the directory says so.
    let merchants = "SELECT COUNT(*) FROM merchants WHERE id = $1";
    let b_pool = raw_pool(&pod_b.url).await;
    let in_b = sqlx::query_as::<_, (i64,)>(merchants).bind(id);
    assert_eq!(in_b.fetch_one(&b_pool).await.unwrap().0, 1);
    b_pool.close().await;
    let at_home = sqlx::query_as::<_, (i64,)>(merchants).bind(id);
    assert_eq!(at_home.fetch_one(&fleet.sql).await.unwrap().0, 0);
    let (placed,): (String,) =
        sqlx::query_as("SELECT pod FROM merchant_placements WHERE merchant_id = $1")
            .bind(id)
            .fetch_one(&fleet.sql)
            .await
            .expect("a placement");
    assert_eq!(placed, "b");

    // The same reads with a token of the same employee and application, issued in pod b.
    let db = Db::connect(&pod_b.url, Metrics::new()).await.unwrap();
    let moved = issue_token_on(&db, id, owner, application).await;
    db.close().await;
    let after = reads(&fleet, &moved).await;
    for ((path, status, body), (_, status_after, body_after)) in before.iter().zip(&after) {
        assert_eq!(status, status_after, "{path}");
        assert_eq!(body, body_after, "{path}");
    }
    // Pod b's allocator kept to its range: new records there get ids from 2^40.
    let newer = create_one(
        &fleet,
        &moved,
        "/category",
        "categories",
        json!({"title": "New"}),
    )
    .await;
    assert!(newer["id"].as_i64().unwrap() >= 1 << 40, "{newer}");

    // Without `pod` the archive would go home (its ids are home's); pod b holds it already.
    let (status, body) = import_into(&fleet, &fleet_op, archive, None).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(message_ids(&body), vec![113], "{body}");
    assert!(body.to_string().contains("of pod b"), "{body}");
}
