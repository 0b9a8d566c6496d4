//! Settings (DESIGN §2): defaults, then `merchantd.toml`, then `MERCHANTD_*` environment
//! variables, then command-line flags.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use domain::crypto::DEFAULT_PBKDF2_ITERATIONS;

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    pub bind: String,
    pub database_url: String,
    /// Further PostgreSQL databases holding merchants, as `name=url` pairs separated by
    /// commas (docs/operations.md, "Pods"); empty: the home database holds every merchant.
    pub pods: String,
    /// Connections this process opens to PostgreSQL at most (SQLite keeps its own few).
    pub database_max_connections: u32,
    /// SQLite: pages (4 KiB) of write-ahead log past which the writer makes the log start
    /// over, and the size its file is cut back to.
    pub sqlite_log_restart_pages: u32,
    pub tenants: PathBuf,
    /// Where clients reach the API; used in links (file paths). Defaults to `http://<bind>`.
    pub public_base_url: Option<String>,
    /// Where clients reach `/oauth/*`; the issuer in metadata. Defaults to `public_base_url`.
    pub public_auth_url: Option<String>,
    pub access_token_ttl_secs: u64,
    pub refresh_token_ttl_secs: u64,
    pub auth_code_ttl_secs: u64,
    pub refresh_retry_grace_secs: u64,
    pub merchant_idle_secs: u64,
    /// Finished sales records (baskets, payments, orders, invoices, counts) a merchant's cached
    /// state keeps beside its open ones; older history is read from the database.
    pub sales_window: usize,
    pub max_batch_objects: usize,
    pub max_body_bytes: usize,
    pub max_upload_bytes: usize,
    pub promotion_imminent_days: u64,
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    pub log_format: LogFormat,
    /// A `tracing` filter (`info`, `merchantd=debug`, ...); `RUST_LOG` wins when set.
    pub log_level: String,
    /// Serve `/metrics` on a separate listener instead of the API listener.
    pub metrics_bind: Option<String>,
    /// HTTP worker threads; 0 means one per core.
    pub workers: usize,
    /// How long shutdown waits for in-flight requests.
    pub shutdown_timeout_secs: u64,
    /// How long a client may take to send a request's head (line and headers); slower ones
    /// get 408 and are disconnected.
    pub client_request_timeout_secs: u64,
    /// How long a request may take once its head has arrived; past it the client gets 503
    /// (121), so a database that stopped answering holds no request forever. 0: no limit.
    pub request_timeout_secs: u64,
    /// How long an idle keep-alive connection stays open.
    pub keep_alive_secs: u64,
    /// Open connections per HTTP worker at most; beyond, new ones wait to be accepted.
    pub max_connections: usize,
    /// PBKDF2 iterations for new password hashes (each hash records its own count).
    pub pbkdf2_iterations: u32,
    /// Requests per minute to the token, revoke and introspect endpoints, per IP and per client.
    pub oauth_requests_per_minute: u32,
    /// API requests per second per token family (one grant), and how many may come at once;
    /// 0 turns the limit off.
    pub api_requests_per_second_per_token: u32,
    pub api_burst_per_token: u32,
    /// API requests per second per merchant, all its tokens together; 0 turns it off.
    pub api_requests_per_second_per_merchant: u32,
    pub api_burst_per_merchant: u32,
    /// Failed client authentications per minute and IP before those endpoints answer 429.
    pub oauth_failed_auths_per_minute: u32,
    /// Days the change-event log keeps events (`GET /events`, `changedSince`).
    pub event_retention_days: u64,
    /// Seconds between the operator's delete of a merchant and the removal of its rows; a
    /// resume before then keeps it.
    pub merchant_delete_grace_secs: u64,
    /// How often each replica looks for merchants whose deletion time has passed.
    pub merchant_purge_interval_secs: u64,
    /// Live products a merchant may have; 0: no limit.
    pub quota_products: u64,
    /// Bytes of uploaded files a merchant may hold; 0: no limit.
    pub quota_storage_bytes: u64,
    /// Event streams (`GET /events`) one token family may hold open at once; a newer one
    /// closes the oldest.
    pub max_event_streams_per_token: usize,
    /// Deliver webhooks to loopback, private, link-local and metadata addresses too (for
    /// tests and private networks; off, such URLs are refused).
    pub webhook_allow_private_addresses: bool,
    /// How long one delivery may take, connecting included; a replica's lease on an endpoint
    /// lasts three times this.
    pub webhook_timeout_ms: u64,
    /// How long connecting to a receiver may take.
    pub webhook_connect_timeout_ms: u64,
    /// The wait after a first failed attempt; it doubles with each (at most 6 hours), with
    /// jitter.
    pub webhook_retry_base_ms: u64,
    /// How long deliveries to a failing endpoint are retried before it is turned off.
    pub webhook_retry_for_secs: u64,
    /// How often the dispatcher looks for endpoints with work, besides being woken by this
    /// process's commits (retries falling due, other replicas' writes).
    pub webhook_poll_ms: u64,
    /// Endpoints one process delivers to at once (deliveries to one endpoint are in order,
    /// one at a time); 0 turns this process's dispatcher off.
    pub webhook_concurrency: usize,
    /// Test-only routes under `/__test/` (panic, slow request). Never enable in production.
    pub test_hooks: bool,
    /// With `test_hooks`: how long every merchant write holds its transaction open, to show
    /// that reads do not wait for writes.
    pub test_write_delay_ms: u64,
    /// With `test_hooks`: how long a replica waits before listening again after losing its
    /// listening connection (otherwise 100 ms, doubling), to hold an outage open in tests.
    pub test_listen_retry_ms: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            bind: "127.0.0.1:8080".into(),
            database_url: "sqlite://data/merchantd.db".into(),
            pods: String::new(),
            database_max_connections: 20,
            sqlite_log_restart_pages: 16_384,
            tenants: PathBuf::from("tenants"),
            public_base_url: None,
            public_auth_url: None,
            access_token_ttl_secs: 3600,
            refresh_token_ttl_secs: 30 * 24 * 3600,
            auth_code_ttl_secs: 60,
            refresh_retry_grace_secs: 5,
            merchant_idle_secs: 600,
            sales_window: 1_000,
            max_batch_objects: 200,
            max_body_bytes: 1024 * 1024,
            max_upload_bytes: 10 * 1024 * 1024,
            promotion_imminent_days: 7,
            tls_cert: None,
            tls_key: None,
            log_format: LogFormat::Text,
            log_level: "info".into(),
            metrics_bind: None,
            workers: 0,
            shutdown_timeout_secs: 30,
            client_request_timeout_secs: 10,
            request_timeout_secs: 30,
            keep_alive_secs: 15,
            max_connections: 10_000,
            pbkdf2_iterations: DEFAULT_PBKDF2_ITERATIONS,
            oauth_requests_per_minute: 600,
            api_requests_per_second_per_token: 200,
            api_burst_per_token: 400,
            api_requests_per_second_per_merchant: 2_000,
            api_burst_per_merchant: 4_000,
            event_retention_days: 30,
            merchant_delete_grace_secs: 30 * 24 * 3600,
            merchant_purge_interval_secs: 60,
            quota_products: 0,
            quota_storage_bytes: 0,
            max_event_streams_per_token: 4,
            oauth_failed_auths_per_minute: 20,
            webhook_allow_private_addresses: false,
            webhook_timeout_ms: 10_000,
            webhook_connect_timeout_ms: 3_000,
            webhook_retry_base_ms: 5_000,
            webhook_retry_for_secs: 3 * 24 * 3600,
            webhook_poll_ms: 250,
            webhook_concurrency: 8,
            test_hooks: false,
            test_write_delay_ms: 0,
            test_listen_retry_ms: 0,
        }
    }
}

/// Keys whose environment value is read as a string even when it looks like a number.
const STRING_KEYS: [&str; 11] = [
    "bind",
    "database_url",
    "pods",
    "tenants",
    "public_base_url",
    "public_auth_url",
    "tls_cert",
    "tls_key",
    "log_format",
    "log_level",
    "metrics_bind",
];

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{origin}: {message}")]
    Invalid { origin: String, message: String },
}

impl Settings {
    /// Every key, as written in `merchantd.toml` (and, upper-cased, after `MERCHANTD_`).
    pub fn keys() -> Vec<String> {
        match toml::Value::try_from(Settings::default()) {
            Ok(toml::Value::Table(t)) => t.keys().cloned().collect(),
            _ => Vec::new(),
        }
        .into_iter()
        .chain(
            [
                "public_base_url",
                "public_auth_url",
                "tls_cert",
                "tls_key",
                "metrics_bind",
            ]
            .into_iter()
            .map(String::from),
        )
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
    }

    /// Loads the file (an explicit path must exist; the default `merchantd.toml` may not), then
    /// overlays environment variables taken from `env`.
    pub fn load(
        path: Option<&Path>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let (path, required) = match path {
            Some(p) => (p.to_path_buf(), true),
            None => (PathBuf::from("merchantd.toml"), false),
        };
        let mut table = match std::fs::read_to_string(&path) {
            Ok(text) => text
                .parse::<toml::Table>()
                .map_err(|e| ConfigError::Invalid {
                    origin: path.display().to_string(),
                    message: e.message().to_owned(),
                })?,
            Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => toml::Table::new(),
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.display().to_string(),
                    source,
                })
            }
        };
        for key in Self::keys() {
            let var = format!("MERCHANTD_{}", key.to_uppercase());
            if let Some(raw) = env(&var) {
                table.insert(key.clone(), env_value(&key, &raw));
            }
        }
        toml::Value::Table(table)
            .try_into::<Settings>()
            .map_err(|e| ConfigError::Invalid {
                origin: format!("{} and MERCHANTD_* variables", path.display()),
                message: e.message().trim().to_owned(),
            })
    }

    pub fn public_base_url(&self) -> String {
        self.public_base_url
            .clone()
            .unwrap_or_else(|| {
                let scheme = if self.tls_cert.is_some() {
                    "https"
                } else {
                    "http"
                };
                format!("{scheme}://{}", self.bind)
            })
            .trim_end_matches('/')
            .to_owned()
    }

    pub fn public_auth_url(&self) -> String {
        self.public_auth_url
            .clone()
            .map(|u| u.trim_end_matches('/').to_owned())
            .unwrap_or_else(|| self.public_base_url())
    }
}

/// Environment values are text; numbers and booleans are recognised for the keys that take them.
fn env_value(key: &str, raw: &str) -> toml::Value {
    if STRING_KEYS.contains(&key) {
        return toml::Value::String(raw.to_owned());
    }
    if let Ok(i) = raw.trim().parse::<i64>() {
        return toml::Value::Integer(i);
    }
    match raw.trim() {
        "true" => toml::Value::Boolean(true),
        "false" => toml::Value::Boolean(false),
        _ => toml::Value::String(raw.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn defaults_match_the_design() {
        let s = Settings::load(Some(Path::new("/nonexistent")), env(&[])).unwrap_err();
        assert!(matches!(s, ConfigError::Read { .. }));
        let s = Settings::default();
        assert_eq!(s.bind, "127.0.0.1:8080");
        assert_eq!(s.database_url, "sqlite://data/merchantd.db");
        assert_eq!(s.access_token_ttl_secs, 3600);
        assert_eq!(s.max_batch_objects, 200);
        assert_eq!(s.max_body_bytes, 1 << 20);
        assert_eq!(s.max_upload_bytes, 10 << 20);
        assert!(s.pbkdf2_iterations >= 600_000);
    }

    #[test]
    fn environment_overrides_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("m.toml");
        std::fs::write(
            &file,
            "bind = \"0.0.0.0:1\"\nmax_batch_objects = 5\nlog_format = \"json\"\n",
        )
        .unwrap();
        let s = Settings::load(
            Some(&file),
            env(&[
                ("MERCHANTD_MAX_BATCH_OBJECTS", "7"),
                ("MERCHANTD_DATABASE_URL", "postgres://x/y"),
            ]),
        )
        .unwrap();
        assert_eq!(s.bind, "0.0.0.0:1");
        assert_eq!(s.max_batch_objects, 7);
        assert_eq!(s.database_url, "postgres://x/y");
        assert_eq!(s.log_format, LogFormat::Json);
    }

    #[test]
    fn unknown_keys_and_bad_values_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("m.toml");
        std::fs::write(&file, "bnd = \"x\"\n").unwrap();
        let e = Settings::load(Some(&file), env(&[]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("bnd"), "{e}");
        let e = Settings::load(None, env(&[("MERCHANTD_MAX_BODY_BYTES", "lots")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("MERCHANTD_") || e.contains("invalid"), "{e}");
    }

    #[test]
    fn every_key_is_listed() {
        let keys = Settings::keys();
        for k in [
            "bind",
            "database_url",
            "tenants",
            "tls_cert",
            "metrics_bind",
            "test_hooks",
        ] {
            assert!(keys.iter().any(|x| x == k), "{k} missing from {keys:?}");
        }
    }
}
