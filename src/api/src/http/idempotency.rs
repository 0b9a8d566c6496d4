//! `Idempotency-Key` on the writes of the API's resources (POST, PUT, DELETE). The key is
//! parsed here; the merchant's supervisor stores the write's answer in the write's own
//! transaction and answers a repeat of the same request from it (`Idempotent-Replayed: true`),
//! or refuses the key with 422 (114) when it named another request.

use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::HttpRequest;

use crate::http::auth::Caller;
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::messages::Message;
use domain::batch::{Answered, Idempotency};
use domain::crypto::sha256_hex_of;

pub const HEADER: &str = "idempotency-key";
const REPLAYED: &str = "idempotent-replayed";
pub const MAX_LEN: usize = 255;

/// The request's key, if it sent one. `request` is what identifies the request besides its
/// method and path: the body of a POST or PUT, the id header of a DELETE.
pub fn key(
    req: &HttpRequest,
    caller: &Caller,
    request: &[u8],
) -> Result<Option<Idempotency>, ApiError> {
    let Some(raw) = req.headers().get(HEADER) else {
        return Ok(None);
    };
    let key = raw
        .to_str()
        .ok()
        .filter(|k| (1..=MAX_LEN).contains(&k.len()) && k.bytes().all(|b| b.is_ascii_graphic()))
        .ok_or_else(|| {
            bad(format!(
                "Idempotency-Key: 1 to {MAX_LEN} visible ASCII characters (a UUID is a good key)."
            ))
        })?;
    Ok(Some(Idempotency {
        application_id: caller.application_id,
        key: key.to_owned(),
        fingerprint: sha256_hex_of(&[
            req.method().as_str().as_bytes(),
            req.path().as_bytes(),
            request,
        ]),
    }))
}

/// Refuses a key where answers cannot be replayed.
pub fn refuse_key(req: &HttpRequest, why: &str) -> Result<(), ApiError> {
    match req.headers().get(HEADER) {
        None => Ok(()),
        Some(_) => Err(bad(format!("Idempotency-Key: not accepted here: {why}"))),
    }
}

/// The reply for a write's answer: `reply` renders a fresh or replayed one.
pub fn reply<T>(answer: Answered<T>, reply: impl FnOnce(T) -> Reply) -> Result<Reply, ApiError> {
    match answer {
        Answered::Fresh(t) => Ok(reply(t)),
        Answered::Replayed(t) => Ok(reply(t).header(
            HeaderName::from_static(REPLAYED),
            HeaderValue::from_static("true"),
        )),
        Answered::KeyReused => Err(ApiError::Unprocessable {
            message: Message::IdempotencyKeyReused,
            detail: "Idempotency-Key: this key was sent with another request in the last 24 \
                     hours; send a new key for a new request."
                .into(),
        }),
    }
}

fn bad(detail: String) -> ApiError {
    ApiError::BadRequest {
        message: "Invalid header.".into(),
        details: vec![detail],
        object_ref: Some("Idempotency-Key".into()),
    }
}
