//! `/log` (api-reference.md Log; examples §2.16): small JSON documents an application files under
//! an object key, read and written straight through the store (no actor state).
//!
//! Headers: `tag` (comma-separated tags), `object` (letters, digits and `_`), `identifier`
//! (visible ASCII), `id` (`<object>-<identifier>:<n>`) and `completed` (`true`/`false`). Every
//! missing or malformed header of a request is named in one 400.

use actix_web::http::header::HeaderMap;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest};
use serde_json::{json, Map, Value};

use crate::http::auth::Call;
use crate::http::batch;
use crate::http::envelope::{Messages, Reply};
use crate::http::error::ApiError;
use crate::http::filters::{clip, HeaderCheck};
use crate::http::messages::Message;
use domain::dates::to_iso;
use domain::log::{LogChange, LogRecord, NewLog};
use domain::now_millis;

pub const MAX_TAGS: usize = 32;
pub const MAX_TAG_LEN: usize = 64;
pub const MAX_OBJECT_LEN: usize = 64;
pub const MAX_IDENTIFIER_LEN: usize = 128;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/log")
            .route(web::get().to(list))
            .route(web::post().to(post))
            .route(web::delete().to(delete)),
    );
}

/// A log id split into its parts.
#[derive(Clone, Debug, PartialEq, Eq)]
struct LogId {
    text: String,
    object: String,
    identifier: String,
}

/// The `/log` headers of one request, and the problems found reading them.
struct LogHeaders<'a> {
    tags: Option<Vec<String>>,
    object: Option<String>,
    identifier: Option<String>,
    id: Option<LogId>,
    completed: Option<bool>,
    check: HeaderCheck<'a>,
}

/// The order problems are named in.
const HEADER_ORDER: [&str; 5] = ["tag", "object", "identifier", "id", "completed"];

impl<'a> LogHeaders<'a> {
    fn read(headers: &'a HeaderMap) -> Self {
        let mut check = HeaderCheck::new(headers);
        Self {
            tags: check.parsed("tag", parse_tags),
            object: check.parsed("object", parse_object),
            identifier: check.parsed("identifier", parse_identifier),
            id: check.parsed("id", parse_log_id),
            completed: check.boolean("completed"),
            check,
        }
    }

    /// Names every required header not sent (and not already reported as malformed).
    fn require(&mut self, names: &[&'static str]) {
        for &name in names {
            let sent = match name {
                "tag" => self.tags.is_some(),
                "object" => self.object.is_some(),
                "identifier" => self.identifier.is_some(),
                "id" => self.id.is_some(),
                _ => true,
            };
            if !sent {
                self.check.missing(name);
            }
        }
    }

    /// One 400 naming every problem, in header order.
    fn finish(mut self) -> Result<Self, ApiError> {
        self.check.finish(&HEADER_ORDER)?;
        Ok(self)
    }
}

fn parse_tags(text: &str) -> Result<Vec<String>, String> {
    let mut tags: Vec<String> = Vec::new();
    for (i, raw) in text.split(',').enumerate() {
        let tag = raw.trim();
        if tag.is_empty() {
            return Err(format!("item {} is empty.", i + 1));
        }
        if tag.chars().count() > MAX_TAG_LEN {
            return Err(format!(
                "item \"{}\" is longer than {MAX_TAG_LEN} characters.",
                clip(tag)
            ));
        }
        if !tags.iter().any(|t| t == tag) {
            tags.push(tag.to_owned());
        }
    }
    if tags.len() > MAX_TAGS {
        return Err(format!("at most {MAX_TAGS} tags are allowed."));
    }
    Ok(tags)
}

fn parse_object(text: &str) -> Result<String, String> {
    if text.is_empty() {
        return Err("the header is empty.".into());
    }
    let ok = text.len() <= MAX_OBJECT_LEN
        && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !ok {
        return Err(format!(
            "\"{}\" is not an object key (letters, digits and _, at most {MAX_OBJECT_LEN}).",
            clip(text)
        ));
    }
    Ok(text.to_owned())
}

fn parse_identifier(text: &str) -> Result<String, String> {
    if text.is_empty() {
        return Err("the header is empty.".into());
    }
    let ok = text.len() <= MAX_IDENTIFIER_LEN && text.bytes().all(|b| b.is_ascii_graphic());
    if !ok {
        return Err(format!(
            "\"{}\" is not an identifier (visible characters without spaces, at most \
             {MAX_IDENTIFIER_LEN}).",
            clip(text)
        ));
    }
    Ok(text.to_owned())
}

/// `<object>-<identifier>:<n>`: the object has no `-`, so the first `-` ends it; the last `:`
/// starts the counter.
fn parse_log_id(text: &str) -> Result<LogId, String> {
    let bad = || {
        format!(
            "\"{}\" is not a log id of the form <object>-<identifier>:<n>.",
            clip(text)
        )
    };
    let (prefix, n) = text.rsplit_once(':').ok_or_else(bad)?;
    let (object, identifier) = prefix.split_once('-').ok_or_else(bad)?;
    let n_ok = !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit())
        && n.parse::<i64>().is_ok_and(|n| n > 0);
    if !n_ok || parse_object(object).is_err() || parse_identifier(identifier).is_err() {
        return Err(bad());
    }
    Ok(LogId {
        text: text.to_owned(),
        object: object.to_owned(),
        identifier: identifier.to_owned(),
    })
}

fn has_every_tag(log: &LogRecord, wanted: &[String]) -> bool {
    wanted
        .iter()
        .all(|w| log.tags.split(',').any(|t| t == w.as_str()))
}

fn to_json(log: &LogRecord) -> Value {
    let data = serde_json::from_str(&log.data).unwrap_or(Value::Null);
    json!({
        "id": log.log_id,
        "tags": log.tags,
        "object": log.object,
        "identifier": log.identifier,
        "data": data,
        "addedDate": to_iso(log.added_date),
        "completeDate": log.complete_date.and_then(to_iso),
    })
}

pub(crate) fn collection<'a>(logs: impl IntoIterator<Item = &'a LogRecord>) -> Value {
    let map: Map<String, Value> = logs
        .into_iter()
        .map(|log| (log.log_id.clone(), to_json(log)))
        .collect();
    Value::Object(map)
}

fn not_found(id: &str) -> ApiError {
    ApiError::NotFound {
        detail: format!("Log {id} does not exist."),
    }
}

/// GET: the logs of `object` + `identifier` carrying every listed `tag`, or with `id` that one
/// log (the other headers, when sent, narrow it further). An unknown id is simply absent.
pub async fn list(call: Call) -> Result<Reply, ApiError> {
    let Call { req, caller, state } = call;
    let mut headers = LogHeaders::read(req.headers());
    if headers.id.is_none() && !headers.check.has_problem("id") {
        headers.require(&["tag", "object", "identifier"]);
    }
    let headers = headers.finish()?;
    let tags = headers.tags.unwrap_or_default();
    let logs = match &headers.id {
        Some(id) => state
            .services
            .log(caller.merchant_id, &id.text)
            .await?
            .into_iter()
            .collect(),
        None => {
            let (Some(object), Some(identifier)) = (&headers.object, &headers.identifier) else {
                return Err(ApiError::internal(anyhow::anyhow!(
                    "required headers unchecked"
                )));
            };
            state
                .services
                .logs_of(caller.merchant_id, object, identifier)
                .await?
        }
    };
    let kept = logs.iter().filter(|log| {
        headers.object.as_ref().is_none_or(|o| *o == log.object)
            && headers
                .identifier
                .as_ref()
                .is_none_or(|i| *i == log.identifier)
            && has_every_tag(log, &tags)
    });
    Ok(Reply::ok().field("logs", collection(kept)))
}

/// The posted JSON document as text; `None` when an update leaves the body empty to keep the
/// data (to complete a log, say).
fn posted_data(req: &HttpRequest, body: &[u8], updating: bool) -> Result<Option<String>, ApiError> {
    if body.is_empty() && updating {
        return Ok(None);
    }
    let document = batch::json_document(req, body)?;
    let text = serde_json::to_string(&document).map_err(ApiError::internal)?;
    Ok(Some(text))
}

/// POST: files a new log, or with `id` replaces that log's data and tags. `completed` sets or
/// clears `completeDate`.
pub async fn post(call: Call, body: web::Bytes) -> Result<Reply, ApiError> {
    let Call { req, caller, state } = call;
    let mut headers = LogHeaders::read(req.headers());
    headers.require(&["tag", "object", "identifier"]);
    let headers = headers.finish()?;
    let (Some(tags), Some(object), Some(identifier)) =
        (&headers.tags, &headers.object, &headers.identifier)
    else {
        return Err(ApiError::internal(anyhow::anyhow!(
            "required headers unchecked"
        )));
    };
    if let Some(id) = &headers.id {
        if id.object != *object || id.identifier != *identifier {
            return Err(ApiError::bad_header(
                "id",
                format!(
                    "log {} is not filed under object {object} and identifier {identifier}.",
                    id.text
                ),
            ));
        }
    }
    let tags = tags.join(",");
    let now = now_millis();
    let data = posted_data(&req, &body, headers.id.is_some())?;
    let mut messages = Messages::default();
    let log = match &headers.id {
        Some(id) => {
            let change = LogChange {
                tags: Some(&tags),
                data: data.as_deref(),
                completed: headers.completed,
            };
            let log = state
                .services
                .update_log(caller.merchant_id, &id.text, &change, now)
                .await?
                .ok_or_else(|| not_found(&id.text))?;
            messages.add_with_ref(
                Message::Updated,
                &log.log_id,
                format!("Log {} updated.", log.log_id),
            );
            log
        }
        None => {
            let new = NewLog {
                object,
                identifier,
                tags: &tags,
                data: data.as_deref().unwrap_or("null"),
                completed: headers.completed == Some(true),
            };
            let log = state
                .services
                .insert_log(caller.merchant_id, &new, now)
                .await?;
            messages.add_with_ref(
                Message::Created,
                &log.log_id,
                format!("Log {} created.", log.log_id),
            );
            log
        }
    };
    Ok(Reply::new(StatusCode::CREATED)
        .field("logs", collection([&log]))
        .messages(messages))
}

/// DELETE with header `id` (the gate has checked `admin`): 205, or 404 for an id this merchant
/// does not have.
pub async fn delete(call: Call) -> Result<Reply, ApiError> {
    let Call { req, caller, state } = call;
    let mut headers = LogHeaders::read(req.headers());
    headers.require(&["id"]);
    let headers = headers.finish()?;
    let Some(id) = &headers.id else {
        return Err(ApiError::internal(anyhow::anyhow!("id header unchecked")));
    };
    if !state
        .services
        .delete_log(caller.merchant_id, &id.text)
        .await?
    {
        return Err(not_found(&id.text));
    }
    let mut messages = Messages::default();
    messages.add_with_ref(
        Message::Deleted,
        &id.text,
        format!("Log {} deleted.", id.text),
    );
    Ok(Reply::new(StatusCode::RESET_CONTENT).messages(messages))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_ids_split_at_the_first_dash_and_the_last_colon() {
        let id = parse_log_id("STORE-9:14").unwrap();
        assert_eq!((id.object.as_str(), id.identifier.as_str()), ("STORE", "9"));
        let id = parse_log_id("BASKET-a-b:c:3").unwrap();
        assert_eq!(
            (id.object.as_str(), id.identifier.as_str()),
            ("BASKET", "a-b:c")
        );
        for bad in [
            "STORE-9",
            "STORE:1",
            "-9:1",
            "STORE-:1",
            "STORE-9:0",
            "STORE-9:x",
            "A B-1:1",
        ] {
            assert!(parse_log_id(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn tags_are_trimmed_and_deduplicated_and_empty_items_refused() {
        assert_eq!(parse_tags("sync, till-3,sync").unwrap(), ["sync", "till-3"]);
        assert_eq!(parse_tags("a,,b").unwrap_err(), "item 2 is empty.");
        assert!(parse_tags("").is_err());
    }

    #[test]
    fn every_problem_is_named_in_one_400() {
        let empty = HeaderMap::new();
        let mut h = LogHeaders::read(&empty);
        h.require(&["tag", "object", "identifier"]);
        let err = h.finish().err().unwrap();
        let details = err.envelope().error.unwrap().details;
        assert_eq!(
            details,
            [
                "tag: the header is missing.",
                "object: the header is missing.",
                "identifier: the header is missing."
            ]
        );
    }
}

#[cfg(test)]
mod props {
    use actix_web::http::header::{HeaderMap, HeaderName, HeaderValue};
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn any_log_headers_are_read_or_refused_in_one_400(
            tag in "[ -~]{0,80}", object in "[ -~]{0,80}", identifier in "[ -~]{0,80}",
            id in "[ -~]{0,40}", completed in "[ -~]{0,8}",
        ) {
            let mut headers = HeaderMap::new();
            for (name, value) in [("tag", &tag), ("object", &object), ("identifier", &identifier),
                                  ("id", &id), ("completed", &completed)] {
                if let Ok(value) = HeaderValue::from_str(value) {
                    headers.insert(HeaderName::from_static(name), value);
                }
            }
            let mut read = LogHeaders::read(&headers);
            read.require(&["tag", "object"]);
            match read.finish() {
                Ok(_) | Err(ApiError::BadRequest { .. }) => {}
                Err(other) => prop_assert!(false, "unexpected {other:?}"),
            }
        }
    }
}
