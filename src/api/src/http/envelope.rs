//! The `api` envelope every response carries, and the [`Reply`] handlers return.
//!
//! Handlers never serialize the envelope themselves: they leave a [`PendingEnvelope`] in the
//! response's extensions and the envelope middleware writes the body once the execution time is
//! known. Error responses built anywhere (extractors, actix internals, panics) get the same
//! treatment, so every response has one shape.

use std::collections::BTreeMap;

use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, Responder};
use serde::Serialize;
#[cfg(test)]
use serde_json::Value;

use super::messages::Message;

pub const CODE_BASE_VERSION: &str = "2.0";
/// The header every response carries with [`CODE_BASE_VERSION`].
pub const API_VERSION: HeaderName = HeaderName::from_static("x-api-version");

/// One record in `api.message.success|error|warning`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct MessageRecord {
    pub id: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'static str>,
    #[serde(rename = "statusCode", skip_serializing_if = "Option::is_none")]
    pub status_code: Option<u16>,
    pub title: &'static str,
    pub details: String,
    #[serde(rename = "objectRef", skip_serializing_if = "Option::is_none")]
    pub object_ref: Option<String>,
}

impl MessageRecord {
    pub fn new(message: Message, details: impl Into<String>, object_ref: Option<String>) -> Self {
        let is_error = message.is_error();
        Self {
            id: message.id(),
            code: is_error.then(|| message.code()),
            status_code: is_error.then(|| message.status().as_u16()),
            title: message.title(),
            details: details.into(),
            object_ref,
        }
    }
}

/// `api.message`: always an object, with only the maps that have entries.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Messages {
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub success: BTreeMap<String, MessageRecord>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub error: BTreeMap<String, MessageRecord>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub warning: BTreeMap<String, MessageRecord>,
}

impl Messages {
    /// Adds a record. With an `object_key` (a batch client key, or an id) the map key is
    /// `"<message id>:<key>"`, otherwise the message id alone.
    pub fn add(&mut self, message: Message, object_key: Option<&str>, details: impl Into<String>) {
        let key = match object_key {
            Some(k) => format!("{}:{k}", message.id()),
            None => message.id().to_string(),
        };
        let record = MessageRecord::new(message, details, object_key.map(str::to_owned));
        if message.is_error() {
            self.error.insert(key, record);
        } else {
            self.success.insert(key, record);
        }
    }

    /// A request-level record whose `objectRef` names something (a header, a log id).
    pub fn add_with_ref(&mut self, message: Message, object_ref: &str, details: impl Into<String>) {
        let record = MessageRecord::new(message, details, Some(object_ref.to_owned()));
        let key = message.id().to_string();
        if message.is_error() {
            self.error.insert(key, record);
        } else {
            self.success.insert(key, record);
        }
    }

    pub fn has_errors(&self) -> bool {
        !self.error.is_empty()
    }
}

/// The spec's top-level `error` object on responses with status ≥ 400.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ErrorObject {
    pub code: u16,
    pub message: String,
    pub details: Vec<String>,
}

/// The top-level data fields of a body, in order, each already JSON text: a collection rendered
/// from cached records goes in as it is, without becoming a `Value` tree or being parsed again.
#[derive(Clone, Debug, Default)]
pub struct Data(Vec<(String, String)>);

impl Data {
    /// Sets a field (replacing one of the same name in place).
    pub fn insert(&mut self, key: &str, value: impl Serialize) {
        let json = serde_json::to_string(&value).unwrap_or_else(|_| "null".to_owned());
        self.insert_json(key, json);
    }

    /// Sets a field to JSON text the caller rendered (and vouches for).
    pub fn insert_json(&mut self, key: &str, json: String) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some((_, slot)) => *slot = json,
            None => self.0.push((key.to_owned(), json)),
        }
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// What the envelope middleware turns into the body.
#[derive(Clone, Debug, Default)]
pub struct PendingEnvelope {
    pub data: Data,
    pub messages: Messages,
    pub error: Option<ErrorObject>,
}

impl PendingEnvelope {
    /// The JSON body: data fields, then `error`, then `api`.
    pub fn render(mut self, execution_ms: u64) -> Vec<u8> {
        #[derive(Serialize)]
        struct Api<'a> {
            message: &'a Messages,
            #[serde(rename = "codeBaseVersion")]
            code_base_version: &'static str,
            #[serde(rename = "executionTime_milliSeconds")]
            execution_time_ms: u64,
        }
        if let Some(error) = &self.error {
            self.data.insert("error", error);
        }
        let api = Api {
            message: &self.messages,
            code_base_version: CODE_BASE_VERSION,
            execution_time_ms: execution_ms,
        };
        self.data.insert("api", api);
        let size: usize = self.data.0.iter().map(|(k, v)| k.len() + v.len() + 4).sum();
        let mut body = Vec::with_capacity(size + 2);
        body.push(b'{');
        for (i, (key, value)) in self.data.0.iter().enumerate() {
            if i > 0 {
                body.push(b',');
            }
            // Keys are our own names; serializing a str cannot fail.
            let _ = serde_json::to_writer(&mut body, key);
            body.push(b':');
            body.extend_from_slice(value.as_bytes());
        }
        body.push(b'}');
        body
    }
}

/// A handler's answer: status, data fields, message records and extra headers.
#[derive(Debug)]
pub struct Reply {
    status: StatusCode,
    envelope: PendingEnvelope,
    headers: Vec<(HeaderName, HeaderValue)>,
}

impl Reply {
    pub fn new(status: StatusCode) -> Self {
        Self {
            status,
            envelope: PendingEnvelope::default(),
            headers: Vec::new(),
        }
    }

    pub fn ok() -> Self {
        Self::new(StatusCode::OK)
    }

    /// Adds a top-level field (for example the plural collection).
    pub fn field(mut self, key: &str, value: impl Serialize) -> Self {
        self.envelope.data.insert(key, value);
        self
    }

    /// Adds a top-level field that is JSON text already (a collection rendered from cache).
    pub fn raw_field(mut self, key: &str, json: String) -> Self {
        self.envelope.data.insert_json(key, json);
        self
    }

    pub fn messages(mut self, messages: Messages) -> Self {
        self.envelope.messages = messages;
        self
    }

    pub fn error(mut self, error: ErrorObject) -> Self {
        self.envelope.error = Some(error);
        self
    }

    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.push((name, value));
        self
    }

    pub fn into_response(self) -> HttpResponse {
        let mut builder = HttpResponse::build(self.status);
        for (name, value) in self.headers {
            builder.insert_header((name, value));
        }
        let mut response = builder.finish();
        response.extensions_mut().insert(self.envelope);
        response
    }
}

impl Responder for Reply {
    type Body = actix_web::body::BoxBody;

    fn respond_to(self, _req: &HttpRequest) -> HttpResponse {
        self.into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_records_are_keyed_by_id_and_client_key() {
        let mut m = Messages::default();
        m.add(Message::Created, Some("kiosk"), "Store 1040 created.");
        m.add(
            Message::InvalidObject,
            Some("bad"),
            "title: required field is missing.",
        );
        let v = serde_json::to_value(&m).unwrap();
        assert_eq!(v["success"]["200:kiosk"]["objectRef"], "kiosk");
        assert!(v["success"]["200:kiosk"].get("code").is_none());
        assert_eq!(v["error"]["110:bad"]["statusCode"], 422);
        assert_eq!(v["error"]["110:bad"]["code"], "validationError");
    }

    #[test]
    fn render_puts_error_and_api_beside_the_data() {
        let env = PendingEnvelope {
            data: {
                let mut d = Data::default();
                d.insert("stores", serde_json::json!({}));
                d
            },
            messages: Messages::default(),
            error: Some(ErrorObject {
                code: 404,
                message: "Not found.".into(),
                details: vec!["x".into()],
            }),
        };
        let v: Value = serde_json::from_slice(&env.render(3)).unwrap();
        assert_eq!(v["api"]["codeBaseVersion"], "2.0");
        assert_eq!(v["api"]["executionTime_milliSeconds"], 3);
        assert_eq!(v["api"]["message"], serde_json::json!({}));
        assert_eq!(v["error"]["code"], 404);
        assert!(v["stores"].is_object());
    }
}
