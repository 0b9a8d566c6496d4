//! Resource endpoints: thin handlers over the merchant actors, and the batch replies they share.

pub mod stores;

use std::collections::BTreeSet;

use actix_web::http::StatusCode;
use serde_json::{Map, Value};

use super::envelope::{ErrorObject, Messages, Reply};
use super::error::ApiError;
use super::messages::Message;
use crate::actors::merchant::ObjectOutcome;

/// 201 with the successful objects under their client keys and a record per object; 422 when
/// every object failed (spec: Batch partial failure; DESIGN §6).
pub fn batch_reply(plural: &str, outcomes: Vec<ObjectOutcome>) -> Reply {
    let mut collection = Map::new();
    let mut messages = Messages::default();
    let mut problems = Vec::new();
    for outcome in outcomes {
        match outcome.result {
            Ok((message, record, detail)) => {
                messages.add(message, Some(&outcome.key), detail);
                collection.insert(outcome.key, record);
            }
            Err((message, details)) => {
                problems.extend(details.iter().map(|d| format!("{}: {d}", outcome.key)));
                messages.add(message, Some(&outcome.key), details.join(" "));
            }
        }
    }
    if collection.is_empty() {
        return Reply::new(StatusCode::UNPROCESSABLE_ENTITY)
            .messages(messages)
            .error(ErrorObject {
                code: 422,
                message: "No object in the request was valid.".into(),
                details: problems,
            });
    }
    Reply::new(StatusCode::CREATED)
        .field(plural, Value::Object(collection))
        .messages(messages)
}

/// 205 with a record per deleted id and a 404 record per unknown id; 404 when none existed.
pub fn delete_reply(noun: &str, results: Vec<(i64, bool)>) -> Reply {
    let mut messages = Messages::default();
    let mut missing = Vec::new();
    for (id, deleted) in &results {
        let key = id.to_string();
        if *deleted {
            messages.add(
                Message::Deleted,
                Some(&key),
                format!("{noun} {id} deleted."),
            );
        } else {
            let detail = format!("{noun} {id} does not exist.");
            missing.push(detail.clone());
            messages.add(Message::NotFound, Some(&key), detail);
        }
    }
    if results.iter().any(|(_, deleted)| *deleted) {
        Reply::new(StatusCode::RESET_CONTENT).messages(messages)
    } else {
        Reply::new(StatusCode::NOT_FOUND)
            .messages(messages)
            .error(ErrorObject {
                code: 404,
                message: "Not found.".into(),
                details: missing,
            })
    }
}

/// The ids a DELETE names (the GET's id header, plural or singular); required.
pub fn delete_ids(
    headers: &actix_web::http::header::HeaderMap,
    names: &[&str],
) -> Result<BTreeSet<i64>, ApiError> {
    super::filters::id_list_any(headers, names)?.ok_or_else(|| {
        ApiError::bad_header(
            names[0],
            format!("the header is required to delete (or {}).", names[1]),
        )
    })
}

/// `deleted: true` shows soft-deleted records too.
pub fn show_deleted(headers: &actix_web::http::header::HeaderMap) -> Result<bool, ApiError> {
    Ok(super::filters::boolean(headers, "deleted")?.unwrap_or(false))
}
