//! Resource endpoints: thin handlers over the merchant actors, and the batch replies they share.
pub mod generic;

use std::collections::BTreeSet;

use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::http::StatusCode;

use crate::http::envelope::{ErrorObject, Messages, Reply};
use crate::http::error::ApiError;
use crate::http::messages::Message;
use crate::views::json::push_key;
use domain::Refusal;
use engine::merchant::job::{DeleteOutcome, ObjectOutcome};

/// Every resource route, feature by feature.
pub fn routes(cfg: &mut actix_web::web::ServiceConfig) {
    crate::http::catalogue::routes(cfg);
    crate::http::till::routes(cfg);
    crate::http::people::routes(cfg);
    crate::http::customers::routes(cfg);
    crate::http::webhooks::routes(cfg);
    crate::http::offline::routes(cfg);
    crate::http::sales::routes(cfg);
    crate::http::stock::routes(cfg);
    generic::plain_routes(cfg);
}

/// A resource whose GET has its own filters; writes and deletes are the generic ones.
pub(crate) fn with_list<R, F, Args>(cfg: &mut actix_web::web::ServiceConfig, path: &str, list: F)
where
    R: generic::WriteHooks + generic::IdHeaders,
    F: actix_web::Handler<Args>,
    Args: actix_web::FromRequest + 'static,
    F::Output: actix_web::Responder + 'static,
{
    use actix_web::web;
    cfg.service(
        web::resource(path)
            .route(web::get().to(list))
            .route(web::post().to(generic::write::<R>))
            .route(web::put().to(generic::write::<R>))
            .route(web::delete().to(generic::delete::<R>)),
    );
}

/// 201 with the successful objects under their client keys and a record per object; 422 when
/// every object failed (spec: Batch partial failure; DESIGN §6).
pub fn batch_reply(plural: &str, outcomes: Vec<ObjectOutcome>) -> Reply {
    let mut collection = String::from("{");
    let mut saved = 0;
    let mut ids = String::new();
    let mut messages = Messages::default();
    let mut problems = Vec::new();
    for outcome in outcomes {
        match outcome.result {
            Ok(object) => {
                let message = if object.created {
                    Message::Created
                } else {
                    Message::Updated
                };
                messages.add(message, Some(&outcome.key), object.detail);
                if saved > 0 {
                    collection.push(',');
                    ids.push_str(", ");
                }
                ids.push_str(itoa::Buffer::new().format(object.id));
                saved += 1;
                // Client keys are the client's strings: escaped as JSON.
                collection.push_str(&serde_json::to_string(&outcome.key).unwrap_or_default());
                collection.push(':');
                collection.push_str(&object.json);
            }
            Err(refusal) => {
                let details = refusal.details();
                problems.extend(details.iter().map(|d| format!("{}: {d}", outcome.key)));
                messages.add(message_of(&refusal), Some(&outcome.key), details.join(" "));
            }
        }
    }
    collection.push('}');
    if saved == 0 {
        return Reply::new(StatusCode::UNPROCESSABLE_ENTITY)
            .messages(messages)
            .error(ErrorObject {
                code: 422,
                message: "No object in the request was valid.".into(),
                details: problems,
            });
    }
    let reply = Reply::new(StatusCode::CREATED)
        .raw_field(plural, collection)
        .messages(messages);
    // The saved records' ids in body order, so a client (or a test tool following links) can
    // name them in the next request's id header without walking its own client keys.
    match HeaderValue::from_str(&ids) {
        Ok(value) => reply.header(HeaderName::from_static(OBJECT_IDS), value),
        Err(_) => reply,
    }
}

/// The header of a 201 write answer listing the saved records' ids (`1040, 1041`).
pub const OBJECT_IDS: &str = "x-object-ids";

/// The message a refusal is answered with.
pub fn message_of(refusal: &Refusal) -> Message {
    match refusal {
        Refusal::Invalid(_) => Message::InvalidObject,
        Refusal::Locked(_) => Message::AlreadyComplete,
        Refusal::NotComplete(_) => Message::NotComplete,
        Refusal::Conflict(_) => Message::Conflict,
        Refusal::OverQuota(_) => Message::QuotaExceeded,
    }
}

/// `{"<id>": <json>, ...}` from rendered records, for handlers that splice (stock columns).
pub fn keyed(records: impl IntoIterator<Item = (i64, String)>) -> String {
    let mut out = String::from("{");
    for (i, (id, json)) in records.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_key(&mut out, id);
        out.push_str(&json);
    }
    out.push('}');
    out
}

/// 205 with a record per deleted id and an error record per unknown or refused id; when nothing
/// was deleted, 404 if every id was unknown, else 422.
pub fn delete_reply(noun: &str, results: Vec<(i64, DeleteOutcome)>) -> Reply {
    outcome_reply(noun, "deleted", results)
}

/// [`delete_reply`] for another removal (`erased`): the same statuses and messages.
pub fn outcome_reply(noun: &str, done: &str, results: Vec<(i64, DeleteOutcome)>) -> Reply {
    let mut messages = Messages::default();
    let mut problems = Vec::new();
    for (id, outcome) in &results {
        let key = id.to_string();
        match outcome {
            DeleteOutcome::Deleted => {
                messages.add(Message::Deleted, Some(&key), format!("{noun} {id} {done}."))
            }
            DeleteOutcome::Missing => {
                let detail = format!("{noun} {id} does not exist.");
                problems.push(detail.clone());
                messages.add(Message::NotFound, Some(&key), detail);
            }
            DeleteOutcome::Refused(why) => {
                let detail = format!("{noun} {id} cannot be {done}: {why}");
                problems.push(detail.clone());
                messages.add(Message::InvalidObject, Some(&key), detail);
            }
        }
    }
    if results.iter().any(|(_, o)| *o == DeleteOutcome::Deleted) {
        return Reply::new(StatusCode::RESET_CONTENT).messages(messages);
    }
    let all_missing = results.iter().all(|(_, o)| *o == DeleteOutcome::Missing);
    let (status, message) = if all_missing {
        (StatusCode::NOT_FOUND, "Not found.".to_owned())
    } else {
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("Nothing could be {done}."),
        )
    };
    Reply::new(status).messages(messages).error(ErrorObject {
        code: status.as_u16(),
        message,
        details: problems,
    })
}

/// The ids a DELETE names (the GET's id header, plural or singular); required.
pub fn delete_ids(
    headers: &actix_web::http::header::HeaderMap,
    names: &[&str],
) -> Result<BTreeSet<i64>, ApiError> {
    crate::http::filters::id_list_any(headers, names)?.ok_or_else(|| {
        ApiError::bad_header(
            names[0],
            format!("the header is required to delete (or {}).", names[1]),
        )
    })
}

/// `deleted: true` shows soft-deleted records too.
pub fn show_deleted(headers: &actix_web::http::header::HeaderMap) -> Result<bool, ApiError> {
    Ok(crate::http::filters::boolean(headers, "deleted")?.unwrap_or(false))
}
