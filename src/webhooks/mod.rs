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
//! sends it again once its lease runs out, with the same `webhook-id`.

mod send;
pub mod sign;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Map};
use tokio::sync::Semaphore;

use crate::actors::registry::Merchants;
use crate::config::Settings;
use crate::db::webhooks::{AttemptRecord, Pending};
use crate::db::{Db, DbError};
use crate::domain::batch::{Answered, BatchObject, WriteMode};
use crate::domain::event::Event;
use crate::domain::now_millis;
use crate::domain::webhook::{
    backoff_ms, message_id, Attempt, AttemptOutcome, Endpoint, WebhookRecord,
};
use crate::metrics::WebhookMetrics;

/// Deliveries one claim sends at most before the endpoint goes back (fairness).
const BUDGET: usize = 500;
/// Pending deliveries read at a time.
const FETCH: i64 = 64;
/// Successful attempts recorded together at most, and how long one may wait to be recorded:
/// one transaction (one fsync on SQLite) per delivery would cap an endpoint at a few hundred
/// a second and take the write lock from the merchants' writers as often. A process killed
/// before recording sends those again (at least once, same `webhook-id`).
const RECORD_EVERY: usize = 32;
const RECORD_WITHIN: Duration = Duration::from_millis(100);
/// Events turned into deliveries at a time.
const ENQUEUE_BATCH: i64 = 500;
/// The shortest time between two polls when commits wake the dispatcher.
const MIN_WAKE: Duration = Duration::from_millis(10);
/// How often the queue's depth is counted for the metrics.
const DEPTH_EVERY: Duration = Duration::from_secs(5);

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
    db: Db,
    merchants: Merchants,
    metrics: WebhookMetrics,
    config: DispatcherConfig,
    sender: send::Sender,
    /// This process's name on the leases it takes.
    owner: String,
}

/// Starts this process's dispatcher on the current arbiter (none when `concurrency` is 0).
pub fn start(db: Db, merchants: Merchants, metrics: WebhookMetrics, config: DispatcherConfig) {
    if config.concurrency == 0 {
        return;
    }
    let sender = match send::Sender::new(
        config.timeout,
        config.connect_timeout,
        config.allow_private,
    ) {
        Ok(sender) => sender,
        Err(e) => {
            tracing::error!(error = %e, "the webhook dispatcher's HTTP client could not be built; no webhooks are delivered");
            return;
        }
    };
    let dispatcher = Arc::new(Dispatcher {
        db,
        merchants,
        metrics,
        config,
        sender,
        owner: uuid::Uuid::new_v4().to_string(),
    });
    actix_rt::spawn(dispatcher.run());
}

/// Attempts sent but not yet recorded.
#[derive(Default)]
struct Unrecorded {
    records: Vec<AttemptRecord>,
    since: Option<Instant>,
}

impl Unrecorded {
    fn push(&mut self, record: AttemptRecord) {
        self.since.get_or_insert_with(Instant::now);
        self.records.push(record);
    }

    /// Whether it is time to record them.
    fn due(&self) -> bool {
        self.records.len() >= RECORD_EVERY
            || self.since.is_some_and(|at| at.elapsed() >= RECORD_WITHIN)
    }
}

impl Dispatcher {
    async fn run(self: Arc<Self>) {
        let slots = Arc::new(Semaphore::new(self.config.concurrency));
        let mut tick = tokio::time::interval(self.config.poll);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut counted = Instant::now() - DEPTH_EVERY;
        let mut polled = Instant::now();
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                () = self.db.events_committed() => {
                    // Woken by a commit: at most one poll per MIN_WAKE, however many commits.
                    let since = polled.elapsed();
                    if since < MIN_WAKE {
                        tokio::time::sleep(MIN_WAKE - since).await;
                    }
                }
            }
            polled = Instant::now();
            if counted.elapsed() >= DEPTH_EVERY {
                counted = Instant::now();
                self.count_queue().await;
            }
            let free = slots.available_permits();
            if free == 0 {
                continue;
            }
            let now = now_millis();
            let limit = i64::try_from(free).unwrap_or(1);
            let claimed = self
                .db
                .claim_webhooks(&self.owner, now, now + self.config.lease_ms(), limit)
                .await;
            let endpoints = match claimed {
                Ok(endpoints) => endpoints,
                Err(e) => {
                    tracing::warn!(error = %e, "claiming webhook endpoints failed");
                    continue;
                }
            };
            for endpoint in endpoints {
                let Ok(permit) = slots.clone().try_acquire_owned() else {
                    break;
                };
                let this = self.clone();
                actix_rt::spawn(async move {
                    let (merchant_id, webhook_id) = (endpoint.merchant_id, endpoint.id);
                    if let Err(e) = this.drain(endpoint).await {
                        tracing::warn!(merchant_id, webhook_id, error = %e, "webhook delivery interrupted; the lease will run out and it is taken up again");
                    }
                    drop(permit);
                });
            }
        }
    }

    async fn count_queue(&self) {
        match self.db.webhook_queue_depth().await {
            Ok(depth) => {
                self.metrics.queue_depth.set(depth.pending);
                let waited = depth
                    .oldest_created_at
                    .map_or(0, |at| (now_millis() - at).max(0));
                // Milliseconds to seconds for a gauge: precision beyond 2^53 ms is moot.
                #[allow(clippy::cast_precision_loss)]
                self.metrics.oldest_pending.set(waited as f64 / 1000.0);
            }
            Err(e) => tracing::debug!(error = %e, "counting the webhook queue failed"),
        }
    }

    /// Delivers an endpoint's due deliveries in order until one fails, none is due, or the
    /// budget is spent; then gives the endpoint back with when it next has work. Attempts are
    /// recorded in batches (see [`Unrecorded`]).
    async fn drain(&self, mut endpoint: Endpoint) -> Result<(), DbError> {
        let mut unrecorded = Unrecorded::default();
        let mut sent = 0;
        loop {
            let now = now_millis();
            let mut pending = self.db.pending_deliveries(&endpoint, FETCH).await?;
            if pending.is_empty() {
                if !self
                    .db
                    .enqueue_deliveries(&mut endpoint, &self.owner, now, ENQUEUE_BATCH)
                    .await?
                {
                    return Ok(()); // the lease ran out; whoever has it now goes on
                }
                pending = self.db.pending_deliveries(&endpoint, FETCH).await?;
            }
            let (Some(first), Some(last)) = (pending.first(), pending.last()) else {
                return self.db.release_webhook(&endpoint, &self.owner, now).await;
            };
            let events = self
                .db
                .events_between(endpoint.merchant_id, first.seq, last.seq)
                .await?;
            for delivery in pending {
                if delivery.due > now_millis() {
                    return self
                        .give_back(&endpoint, &mut unrecorded, delivery.due)
                        .await;
                }
                let event = events.iter().find(|e| e.seq == delivery.seq);
                let (attempt, outcome) = self.deliver(&endpoint, event, delivery).await;
                unrecorded.push(AttemptRecord {
                    seq: delivery.seq,
                    attempt,
                    outcome,
                });
                sent += 1;
                match outcome {
                    AttemptOutcome::Succeeded if sent < BUDGET => {
                        if unrecorded.due() && !self.flush(&endpoint, &mut unrecorded).await? {
                            return Ok(());
                        }
                    }
                    AttemptOutcome::Succeeded => {
                        return self
                            .give_back(&endpoint, &mut unrecorded, now_millis())
                            .await
                    }
                    AttemptOutcome::RetryAt(at) => {
                        return self.give_back(&endpoint, &mut unrecorded, at).await
                    }
                    AttemptOutcome::GaveUp => {
                        self.flush(&endpoint, &mut unrecorded).await?;
                        return Ok(());
                    }
                }
            }
            // The next fetch reads the database: it must see what was sent.
            if !self.flush(&endpoint, &mut unrecorded).await? {
                return Ok(());
            }
        }
    }

    /// Records what was sent and gives the endpoint back, due again at `next_attempt_at`.
    async fn give_back(
        &self,
        endpoint: &Endpoint,
        unrecorded: &mut Unrecorded,
        next_attempt_at: i64,
    ) -> Result<(), DbError> {
        if self.flush(endpoint, unrecorded).await? {
            self.db
                .release_webhook(endpoint, &self.owner, next_attempt_at)
                .await?;
        }
        Ok(())
    }

    /// Records the attempts made since the last flush (renewing the lease). False when the
    /// lease was lost: nothing is recorded, and the next holder sends them again.
    async fn flush(
        &self,
        endpoint: &Endpoint,
        unrecorded: &mut Unrecorded,
    ) -> Result<bool, DbError> {
        if unrecorded.records.is_empty() {
            return Ok(true);
        }
        let lease_until = now_millis() + self.config.lease_ms();
        let records = std::mem::take(&mut unrecorded.records);
        unrecorded.since = None;
        if !self
            .db
            .record_attempts(endpoint, &records, &self.owner, lease_until)
            .await?
        {
            return Ok(false);
        }
        for record in &records {
            let result = match record.outcome {
                AttemptOutcome::Succeeded => "succeeded",
                AttemptOutcome::RetryAt(_) => "retrying",
                AttemptOutcome::GaveUp => "gave_up",
            };
            self.metrics.deliveries.with_label_values(&[result]).inc();
        }
        Ok(true)
    }

    /// One attempt at one delivery (`event` is `None` when retention pruned it first).
    async fn deliver(
        &self,
        endpoint: &Endpoint,
        event: Option<&Event>,
        delivery: Pending,
    ) -> (Attempt, AttemptOutcome) {
        let now = now_millis();
        let attempt_no = delivery.attempts + 1;
        let Some(event) = event else {
            // Pruned by retention before it could be delivered (the endpoint was off longer
            // than the log keeps events): nothing left to send.
            let attempt = Attempt {
                attempt: attempt_no,
                attempted_at: now,
                status_code: None,
                duration_ms: 0,
                response: None,
                error: Some("the event is no longer in the log (past event_retention_days)".into()),
            };
            return (attempt, AttemptOutcome::GaveUp);
        };
        let id = message_id(endpoint.merchant_id, delivery.seq);
        let message = send::Message {
            url: &endpoint.url,
            secrets: &endpoint.secrets,
            id: &id,
            body: event.payload(),
        };
        let attempt = self.sender.send(message, attempt_no, now).await;
        // Milliseconds to seconds for a histogram.
        #[allow(clippy::cast_precision_loss)]
        self.metrics
            .attempt_duration
            .observe(attempt.duration_ms as f64 / 1000.0);
        let succeeded = attempt.status_code.is_some_and(|s| (200..300).contains(&s));
        let outcome = if succeeded {
            #[allow(clippy::cast_precision_loss)]
            self.metrics
                .latency
                .observe((now_millis() - event.occurred_at).max(0) as f64 / 1000.0);
            AttemptOutcome::Succeeded
        } else if now - delivery.first_attempt_at.unwrap_or(now) >= self.config.retry_for_ms {
            self.give_up(endpoint, &attempt).await
        } else {
            let wait = backoff_ms(attempt_no, self.config.retry_base_ms, rand_unit());
            AttemptOutcome::RetryAt(now + wait)
        };
        (attempt, outcome)
    }

    /// Turns the endpoint off through its merchant's writer (so reads and the log see it, with
    /// `webhook.disabled` and the reason). If that write fails, the delivery is retried later
    /// instead, and giving up is tried again then.
    async fn give_up(&self, endpoint: &Endpoint, last: &Attempt) -> AttemptOutcome {
        let hours = self.config.retry_for_ms as f64 / 3_600_000.0;
        let last_said = match (last.status_code, &last.error) {
            (Some(status), _) => format!("HTTP {status}"),
            (None, Some(error)) => error.clone(),
            (None, None) => "no answer".into(),
        };
        let reason = format!(
            "Deliveries failed for {hours:.1} hours and were given up; the last attempt: {last_said}. Fix the receiver, then set active to true (failed deliveries can be resent)."
        );
        let mut fields = Map::new();
        fields.insert("id".into(), json!(endpoint.id));
        let mut object = BatchObject::new("dispatcher".into(), Ok(fields));
        object.disabled_because = Some(reason);
        let written = self
            .merchants
            .write::<WebhookRecord>(
                endpoint.merchant_id,
                WriteMode::UpdateOnly,
                vec![object],
                0,
                None,
            )
            .await;
        match written {
            Ok(Answered::Fresh(outcomes)) if outcomes.iter().all(|o| o.result.is_ok()) => {
                tracing::warn!(
                    merchant_id = endpoint.merchant_id,
                    webhook_id = endpoint.id,
                    "webhook endpoint turned off after failing for the retry window"
                );
                AttemptOutcome::GaveUp
            }
            Ok(_) => AttemptOutcome::GaveUp, // deleted meanwhile: nothing to turn off
            Err(e) => {
                tracing::warn!(merchant_id = endpoint.merchant_id, webhook_id = endpoint.id, error = %e, "turning a failing webhook endpoint off failed; retrying later");
                AttemptOutcome::RetryAt(now_millis() + self.config.retry_base_ms)
            }
        }
    }
}

/// A number in `0..1` for jitter (not for secrets).
fn rand_unit() -> f64 {
    let bytes = crate::crypto::random_bytes::<4>();
    f64::from(u32::from_le_bytes(bytes)) / f64::from(u32::MAX)
}
