//! `GET /events`: the merchant's change events as server-sent events, for terminals behind NAT
//! that cannot receive webhooks. `Last-Event-ID` resumes after that sequence number without a
//! gap (from the log, not from memory); a `types` header filters (`product`,
//! `basket.completed`); comments keep idle connections open; the stream ends when the token
//! expires or is revoked. A token family holds at most `max_event_streams_per_token` streams
//! (a newer one closes the oldest).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::http::header;
use actix_web::web::{self, Bytes};
use actix_web::{HttpRequest, HttpResponse};

use crate::http::auth::{self, Call};
use crate::http::error::ApiError;
use crate::http::AppState;
use crate::views::Snapshot;
use domain::event::{Event, TypeFilter};
use domain::now_millis;
use engine::fleet::operator::Operator;

/// The longest an idle stream sleeps between looks at its token and heartbeat; a write wakes
/// it at once (the merchant's published position moves).
const POLL: Duration = Duration::from_secs(1);
/// A comment line this often keeps proxies from closing an idle stream.
const HEARTBEAT: Duration = Duration::from_secs(15);
/// How often the token is checked again (revocation), besides its expiry.
const TOKEN_CHECK: Duration = Duration::from_secs(5);
/// Events read from the log at a time.
const PAGE: i64 = 200;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/events").route(web::get().to(stream)));
}

/// Open streams per token family, oldest first. A family over its share gets its oldest
/// stream closed: a terminal that reconnects after its network dropped replaces the stream the
/// server has not yet noticed is dead, instead of being refused until it is.
#[derive(Default)]
pub struct OpenStreams {
    by_family: Mutex<HashMap<String, VecDeque<Opened>>>,
    next_id: AtomicU64,
    /// The server is stopping: every stream ends.
    closing_all: AtomicBool,
}

/// A stream's number and the flag that tells it to close.
type Opened = (u64, Arc<AtomicBool>);

/// One open stream, counted until dropped; `closing` is set when a newer one replaced it.
struct Slot {
    streams: Arc<OpenStreams>,
    family: String,
    id: u64,
    closing: Arc<AtomicBool>,
    gauge: prometheus::IntGauge,
    /// Counted as the merchant's usage too (docs/operator.md).
    usage: (Operator, i64),
}

impl OpenStreams {
    /// Ends every stream within a second (the server is stopping); each client is told to
    /// resume with its `Last-Event-ID`.
    pub fn close_all(&self) {
        self.closing_all.store(true, Ordering::Relaxed);
    }

    fn take(
        self: &Arc<Self>,
        family: &str,
        max: usize,
        gauge: prometheus::IntGauge,
        usage: (Operator, i64),
    ) -> Slot {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let closing = Arc::new(AtomicBool::new(false));
        let mut open = self.by_family.lock().unwrap_or_else(|e| e.into_inner());
        let streams = open.entry(family.to_owned()).or_default();
        while streams.len() >= max.max(1) {
            if let Some((_, oldest)) = streams.pop_front() {
                oldest.store(true, Ordering::Relaxed);
            }
        }
        streams.push_back((id, closing.clone()));
        gauge.inc();
        usage.0.usage().note_stream(usage.1, 1);
        Slot {
            streams: self.clone(),
            family: family.to_owned(),
            id,
            closing,
            gauge,
            usage,
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.gauge.dec();
        self.usage.0.usage().note_stream(self.usage.1, -1);
        let mut open = self
            .streams
            .by_family
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(streams) = open.get_mut(&self.family) {
            streams.retain(|(id, _)| *id != self.id);
            if streams.is_empty() {
                open.remove(&self.family);
            }
        }
    }
}

fn last_event_id(req: &HttpRequest) -> Result<Option<i64>, ApiError> {
    let Some(raw) = req.headers().get("last-event-id") else {
        return Ok(None);
    };
    raw.to_str()
        .ok()
        .map(str::trim)
        .filter(|t| {
            !t.is_empty()
                && t.len() <= crate::http::delta::MAX_SEQUENCE_DIGITS
                && t.bytes().all(|b| b.is_ascii_digit())
        })
        .and_then(|t| t.parse().ok())
        .map(Some)
        .ok_or_else(|| {
            ApiError::bad_header(
                "Last-Event-ID",
                "must be an event's id (a sequence number).",
            )
        })
}

fn type_filter(req: &HttpRequest) -> Result<TypeFilter, ApiError> {
    match req.headers().get("types") {
        None => Ok(TypeFilter::default()),
        Some(raw) => raw
            .to_str()
            .map_err(|_| ApiError::bad_header("types", "the value is not text."))
            .and_then(|t| TypeFilter::parse(t).map_err(|e| ApiError::bad_header("types", e))),
    }
}

async fn stream(call: Call) -> Result<HttpResponse, ApiError> {
    let Call { req, caller, state } = call;
    let filter = type_filter(&req)?;
    let resume = last_event_id(&req)?;
    let token =
        auth::presented_token_hash(req.headers()).ok_or_else(|| ApiError::TokenInvalid {
            detail: "no bearer token was sent".into(),
        })?;
    let position = state.services.event_position(caller.merchant_id).await?;
    let cursor = match resume {
        Some(id) if id < position.pruned_through => {
            return Err(ApiError::Gone {
                detail: format!(
                    "Last-Event-ID: events after {id} are no longer kept; read the lists again and open the stream without it."
                ),
            })
        }
        // An id the log never gave (a client's mistake, a restored database) would leave the
        // stream silent and then skip: the client must read afresh.
        Some(id) if id > position.last => {
            return Err(ApiError::Gone {
                detail: format!(
                    "Last-Event-ID: {id} is beyond this merchant's last event ({}); read the lists again and open the stream without it.",
                    position.last
                ),
            })
        }
        Some(id) => id,
        None => position.last,
    };
    let max = state.settings.max_event_streams_per_token;
    let slot = state.streams.take(
        &caller.family_id,
        max,
        state.metrics.event_streams.clone(),
        (state.services.operator.clone(), caller.merchant_id),
    );
    let tail = Tail {
        state: state.clone(),
        merchant_id: caller.merchant_id,
        token,
        cursor,
        filter,
        pending: VecDeque::from([Bytes::from_static(b"retry: 2000\n\n")]),
        last_sent: Instant::now(),
        last_check: Instant::now(),
        done: false,
        slot,
    };
    let body = futures_util::stream::unfold(tail, |mut tail| async move {
        let chunk = tail.next().await?;
        Some((Ok::<_, actix_web::Error>(chunk), tail))
    });
    Ok(HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        // Not compressed: a compressor would hold events back until its buffer fills.
        .insert_header((header::CONTENT_ENCODING, "identity"))
        .insert_header(("x-accel-buffering", "no"))
        .streaming(body))
}

/// One stream's progress through the log.
struct Tail {
    state: web::Data<AppState>,
    merchant_id: i64,
    token: String,
    cursor: i64,
    filter: TypeFilter,
    pending: VecDeque<Bytes>,
    last_sent: Instant,
    last_check: Instant,
    done: bool,
    slot: Slot,
}

impl Tail {
    /// The next chunk to send, or `None` to end the stream.
    async fn next(&mut self) -> Option<Bytes> {
        loop {
            if let Some(chunk) = self.pending.pop_front() {
                self.last_sent = Instant::now();
                return Some(chunk);
            }
            if self.done {
                return None;
            }
            if self.slot.streams.closing_all.load(Ordering::Relaxed) {
                self.done = true;
                self.pending.push_back(Bytes::from_static(
                    b"event: end\ndata: {\"reason\": \"the server is stopping; resume with Last-Event-ID\"}\n\n",
                ));
                continue;
            }
            if self.slot.closing.load(Ordering::Relaxed) {
                self.done = true;
                self.pending.push_back(Bytes::from_static(
                    b"event: end\ndata: {\"reason\": \"a newer stream of this token replaced this one\"}\n\n",
                ));
                continue;
            }
            if let Err(why) = self.check_token().await {
                self.done = true;
                self.pending
                    .push_back(Bytes::from(format!("event: end\ndata: {why}\n\n")));
                continue;
            }
            match self.read().await {
                Ok(true) => continue,
                Ok(false) => {}
                // The database is away: end; the client resumes with Last-Event-ID.
                Err(_) => {
                    self.done = true;
                    continue;
                }
            }
            if self.last_sent.elapsed() >= HEARTBEAT {
                self.pending
                    .push_back(Bytes::from_static(b": keep-alive\n\n"));
                continue;
            }
            // Asleep until the merchant publishes a newer position (at most POLL, so the
            // token and the heartbeat are still looked at).
            let woke = self
                .state
                .merchants
                .published_after(self.merchant_id, self.cursor, POLL)
                .await;
            if woke.is_err() {
                tokio::time::sleep(POLL).await;
            }
        }
    }

    /// Whether the token still holds; checked again every few seconds.
    async fn check_token(&mut self) -> Result<(), &'static str> {
        if self.last_check.elapsed() < TOKEN_CHECK {
            return Ok(());
        }
        self.last_check = Instant::now();
        let now = now_millis();
        match self.state.tokens.access_token(&self.token).await {
            Ok(Some(record)) if record.exit_date.is_some_and(|exit| exit <= now) => {
                Err("{\"reason\": \"the token's user no longer works for the merchant\"}")
            }
            Ok(Some(record)) if record.suspended => {
                Err("{\"reason\": \"the merchant is suspended\"}")
            }
            Ok(Some(record)) if record.expires_at > now => Ok(()),
            Ok(Some(_)) => Err("{\"reason\": \"the token expired\"}"),
            Ok(None) => Err("{\"reason\": \"the token was revoked\"}"),
            Err(_) => Err("{\"reason\": \"the service is unavailable\"}"),
        }
    }

    /// Queues the events after the cursor; whether there were any.
    async fn read(&mut self) -> Result<bool, ApiError> {
        let published = Snapshot::of(&self.state.merchants, self.merchant_id)
            .await?
            .position();
        if published <= self.cursor {
            return Ok(false);
        }
        let events = self
            .state
            .services
            .events_after(self.merchant_id, self.cursor, PAGE)
            .await?;
        let any = !events.is_empty();
        // Numbers have no gaps: a jump means retention cut the log under this stream.
        if events.first().is_some_and(|e| e.seq != self.cursor + 1) {
            self.done = true;
            self.pending.push_back(Bytes::from_static(
                b"event: end\ndata: {\"reason\": \"events after the last one sent are no longer kept; read the lists again\"}\n\n",
            ));
            return Ok(true);
        }
        for event in events {
            self.cursor = event.seq;
            if self.filter.matches(&event.kind) {
                self.pending.push_back(Bytes::from(frame(&event)));
            }
        }
        Ok(any)
    }
}

/// An event as one SSE message: its sequence number is the id a client resumes from.
fn frame(event: &Event) -> String {
    format!(
        "id: {}\nevent: {}\ndata: {}\n\n",
        event.seq,
        event.kind,
        crate::views::events::payload(event)
    )
}
