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
        let registry = Registry::new();
        let http_requests = IntCounterVec::new(
            Opts::new("http_requests_total", "HTTP requests answered."),
            &["method", "route", "status"],
        )
        .expect("valid metric definition");
        let http_request_duration = HistogramVec::new(
            HistogramOpts::new(
                "http_request_duration_seconds",
                "Time from request to response head.",
            )
            .buckets(vec![
                0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
            ]),
            &["method", "route", "status"],
        )
        .expect("valid metric definition");
        let db_query_duration = HistogramVec::new(
            HistogramOpts::new("db_query_duration_seconds", "Database operation latency.").buckets(
                vec![
                    0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0,
                ],
            ),
            &["op"],
        )
        .expect("valid metric definition");
        let oauth_tokens_issued = IntCounterVec::new(
            Opts::new(
                "oauth_tokens_issued_total",
                "Token pairs issued by the token endpoint.",
            ),
            &["grant_type"],
        )
        .expect("valid metric definition");
        let oauth_token_errors = IntCounterVec::new(
            Opts::new(
                "oauth_token_errors_total",
                "Token endpoint errors by RFC 6749 error.",
            ),
            &["error"],
        )
        .expect("valid metric definition");
        let merchant_actors_active =
            IntGauge::new("merchant_actors_active", "Merchant supervisors running.")
                .expect("valid metric definition");
        let merchant_actor_activations = IntCounter::new(
            "merchant_actor_activations_total",
            "Merchant supervisors started (first use or after passivation).",
        )
        .expect("valid metric definition");
        let actor_mailbox_wait = Histogram::with_opts(
            HistogramOpts::new(
                "actor_mailbox_wait_seconds",
                "Time a write waited in its merchant's mailbox before being handled.",
            )
            .buckets(vec![
                0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0,
            ]),
        )
        .expect("valid metric definition");
        let merchant_write_batch_size = Histogram::with_opts(
            HistogramOpts::new(
                "merchant_write_batch_size",
                "Records written in one merchant transaction.",
            )
            .buckets(vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0]),
        )
        .expect("valid metric definition");
        let cache_requests = IntCounterVec::new(
            Opts::new(
                "cache_requests_total",
                "Cache look-ups by cache and result.",
            ),
            &["cache", "result"],
        )
        .expect("valid metric definition");
        let db_commits = IntCounter::new(
            "db_commits_total",
            "Transactions committed (on SQLite, each commits a group of writes).",
        )
        .expect("valid metric definition");
        let db_group_size = Histogram::with_opts(
            HistogramOpts::new(
                "db_commit_group_size",
                "Writes made durable by one SQLite commit.",
            )
            .buckets(vec![
                1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0,
            ]),
        )
        .expect("valid metric definition");
        let merchant_cached_records = IntGaugeVec::new(
            Opts::new(
                "merchant_cached_records",
                "Records held in the cached state of active merchants, by kind.",
            ),
            &["kind"],
        )
        .expect("valid metric definition");
        for collector in [
            Box::new(http_requests.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(http_request_duration.clone()),
            Box::new(db_query_duration.clone()),
            Box::new(oauth_tokens_issued.clone()),
            Box::new(oauth_token_errors.clone()),
            Box::new(merchant_actors_active.clone()),
            Box::new(merchant_actor_activations.clone()),
            Box::new(actor_mailbox_wait.clone()),
            Box::new(merchant_write_batch_size.clone()),
            Box::new(cache_requests.clone()),
            Box::new(db_commits.clone()),
            Box::new(db_group_size.clone()),
            Box::new(merchant_cached_records.clone()),
        ] {
            registry
                .register(collector)
                .expect("each metric is registered once");
        }
        Self {
            registry,
            http_requests,
            http_request_duration,
            db_query_duration,
            oauth_tokens_issued,
            oauth_token_errors,
            merchant_actors_active,
            merchant_actor_activations,
            actor_mailbox_wait,
            merchant_write_batch_size,
            cache_requests,
            db_commits,
            db_group_size,
            merchant_cached_records,
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

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}
