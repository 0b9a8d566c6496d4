//! A merchant's webhook endpoint (docs/events.md, "Webhooks"): where the change events of its
//! log are delivered, signed in the Standard Webhooks format.
//!
//! The signing secret never lives here: the HTTP layer generates it and shows it once, the
//! record carries it only as a fact of the write that sets it, and the dispatcher reads it from
//! the database when it signs.

use std::net::IpAddr;

use serde_json::{Map, Value};

use crate::event::TypeFilter;
use crate::fields::{Fields, Shape};
use merchantd_macros::Record;

#[derive(Clone, Default, PartialEq, Record)]
#[record(
    table = "webhooks",
    event = "webhook",
    once(name = "secret", after = "url"),
    write_only(name = "rotateSecret", kind = "bool")
)]
pub struct WebhookRecord {
    pub id: i64,
    #[field(max_len = MAX_URL, kind = "url", required)]
    pub url: String,
    /// Event types (`basket.completed`) and objects (`product`, every `product.*`); empty:
    /// every event.
    pub events: Vec<String>,
    pub active: bool,
    #[field(max_len = 2000)]
    pub description: Option<String>,
    /// Why the dispatcher turned the endpoint off; cleared when it is turned on again.
    #[field(read_only)]
    pub disabled_reason: Option<String>,
    pub create_date: i64,
    pub delete_date: Option<i64>,
    /// A signing secret this write sets (create or rotation); `None` on every record loaded or
    /// carried over, so a later write never touches the stored secrets.
    #[field(skip)]
    pub new_secret: Option<String>,
}

/// Never the secret, even in a debug print.
impl std::fmt::Debug for WebhookRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookRecord")
            .field("id", &self.id)
            .field("events", &self.events)
            .field("active", &self.active)
            .field(
                "new_secret",
                &self.new_secret.as_ref().map(|_| "<redacted>"),
            )
            .finish_non_exhaustive()
    }
}

/// `{"id": N, "rotateSecret": true}` replaces the secret; the old one keeps signing beside it
/// for [`ROTATION_OVERLAP_MS`].
pub const ROTATE: &str = "rotateSecret";
/// How long a replaced secret still signs deliveries, so a receiver can switch without a gap.
pub const ROTATION_OVERLAP_MS: i64 = 24 * 3600 * 1000;
/// Secrets are `whsec_` and base64 of this many random bytes.
pub const SECRET_BYTES: usize = 24;
pub const SECRET_PREFIX: &str = "whsec_";

/// The fields writes accept (see [`Shape`]).
pub const SHAPE: Shape = Shape::of::<WebhookRecord>();
const MAX_URL: usize = 2000;

/// Whether a written object gets a new secret: a create (no `id`, when creating is allowed)
/// or a rotation.
pub fn wants_secret(fields: &Map<String, Value>, may_create: bool) -> bool {
    let creates = matches!(fields.get("id"), None | Some(Value::Null));
    (creates && may_create) || fields.get(ROTATE) == Some(&Value::Bool(true))
}

/// What the server adds to a webhook write, never the client's JSON.
#[derive(Clone, Copy, Debug, Default)]
pub struct ServerFacts<'a> {
    /// The new signing secret (create or rotation).
    pub secret: Option<&'a str>,
    /// The dispatcher turns the endpoint off, for this reason.
    pub disabled_because: Option<&'a str>,
}

impl WebhookRecord {
    /// A new endpoint is on, created `now`.
    pub fn new(id: i64, now: i64) -> Self {
        Self {
            id,
            active: true,
            create_date: now,
            ..Self::default()
        }
    }

    /// The filter its events pass.
    pub fn filter(&self) -> TypeFilter {
        TypeFilter::from_entries(&self.events).unwrap_or_default()
    }

    /// Applies written fields; a create and a rotation need the new secret.
    pub fn apply(
        mut self,
        fields: Map<String, Value>,
        creating: bool,
        facts: ServerFacts<'_>,
    ) -> Result<Self, Vec<String>> {
        let mut fields = fields;
        let events = fields.remove("events");
        let mut f = Fields::declared::<Self>(fields);
        self.new_secret = None;
        let url = f.required_text("url", &self.url);
        if let Some(url) = &url {
            if let Err(why) = check_url(url) {
                f.reject("url", why);
            }
        }
        self.description = f.text("description").apply(self.description);
        match events.map(parse_events) {
            Some(Ok(events)) => self.events = events,
            Some(Err(why)) => f.reject("events", why),
            None => {}
        }
        if let Some(active) = f.boolean("active") {
            self.active = active;
            if active {
                self.disabled_reason = None;
            }
        }
        if let Some(why) = facts.disabled_because {
            self.active = false;
            self.disabled_reason = Some(why.to_owned());
        }
        if creating || f.boolean(ROTATE) == Some(true) {
            match facts.secret {
                Some(secret) if secret.starts_with(SECRET_PREFIX) => {
                    self.new_secret = Some(secret.to_owned());
                }
                _ => f.reject("secret", "no secret could be generated."),
            }
        }
        f.require("url", &url);
        f.finish()?;
        self.url = url.unwrap_or_default();
        Ok(self)
    }
}

/// `events`: a list of event types or objects, as the stream's `types` filter takes them
/// (`product.*` is read as `product`).
fn parse_events(value: Value) -> Result<Vec<String>, String> {
    let Value::Array(items) = value else {
        return Err("must be a list of event types or objects, for example [\"product\", \"basket.completed\"].".into());
    };
    let mut entries = Vec::with_capacity(items.len());
    for item in items {
        match item {
            Value::String(s) => entries.push(s.trim().trim_end_matches(".*").to_owned()),
            _ => return Err("every item must be a string.".into()),
        }
    }
    TypeFilter::from_entries(&entries)?;
    entries.sort();
    entries.dedup();
    Ok(entries)
}

/// What a URL must be before anyone resolves it: absolute `https` or `http`, a host, no
/// credentials (they would show in every read) and no fragment.
fn check_url(text: &str) -> Result<(), String> {
    let url = url::Url::parse(text).map_err(|e| format!("is not an absolute URL ({e})."))?;
    if !matches!(url.scheme(), "https" | "http") {
        return Err("must be an https:// or http:// URL.".into());
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("must name a host.".into());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("must not carry a user name or password; put credentials in the path or query if the receiver needs them.".into());
    }
    if url.fragment().is_some() {
        return Err("must not have a fragment (#...).".into());
    }
    Ok(())
}

/// Host names that always mean this machine or a cloud's metadata service.
pub fn forbidden_name(host: &str) -> Option<&'static str> {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host == "localhost" || host.ends_with(".localhost") {
        return Some("a loopback address");
    }
    if host == "metadata.google.internal" || host == "metadata" {
        return Some("a cloud metadata address");
    }
    None
}

/// Why deliveries may not go to an address (server-side request forgery), or `None` for a
/// public one: loopback, private (RFC 1918, unique local), link-local (cloud metadata lives at
/// 169.254.169.254), shared (CGNAT), unspecified, multicast, broadcast and documentation
/// ranges. IPv4 addresses mapped into IPv6 are judged as IPv4.
pub fn forbidden_ip(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            if v4.is_loopback() {
                Some("a loopback address")
            } else if v4.is_private() || (a == 100 && (64..128).contains(&b)) {
                Some("a private address")
            } else if v4.is_link_local() {
                Some("a link-local (cloud metadata) address")
            } else if v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || a >= 240
                || (a == 198 && (18..20).contains(&b))
                || (a == 192 && b == 0 && v4.octets()[2] == 0)
            {
                Some("a reserved address")
            } else {
                None
            }
        }
        IpAddr::V6(v6) => {
            let seg = v6.segments();
            // IPv4 inside IPv6: mapped (::ffff:a.b.c.d), compatible (::a.b.c.d), NAT64
            // (64:ff9b::a.b.c.d) and 6to4 (2002:aabb:ccdd::) reach the IPv4 address.
            let embedded = |hi: u16, lo: u16| {
                let [a, b] = hi.to_be_bytes();
                let [c, d] = lo.to_be_bytes();
                std::net::Ipv4Addr::new(a, b, c, d)
            };
            if let Some(v4) = v6.to_ipv4_mapped() {
                return forbidden_ip(IpAddr::V4(v4));
            }
            if seg[..6] == [0; 6] && !v6.is_loopback() && !v6.is_unspecified() {
                return forbidden_ip(IpAddr::V4(embedded(seg[6], seg[7])));
            }
            if seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                return forbidden_ip(IpAddr::V4(embedded(seg[6], seg[7])));
            }
            if seg[0] == 0x2002 {
                return forbidden_ip(IpAddr::V4(embedded(seg[1], seg[2])));
            }
            if seg[0] == 0x64 && seg[1] == 0xff9b && seg[2] == 1 {
                return Some("a private address");
            }
            let first = seg[0];
            if v6.is_loopback() {
                Some("a loopback address")
            } else if first & 0xfe00 == 0xfc00 || first & 0xffc0 == 0xfec0 {
                Some("a private address")
            } else if first & 0xffc0 == 0xfe80 {
                Some("a link-local address")
            } else if v6.is_unspecified()
                || v6.is_multicast()
                || first == 0x2001 && v6.segments()[1] == 0x0db8
            {
                Some("a reserved address")
            } else {
                None
            }
        }
    }
}

/// An endpoint as the dispatcher holds it while it has the lease.
#[derive(Clone)]
pub struct Endpoint {
    pub merchant_id: i64,
    pub id: i64,
    pub url: String,
    pub filter: TypeFilter,
    /// The current secret, then a replaced one still inside its overlap.
    pub secrets: Vec<String>,
    /// The last event of the log turned into deliveries.
    pub cursor: i64,
}

/// Never the URL (it may carry credentials) or the secrets, even in a debug print.
impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("merchant_id", &self.merchant_id)
            .field("id", &self.id)
            .field("cursor", &self.cursor)
            .finish_non_exhaustive()
    }
}

/// Which deliveries of one endpoint to list: the newest `limit`, of one status when given.
#[derive(Clone, Copy, Debug)]
pub struct DeliveryQuery {
    pub merchant_id: i64,
    pub webhook_id: i64,
    pub status: Option<DeliveryStatus>,
    pub limit: i64,
}

/// Finished deliveries of one endpoint to queue again, due `now`.
#[derive(Clone, Copy, Debug)]
pub struct Resend<'a> {
    pub merchant_id: i64,
    pub webhook_id: i64,
    pub seqs: &'a [i64],
    pub now: i64,
}

/// Where one event stands for one endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeliveryStatus {
    Pending,
    Succeeded,
    /// Given up after the retry window; the endpoint was turned off with it.
    Failed,
}

impl DeliveryStatus {
    pub const ALL: [DeliveryStatus; 3] = [Self::Pending, Self::Succeeded, Self::Failed];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

/// One event for one endpoint, with its attempts.
#[derive(Clone, Debug)]
pub struct Delivery {
    pub webhook_id: i64,
    pub seq: i64,
    pub event_type: String,
    pub status: DeliveryStatus,
    pub attempt_count: i64,
    pub created_at: i64,
    pub next_attempt_at: i64,
    pub first_attempt_at: Option<i64>,
    pub completed_at: Option<i64>,
    pub attempts: Vec<Attempt>,
}

/// One try at delivering.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    pub attempt: i64,
    pub attempted_at: i64,
    /// The receiver's status, when it answered.
    pub status_code: Option<i64>,
    pub duration_ms: i64,
    /// The start of the receiver's answer (text, cut short).
    pub response: Option<String>,
    /// Why there was no answer (timeout, refused address, connection error).
    pub error: Option<String>,
}

/// What an attempt leaves a delivery as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttemptOutcome {
    Succeeded,
    RetryAt(i64),
    GaveUp,
}

/// The `webhook-id` of an event's deliveries: the same for every attempt and every endpoint,
/// so a receiver drops a duplicate by it.
pub fn message_id(merchant_id: i64, seq: i64) -> String {
    format!("msg_{merchant_id}_{seq}")
}

/// The longest wait between two attempts.
pub const MAX_BACKOFF_MS: i64 = 6 * 3600 * 1000;

/// The wait after a failed attempt, when the delivery has been failing for `failing_for_ms`
/// (0 at its first attempt): as long again, at least `base_ms` and at most [`MAX_BACKOFF_MS`],
/// times a jitter factor in `0.5..1.5` (`jitter` in `0..1`) so endpoints that failed together
/// do not retry together. Each wait about doubles the time spent failing: exponential backoff
/// that a resend (which starts the clock again) resets.
pub fn backoff_ms(failing_for_ms: i64, base_ms: i64, jitter: f64) -> i64 {
    let plain = failing_for_ms.max(base_ms).clamp(1, MAX_BACKOFF_MS);
    // Rounding a product of finite values in range to whole milliseconds.
    #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
    let jittered = (plain as f64 * (0.5 + jitter.clamp(0.0, 1.0))) as i64;
    jittered.max(1)
}

/// The pending deliveries, and how old the oldest is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueDepth {
    pub pending: i64,
    pub oldest_created_at: Option<i64>,
}

/// An attempt as the dispatcher records it.
pub struct AttemptRecord {
    pub seq: i64,
    pub event_type: String,
    /// Its event came straight from the log: the delivery has no row yet.
    pub fresh: bool,
    pub attempt: Attempt,
    pub outcome: AttemptOutcome,
}

/// A pending delivery: its event, the attempts so far, the first one's time, when it is due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingDelivery {
    pub seq: i64,
    pub attempts: i64,
    pub first_attempt_at: Option<i64>,
    pub due: i64,
}

/// What recording a drain's attempts found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// Recorded; the lease is renewed.
    Kept,
    /// Recorded, and a move asks for the endpoint: give it back now.
    Paused,
    /// The lease was lost: nothing recorded.
    Lost,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SECRET: &str = "whsec_c2VjcmV0";

    use crate::testing::obj as fields;

    fn create(value: Value) -> Result<WebhookRecord, Vec<String>> {
        let facts = ServerFacts {
            secret: Some(SECRET),
            disabled_because: None,
        };
        WebhookRecord::new(1, 0).apply(fields(value), true, facts)
    }

    #[test]
    fn a_webhook_needs_a_url_and_takes_types_and_objects() {
        let hook = create(json!({"url": "https://example.com/h", "events": ["product.*", "basket.completed", "product"]})).unwrap();
        assert_eq!(hook.events, vec!["basket.completed", "product"]);
        assert_eq!(hook.new_secret.as_deref(), Some(SECRET));
        assert!(hook.filter().matches("product.updated"));
        assert!(!hook.filter().matches("basket.created"));
        assert!(create(json!({"events": []})).unwrap_err()[0].starts_with("url:"));
        assert!(create(json!({"url": "https://x.test", "events": "product"})).is_err());
        assert!(create(json!({"url": "https://x.test", "events": ["a.b.c"]})).is_err());
    }

    #[test]
    fn urls_are_absolute_http_without_credentials() {
        for bad in [
            "ftp://x.test/",
            "/relative",
            "https://u:p@x.test/",
            "https://x.test/#f",
            "not a url",
        ] {
            let refused = create(json!({"url": bad})).unwrap_err();
            assert!(refused[0].starts_with("url: "), "{bad}: {refused:?}");
        }
    }

    #[test]
    fn turning_on_clears_why_it_was_turned_off() {
        let facts = ServerFacts {
            secret: None,
            disabled_because: Some("failing"),
        };
        let hook = create(json!({"url": "https://x.test"})).unwrap();
        let off = hook.apply(Map::new(), false, facts).unwrap();
        assert!(!off.active);
        assert_eq!(off.disabled_reason.as_deref(), Some("failing"));
        let on = off
            .apply(
                fields(json!({"active": true})),
                false,
                ServerFacts::default(),
            )
            .unwrap();
        assert!(on.active && on.disabled_reason.is_none());
    }

    #[test]
    fn backoff_doubles_with_jitter_up_to_its_cap() {
        assert_eq!(backoff_ms(0, 1000, 0.5), 1000);
        assert_eq!(backoff_ms(1000, 1000, 0.5), 1000);
        assert_eq!(backoff_ms(8000, 1000, 0.5), 8000);
        assert_eq!(backoff_ms(4000, 1000, 0.0), 2000);
        assert_eq!(backoff_ms(4000, 1000, 1.0), 6000);
        assert_eq!(backoff_ms(i64::MAX / 2, 1000, 0.5), MAX_BACKOFF_MS);
        assert_eq!(message_id(3, 42), "msg_3_42");
    }

    #[test]
    fn private_loopback_and_metadata_addresses_are_named() {
        for (ip, why) in [
            ("127.0.0.1", "a loopback address"),
            ("10.1.2.3", "a private address"),
            ("172.16.0.1", "a private address"),
            ("192.168.1.1", "a private address"),
            ("100.64.0.1", "a private address"),
            ("169.254.169.254", "a link-local (cloud metadata) address"),
            ("0.0.0.0", "a reserved address"),
            ("::1", "a loopback address"),
            ("fd00::1", "a private address"),
            ("fe80::1", "a link-local address"),
            ("::ffff:10.0.0.1", "a private address"),
            ("::10.0.0.1", "a private address"),
            (
                "64:ff9b::a9fe:a9fe",
                "a link-local (cloud metadata) address",
            ),
            ("64:ff9b:1::1", "a private address"),
            ("2002:0a00:0001::1", "a private address"),
            ("fec0::1", "a private address"),
            ("198.18.0.1", "a reserved address"),
            ("192.0.0.8", "a reserved address"),
        ] {
            assert_eq!(forbidden_ip(ip.parse().unwrap()), Some(why), "{ip}");
        }
        for public in [
            "93.184.216.34",
            "2606:2800:220:1::1",
            "8.8.8.8",
            "64:ff9b::808:808",
            "2002:0808:0808::1",
        ] {
            assert_eq!(forbidden_ip(public.parse().unwrap()), None, "{public}");
        }
        assert!(forbidden_name("LOCALHOST.").is_some());
        assert!(forbidden_name("api.localhost").is_some());
        assert!(forbidden_name("example.com").is_none());
    }
}
