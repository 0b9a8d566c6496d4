//! One object of a batch write as the actors receive it: parsed at the edge, with the facts the
//! server adds kept apart from the client's JSON.

use serde_json::{Map, Value};

#[derive(Clone, Debug)]
pub struct BatchObject {
    /// The client key the object was sent under.
    pub key: String,
    /// Its fields, or why it is not an object.
    pub fields: Result<Map<String, Value>, String>,
    /// A secret the server generated for this object: the SHA-256 (hex) of an application's
    /// client secret, or a webhook's signing secret.
    pub secret: Option<String>,
    /// Set by the webhook dispatcher alone: it turns the endpoint off, for this reason.
    pub disabled_because: Option<String>,
}

impl BatchObject {
    pub fn new(key: String, fields: Result<Map<String, Value>, String>) -> Self {
        Self {
            key,
            fields,
            secret: None,
            disabled_because: None,
        }
    }
}

/// Who writes: facts of the token, never of the body.
#[derive(Clone, Copy, Debug, Default)]
pub struct Writer {
    /// The employee the token acts as.
    pub employee_id: i64,
}

/// POST creates objects without `id` and updates those with one; PUT only updates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteMode {
    Upsert,
    UpdateOnly,
}

/// How a write changed a record, as much as storing it needs to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    New,
    Updated,
    /// Updated, with its child rows (basket lines, invoice items) exactly as they were: only
    /// the record's own row is rewritten.
    UpdatedKeepingChildren,
}

impl Change {
    pub fn is_new(self) -> bool {
        self == Change::New
    }
}

/// An answer stored for an `Idempotency-Key`: the request it answered (fingerprint) and the
/// answer (JSON).
#[derive(Clone, Debug)]
pub struct StoredAnswer {
    pub fingerprint: String,
    pub answer: String,
}

/// A client's `Idempotency-Key` on a write, with what identifies the request it names. Keys are
/// scoped to the merchant and the application that sent them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Idempotency {
    pub application_id: i64,
    pub key: String,
    /// SHA-256 (hex) of the method, path, filter header and body: the same key with another
    /// request is refused.
    pub fingerprint: String,
}

/// How long a stored answer is replayed.
pub const IDEMPOTENCY_TTL_MILLIS: i64 = 24 * 3600 * 1000;

/// The answer a write got: done now, replayed from an earlier request with the same
/// `Idempotency-Key`, or refused because that key named another request.
#[derive(Debug)]
pub enum Answered<T> {
    Fresh(T),
    Replayed(T),
    KeyReused,
}

impl<T> Answered<T> {
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Answered<U> {
        match self {
            Answered::Fresh(t) => Answered::Fresh(f(t)),
            Answered::Replayed(t) => Answered::Replayed(f(t)),
            Answered::KeyReused => Answered::KeyReused,
        }
    }
}
