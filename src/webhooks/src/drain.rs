//! Draining one claimed endpoint: its retries and resends due, then the log past its cursor,
//! each event attempted, the attempts recorded in batches under the claim's lease, and the
//! endpoint given back (or turned off when it keeps failing).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Map};

use super::{send, Dispatcher};
use domain::batch::{Answered, BatchObject, WriteMode};
use domain::event::Event;
use domain::now_millis;
use domain::webhooks::webhook::{
    backoff_ms, message_id, Attempt, AttemptOutcome, AttemptRecord, Endpoint, PendingDelivery,
    Recorded, WebhookRecord,
};
use ports::StorageError;

/// Deliveries one claim sends at most before the endpoint goes back (fairness).
const BUDGET: usize = 500;
/// How often a drain that keeps its endpoint looks again for retries and resends.
const RETRIES_EVERY: Duration = Duration::from_millis(500);
/// Pending deliveries, or events of the log, read at a time.
const FETCH: i64 = 64;
/// Successful attempts recorded together at most, and how long one may wait to be recorded:
/// one transaction (one fsync on SQLite) per delivery would cap an endpoint at a few hundred
/// a second and take the write lock from the merchants' writers as often. A process killed
/// before recording sends those again (at least once, same `webhook-id`).
const RECORD_EVERY: usize = 32;
const RECORD_WITHIN: Duration = Duration::from_millis(100);
/// How long a drain keeps an endpoint after the last event it sent, woken by commits (and
/// looking every [`LINGER_POLL`] for other replicas' writes).
const LINGER: Duration = Duration::from_secs(1);
const LINGER_POLL: Duration = Duration::from_millis(50);
/// The shortest time between two polls when commits wake the dispatcher.
const MIN_WAKE: Duration = Duration::from_millis(10);
/// How often the queue's depth is counted for the metrics.
const DEPTH_EVERY: Duration = Duration::from_secs(5);

/// Attempts sent but not yet recorded, and how far the log has been handled.
struct Unrecorded {
    /// The claim's token on the endpoint's lease, and until when it holds.
    token: String,
    lease_until: i64,
    records: Vec<AttemptRecord>,
    /// The last event of the log handled (delivered or filtered out).
    cursor: i64,
    /// The cursor moved since the last flush.
    moved: bool,
    since: Option<Instant>,
    /// When the drain last looked for retries and resends.
    retries_looked: Option<Instant>,
}

impl Unrecorded {
    fn new(cursor: i64, token: String, lease_until: i64) -> Self {
        Self {
            token,
            lease_until,
            records: Vec::new(),
            cursor,
            moved: false,
            since: None,
            retries_looked: None,
        }
    }

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

/// What a step of a drain found.
enum Step {
    /// Something was sent.
    Sent,
    /// Nothing to send now.
    Nothing,
    /// A delivery failed or is not due: the endpoint is due again then.
    Later(i64),
    /// Given up (the endpoint was turned off) or the lease was lost.
    Stop,
}

impl Step {
    /// Where a drain goes after an attempt: on only after a success.
    fn after(outcome: AttemptOutcome) -> Option<Step> {
        match outcome {
            AttemptOutcome::Succeeded => None,
            AttemptOutcome::RetryAt(at) => Some(Step::Later(at)),
            AttemptOutcome::GaveUp => Some(Step::Stop),
        }
    }
}

impl Dispatcher {
    pub(crate) async fn run(self: Arc<Self>) {
        let slots = self.slots.clone();
        let mut stopping = self.stopping.clone();
        let mut tick = tokio::time::interval(self.config.poll);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut counted: Option<Instant> = None;
        let mut polled = Instant::now();
        let mut commits = self.db.commits();
        let mut claims: u64 = 0;
        loop {
            tokio::select! {
                () = async { let _ = stopping.wait_for(|stop| *stop).await; } => {
                    // Every drain gives its permit back once it has recorded what it sent.
                    let all = u32::try_from(self.config.concurrency).unwrap_or(u32::MAX);
                    let _ = slots.acquire_many(all).await;
                    return;
                }
                _ = tick.tick() => {}
                _ = commits.changed() => {
                    // Woken by a commit: at most one poll per MIN_WAKE, however many commits.
                    let since = polled.elapsed();
                    if since < MIN_WAKE {
                        tokio::time::sleep(MIN_WAKE - since).await;
                    }
                }
            }
            polled = Instant::now();
            if counted.is_none_or(|at| at.elapsed() >= DEPTH_EVERY) {
                counted = Some(Instant::now());
                self.count_queue().await;
            }
            let free = slots.available_permits();
            if free == 0 {
                continue;
            }
            let now = now_millis();
            let limit = i64::try_from(free).unwrap_or(1);
            // A token per claim fences a drain whose lease ran out (stalled) from the one that
            // took the endpoint over, even in this process.
            claims += 1;
            let token = format!("{}/{claims}", self.owner);
            let lease_until = now + self.config.lease_ms();
            let claimed = self.db.claim(&token, now, lease_until, limit).await;
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
                let hold = Unrecorded::new(endpoint.cursor, token.clone(), lease_until);
                actix_rt::spawn(async move {
                    let (merchant_id, webhook_id) = (endpoint.merchant_id, endpoint.id);
                    if let Err(e) = this.drain(endpoint, hold).await {
                        tracing::warn!(merchant_id, webhook_id, error = %e, "webhook delivery interrupted; the lease will run out and it is taken up again");
                    }
                    drop(permit);
                });
            }
        }
    }

    async fn count_queue(&self) {
        match self.db.queue_depth().await {
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

    /// Delivers to an endpoint, in order: first the deliveries waiting for a retry (or
    /// resent), then the log after its cursor. Stops when one fails (due again later), when
    /// the budget is spent, or when nothing new came for [`LINGER`]; then gives the endpoint
    /// back. While a merchant keeps writing, the endpoint stays with this task, which wakes on
    /// each commit: no claim, no release and no transaction per event (see [`Unrecorded`]).
    async fn drain(
        &self,
        mut endpoint: Endpoint,
        mut batch: Unrecorded,
    ) -> Result<(), StorageError> {
        let mut commits = self.db.commits();
        let mut idle_since = Instant::now();
        let mut sent = 0;
        loop {
            if *self.stopping.borrow() {
                return self.give_back(&endpoint, &mut batch, now_millis()).await;
            }
            let step = match self.retries(&endpoint, &mut batch).await? {
                Step::Nothing => {
                    self.new_events(&mut endpoint, &mut batch, &mut sent)
                        .await?
                }
                other => other,
            };
            match step {
                Step::Sent => idle_since = Instant::now(),
                Step::Nothing if idle_since.elapsed() < LINGER && sent < BUDGET => {
                    // Paused by a move (or lost): given back at once, not left to expire,
                    // so the move waits for this drain's last send, not the lease.
                    if !self.flush(&endpoint, &mut batch).await?
                        || !self.keep_lease(&endpoint, &mut batch).await?
                    {
                        return self.give_back(&endpoint, &mut batch, now_millis()).await;
                    }
                    let _ = tokio::time::timeout(LINGER_POLL, commits.changed()).await;
                }
                Step::Nothing => return self.give_back(&endpoint, &mut batch, now_millis()).await,
                Step::Later(at) => return self.give_back(&endpoint, &mut batch, at).await,
                Step::Stop => return self.give_back(&endpoint, &mut batch, now_millis()).await,
            }
            if sent >= BUDGET {
                return self.give_back(&endpoint, &mut batch, now_millis()).await;
            }
        }
    }

    /// Sends the deliveries waiting for a retry or resent, in sequence order, and records them.
    async fn retries(
        &self,
        endpoint: &Endpoint,
        batch: &mut Unrecorded,
    ) -> Result<Step, StorageError> {
        // Looked for first, then every RETRIES_EVERY: a read per event would double what a
        // delivery costs the database.
        if batch
            .retries_looked
            .is_some_and(|at| at.elapsed() < RETRIES_EVERY)
        {
            return Ok(Step::Nothing);
        }
        batch.retries_looked = Some(Instant::now());
        // What is unrecorded here came from the log and has no row yet: nothing read below
        // can be sent twice.
        let pending = self.db.pending_deliveries(endpoint, FETCH).await?;
        if pending.is_empty() {
            return Ok(Step::Nothing);
        }
        let events = self.db.events_pending(endpoint, FETCH).await?;
        for delivery in pending {
            if delivery.due > now_millis() {
                return Ok(Step::Later(delivery.due));
            }
            if !self.keep_lease(endpoint, batch).await? {
                return Ok(Step::Stop);
            }
            let Some(event) = events.iter().find(|e| e.seq == delivery.seq) else {
                // Pruned by retention before it could be sent: nothing left to send; the
                // endpoint goes on with the next.
                batch.push(AttemptRecord {
                    seq: delivery.seq,
                    event_type: String::new(),
                    fresh: false,
                    attempt: pruned(delivery.attempts + 1),
                    outcome: AttemptOutcome::GaveUp,
                });
                continue;
            };
            let outcome = self.attempt(endpoint, event, delivery, false, batch).await;
            if let Some(step) = Step::after(outcome) {
                return Ok(step);
            }
        }
        if self.flush(endpoint, batch).await? {
            Ok(Step::Sent)
        } else {
            Ok(Step::Stop)
        }
    }

    /// Sends the events of the log after the cursor that the endpoint's filter passes.
    async fn new_events(
        &self,
        endpoint: &mut Endpoint,
        batch: &mut Unrecorded,
        sent: &mut usize,
    ) -> Result<Step, StorageError> {
        let events = self
            .db
            .events_after(endpoint.merchant_id, batch.cursor, FETCH)
            .await?;
        if events.is_empty() {
            return Ok(Step::Nothing);
        }
        for event in &events {
            batch.cursor = event.seq;
            // The endpoint itself changed (URL, filter, secret, turned off): what follows goes
            // out as it is now. Every change through the API appends such an event.
            if event.object_id == endpoint.id && event.kind.starts_with("webhook.") {
                match self
                    .db
                    .endpoint(endpoint.merchant_id, endpoint.id, now_millis())
                    .await?
                {
                    Some(now) => {
                        *endpoint = Endpoint {
                            cursor: endpoint.cursor,
                            ..now
                        }
                    }
                    None => return Ok(Step::Later(now_millis())),
                }
            }
            if !endpoint.filter.matches(&event.kind) {
                continue;
            }
            if !self.keep_lease(endpoint, batch).await? {
                return Ok(Step::Stop);
            }
            let fresh = PendingDelivery {
                seq: event.seq,
                attempts: 0,
                first_attempt_at: None,
                due: 0,
            };
            let outcome = self.attempt(endpoint, event, fresh, true, batch).await;
            *sent += 1;
            if let Some(step) = Step::after(outcome) {
                return Ok(step);
            }
            if batch.due() && !self.flush(endpoint, batch).await? {
                return Ok(Step::Stop);
            }
        }
        batch.moved = true;
        Ok(Step::Sent)
    }

    /// Sends `event` as `delivery` (its first attempt when `fresh`) and keeps the attempt in
    /// `batch` for the next flush; how it went.
    async fn attempt(
        &self,
        endpoint: &Endpoint,
        event: &Event,
        delivery: PendingDelivery,
        fresh: bool,
        batch: &mut Unrecorded,
    ) -> AttemptOutcome {
        let seq = delivery.seq;
        let (attempt, outcome) = self.deliver(endpoint, event, delivery).await;
        batch.push(AttemptRecord {
            seq,
            event_type: event.kind.clone(),
            fresh,
            attempt,
            outcome,
        });
        outcome
    }

    /// Renews the lease when less than an attempt's time (and a second) is left, so it never
    /// runs out under a live drain. False when it was lost: the drain stops at once.
    async fn keep_lease(
        &self,
        endpoint: &Endpoint,
        batch: &mut Unrecorded,
    ) -> Result<bool, StorageError> {
        let now = now_millis();
        let margin = i64::try_from(self.config.timeout.as_millis()).unwrap_or(i64::MAX / 4) + 1_000;
        if batch.lease_until - now > margin {
            return Ok(true);
        }
        let until = now + self.config.lease_ms().max(2 * margin);
        if !self.db.renew_lease(endpoint, &batch.token, until).await? {
            return Ok(false);
        }
        batch.lease_until = until;
        Ok(true)
    }

    /// Records what was sent and gives the endpoint back, due again at `next_attempt_at`.
    async fn give_back(
        &self,
        endpoint: &Endpoint,
        batch: &mut Unrecorded,
        next_attempt_at: i64,
    ) -> Result<(), StorageError> {
        if self.flush(endpoint, batch).await? {
            self.db
                .release(endpoint, &batch.token, next_attempt_at)
                .await?;
        }
        Ok(())
    }

    /// Records the attempts made and the cursor reached since the last flush (renewing the
    /// lease). False when the lease was lost: nothing is recorded, and the next holder sends
    /// them again.
    async fn flush(
        &self,
        endpoint: &Endpoint,
        batch: &mut Unrecorded,
    ) -> Result<bool, StorageError> {
        if batch.records.is_empty() && !batch.moved {
            return Ok(true);
        }
        let until = now_millis() + self.config.lease_ms();
        let records = std::mem::take(&mut batch.records);
        batch.since = None;
        batch.moved = false;
        let lease = (batch.token.as_str(), until);
        let recorded = self
            .db
            .record_attempts(endpoint, &records, batch.cursor, lease)
            .await?;
        if recorded == Recorded::Lost {
            return Ok(false);
        }
        batch.lease_until = until;
        for record in &records {
            let result = match record.outcome {
                AttemptOutcome::Succeeded => "succeeded",
                AttemptOutcome::RetryAt(_) => "retrying",
                AttemptOutcome::GaveUp => "gave_up",
            };
            self.metrics.deliveries.with_label_values(&[result]).inc();
        }
        // A move waits for the endpoint: the drain stops here and gives it back.
        Ok(recorded == Recorded::Kept)
    }

    /// One attempt at one delivery.
    async fn deliver(
        &self,
        endpoint: &Endpoint,
        event: &Event,
        delivery: PendingDelivery,
    ) -> (Attempt, AttemptOutcome) {
        let now = now_millis();
        let attempt_no = delivery.attempts + 1;
        let id = message_id(endpoint.merchant_id, delivery.seq);
        let message = send::Message {
            url: &endpoint.url,
            secrets: &endpoint.secrets,
            id: &id,
            body: self.render.payload(event),
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
            let failing_for = now - delivery.first_attempt_at.unwrap_or(now);
            let wait = backoff_ms(failing_for, self.config.retry_base_ms, rand_unit());
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
        let write = self.merchants.write::<WebhookRecord>(
            endpoint.merchant_id,
            WriteMode::UpdateOnly,
            vec![object],
            0,
            None,
        );
        let later = AttemptOutcome::RetryAt(now_millis() + self.config.retry_base_ms);
        match tokio::time::timeout(self.config.timeout, write).await {
            Ok(Ok(Answered::Fresh(outcomes))) if outcomes.iter().all(|o| o.result.is_ok()) => {
                tracing::warn!(
                    merchant_id = endpoint.merchant_id,
                    webhook_id = endpoint.id,
                    "webhook endpoint turned off after failing for the retry window"
                );
                AttemptOutcome::GaveUp
            }
            // Deleted meanwhile: nothing to turn off, nothing more to send.
            _ if self.is_gone(endpoint).await => AttemptOutcome::GaveUp,
            // Refused, failed or slow: the delivery stays pending and giving up is tried
            // again at its next attempt, never skipped past with the endpoint still on.
            _ => {
                tracing::warn!(
                    merchant_id = endpoint.merchant_id,
                    webhook_id = endpoint.id,
                    "turning a failing webhook endpoint off failed; retrying later"
                );
                later
            }
        }
    }

    /// Whether the endpoint was deleted (its merchant's state no longer has it live).
    async fn is_gone(&self, endpoint: &Endpoint) -> bool {
        match self.merchants.snapshot(endpoint.merchant_id).await {
            Ok(state) => state.find::<WebhookRecord>(endpoint.id).is_none(),
            Err(_) => false,
        }
    }
}

/// The attempt recorded for a delivery whose event retention pruned first.
fn pruned(attempt: i64) -> Attempt {
    Attempt {
        attempt,
        attempted_at: now_millis(),
        status_code: None,
        duration_ms: 0,
        response: None,
        error: Some("the event is no longer in the log (past event_retention_days)".into()),
    }
}

/// A number in `0..1` for jitter (not for secrets).
fn rand_unit() -> f64 {
    let bytes = domain::crypto::random_bytes::<4>();
    f64::from(u32::from_le_bytes(bytes)) / f64::from(u32::MAX)
}
