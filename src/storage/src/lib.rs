//! merchantd's storage: the only crate that speaks SQL. It implements the ports of
//! `merchantd-ports` (`adapters`) on SQLite and PostgreSQL.
//!
//! One [`Db`] serves SQLite (the embedded default) and PostgreSQL through sqlx's `Any` driver:
//! every statement is written once in the dialect both understand (`$1` placeholders,
//! `RETURNING`, `ON CONFLICT`), and the few places where the dialects differ branch on
//! [`Backend`] next to the statement. Columns are BIGINT, TEXT, DOUBLE and BLOB only — the types
//! `Any` carries faithfully on both — with flags as 0/1, times as epoch milliseconds and money as
//! decimal text.
//!
//! The shared parts sit at the top (the pool and its writer, transactions, rows from
//! declarations, group writes, events, identifiers); each feature's rows have a folder:
//! `catalogue`, `stock`, `sales`, `offline`, `customers`, `people`, `webhooks`, `fleet`.

#![forbid(unsafe_code)]

pub mod adapters;
pub mod catalogue;
mod checkpoint;
pub mod customers;
mod declared;
mod error;
pub mod events;
pub mod files;
pub mod fleet;
pub mod group;
pub mod idempotency;
mod ids;
mod kinds;
pub mod logs;
mod notify;
pub mod offline;
pub mod people;
mod records;
pub mod rows;
pub mod sales;
pub mod stock;
mod tx;
pub mod webhooks;
mod writer;

use std::sync::Arc;
use std::time::{Duration, Instant};

use sqlx::any::AnyPoolOptions;
use sqlx::{AnyPool, Executor};

pub use error::DbError;
pub use fleet::catch_up::Plan as CatchUpPlan;
pub use notify::{Announcement, Coherence, Listener, Replicas};
pub use ports::SalesFilter;
pub use records::{Record, SalesRecord};
pub use tx::Tx;
use writer::Writer;

use metrics::Metrics;

/// The SQLite writer's page cache, in KiB (see `connect_with`).
const WRITER_CACHE_KIB: u32 = 32 * 1024;

/// Every migration of each database, as the build compiled them in (`build.rs`).
mod migrations {
    include!(concat!(env!("OUT_DIR"), "/migrations.rs"));
}

static SQLITE_MIGRATIONS: std::sync::LazyLock<sqlx::migrate::Migrator> =
    std::sync::LazyLock::new(|| migrator(migrations::SQLITE));
static POSTGRES_MIGRATIONS: std::sync::LazyLock<sqlx::migrate::Migrator> =
    std::sync::LazyLock::new(|| migrator(migrations::POSTGRES));

/// The migrations as sqlx runs them: each checked by its SHA-384, each in a transaction of
/// its own unless its text opts out (`-- no-transaction`).
fn migrator(list: &'static [(i64, &'static str, &'static str)]) -> sqlx::migrate::Migrator {
    use sqlx::migrate::{Migration, MigrationType};
    use std::borrow::Cow;
    let migrations = list
        .iter()
        .map(|(version, description, sql)| {
            Migration::new(
                *version,
                Cow::Borrowed(*description),
                MigrationType::Simple,
                Cow::Borrowed(*sql),
                sql.starts_with("-- no-transaction"),
            )
        })
        .collect();
    sqlx::migrate::Migrator {
        migrations: Cow::Owned(migrations),
        ignore_missing: false,
        locking: true,
        no_tx: false,
    }
}

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

/// The storage handle shared by actors and services. Cheap to clone. Reads run on the pool;
/// every write runs in a [`Tx`] from [`Db::begin`].
#[derive(Clone)]
pub struct Db {
    inner: Arc<Inner>,
}

struct Inner {
    pool: AnyPool,
    backend: Backend,
    /// Kept for the listening connection; never printed.
    url: String,
    coherence: Coherence,
    metrics: Metrics,
    /// SQLite's one writer (group commit); PostgreSQL writes use pool transactions.
    writer: Option<Arc<Writer>>,
    ids: ids::IdBlocks,
    /// Counts this process's commits that appended events (the webhook dispatcher wakes).
    events_committed: tokio::sync::watch::Sender<u64>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("backend", &self.inner.backend)
            .finish()
    }
}

/// How the pool is made.
#[derive(Clone, Copy, Debug)]
pub struct PoolSettings {
    pub sqlite_writes: SqliteWrites,
    /// Connections to PostgreSQL at most (at least 2: a group's write and a read).
    pub postgres_connections: u32,
    /// SQLite: log pages past which the writer makes the log start over (see `checkpoint`).
    pub sqlite_log_restart_pages: u32,
}

impl Default for PoolSettings {
    fn default() -> Self {
        Self {
            sqlite_writes: SqliteWrites::default(),
            postgres_connections: 20,
            sqlite_log_restart_pages: 16_384,
        }
    }
}

/// How SQLite writes are committed (PostgreSQL always uses pool transactions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SqliteWrites {
    /// One connection writes for the whole process and commits everything queued at once.
    #[default]
    Shared,
    /// Every write takes its own pool connection and transaction (for comparison).
    PerTransaction,
}

impl Db {
    /// Connects to `url` (`sqlite://...` or `postgres://...`). A SQLite file and its folder are
    /// created when missing; SQLite runs in WAL mode with foreign keys and a busy timeout.
    pub async fn connect(url: &str, metrics: Metrics) -> Result<Self, DbError> {
        Self::connect_with(url, metrics, PoolSettings::default()).await
    }

    pub async fn connect_with(
        url: &str,
        metrics: Metrics,
        settings: PoolSettings,
    ) -> Result<Self, DbError> {
        let sqlite_writes = settings.sqlite_writes;
        let restart_pages = settings.sqlite_log_restart_pages;
        sqlx::any::install_default_drivers();
        let backend = Backend::from_url(url)?;
        let pool = match backend {
            Backend::Sqlite => {
                let url = prepare_sqlite_url(url)?;
                // WAL allows one writer beside many readers; a handful of connections is plenty.
                AnyPoolOptions::new()
                    .max_connections(8)
                    .acquire_timeout(Duration::from_secs(10))
                    .after_connect(|conn, _meta| {
                        Box::pin(async move {
                            // FULL: a commit is on disk before the write is answered (a 201
                            // means durable, power loss included); NORMAL would only survive a
                            // crash of the process.
                            // Readers keep a small page cache of their own (the operating
                            // system caches the file for all of them): eight connections of
                            // 2 MiB each held more than a merchant's whole catalogue.
                            conn.execute(
                                "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; \
                                 PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 10000; \
                                 PRAGMA cache_size = -256;",
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
                    .max_connections(settings.postgres_connections.max(2))
                    .acquire_timeout(Duration::from_secs(10))
                    .connect(url)
                    .await?
            }
        };
        let writer = match (backend, sqlite_writes) {
            (Backend::Sqlite, SqliteWrites::Shared) => {
                let mut conn = pool.acquire().await?.detach();
                // The one writer's cache holds every page a group's transaction dirties: when
                // it is full, SQLite spills dirty pages to the log in the middle of the
                // transaction and writes them again at the commit (with SQLite's default 2 MiB,
                // a sync of 200 sales spent 5 % of the writer thread in those spills). Pages
                // are allocated as they are used, so the cap costs only what groups touch.
                // Each write's savepoint keeps its sub-journal in memory up to 64 MiB (the
                // bundled SQLite is built so: .cargo/config.toml).
                // Checkpoints are left to a task of their own (`checkpoint`).
                // When the log starts over, its file is cut back to the restart length rather
                // than kept at the longest it ever was.
                conn.execute(&*format!(
                    "PRAGMA cache_size = -{WRITER_CACHE_KIB}; PRAGMA wal_autocheckpoint = 0; \
                     PRAGMA journal_size_limit = {};",
                    u64::from(restart_pages) * 4096
                ))
                .await?;
                let log = checkpoint::Log::restarting_at(restart_pages);
                let writer = Writer::start(conn, log.clone(), metrics.clone());
                checkpoint::start(pool.clone(), writer.commits(), log);
                Some(writer)
            }
            _ => None,
        };
        Ok(Self {
            inner: Arc::new(Inner {
                pool,
                backend,
                url: url.to_owned(),
                coherence: Coherence::new(backend),
                metrics,
                writer,
                ids: ids::IdBlocks::default(),
                events_committed: tokio::sync::watch::Sender::new(0),
            }),
        })
    }

    pub fn backend(&self) -> Backend {
        self.inner.backend
    }

    /// Changes whenever this process commits a transaction that appended events: how the
    /// webhook dispatcher hears of work without polling fast. Other processes' commits reach
    /// it by its poll.
    pub fn commits(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.events_committed.subscribe()
    }

    pub(crate) fn note_events_committed(&self) {
        self.inner
            .events_committed
            .send_modify(|n| *n = n.wrapping_add(1));
    }

    /// True when other processes may write to the same database (PostgreSQL): writes then
    /// claim their merchant's row, and replicas announce their commits to each other.
    pub fn is_shared(&self) -> bool {
        self.inner.backend == Backend::Postgres
    }

    pub(crate) fn pool(&self) -> &AnyPool {
        &self.inner.pool
    }

    /// Starts a write transaction. On SQLite it is a savepoint inside the shared writer's
    /// transaction, committed together with every write queued beside it; on PostgreSQL a
    /// transaction of its own. Either way [`Tx::commit`] returns once the write is durable.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn begin(&self) -> Result<Tx, DbError> {
        let started = Instant::now();
        let tx = match &self.inner.writer {
            Some(writer) => Tx::shared(writer.lease().await?, self.clone()),
            None => Tx::own(self.inner.pool.begin().await?, self.clone()),
        };
        self.observe("begin", started);
        Ok(tx)
    }

    /// Applies every pending migration of the backend.
    pub async fn migrate(&self) -> Result<(), DbError> {
        match self.inner.backend {
            Backend::Sqlite => SQLITE_MIGRATIONS.run(&self.inner.pool).await?,
            Backend::Postgres => POSTGRES_MIGRATIONS.run(&self.inner.pool).await?,
        }
        Ok(())
    }

    /// Keeps SQLite's query planner informed: statistics for tables that have none or whose
    /// size changed a lot (`PRAGMA optimize`, each table sampled, a few milliseconds). Without
    /// them the planner may pick an index that covers every order a merchant ever took over
    /// the partial index of its open ones. PostgreSQL's autovacuum does this by itself.
    pub async fn optimize(&self) -> Result<(), DbError> {
        if self.inner.backend == Backend::Sqlite {
            let started = Instant::now();
            let mut conn = self.inner.pool.acquire().await?;
            conn.execute("PRAGMA analysis_limit = 400; PRAGMA optimize = 0x10002;")
                .await?;
            self.observe("optimize", started);
        }
        Ok(())
    }

    /// True while the database answers a trivial query.
    pub async fn ping(&self) -> bool {
        let started = Instant::now();
        // Bounded: a database that stopped answering (a black-holed connection) is not ready,
        // and the probe must say so before the prober's own timeout.
        let ok = tokio::time::timeout(
            Duration::from_secs(2),
            sqlx::query("SELECT 1").execute(&self.inner.pool),
        )
        .await
        .is_ok_and(|answer| answer.is_ok());
        self.observe("ping", started);
        ok
    }

    /// Commits what the writer holds, waits for connections in use and closes every one.
    pub async fn close(&self) {
        if let Some(writer) = &self.inner.writer {
            writer.close().await;
        }
        self.inner.pool.close().await
    }

    pub(crate) fn observe(&self, op: &'static str, started: Instant) {
        self.inner
            .metrics
            .db_query_duration
            .with_label_values(&[op])
            .observe(started.elapsed().as_secs_f64());
    }

    pub(crate) fn count_commit(&self) {
        self.inner.metrics.db_commits.inc();
    }

    /// As [`Db::allocate_ids`], refilling the block through `tx` (which may hold the only
    /// connection this write can get: a second one could wait for a pool that every claimed
    /// write is holding). Sequences are not rolled back, so the block stays valid even if
    /// `tx` is.
    pub async fn allocate_ids_in(&self, tx: &mut Tx, n: usize) -> Result<Vec<i64>, DbError> {
        if n == 0 {
            return Ok(Vec::new());
        }
        if let Some(ids) = self.inner.ids.take(n) {
            return Ok(ids);
        }
        let reserved = tx.take_ids(n.max(ids::BLOCK) as i64).await?;
        Ok(self.inner.ids.refill(reserved, n))
    }

    /// `n` identifiers for new records, unique across all merchants. They come from blocks
    /// reserved in the database, so most calls touch no table.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn allocate_ids(&self, n: usize) -> Result<Vec<i64>, DbError> {
        if n == 0 {
            return Ok(Vec::new());
        }
        if let Some(ids) = self.inner.ids.take(n) {
            return Ok(ids);
        }
        let block = n.max(ids::BLOCK);
        let mut tx = self.begin().await?;
        let reserved = tx.take_ids(block as i64).await?;
        tx.commit().await?;
        Ok(self.inner.ids.refill(reserved, n))
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

/// False for text no column holds: PostgreSQL refuses a NUL character in text outright (an
/// error, not a miss), so a look-up by such a key is answered "none" without asking.
pub(crate) fn storable(text: &str) -> bool {
    !text.contains('\0')
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

/// Held by the one process serving a SQLite file: a second `serve` on the same file would
/// keep caches that never hear the first one's writes, so it refuses to start.
#[derive(Debug)]
pub struct ServingLock {
    _file: std::fs::File,
}

impl Db {
    /// Takes the SQLite file's serving lock (`<file>.lock`, released when the process ends,
    /// however it ends). `None` on PostgreSQL, where replicas coordinate through the database.
    pub fn lock_for_serving(&self) -> Result<Option<ServingLock>, DbError> {
        if self.is_shared() {
            return Ok(None);
        }
        let rest = self
            .inner
            .url
            .trim_start_matches("sqlite:")
            .trim_start_matches("//");
        let path = rest.split_once('?').map_or(rest, |(p, _)| p);
        if path.is_empty() || path == ":memory:" {
            return Ok(None);
        }
        let lock_path = format!("{path}.lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| DbError::Config(format!("cannot open {lock_path}: {e}")))?;
        match file.try_lock() {
            Ok(()) => Ok(Some(ServingLock { _file: file })),
            Err(std::fs::TryLockError::WouldBlock) => Err(DbError::Config(format!(
                "another merchantd is already serving the SQLite database {path} (it holds \
                 {lock_path}); SQLite serves one process: stop the other one, or use PostgreSQL \
                 to run several replicas"
            ))),
            Err(std::fs::TryLockError::Error(e)) => {
                Err(DbError::Config(format!("cannot lock {lock_path}: {e}")))
            }
        }
    }
}
