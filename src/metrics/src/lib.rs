//! The Prometheus registry and the metrics of DESIGN §7. One registry per server instance (no
//! globals), so tests can run several servers in one process.

#![forbid(unsafe_code)]

use prometheus::{
    Encoder, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge,
    IntGaugeVec, Opts, Registry, TextEncoder,
};

#[derive(Clone, Debug)]
pub struct Metrics {
    registry: Registry,
    pub http_requests: IntCounterVec,
    pub http_request_duration: HistogramVec,
    pub db_query_duration: HistogramVec,
    pub oauth_tokens_issued: IntCounterVec,
    pub oauth_token_errors: IntCounterVec,
    /// Revocations by what made them: the RFC 7009 endpoint, the connected-applications page,
    /// a reused refresh token, a deleted employee or application.
    pub oauth_revocations: IntCounterVec,
    pub merchant_actors_active: IntGauge,
    pub merchant_actor_activations: IntCounter,
    pub actor_mailbox_wait: Histogram,
    pub merchant_write_batch_size: Histogram,
    pub cache_requests: IntCounterVec,
    pub db_commits: IntCounter,
    pub db_group_size: Histogram,
    pub merchant_cached_records: IntGaugeVec,
    pub merchant_reloads: IntCounter,
    pub replica_listening: IntGauge,
    pub replica_listens: IntCounter,
    pub api_rate_limited: IntCounterVec,
    pub events_appended: IntCounter,
    pub event_streams: IntGauge,
    pub webhooks: WebhookMetrics,
    pub offline: OfflineMetrics,
}

/// Sales tills made offline (docs/offline.md).
#[derive(Clone, Debug)]
pub struct OfflineMetrics {
    /// Offline sales recorded (a repeat of one already recorded is not counted).
    pub received: IntCounter,
    /// Arrival − time of sale of each one recorded, in seconds.
    pub lateness: Histogram,
    /// Products an offline sale took more of than was left (`stock.shortfall` events).
    pub shortfalls: IntCounter,
}

/// The webhook dispatcher's figures.
#[derive(Clone, Debug)]
pub struct WebhookMetrics {
    /// Attempts by result: `succeeded`, `retrying` (failed, will retry), `gave_up`.
    pub deliveries: IntCounterVec,
    /// From an event's commit to its successful delivery.
    pub latency: Histogram,
    /// One attempt's request, from connecting to the receiver's answer.
    pub attempt_duration: Histogram,
    /// Deliveries waiting (all replicas, as this one last counted them).
    pub queue_depth: IntGauge,
    /// How long the oldest waiting delivery has waited, in seconds.
    pub oldest_pending: prometheus::Gauge,
}

impl Metrics {
    pub fn new() -> Self {
        let r = Registry::new();
        let (http_requests, http_request_duration) = http_family(&r);
        let (oauth_tokens_issued, oauth_token_errors, oauth_revocations) = oauth_family(&r);
        let (db_query_duration, db_commits, db_group_size) = db_family(&r);
        let (merchant_actors_active, merchant_actor_activations, merchant_cached_records) =
            merchant_family(&r);
        let (actor_mailbox_wait, merchant_write_batch_size) = write_family(&r);
        let (merchant_reloads, replica_listening, replica_listens) = replica_family(&r);
        let api_rate_limited = counter_vec(
            &r,
            "api_rate_limited_total",
            "API requests answered 429, by the limit they hit (token or merchant).",
            &["limit"],
        );
        let (events_appended, event_streams) = event_family(&r);
        let webhooks = webhook_family(&r);
        let offline = offline_family(&r);
        let cache_requests = counter_vec(
            &r,
            "cache_requests_total",
            "Cache look-ups by cache and result.",
            &["cache", "result"],
        );
        Self {
            registry: r,
            http_requests,
            http_request_duration,
            db_query_duration,
            oauth_tokens_issued,
            oauth_token_errors,
            oauth_revocations,
            merchant_actors_active,
            merchant_actor_activations,
            actor_mailbox_wait,
            merchant_write_batch_size,
            cache_requests,
            db_commits,
            db_group_size,
            merchant_cached_records,
            merchant_reloads,
            replica_listening,
            replica_listens,
            api_rate_limited,
            events_appended,
            event_streams,
            webhooks,
            offline,
        }
    }

    /// The registry later subsystems register their own metrics in.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Everything registered, in the Prometheus text format.
    pub fn render(&self) -> String {
        let mut buf = Vec::new();
        // Encoding into a Vec cannot fail for the text format.
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut buf);
        String::from_utf8(buf).unwrap_or_default()
    }
}

/// Change events appended to the merchants' logs, and the event streams open.
fn event_family(r: &Registry) -> (IntCounter, IntGauge) {
    let appended = counter(
        r,
        "events_appended_total",
        "Change events appended to the merchants' logs (in their writes' transactions).",
    );
    let streams = gauge(
        r,
        "event_stream_clients",
        "Server-sent event streams open (GET /events).",
    );
    (appended, streams)
}

fn offline_family(r: &Registry) -> OfflineMetrics {
    let seconds = vec![
        1.0,
        10.0,
        60.0,
        300.0,
        900.0,
        3600.0,
        4.0 * 3600.0,
        86400.0,
        7.0 * 86400.0,
    ];
    OfflineMetrics {
        received: counter(
            r,
            "offline_sales_received_total",
            "Offline sales recorded by POST /basket/sync.",
        ),
        lateness: histogram(
            r,
            "offline_sale_lateness_seconds",
            "How long after its time of sale an offline sale reached the server.",
            seconds,
        ),
        shortfalls: counter(
            r,
            "stock_shortfalls_total",
            "Products an offline sale took more of than its store had left.",
        ),
    }
}

fn webhook_family(r: &Registry) -> WebhookMetrics {
    let seconds = vec![
        0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 3600.0,
    ];
    WebhookMetrics {
        deliveries: counter_vec(
            r,
            "webhook_deliveries_total",
            "Webhook delivery attempts by result (succeeded, retrying, gave_up).",
            &["result"],
        ),
        latency: histogram(
            r,
            "webhook_delivery_latency_seconds",
            "From an event's commit to its successful delivery.",
            seconds.clone(),
        ),
        attempt_duration: histogram(
            r,
            "webhook_attempt_duration_seconds",
            "One delivery attempt, from connecting to the receiver's answer.",
            seconds,
        ),
        queue_depth: gauge(
            r,
            "webhook_queue_depth",
            "Webhook deliveries waiting, all replicas (counted every few seconds).",
        ),
        oldest_pending: register(
            r,
            prometheus::Gauge::new(
                "webhook_oldest_pending_seconds",
                "How long the oldest waiting webhook delivery has waited.",
            ),
        ),
    }
}

/// Requests answered, and the time to the response head.
fn http_family(r: &Registry) -> (IntCounterVec, HistogramVec) {
    let latency = vec![
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
    ];
    let requests = counter_vec(
        r,
        "http_requests_total",
        "HTTP requests answered.",
        &["method", "route", "status"],
    );
    let duration = register(
        r,
        HistogramVec::new(
            HistogramOpts::new(
                "http_request_duration_seconds",
                "Time from request to response head.",
            )
            .buckets(latency),
            &["method", "route", "status"],
        ),
    );
    (requests, duration)
}

/// Token pairs issued by grant, the token endpoint's errors, and revocations.
fn oauth_family(r: &Registry) -> (IntCounterVec, IntCounterVec, IntCounterVec) {
    let issued = counter_vec(
        r,
        "oauth_tokens_issued_total",
        "Token pairs issued by the token endpoint.",
        &["grant_type"],
    );
    let errors = counter_vec(
        r,
        "oauth_token_errors_total",
        "Token endpoint errors by RFC 6749 error.",
        &["error"],
    );
    let revocations = counter_vec(
        r,
        "oauth_revocations_total",
        "Token revocations by what made them (revoke_endpoint, account_page, refresh_reuse, \
         employee_deleted, application_deleted).",
        &["via"],
    );
    (issued, errors, revocations)
}

/// Database operation latency, commits, and the writes each SQLite commit makes durable.
fn db_family(r: &Registry) -> (HistogramVec, IntCounter, Histogram) {
    let db_latency = vec![
        0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0,
    ];
    let groups = vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0];
    let duration = register(
        r,
        HistogramVec::new(
            HistogramOpts::new("db_query_duration_seconds", "Database operation latency.")
                .buckets(db_latency),
            &["op"],
        ),
    );
    let commits = counter(
        r,
        "db_commits_total",
        "Transactions committed (on SQLite, each commits a group of writes).",
    );
    let group_size = histogram(
        r,
        "db_commit_group_size",
        "Writes made durable by one SQLite commit.",
        groups,
    );
    (duration, commits, group_size)
}

/// Merchant supervisors running and started, and the records their states cache.
fn merchant_family(r: &Registry) -> (IntGauge, IntCounter, IntGaugeVec) {
    let active = gauge(r, "merchant_actors_active", "Merchant supervisors running.");
    let activations = counter(
        r,
        "merchant_actor_activations_total",
        "Merchant supervisors started (first use or after passivation).",
    );
    let cached = register(
        r,
        IntGaugeVec::new(
            Opts::new(
                "merchant_cached_records",
                "Records held in the cached state of active merchants, by kind.",
            ),
            &["kind"],
        ),
    );
    (active, activations, cached)
}

/// How long a write waits for its supervisor, and how many writes commit together.
fn write_family(r: &Registry) -> (Histogram, Histogram) {
    let wait = vec![0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0];
    let sizes = vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0];
    let mailbox_wait = histogram(
        r,
        "actor_mailbox_wait_seconds",
        "Time a write waited for its merchant's supervisor to take it up.",
        wait,
    );
    let batch_size = histogram(
        r,
        "merchant_write_batch_size",
        "Writes committed together in one merchant transaction (group commit).",
        sizes,
    );
    (mailbox_wait, batch_size)
}

/// Replicas on one PostgreSQL: whether this one hears the others, and what their writes cost it.
fn replica_family(r: &Registry) -> (IntCounter, IntGauge, IntCounter) {
    let reloads = counter(
        r,
        "merchant_reloads_total",
        "Merchant states loaded again because another replica (or process) wrote.",
    );
    let listening = gauge(
        r,
        "replica_listening",
        "1 while this replica hears the others' writes on PostgreSQL (always 0 on SQLite).",
    );
    let listens = counter(
        r,
        "replica_listens_total",
        "Times the listening connection was opened (more than 1: it was lost and reopened).",
    );
    (reloads, listening, listens)
}

/// A counter without labels, registered.
fn counter(r: &Registry, name: &str, help: &str) -> IntCounter {
    register(r, IntCounter::new(name, help))
}

/// A gauge without labels, registered.
fn gauge(r: &Registry, name: &str, help: &str) -> IntGauge {
    register(r, IntGauge::new(name, help))
}

/// A counter with labels, registered.
fn counter_vec(r: &Registry, name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    register(r, IntCounterVec::new(Opts::new(name, help), labels))
}

/// A histogram without labels, registered.
fn histogram(r: &Registry, name: &str, help: &str, buckets: Vec<f64>) -> Histogram {
    register(
        r,
        Histogram::with_opts(HistogramOpts::new(name, help).buckets(buckets)),
    )
}

/// Registers a metric made from a constant definition (which cannot be invalid) exactly once.
fn register<M: prometheus::core::Collector + Clone + 'static>(
    registry: &Registry,
    made: prometheus::Result<M>,
) -> M {
    let metric = made.expect("valid metric definition");
    registry
        .register(Box::new(metric.clone()))
        .expect("each metric is registered once");
    metric
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}
