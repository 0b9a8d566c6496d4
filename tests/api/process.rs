//! The real binary as operators run it: graceful shutdown and what reaches the logs.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use merchantd::db::Db;
use merchantd::metrics::Metrics;

use crate::contract::Checked;
use crate::db_tests;
use crate::helpers::{binary, dump_database, tenants_dir, TestDb, FIXTURE_SECRETS};

/// A `merchantd serve` child process and everything it wrote to stderr.
pub struct Served {
    child: Child,
    pub port: u16,
    lines: mpsc::Receiver<String>,
}

/// Starts `merchantd serve` on a random port against `db` with the fixture tenants.
pub fn serve(db: &TestDb, log_level: &str) -> Served {
    serve_with(db, log_level, &[])
}

/// `merchantd serve` as [`serve`] does, with more `MERCHANTD_*` settings.
pub fn serve_with(db: &TestDb, log_level: &str, settings: &[(&str, &str)]) -> Served {
    let child = serve_command(db)
        .env("RUST_LOG", log_level)
        .envs(settings.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start merchantd");
    watch(child)
}

/// The command line of `serve` on `db` with the fixture tenants and test settings.
pub fn serve_command(db: &TestDb) -> Command {
    let mut command = Command::new(binary());
    command
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--database-url",
            &db.url,
            "--tenants",
        ])
        .arg(tenants_dir(db.dir()))
        .env("MERCHANTD_PBKDF2_ITERATIONS", "1000")
        .env("MERCHANTD_TEST_HOOKS", "true")
        .env("MERCHANTD_LOG_FORMAT", "json")
        .env("MERCHANTD_SHUTDOWN_TIMEOUT_SECS", "10")
        // The load tests are one client's flood; tests/api/limits.rs covers the limits.
        .env("MERCHANTD_API_REQUESTS_PER_SECOND_PER_TOKEN", "0")
        .env("MERCHANTD_API_REQUESTS_PER_SECOND_PER_MERCHANT", "0")
        // Dozens of servers run at once on one PostgreSQL (100 connections): each keeps to a
        // few, or the replica tests starve each other ("too many clients").
        .env("MERCHANTD_DATABASE_MAX_CONNECTIONS", "6");
    command
}

/// Reads the child's log lines and waits for the port it reports.
fn watch(mut child: Child) -> Served {
    let stderr = child.stderr.take().unwrap();
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let port = loop {
        let line = match lines.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => line,
            Err(e) => {
                // Never leave a server that did not start running behind the failed test.
                let _ = child.kill();
                let _ = child.wait();
                panic!("merchantd did not report its port: {e}");
            }
        };
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) {
            if v["message"] == "merchantd listening" {
                break v["port"].as_u64().unwrap() as u16;
            }
        }
    };
    Served { child, port, lines }
}

impl Drop for Served {
    /// A test that fails midway leaves no server behind.
    /// A failing test shows the warnings and errors the server logged, to say why.
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        if std::thread::panicking() {
            for line in self.lines.try_iter().filter(|l| !l.contains("\"INFO\"")) {
                eprintln!("merchantd on port {}: {line}", self.port);
            }
        }
    }
}

impl Served {
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// The process id (replicas name their listening connection after it).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn signal(&self, sig: &str) {
        let status = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits for the process to exit and returns its status and every log line.
    pub fn wait(mut self) -> (std::process::ExitStatus, Vec<String>) {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if std::time::Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("merchantd did not exit after the signal");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut lines = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(Duration::from_millis(500)) {
            lines.push(line);
        }
        (status, lines)
    }
}

db_tests! {
    async fn sigterm_lets_a_request_in_flight_finish_and_exits_zero(db) {
        for signal in ["-TERM", "-INT"] {
            let served = serve(&db, "info");
            let url = served.url("/__test/sleep/1500");
            let request = tokio::spawn(async move { reqwest::Client::new().get(url).checked().await });
            tokio::time::sleep(Duration::from_millis(400)).await;
            served.signal(signal);
            let res = match request.await.unwrap() {
                Ok(res) => res,
                Err(e) => {
                    let (_, lines) = tokio::task::spawn_blocking(move || served.wait()).await.unwrap();
                    panic!("the request in flight was not answered: {e}\n{}", lines.join("\n"));
                }
            };
            assert_eq!(res.status(), 200);
            let body: serde_json::Value = res.json().await.unwrap();
            assert_eq!(body["sleptMillis"], 1500);
            let (status, _) = tokio::task::spawn_blocking(move || served.wait()).await.unwrap();
            assert_eq!(status.code(), Some(0), "{signal}");
        }
    }

    // An event stream never finishes by itself: on SIGTERM it is told to resume elsewhere and
    // ends, so the server exits without waiting out its shutdown timeout (10 s here) for it.
    async fn sigterm_ends_open_event_streams_with_a_reason(db) {
        let served = serve(&db, "info");
        let (token, _) = crate::crash::token_for_demo_owner(&db).await;
        let res = reqwest::Client::new()
            .get(served.url("/events"))
            .bearer_auth(&token)
            .header("x-accept-version", "2.0")
            .checked()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        served.signal("-TERM");
        let body = tokio::time::timeout(Duration::from_secs(8), res.text())
            .await
            .expect("the stream ends before the shutdown timeout")
            .unwrap();
        assert!(
            body.contains("event: end\ndata: {\"reason\": \"the server is stopping; resume with Last-Event-ID\"}"),
            "{body}"
        );
        let (status, _) = tokio::task::spawn_blocking(move || served.wait()).await.unwrap();
        assert_eq!(status.code(), Some(0));
    }

    async fn no_secret_or_token_reaches_the_logs_or_the_database(db) {
        let served = serve(&db, "trace");
        // A token for the demo owner, straight into the same database.
        let database = Db::connect(&db.url, Metrics::new()).await.unwrap();
        let token = merchantd::crypto::random_token("mcd_at_");
        let ids: Vec<(i64, i64, i64)> = sqlx::query_as(
            "SELECT e.merchant_id, e.id, a.id FROM employees e JOIN applications a \
             ON a.merchant_id = e.merchant_id WHERE e.email = 'owner@demo.test'",
        )
        .fetch_all(&crate::helpers::raw_pool(&db.url).await)
        .await
        .unwrap();
        let (merchant_id, employee_id, application_id) = ids[0];
        database
            .issue_access_token(
                &merchantd::domain::oauth::token::NewFamily {
                    id: "family-1".into(),
                    merchant_id,
                    employee_id,
                    application_id,
                    scope: "read".into(),
                },
                &merchantd::crypto::sha256_hex(&token),
                merchantd::domain::now_millis() + 60_000,
            )
            .await
            .unwrap();
        let client = reqwest::Client::new();
        for (path, expected) in [("/no-such-route", 404), ("/product", 200)] {
            let res = client
                .get(served.url(path))
                .bearer_auth(&token)
                .header("x-accept-version", "2.0")
                .checked()
                .await
                .unwrap();
            assert_eq!(res.status(), expected, "{path}");
        }
        let rows = dump_database(&crate::helpers::raw_pool(&db.url).await).await.join("\n");
        database.close().await;
        served.signal("-TERM");
        let (status, lines) = tokio::task::spawn_blocking(move || served.wait()).await.unwrap();
        assert_eq!(status.code(), Some(0));
        let logs = lines.join("\n");
        assert!(logs.contains("\"route\""), "request lines were logged");
        for secret in FIXTURE_SECRETS.iter().copied().chain([token.as_str()]) {
            assert!(!logs.contains(secret), "{secret} appeared in the logs");
            assert!(!rows.contains(secret), "{secret} appeared in the database");
        }
    }
}
