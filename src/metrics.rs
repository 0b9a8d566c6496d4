//! The Prometheus registry and the metrics of DESIGN §7. One registry per server instance (no
//! globals), so tests can run several servers in one process.

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
    pub merchant_actors_active: IntGauge,
    pub merchant_actor_activations: IntCounter,
    pub actor_mailbox_wait: Histogram,
    pub merchant_write_batch_size: Histogram,
    pub cache_requests: IntCounterVec,
    pub db_commits: IntCounter,
    pub db_group_size: Histogram,
    pub merchant_cached_records: IntGaugeVec,
}

impl Metrics {
    pub fn new() -> Self {
        let r = Registry::new();
        let latency = vec![
            0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
        ];
        let db_latency = vec![
            0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0,
        ];
        let wait = vec![0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0];
        let sizes = vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0];
        let groups = vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0];
        Self {
            http_requests: register(
                &r,
                IntCounterVec::new(
                    Opts::new("http_requests_total", "HTTP requests answered."),
                    &["method", "route", "status"],
                ),
            ),
            http_request_duration: register(
                &r,
                HistogramVec::new(
                    HistogramOpts::new(
                        "http_request_duration_seconds",
                        "Time from request to response head.",
                    )
                    .buckets(latency),
                    &["method", "route", "status"],
                ),
            ),
            db_query_duration: register(
                &r,
                HistogramVec::new(
                    HistogramOpts::new("db_query_duration_seconds", "Database operation latency.")
                        .buckets(db_latency),
                    &["op"],
                ),
            ),
            oauth_tokens_issued: register(
                &r,
                IntCounterVec::new(
                    Opts::new(
                        "oauth_tokens_issued_total",
                        "Token pairs issued by the token endpoint.",
                    ),
                    &["grant_type"],
                ),
            ),
            oauth_token_errors: register(
                &r,
                IntCounterVec::new(
                    Opts::new(
                        "oauth_token_errors_total",
                        "Token endpoint errors by RFC 6749 error.",
                    ),
                    &["error"],
                ),
            ),
            merchant_actors_active: register(
                &r,
                IntGauge::new("merchant_actors_active", "Merchant supervisors running."),
            ),
            merchant_actor_activations: register(
                &r,
                IntCounter::new(
                    "merchant_actor_activations_total",
                    "Merchant supervisors started (first use or after passivation).",
                ),
            ),
            actor_mailbox_wait: register(
                &r,
                Histogram::with_opts(
                    HistogramOpts::new(
                        "actor_mailbox_wait_seconds",
                        "Time a write waited for its merchant's supervisor to take it up.",
                    )
                    .buckets(wait),
                ),
            ),
            merchant_write_batch_size: register(
                &r,
                Histogram::with_opts(
                    HistogramOpts::new(
                        "merchant_write_batch_size",
                        "Writes committed together in one merchant transaction (group commit).",
                    )
                    .buckets(sizes),
                ),
            ),
            cache_requests: register(
                &r,
                IntCounterVec::new(
                    Opts::new(
                        "cache_requests_total",
                        "Cache look-ups by cache and result.",
                    ),
                    &["cache", "result"],
                ),
            ),
            db_commits: register(
                &r,
                IntCounter::new(
                    "db_commits_total",
                    "Transactions committed (on SQLite, each commits a group of writes).",
                ),
            ),
            db_group_size: register(
                &r,
                Histogram::with_opts(
                    HistogramOpts::new(
                        "db_commit_group_size",
                        "Writes made durable by one SQLite commit.",
                    )
                    .buckets(groups),
                ),
            ),
            merchant_cached_records: register(
                &r,
                IntGaugeVec::new(
                    Opts::new(
                        "merchant_cached_records",
                        "Records held in the cached state of active merchants, by kind.",
                    ),
                    &["kind"],
                ),
            ),
            registry: r,
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
