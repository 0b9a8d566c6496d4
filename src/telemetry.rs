//! Logging through `tracing`: text for people, JSON for log pipelines. Never a token, secret,
//! password or code: request logging records the route pattern, not the raw URL, and no header.

use tracing_subscriber::EnvFilter;

use crate::config::{LogFormat, Settings};

/// Installs the process-wide subscriber writing to stderr. `RUST_LOG` overrides `log_level`.
/// A second call (tests start several servers in one process) keeps the first subscriber.
pub fn init(settings: &Settings) {
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(&settings.log_level))
        .unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(true);
    let _ = match settings.log_format {
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
        LogFormat::Text => builder.try_init(),
    };
}
