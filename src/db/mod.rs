//! The storage layer: the only module that speaks SQL.
//!
//! One [`Db`] serves SQLite (the embedded default) and PostgreSQL through sqlx's `Any` driver:
//! every statement is written once in the dialect both understand (`$1` placeholders,
//! `RETURNING`, `ON CONFLICT`), and the few places where the dialects differ branch on
//! [`Backend`] next to the statement. Columns are BIGINT, TEXT, DOUBLE and BLOB only — the types
//! `Any` carries faithfully on both — with flags as 0/1, times as epoch milliseconds and money as
//! decimal text.

pub mod catalogue;
mod error;
pub mod files;
pub mod logs;
pub mod merchants;
pub mod oauth;
pub mod people;
pub mod products;
pub mod reconcile;
pub mod report;
pub mod rows;
pub mod sales;
pub mod stock;
pub mod suppliers;
pub mod tenants;

use std::time::{Duration, Instant};

use sqlx::any::AnyPoolOptions;
use sqlx::{AnyConnection, AnyPool, Executor};

pub use error::DbError;

use crate::metrics::Metrics;

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn from_url(url: &str) -> Result<Self, DbError> {
        if url.starts_with("sqlite:") {
            Ok(Backend::Sqlite)
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Ok(Backend::Postgres)
        } else {
            Err(DbError::Config(format!(
                "unsupported database URL (expected sqlite://... or postgres://...): {}",
                redact_url(url)
            )))
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

/// The storage handle shared by actors and handlers. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Db {
    pool: AnyPool,
    backend: Backend,
    metrics: Metrics,
}

impl Db {
    /// Connects to `url` (`sqlite://...` or `postgres://...`). A SQLite file and its folder are
    /// created when missing; SQLite runs in WAL mode with foreign keys and a busy timeout.
    pub async fn connect(url: &str, metrics: Metrics) -> Result<Self, DbError> {
        sqlx::any::install_default_drivers();
        let backend = Backend::from_url(url)?;
        let pool = match backend {
            Backend::Sqlite => {
                let url = prepare_sqlite_url(url)?;
                // WAL allows one writer beside many readers; a handful of connections is plenty
                // and keeps writers from starving each other on the file lock.
                AnyPoolOptions::new()
                    .max_connections(8)
                    .acquire_timeout(Duration::from_secs(10))
                    .after_connect(|conn, _meta| {
                        Box::pin(async move {
                            // FULL: a commit is on disk before the write is answered (a 201
                            // means durable, power loss included); NORMAL would only survive a
                            // crash of the process.
                            conn.execute(
                                "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; \
                                 PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 10000;",
                            )
                            .await?;
                            Ok(())
                        })
                    })
                    .connect(&url)
                    .await?
            }
            Backend::Postgres => {
                AnyPoolOptions::new()
                    .max_connections(20)
                    .acquire_timeout(Duration::from_secs(10))
                    .connect(url)
                    .await?
            }
        };
        Ok(Self {
            pool,
            backend,
            metrics,
        })
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// Applies every pending migration of the backend.
    pub async fn migrate(&self) -> Result<(), DbError> {
        match self.backend {
            Backend::Sqlite => SQLITE_MIGRATIONS.run(&self.pool).await?,
            Backend::Postgres => POSTGRES_MIGRATIONS.run(&self.pool).await?,
        }
        Ok(())
    }

    /// True while the database answers a trivial query.
    pub async fn ping(&self) -> bool {
        let started = Instant::now();
        let ok = sqlx::query("SELECT 1").execute(&self.pool).await.is_ok();
        self.observe("ping", started);
        ok
    }

    /// Waits for connections in use and closes every connection.
    pub async fn close(&self) {
        self.pool.close().await
    }

    pub(crate) fn observe(&self, op: &'static str, started: Instant) {
        self.metrics
            .db_query_duration
            .with_label_values(&[op])
            .observe(started.elapsed().as_secs_f64());
    }

    /// Takes `n` identifiers, unique across all merchants, inside the caller's transaction.
    pub(crate) async fn next_ids(
        &self,
        conn: &mut AnyConnection,
        n: i64,
    ) -> Result<Vec<i64>, DbError> {
        match self.backend {
            Backend::Postgres => {
                let rows: Vec<(i64,)> =
                    sqlx::query_as("SELECT nextval('global_id_seq') FROM generate_series(1, $1)")
                        .bind(n)
                        .fetch_all(&mut *conn)
                        .await?;
                Ok(rows.into_iter().map(|(id,)| id).collect())
            }
            Backend::Sqlite => {
                let (end,): (i64,) = sqlx::query_as(
                    "UPDATE id_allocator SET next_id = next_id + $1 WHERE k = 1 RETURNING next_id",
                )
                .bind(n)
                .fetch_one(&mut *conn)
                .await?;
                Ok((end - n..end).collect())
            }
        }
    }

    pub(crate) async fn next_id(&self, conn: &mut AnyConnection) -> Result<i64, DbError> {
        self.next_ids(conn, 1)
            .await?
            .pop()
            .ok_or_else(|| DbError::Corrupt("the id allocator returned nothing".into()))
    }
}

/// Makes sure the SQLite file may be created and its folder exists.
fn prepare_sqlite_url(url: &str) -> Result<String, DbError> {
    let rest = url.trim_start_matches("sqlite:").trim_start_matches("//");
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    if path != ":memory:" && !path.is_empty() {
        if let Some(parent) = std::path::Path::new(path).parent() {
            if !parent.as_os_str().is_empty() {
                std::fs::create_dir_all(parent).map_err(|e| {
                    DbError::Config(format!("cannot create {}: {e}", parent.display()))
                })?;
            }
        }
    }
    if query.split('&').any(|kv| kv.starts_with("mode=")) {
        Ok(url.to_owned())
    } else if query.is_empty() {
        Ok(format!("sqlite://{path}?mode=rwc"))
    } else {
        Ok(format!("sqlite://{path}?{query}&mode=rwc"))
    }
}

/// Removes a password from a database URL so it can be printed.
pub fn redact_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        Ok(parsed) => parsed.to_string(),
        Err(_) => "<unparseable URL>".to_owned(),
    }
}

/// Milliseconds since the Unix epoch: the one time representation stored in both databases.
pub fn now_millis() -> i64 {
    chrono::Utc::now().timestamp_millis()
}
