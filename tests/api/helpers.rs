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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// Runs a test body once per backend: `backend_tests! { async fn name(app) { ... } }` makes
/// `name::sqlite` and `name::postgres`.
#[macro_export]
macro_rules! backend_tests {
    ($(async fn $name:ident($app:ident) $body:block)*) => {
        $(
            mod $name {
                #[allow(unused_imports)]
                use super::*;
                #[actix_rt::test]
                async fn sqlite() {
                    let $app = $crate::helpers::spawn_app($crate::helpers::Backend::Sqlite)
                        .await
                        .expect("sqlite test app");
                    $body
                }
                #[actix_rt::test]
                async fn postgres() {
                    let Some($app) =
                        $crate::helpers::spawn_app($crate::helpers::Backend::Postgres).await
                    else {
                        return;
                    };
                    $body
                }
            }
        )*
    };
}

/// Like [`backend_tests!`] with the settings changed first:
/// `backend_tests_with! { |s| s.auth_code_ttl_secs = 1; async fn name(app) { ... } }`.
#[macro_export]
macro_rules! backend_tests_with {
    ($tweak:expr; $(async fn $name:ident($app:ident) $body:block)*) => {
        $(
            mod $name {
                #[allow(unused_imports)]
                use super::*;
                #[actix_rt::test]
                async fn sqlite() {
                    let $app = $crate::helpers::spawn_app_with($crate::helpers::Backend::Sqlite, $tweak)
                        .await
                        .expect("sqlite test app");
                    $body
                }
                #[actix_rt::test]
                async fn postgres() {
                    let Some($app) =
                        $crate::helpers::spawn_app_with($crate::helpers::Backend::Postgres, $tweak).await
                    else {
                        return;
                    };
                    $body
                }
            }
        )*
    };
}

/// Runs a test body once per backend with a fresh database and no server (for tests that start
/// their own processes or use the storage layer directly):
/// `db_tests! { async fn name(db) { ... } }` makes `name::sqlite` and `name::postgres`.
#[macro_export]
macro_rules! db_tests {
    ($(async fn $name:ident($db:ident) $body:block)*) => {
        $(
            mod $name {
                #[allow(unused_imports)]
                use super::*;
                #[actix_rt::test]
                async fn sqlite() {
                    let $db = $crate::helpers::TestDb::new($crate::helpers::Backend::Sqlite)
                        .await
                        .expect("sqlite db");
                    $body
                }
                #[actix_rt::test]
                async fn postgres() {
                    let Some($db) =
                        $crate::helpers::TestDb::new($crate::helpers::Backend::Postgres).await
                    else {
                        return;
                    };
                    $body
                }
            }
        )*
    };
}

/// A fresh database for one test: a SQLite file in a temp folder or a new PostgreSQL database.
pub struct TestDb {
    pub url: String,
    _dir: tempfile::TempDir,
    pg_drop: Option<(String, String)>,
}

impl TestDb {
    /// `None` when PostgreSQL is not configured (and not required).
    pub async fn new(backend: Backend) -> Option<Self> {
        let dir = tempfile::tempdir().expect("temp dir");
        match backend {
            Backend::Sqlite => Some(Self {
                url: format!("sqlite://{}", dir.path().join("merchantd.db").display()),
                _dir: dir,
                pg_drop: None,
            }),
            Backend::Postgres => {
                let admin_url = postgres_admin_url()?;
                // The pid says whose it is: see `dropper`.
                let name = format!(
                    "mcd_test_{}_{}",
                    std::process::id(),
                    uuid::Uuid::new_v4().simple()
                );
                let mut conn = match sqlx::PgConnection::connect(&admin_url).await {
                    Ok(conn) => conn,
                    Err(e) if !postgres_required() => {
                        eprintln!("notice: PostgreSQL is unreachable ({e}); skipping its variant");
                        return None;
                    }
                    Err(e) => {
                        panic!("MERCHANTD_REQUIRE_POSTGRES=1 but PostgreSQL is unreachable: {e}")
                    }
                };
                sqlx::query(&format!("CREATE DATABASE \"{name}\""))
                    .execute(&mut conn)
                    .await
                    .expect("create test database");
                let _ = conn.close().await;
                let mut url = url::Url::parse(&admin_url).expect("valid postgres url");
                url.set_path(&name);
                Some(Self {
                    url: url.to_string(),
                    _dir: dir,
                    pg_drop: Some((admin_url, name)),
                })
            }
        }
    }

    /// A database the test made itself (a private PostgreSQL cluster, a file on a small disk):
    /// nothing to create or drop; the folder holds the tenants.
    pub fn external(url: &str) -> Self {
        Self {
            url: url.to_owned(),
            _dir: tempfile::tempdir().expect("temp dir"),
            pg_drop: None,
        }
    }

    pub fn dir(&self) -> &Path {
        self._dir.path()
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Some((admin_url, name)) = self.pg_drop.take() {
            // Closed now, so the test server's last connections never pile up to
            // `max_connections`; dropped later by `dropper`. Drop runs outside any runtime
            // we may block: use a thread with its own.
            let closing = (admin_url.clone(), name.clone());
            let _ = std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("runtime");
                rt.block_on(close_database(&closing.0, &closing.1));
            })
            .join();
            let _ = dropper(&admin_url).send(name);
        }
    }
}

/// No new connection to database `name`, and its open ones ended.
async fn close_database(admin_url: &str, name: &str) {
    if let Ok(mut conn) = sqlx::PgConnection::connect(admin_url).await {
        let _ = sqlx::query(&format!(
            "ALTER DATABASE \"{name}\" ALLOW_CONNECTIONS false"
        ))
        .execute(&mut conn)
        .await;
        let _ = sqlx::query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1",
        )
        .bind(name)
        .execute(&mut conn)
        .await;
        let _ = conn.close().await;
    }
}

/// The sender of the thread that drops the test databases of this process, in batches: each
/// DROP forces an immediate checkpoint, which flushes what every running test wrote, so the
/// first of a batch pays for it and the rest find little to write. A process ended before its
/// queue emptied leaves databases named with its pid; the first test of a later run drops
/// those of processes that are gone.
fn dropper(admin_url: &str) -> &'static std::sync::mpsc::Sender<String> {
    static DROPPER: std::sync::OnceLock<std::sync::mpsc::Sender<String>> =
        std::sync::OnceLock::new();
    DROPPER.get_or_init(|| {
        let (send, receive) = std::sync::mpsc::channel::<String>();
        let admin_url = admin_url.to_owned();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(drop_databases(admin_url, receive));
        });
        send
    })
}

async fn drop_databases(admin_url: String, receive: std::sync::mpsc::Receiver<String>) {
    use std::time::{Duration, Instant};
    let drop_one = |name: String| {
        let admin_url = admin_url.clone();
        async move {
            if let Ok(mut conn) = sqlx::PgConnection::connect(&admin_url).await {
                let sql = format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)");
                let _ = sqlx::query(&sql).execute(&mut conn).await;
                let _ = conn.close().await;
            }
        }
    };
    for name in abandoned(&admin_url).await {
        drop_one(name).await;
    }
    let mut pending: Vec<String> = Vec::new();
    let mut oldest = Instant::now();
    loop {
        match receive.recv_timeout(Duration::from_millis(500)) {
            Ok(name) => {
                if pending.is_empty() {
                    oldest = Instant::now();
                }
                pending.push(name);
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return,
        }
        if !pending.is_empty() && oldest.elapsed() >= Duration::from_secs(10) {
            for name in pending.drain(..) {
                drop_one(name).await;
            }
        }
    }
}

/// Test databases whose process is gone (or that predate pids in the names).
async fn abandoned(admin_url: &str) -> Vec<String> {
    let Ok(mut conn) = sqlx::PgConnection::connect(admin_url).await else {
        return Vec::new();
    };
    let names: Vec<String> =
        sqlx::query_scalar(r"SELECT datname FROM pg_database WHERE datname LIKE 'mcd\_test\_%'")
            .fetch_all(&mut conn)
            .await
            .unwrap_or_default();
    let _ = conn.close().await;
    names
        .into_iter()
        .filter(|name| {
            let rest = name.strip_prefix("mcd_test_").unwrap_or_default();
            let pid = rest.split('_').next().unwrap_or_default();
            let alive = pid.parse::<u32>().is_ok_and(|pid| {
                pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists()
            });
            !alive
        })
        .collect()
}

/// The PostgreSQL URL tests create databases through, or `None` to skip. With
/// `MERCHANTD_REQUIRE_POSTGRES=1` a missing URL fails the test instead.
pub fn postgres_admin_url() -> Option<String> {
    static NOTICE: Once = Once::new();
    match std::env::var("MERCHANTD_TEST_POSTGRES_URL") {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            if postgres_required() {
                panic!("MERCHANTD_REQUIRE_POSTGRES=1 but MERCHANTD_TEST_POSTGRES_URL is not set");
            }
            NOTICE.call_once(|| {
                eprintln!(
                    "notice: MERCHANTD_TEST_POSTGRES_URL is not set; PostgreSQL variants of the \
                     tests are skipped"
                )
            });
            None
        }
    }
}

fn postgres_required() -> bool {
    std::env::var("MERCHANTD_REQUIRE_POSTGRES").as_deref() == Ok("1")
}

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
