//! Building and running the server from [`Settings`] (no globals, so tests can run several).

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use actix_web::{web, HttpServer};
use anyhow::Context;

use crate::config::Settings;
use crate::db::adapters::{PodReplicas, PodStorage};
use crate::db::fleet::pods::{Pod, Pods};
use crate::db::fleet::Fleet;
use crate::db::{Db, PoolSettings, ServingLock};
use crate::engine::merchant::registry::RegistryConfig;
use crate::engine::merchant::replicas;
use crate::engine::services::Services;
use crate::engine::{Merchants, TokenActors};
use crate::http::oauth::OAuth;
use crate::http::{self, AppState};
use crate::metrics::Metrics;
use crate::tenants;

/// Token actor shards. Each runs the grants queued for it as one batch, so fewer shards make
/// bigger batches and fewer statements per grant; two keep a code exchange from waiting behind
/// a whole batch. Refresh grants, 64 connections: 8 shards 3,937/s on SQLite and 5,641/s on
/// PostgreSQL; 2 shards 4,899/s and 7,684/s; 1 shard no better than 2 (docs/performance.md).
const TOKEN_SHARDS: usize = 2;

/// A server bound to its port(s) and ready to run.
pub struct Application {
    port: u16,
    signals: Signals,
    tenants: Vec<tenants::AppliedTenant>,
    metrics_port: Option<u16>,
    db: Db,
    server: actix_web::dev::Server,
    metrics_server: Option<actix_web::dev::Server>,
    /// Ended first when the server stops (see `run_until_stopped`).
    streams: Arc<http::events::OpenStreams>,
    /// Stopped once requests are answered, before the database closes.
    webhooks: Vec<crate::webhooks::Dispatching>,
    pods: Pods,
    shutdown_timeout: Duration,
    /// SQLite: this process alone serves the file, for as long as it runs.
    _serving: Option<ServingLock>,
}

/// How the process hosting the server wants signals handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signals {
    /// Stop gracefully on SIGTERM/SIGINT (the binary).
    Handle,
    /// Leave signals alone (tests embedding the server).
    Ignore,
}

impl Application {
    /// Connects, migrates, applies the tenant manifests and binds the listener(s).
    pub async fn build(settings: Settings, signals: Signals) -> anyhow::Result<Self> {
        let metrics = Metrics::new();
        let pool = PoolSettings {
            postgres_connections: settings.database_max_connections,
            sqlite_log_restart_pages: settings.sqlite_log_restart_pages.max(1),
            ..PoolSettings::default()
        };
        let database = Db::connect_with(&settings.database_url, metrics.clone(), pool)
            .await
            .context("connecting to the database")?;
        let serving = database.lock_for_serving()?;
        database.migrate().await.context("applying migrations")?;
        database
            .optimize()
            .await
            .context("gathering planner statistics")?;
        let pods = open_pods(&settings, database.clone(), &metrics, pool).await?;
        let files = tenants::manifests_in(&settings.tenants)?;
        let applied =
            tenants::apply_files_placed(&pods, &files, settings.pbkdf2_iterations).await?;
        for t in &applied {
            tracing::info!(file = %t.file, merchant = %t.key, merchant_id = t.id, "tenant applied");
        }

        let settings = Arc::new(settings);
        let storage = PodStorage::new(pods.clone());
        let tokens = TokenActors::start(Arc::new(storage.clone()), TOKEN_SHARDS, &metrics);
        let state = web::Data::new(AppState {
            settings: settings.clone(),
            metrics: metrics.clone(),
            tokens: tokens.clone(),
            oauth: OAuth::new(),
            services: Services::new(
                Arc::new(storage.clone()),
                Arc::new(Fleet::new(pods.clone())),
            ),
            limits: Arc::new(http::rate::ApiLimits::new(
                http::rate::Limit {
                    per_second: settings.api_requests_per_second_per_token,
                    burst: settings.api_burst_per_token,
                },
                http::rate::Limit {
                    per_second: settings.api_requests_per_second_per_merchant,
                    burst: settings.api_burst_per_merchant,
                },
                metrics.api_rate_limited.clone(),
            )),
            streams: Default::default(),
            merchants: Merchants::start(
                std::sync::Arc::new(storage),
                metrics.clone(),
                RegistryConfig {
                    idle: Duration::from_secs(settings.merchant_idle_secs),
                    files_base: &settings.public_base_url(),
                    product_quota: usize::try_from(settings.quota_products).unwrap_or(usize::MAX),
                    window: settings.sales_window,
                    write_delay: if settings.test_hooks {
                        Duration::from_millis(settings.test_write_delay_ms)
                    } else {
                        Duration::ZERO
                    },
                    render: Arc::new(crate::views::Renderer),
                },
            ),
        });
        for pod in pods.all() {
            listen_for_replicas(&settings, &pod.db, &pods, &state, &metrics).await;
        }
        let webhooks = start_webhooks(&settings, &pods, &state, &metrics);
        spawn_maintenance(
            tokens.clone(),
            pods.clone(),
            state.limits.clone(),
            settings.event_retention_days,
        );
        spawn_digest_follower(state.services.digests.clone());
        spawn_merchant_purge(
            state.services.operator.clone(),
            tokens,
            Duration::from_secs(settings.merchant_purge_interval_secs.max(1)),
        );

        let (port, server) = serve_api(&settings, &state)?;
        let (metrics_port, metrics_server) = serve_metrics(&settings, &state)?;

        Ok(Self {
            port,
            signals,
            tenants: applied,
            metrics_port,
            db: database,
            server,
            metrics_server,
            streams: state.streams.clone(),
            webhooks,
            pods,
            shutdown_timeout: Duration::from_secs(settings.shutdown_timeout_secs),
            _serving: serving,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The merchants the manifests created or updated at start-up, with their ids.
    pub fn tenants(&self) -> &[tenants::AppliedTenant] {
        &self.tenants
    }

    pub fn metrics_port(&self) -> Option<u16> {
        self.metrics_port
    }

    pub fn db(&self) -> &Db {
        &self.db
    }

    /// A handle that stops the server gracefully.
    pub fn handle(&self) -> actix_web::dev::ServerHandle {
        self.server.handle()
    }

    /// Serves until stopped (a signal or the handle), lets in-flight requests finish within
    /// `shutdown_timeout_secs`, then closes the pool.
    pub async fn run_until_stopped(self) -> anyhow::Result<()> {
        let metrics_handle = self.metrics_server.as_ref().map(|s| s.handle());
        if self.signals == Signals::Handle {
            let handle = self.server.handle();
            let streams = self.streams.clone();
            actix_rt::spawn(async move {
                wait_for_stop_signal().await;
                tracing::info!("stop signal received; finishing requests in flight");
                // An event stream never finishes by itself: each ends now (within a second),
                // telling its client to resume elsewhere, instead of holding the shutdown for
                // its whole timeout.
                streams.close_all();
                handle.stop(true).await;
            });
        }
        if let Some(ms) = self.metrics_server {
            actix_rt::spawn(ms);
        }
        let result = self.server.await;
        if let Some(h) = metrics_handle {
            h.stop(true).await;
        }
        // Deliveries sent but not yet recorded would be sent again by the next process.
        for webhooks in &self.webhooks {
            webhooks.stop(self.shutdown_timeout).await;
        }
        for pod in self.pods.all() {
            pod.db.close().await;
        }
        tracing::info!("server stopped");
        Ok(result?)
    }
}

/// Resolves on the first SIGTERM or SIGINT (Ctrl-C elsewhere).
async fn wait_for_stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            _ => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Deletes OAuth tombstones a day after they expired, every ten minutes.
/// Binds the API listener (HTTPS when a certificate is configured). Slow or greedy clients:
/// a request head must arrive within its timeout (a client trickling headers is cut off with
/// 408), idle connections close, and each worker holds a bounded number of connections.
fn serve_api(
    settings: &Settings,
    state: &web::Data<AppState>,
) -> anyhow::Result<(u16, actix_web::dev::Server)> {
    let listener =
        TcpListener::bind(&settings.bind).with_context(|| format!("binding {}", settings.bind))?;
    let port = listener.local_addr()?.port();
    let separate_metrics = settings.metrics_bind.is_some();
    let api_state = state.clone();
    let mut server = HttpServer::new(move || {
        http::app(api_state.clone(), !separate_metrics, crate::openapi::routes)
    })
    .shutdown_timeout(settings.shutdown_timeout_secs)
    .client_request_timeout(Duration::from_secs(settings.client_request_timeout_secs))
    .client_disconnect_timeout(Duration::from_secs(2))
    .keep_alive(Duration::from_secs(settings.keep_alive_secs))
    .max_connections(settings.max_connections);
    if settings.workers > 0 {
        server = server.workers(settings.workers);
    }
    // actix treats SIGINT as a forced stop; DESIGN §2 wants both signals graceful, so signals
    // are handled here (see `run_until_stopped`).
    let server = server.disable_signals();
    let server = match (&settings.tls_cert, &settings.tls_key) {
        (Some(cert), Some(key)) => {
            let certificates = crate::tls::Certificates::load(cert, key)?;
            crate::tls::reload_on_sighup(certificates.clone())?;
            server.listen_rustls_0_23(listener, certificates.server_config()?)?
        }
        (None, None) => server.listen(listener)?,
        _ => anyhow::bail!("tls_cert and tls_key go together: set both, or neither"),
    };
    Ok((port, server.run()))
}

/// `/metrics` on its own listener when `metrics_bind` is set.
fn serve_metrics(
    settings: &Settings,
    state: &web::Data<AppState>,
) -> anyhow::Result<(Option<u16>, Option<actix_web::dev::Server>)> {
    let Some(bind) = &settings.metrics_bind else {
        return Ok((None, None));
    };
    let listener = TcpListener::bind(bind).with_context(|| format!("binding {bind}"))?;
    let port = listener.local_addr()?.port();
    let metrics_state = state.clone();
    let server = HttpServer::new(move || {
        actix_web::App::new()
            .app_data(metrics_state.clone())
            .route("/metrics", web::get().to(http::health::metrics))
    })
    .workers(1)
    .disable_signals();
    Ok((Some(port), Some(server.listen(listener)?.run())))
}

/// A webhook dispatcher per pod.
fn start_webhooks(
    settings: &Settings,
    pods: &Pods,
    state: &AppState,
    metrics: &Metrics,
) -> Vec<crate::webhooks::Dispatching> {
    pods.all()
        .iter()
        .filter_map(|pod| {
            crate::webhooks::start(
                Arc::new(pod.db.clone()),
                state.merchants.clone(),
                Arc::new(crate::views::Renderer),
                metrics.webhooks.clone(),
                crate::webhooks::DispatcherConfig::from_settings(settings),
            )
        })
        .collect()
}

/// The home database and the pods the settings list, each connected and migrated.
async fn open_pods(
    settings: &Settings,
    home: Db,
    metrics: &Metrics,
    pool: PoolSettings,
) -> anyhow::Result<Pods> {
    let mut others = Vec::new();
    for (name, url) in crate::db::fleet::pods::parse_pods(&settings.pods)? {
        let db = Db::connect_with(&url, metrics.clone(), pool)
            .await
            .with_context(|| format!("connecting to pod {name}"))?;
        others.push(Pod { name, db });
    }
    Pods::open(home, others).await.context("opening the pods")
}

/// On PostgreSQL, hears the other replicas' writes; the server starts serving once it does (or
/// after a few seconds without: it then reports not ready until it can).
async fn listen_for_replicas(
    settings: &Settings,
    db: &Db,
    pods: &Pods,
    state: &AppState,
    metrics: &Metrics,
) {
    let retry = match settings.test_listen_retry_ms {
        ms if settings.test_hooks && ms > 0 => Duration::from_millis(ms),
        _ => replicas::FIRST_RETRY,
    };
    let Some(feed) = db.replicas() else {
        return;
    };
    replicas::listen(
        Arc::new(PodReplicas {
            replicas: feed,
            pods: pods.clone(),
        }),
        state.merchants.clone(),
        state.tokens.clone(),
        metrics.clone(),
        retry,
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !db.coherence().is_live() && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    if !db.coherence().is_live() {
        tracing::warn!("not yet listening for other replicas; not ready until then");
    }
}

/// Keeps the digests of the merchants whose digests are read current (services::digests).
fn spawn_digest_follower(follower: crate::engine::offline::digests::DigestFollower) {
    actix_rt::spawn(async move {
        let mut tick = tokio::time::interval(crate::engine::offline::digests::EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            follower.follow(crate::domain::now_millis()).await;
        }
    });
}

/// Every `every`: the merchants the operator deleted whose grace period has passed lose their
/// rows. Every replica sweeps; each merchant's removal is one transaction that re-checks its
/// time, so two replicas never remove one twice and a resume that committed first wins.
/// This replica forgets its cached tokens after a removal (the others hear the commit).
fn spawn_merchant_purge(
    operator: crate::engine::fleet::operator::Operator,
    tokens: TokenActors,
    every: Duration,
) {
    actix_rt::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            match operator.purge_due().await {
                Ok(0) => {}
                Ok(_) => tokens.forget_cached_tokens(),
                Err(e) => tracing::warn!(error = %e, "removing deleted merchants failed"),
            }
        }
    });
}

/// Every ten minutes: expired OAuth records and idempotency keys go; every hour, SQLite's
/// planner statistics are brought up to date with the data.
fn spawn_maintenance(
    tokens: TokenActors,
    pods: Pods,
    limits: Arc<http::rate::ApiLimits>,
    event_retention_days: u64,
) {
    actix_rt::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(600));
        for round in 0u64.. {
            tick.tick().await;
            let before = crate::domain::now_millis() - 24 * 3600 * 1000;
            match tokens.purge_expired(before).await {
                Ok(n) if n > 0 => tracing::info!(removed = n, "expired OAuth records purged"),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "OAuth purge failed"),
            }
            limits.prune();
            for pod in pods.all() {
                prune(&pod.db, event_retention_days, round).await;
            }
        }
    });
}

/// Drops what the pod keeps past its time: idempotency keys, events and finished deliveries
/// past their retention; every hour, SQLite's planner statistics.
async fn prune(db: &Db, event_retention_days: u64, round: u64) {
    match db.prune_idempotency_keys(crate::domain::now_millis()).await {
        Ok(n) if n > 0 => tracing::debug!(removed = n, "expired idempotency keys pruned"),
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "pruning idempotency keys failed"),
    }
    let kept_from = crate::domain::now_millis()
        - i64::try_from(event_retention_days).unwrap_or(3650) * 24 * 3600 * 1000;
    match db.prune_events(kept_from).await {
        Ok(n) if n > 0 => tracing::info!(removed = n, "events past their retention pruned"),
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "pruning events failed"),
    }
    match db.prune_webhook_deliveries(kept_from).await {
        Ok(n) if n > 0 => tracing::info!(
            removed = n,
            "finished webhook deliveries past their retention pruned"
        ),
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "pruning webhook deliveries failed"),
    }
    if round % 6 == 5 {
        if let Err(e) = db.optimize().await {
            tracing::warn!(error = %e, "gathering planner statistics failed");
        }
    }
}
