//! Delta reads: every list answers `x-merchant-sequence`, the event-log position its records
//! reflect; `changedSince: <sequence>` narrows a list to the records changed after it, deleted
//! ones included (with their `deleteDate`). A sequence older than the log keeps is 410 (115).

use std::collections::BTreeSet;

use actix_web::http::header::{HeaderMap, HeaderName, HeaderValue};

use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::AppState;
use crate::views::Snapshot;
use domain::event::ChangeWindow;

pub const SEQUENCE: &str = "x-merchant-sequence";
pub const CHANGED_SINCE: &str = "changedSince";

/// What a list reads once `changedSince` is taken into account.
pub struct Narrowed {
    pub ids: Option<BTreeSet<i64>>,
    pub deleted: bool,
}

/// The most digits a sequence number has (an `i64` has 19; 18 always parses).
pub const MAX_SEQUENCE_DIGITS: usize = 18;

/// The `changedSince` header: a sequence number a list answered before.
pub fn changed_since(headers: &HeaderMap) -> Result<Option<i64>, ApiError> {
    let Some(raw) = headers.get(CHANGED_SINCE) else {
        return Ok(None);
    };
    raw.to_str()
        .ok()
        .map(str::trim)
        .filter(|t| {
            !t.is_empty() && t.len() <= MAX_SEQUENCE_DIGITS && t.bytes().all(|b| b.is_ascii_digit())
        })
        .and_then(|t| t.parse::<i64>().ok())
        .map(Some)
        .ok_or_else(|| {
            ApiError::bad_header(
                CHANGED_SINCE,
                "must be a sequence number from an earlier answer's x-merchant-sequence.",
            )
        })
}

/// Narrows a list's id filter to the records changed after `changedSince` (if sent) up to
/// the snapshot's position: those named by events of any of `objects` (`product`, and
/// `stock` when the list shows stock); such a list also shows deleted records.
pub async fn narrow(
    headers: &HeaderMap,
    state: &AppState,
    snapshot: &Snapshot,
    objects: &[&str],
    ids: Option<BTreeSet<i64>>,
    deleted: bool,
) -> Result<Narrowed, ApiError> {
    let Some(since) = changed_since(headers)? else {
        return Ok(Narrowed { ids, deleted });
    };
    narrow_to(
        state,
        snapshot.merchant_id(),
        snapshot.position(),
        objects,
        since,
        ids,
    )
    .await
}

/// As [`narrow`], for lists that do not read the snapshot (history from the database): the
/// position is the log's own.
pub async fn narrow_to(
    state: &AppState,
    merchant_id: i64,
    upto: i64,
    objects: &[&str],
    since: i64,
    ids: Option<BTreeSet<i64>>,
) -> Result<Narrowed, ApiError> {
    let mut changed = Some(BTreeSet::new());
    if since < upto {
        for object in objects {
            let found = state
                .services
                .changed_since(ChangeWindow {
                    merchant_id,
                    object,
                    after: since,
                    upto,
                })
                .await?;
            changed = changed.zip(found).map(|(mut all, more)| {
                all.extend(more);
                all
            });
        }
    }
    let Some(changed) = changed else {
        return Err(ApiError::Gone {
            detail: format!(
                "{CHANGED_SINCE}: events after {since} are no longer kept; read the whole list again (without {CHANGED_SINCE}) and continue from its {SEQUENCE}."
            ),
        });
    };
    let ids = match ids {
        Some(wanted) => wanted.intersection(&changed).copied().collect(),
        None => changed,
    };
    Ok(Narrowed {
        ids: Some(ids),
        deleted: true,
    })
}

/// The reply with the position its records reflect.
pub fn positioned(reply: Reply, sequence: i64) -> Reply {
    reply.header(
        HeaderName::from_static(SEQUENCE),
        HeaderValue::from(sequence),
    )
}
