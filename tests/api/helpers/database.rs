//! The test's database: a SQLite file in a temporary folder, or a PostgreSQL database of its
//! own, dropped in the background when the test ends.

use super::*;

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
