//! The webhook dispatcher: delivers each merchant's change events to its endpoints, signed
//! (docs/events.md, "Webhooks").
//!
//! Every process runs one. Each poll it claims endpoints with work due (a lease in the
//! database, taken with `FOR UPDATE SKIP LOCKED` on PostgreSQL, so replicas share the work and
//! never take the same endpoint). For a claimed endpoint it turns new events of the log into
//! deliveries, then sends the oldest pending one, records the attempt, and goes on to the next
//! only after a success: deliveries to one endpoint are in order. A failure is retried with
//! exponential backoff and jitter; when an endpoint has failed for `webhook_retry_for_secs`
//! the delivery is given up and the endpoint turned off through its merchant's writer, which
//! appends `webhook.disabled` with the reason.
//!
//! At least once: an attempt is recorded after it is sent, so a process killed in between
//! sends it again once its lease runs out, with the same `webhook-id`. A process told to stop
//! ([`Dispatching::stop`]) claims nothing more and lets each drain finish the attempt it is
//! sending, record it and give its endpoint back, so a stop sends nothing twice.

mod drain;
mod send;
pub mod sign;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

use config::Settings;
use engine::merchant::registry::Merchants;
use engine::merchant::render::Render;
use metrics::WebhookMetrics;
use ports::DeliveryQueue;

/// What the dispatcher needs of the settings.
#[derive(Clone, Debug)]
pub struct DispatcherConfig {
    pub allow_private: bool,
    pub timeout: Duration,
    pub connect_timeout: Duration,
    pub retry_base_ms: i64,
    pub retry_for_ms: i64,
    pub poll: Duration,
    pub concurrency: usize,
}

impl DispatcherConfig {
    pub fn from_settings(settings: &Settings) -> Self {
        Self {
            allow_private: settings.webhook_allow_private_addresses,
            timeout: Duration::from_millis(settings.webhook_timeout_ms.max(1)),
            connect_timeout: Duration::from_millis(settings.webhook_connect_timeout_ms.max(1)),
            retry_base_ms: i64::try_from(settings.webhook_retry_base_ms.max(1)).unwrap_or(5_000),
            retry_for_ms: i64::try_from(settings.webhook_retry_for_secs)
                .unwrap_or(i64::MAX / 1000)
                .saturating_mul(1000),
            poll: Duration::from_millis(settings.webhook_poll_ms.max(10)),
            concurrency: settings.webhook_concurrency,
        }
    }

    /// How long a claim holds an endpoint: enough for an attempt and its bookkeeping, short
    /// enough that a killed process's endpoints are taken over soon.
    fn lease_ms(&self) -> i64 {
        i64::try_from(self.timeout.as_millis().saturating_mul(3)).unwrap_or(i64::MAX / 4)
    }
}

struct Dispatcher {
    db: Arc<dyn DeliveryQueue>,
    merchants: Merchants,
    /// Renders each event's body as streams show it.
    render: Arc<dyn Render>,
    metrics: WebhookMetrics,
    config: DispatcherConfig,
    sender: send::Sender,
    /// This process's name on the leases it takes.
    owner: String,
    /// True once the process is stopping.
    stopping: tokio::sync::watch::Receiver<bool>,
    /// One permit per drain that may run; all of them free when none runs.
    slots: Arc<Semaphore>,
}

/// The running dispatcher, to stop it.
pub struct Dispatching {
    stop: tokio::sync::watch::Sender<bool>,
    /// True once every drain has ended.
    stopped: tokio::sync::watch::Receiver<bool>,
}

impl Dispatching {
    /// Claims no endpoint more, and waits (at most `within`) for every drain to record what it
    /// sent and give its endpoint back. A drain still sending then is cut off with the
    /// dispatcher's thread: its attempt is sent again by the next holder of the endpoint, with
    /// the same `webhook-id`.
    pub async fn stop(&self, within: Duration) {
        let _ = self.stop.send(true);
        let mut stopped = self.stopped.clone();
        let drained = async { stopped.wait_for(|done| *done).await.is_ok() };
        if !tokio::time::timeout(within, drained).await.unwrap_or(false) {
            tracing::warn!("webhook deliveries still in flight at shutdown are sent again later");
        }
    }
}

/// Starts this process's dispatcher on an arbiter (thread) of its own (none when
/// `concurrency` is 0).
pub fn start(
    db: Arc<dyn DeliveryQueue>,
    merchants: Merchants,
    render: Arc<dyn Render>,
    metrics: WebhookMetrics,
    config: DispatcherConfig,
) -> Option<Dispatching> {
    if config.concurrency == 0 {
        return None;
    }
    let sender = match send::Sender::new(
        config.timeout,
        config.connect_timeout,
        config.allow_private,
    ) {
        Ok(sender) => sender,
        Err(e) => {
            tracing::error!(error = %e, "the webhook dispatcher's HTTP client could not be built; no webhooks are delivered");
            return None;
        }
    };
    let slots = Arc::new(Semaphore::new(config.concurrency));
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let (drained, stopped) = tokio::sync::watch::channel(false);
    let dispatcher = Arc::new(Dispatcher {
        db,
        merchants,
        render,
        metrics,
        config,
        sender,
        owner: uuid::Uuid::new_v4().to_string(),
        stopping,
        slots,
    });
    // A thread of its own: on the main arbiter it would share a thread with the merchants'
    // supervisors, and every delivery's HTTP work would delay the writes they serialize.
    // It ends with the runtime that started it, and its thread with it.
    let ended = engine::merchant::lifetime::ends_with_this_runtime();
    let arbiter = actix_rt::Arbiter::new();
    arbiter.spawn(async move {
        tokio::select! {
            () = dispatcher.run() => {}
            _ = ended => {}
        }
        let _ = drained.send(true);
        actix_rt::Arbiter::current().stop();
    });
    Some(Dispatching { stop, stopped })
}
