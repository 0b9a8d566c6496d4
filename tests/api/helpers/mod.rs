//! Starts the real server on a random loopback port with a fresh database, and gives tests
//! typed helpers. Every test body runs against SQLite and, when `MERCHANTD_TEST_POSTGRES_URL`
//! is set, against PostgreSQL in its own database (dropped afterwards).

use std::path::{Path, PathBuf};
use std::sync::Once;

use crate::contract::Checked;
use merchantd::config::Settings;
use merchantd::crypto;
use merchantd::db::Db;
use merchantd::domain::now_millis;
use merchantd::domain::oauth::token::NewFamily;
use merchantd::startup::{Application, Signals};
use merchantd::tenants::AppliedTenant;
use sqlx::{Column, Connection, Row};

mod database;

pub use database::{postgres_admin_url, Backend, TestDb};

/// A folder holding the shipped demo manifest and the second fixture merchant. The demo's
/// `legacy_clients` is turned off here, so most tests check the strict rules (refresh token
/// rotation above all); tests of the old clients turn it back on with [`legacy_clients`].
pub fn tenants_dir(into: &Path) -> PathBuf {
    let dir = into.join("tenants");
    std::fs::create_dir_all(&dir).expect("tenants dir");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let demo = std::fs::read_to_string(root.join("tenants/demo.toml")).expect("read demo");
    assert!(
        demo.contains(LEGACY_ON),
        "tenants/demo.toml turns legacy_clients on"
    );
    std::fs::write(dir.join("demo.toml"), demo.replace(LEGACY_ON, LEGACY_OFF)).expect("demo");
    std::fs::copy(
        root.join("tests/fixtures/second.toml"),
        dir.join("second.toml"),
    )
    .expect("copy second");
    dir
}

const LEGACY_ON: &str = "legacy_clients = true";
const LEGACY_OFF: &str = "legacy_clients = false";

/// A settings tweak: the demo merchant as shipped, with `legacy_clients` on.
pub fn legacy_clients(settings: &mut Settings) {
    let path = settings.tenants.join("demo.toml");
    let demo = std::fs::read_to_string(&path).expect("read demo");
    std::fs::write(&path, demo.replace(LEGACY_OFF, LEGACY_ON)).expect("write demo");
}

pub fn test_settings(db: &TestDb) -> Settings {
    Settings {
        bind: "127.0.0.1:0".into(),
        database_url: db.url.clone(),
        tenants: tenants_dir(db.dir()),
        pbkdf2_iterations: 1_000,
        test_hooks: true,
        workers: 2,
        // Tests run side by side on one PostgreSQL (max_connections 100): a server's pool of
        // 20 each, kept open while idle, once used them all up, and a test waiting for a
        // connection timed out.
        database_max_connections: 8,
        shutdown_timeout_secs: 5,
        log_level: std::env::var("TEST_LOG").unwrap_or_else(|_| "off".into()),
        // Tests send bursts far beyond a client's share; tests/api/limits.rs turns them on.
        api_requests_per_second_per_token: 0,
        api_requests_per_second_per_merchant: 0,
        // Receivers in tests listen on loopback; retries come quickly.
        webhook_allow_private_addresses: true,
        webhook_poll_ms: 50,
        webhook_retry_base_ms: 100,
        webhook_timeout_ms: 2_000,
        ..Settings::default()
    }
}

pub struct TestApp {
    pub address: String,
    pub port: u16,
    /// The server's own database handle (tokens minted for tests, outage simulation).
    pub db: Db,
    /// A separate pool on the same database, for raw SQL checks.
    pub sql: sqlx::AnyPool,
    pub tenants: Vec<AppliedTenant>,
    pub client: reqwest::Client,
    pub backend: Backend,
    pub database: TestDb,
    handle: actix_web::dev::ServerHandle,
}

pub async fn spawn_app(backend: Backend) -> Option<TestApp> {
    spawn_app_with(backend, |_| {}).await
}

pub async fn spawn_app_with(
    backend: Backend,
    tweak: impl FnOnce(&mut Settings),
) -> Option<TestApp> {
    let database = TestDb::new(backend).await?;
    Some(spawn_app_on(database, tweak).await)
}

/// The server on `database`, whichever kind its URL names.
pub async fn spawn_app_on(database: TestDb, tweak: impl FnOnce(&mut Settings)) -> TestApp {
    let backend = if database.url.starts_with("postgres") {
        Backend::Postgres
    } else {
        Backend::Sqlite
    };
    let mut settings = test_settings(&database);
    tweak(&mut settings);
    merchantd::telemetry::init(&settings);
    let app = Application::build(settings, Signals::Ignore)
        .await
        .expect("server builds");
    let port = app.port();
    let db = app.db().clone();
    let sql = raw_pool(&database.url).await;
    let tenants = app.tenants().to_vec();
    let handle = app.handle();
    actix_rt::spawn(app.run_until_stopped());
    TestApp {
        address: format!("http://127.0.0.1:{port}"),
        port,
        db,
        sql,
        tenants,
        client: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            // Below the server's keep-alive (15 s): a pooled connection the server is closing
            // just as it is reused fails its request ("error sending request"), a race the
            // long fault tests met about once in four runs.
            .pool_idle_timeout(std::time::Duration::from_secs(5))
            .build()
            .expect("client"),
        backend,
        database,
        handle,
    }
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.address)
    }

    pub fn tenant(&self, key: &str) -> &AppliedTenant {
        self.tenants
            .iter()
            .find(|t| t.key == key)
            .unwrap_or_else(|| panic!("no tenant {key}"))
    }

    /// Mints an access token straight into the store for `email` of merchant `key`, bound to
    /// that merchant's first application.
    pub async fn token_for(&self, key: &str, email: &str, scope: &str, ttl_secs: i64) -> String {
        let tenant = self.tenant(key);
        let token = crypto::random_token("mcd_at_");
        let family = NewFamily {
            id: uuid::Uuid::new_v4().to_string(),
            merchant_id: tenant.id,
            employee_id: tenant.users[email],
            application_id: *tenant.applications.values().next().expect("an application"),
            scope: scope.to_owned(),
        };
        self.db
            .issue_access_token(
                &family,
                &crypto::sha256_hex(&token),
                now_millis() + ttl_secs * 1000,
            )
            .await
            .expect("insert token");
        token
    }

    /// The demo owner's full-scope token.
    pub async fn owner_token(&self) -> String {
        self.token_for("demo", "owner@demo.test", "read write admin", 3600)
            .await
    }

    /// A request builder with a token and the version header.
    pub fn api(&self, method: reqwest::Method, path: &str, token: &str) -> reqwest::RequestBuilder {
        self.client
            .request(method, self.url(path))
            .bearer_auth(token)
            .header("x-accept-version", "2.0")
    }

    /// The `/metrics` page, in the Prometheus text format.
    pub async fn metrics_text(&self) -> String {
        self.client
            .get(self.url("/metrics"))
            .checked()
            .await
            .expect("GET /metrics")
            .text()
            .await
            .expect("metrics text")
    }

    pub async fn stop(&self) {
        self.handle.stop(true).await;
    }
}

impl Drop for TestApp {
    /// Stops the server's workers when its test is done. Left running, every finished test's
    /// server kept its threads ticking until the test binary ended: hundreds of them took
    /// much of the CPU from the tests still running, and load-sensitive tests failed.
    fn drop(&mut self) {
        // The stop command is sent at once; nothing waits for its completion here.
        drop(self.handle.stop(false));
    }
}

/// A metric's value in a `/metrics` text, summed over its series whose labels contain `labels`
/// (`""` for all of them); 0 when absent.
pub fn metric_value(text: &str, name: &str, labels: &str) -> f64 {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| {
            let series = l.split_whitespace().next().unwrap_or("");
            series == name || (series.starts_with(&format!("{name}{{")) && series.contains(labels))
        })
        .filter_map(|l| l.split_whitespace().last()?.parse::<f64>().ok())
        .sum()
}

/// POSTs one object under the client key `k` and returns the created record, failing the test
/// on anything but a 201 without an error record.
pub async fn create_one(
    app: &TestApp,
    token: &str,
    path: &str,
    plural: &str,
    object: serde_json::Value,
) -> serde_json::Value {
    let (status, body) = send(
        app,
        reqwest::Method::POST,
        path,
        token,
        &[],
        Some(serde_json::json!({ plural: {"k": object} })),
    )
    .await;
    assert_eq!(status, reqwest::StatusCode::CREATED, "POST {path}: {body}");
    assert!(body["api"]["message"].get("error").is_none(), "{body}");
    body[plural]["k"].clone()
}

/// Every row of every table, as text, for "nothing changed" and "no secret stored" checks.
pub async fn dump_database(sql: &sqlx::AnyPool) -> Vec<String> {
    let backend = sql.connect_options().database_url.scheme().to_owned();
    let tables: Vec<(String,)> = match backend.as_str() {
        "sqlite" => sqlx::query_as(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
             AND name <> '_sqlx_migrations' ORDER BY name",
        ),
        _ => sqlx::query_as(
            "SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public' \
             AND table_name <> '_sqlx_migrations' ORDER BY table_name",
        ),
    }
    .fetch_all(sql)
    .await
    .expect("list tables");
    let mut out = Vec::new();
    for (table,) in tables {
        let rows = sqlx::query(&format!("SELECT * FROM {table}"))
            .fetch_all(sql)
            .await
            .expect("dump table");
        let mut lines: Vec<String> = rows
            .iter()
            .map(|row| {
                let cells: Vec<String> = (0..row.columns().len())
                    .map(|i| {
                        let name = row.columns()[i].name().to_owned();
                        let value = row
                            .try_get::<Option<i64>, _>(i)
                            .map(|v| format!("{v:?}"))
                            .or_else(|_| {
                                row.try_get::<Option<String>, _>(i)
                                    .map(|v| format!("{v:?}"))
                            })
                            .or_else(|_| row.try_get::<Option<f64>, _>(i).map(|v| format!("{v:?}")))
                            .or_else(|_| {
                                row.try_get::<Option<bool>, _>(i).map(|v| format!("{v:?}"))
                            })
                            .or_else(|_| {
                                row.try_get::<Option<Vec<u8>>, _>(i).map(|v| {
                                    format!(
                                        "{:?}",
                                        v.map(|b| String::from_utf8_lossy(&b).into_owned())
                                    )
                                })
                            })
                            .unwrap_or_else(|_| "<?>".into());
                        format!("{name}={value}")
                    })
                    .collect();
                format!("{table}: {}", cells.join(", "))
            })
            .collect();
        lines.sort();
        out.extend(lines);
    }
    out
}

/// One API request with a token and the version header, as a client library sends it: the
/// status, the JSON body (which must carry the `api` envelope) and the headers.
pub async fn send_full(
    app: &TestApp,
    method: reqwest::Method,
    path: &str,
    token: &str,
    headers: &[(&str, &str)],
    body: Option<serde_json::Value>,
) -> (
    reqwest::StatusCode,
    serde_json::Value,
    reqwest::header::HeaderMap,
) {
    let mut req = app.api(method, path, token);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    if let Some(body) = body {
        req = req.json(&body);
    }
    let res = req.checked().await.expect("request");
    let status = res.status();
    let response_headers = res.headers().clone();
    let text = res.text().await.expect("body");
    let body: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(body["api"]["codeBaseVersion"], "2.0", "{body}");
    (status, body, response_headers)
}

/// [`send_full`] without the headers.
pub async fn send(
    app: &TestApp,
    method: reqwest::Method,
    path: &str,
    token: &str,
    headers: &[(&str, &str)],
    body: Option<serde_json::Value>,
) -> (reqwest::StatusCode, serde_json::Value) {
    let (status, body, _) = send_full(app, method, path, token, headers, body).await;
    (status, body)
}

/// A pool of our own on the test database (the server's pool is its own business).
pub async fn raw_pool(url: &str) -> sqlx::AnyPool {
    sqlx::any::install_default_drivers();
    sqlx::any::AnyPoolOptions::new()
        .max_connections(2)
        .connect(url)
        .await
        .expect("raw pool")
}

/// The clear-text secrets of the fixture manifests, which must never be stored or logged.
pub const FIXTURE_SECRETS: [&str; 5] = [
    "demo-owner-password",
    "demo-pos-secret",
    "second-owner-password",
    "second-guest-password",
    "second-till-secret-0123",
];

/// The built `merchantd` binary, for tests that need a real process (signals, stderr).
pub fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_merchantd")
}
