//! A merchant's archive in the operator's realm (docs/operator.md, "Export and import"):
//! `GET /operator/merchant/export` streams one, `POST /operator/merchant/import` loads one
//! into this database. Both sit behind the operator's gate (`crate::http::fleet::operator`).

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use futures_util::StreamExt;
use serde_json::json;
use tokio::io::AsyncWriteExt;

use crate::http::batch::media_type;
use crate::http::envelope::{Messages, Reply};
use crate::http::error::ApiError;
use crate::http::filters::id_list;
use crate::http::messages::Message;
use crate::http::AppState;
use engine::fleet::operator::ImportRefused;
use engine::fleet::operator::MoveError;

/// The archive's media type: newline-delimited JSON.
const NDJSON: &str = "application/x-ndjson";

/// The largest archive an import takes (files are in it, base64).
const MAX_ARCHIVE_BYTES: u64 = 16 << 30;

/// The one merchant `merchantIds` names; what the request does to it (`verb`) words the refusal
/// of none or several.
fn one_merchant(req: &HttpRequest, verb: &str) -> Result<i64, ApiError> {
    let ids = id_list(req.headers(), "merchantIds")?.unwrap_or_default();
    let mut ids = ids.into_iter();
    match (ids.next(), ids.next()) {
        (Some(id), None) => Ok(id),
        _ => Err(ApiError::bad_header(
            "merchantIds",
            format!("name exactly one merchant to {verb}."),
        )),
    }
}

/// `GET /operator/merchant/export` with `merchantIds` naming one merchant: its archive.
pub async fn export(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let id = one_merchant(&req, "export")?;
    let Some(chunks) = state.services.operator.export(id).await? else {
        return Err(ApiError::NotFound {
            detail: format!("Merchant {id} does not exist."),
        });
    };
    tracing::info!(merchant_id = id, "merchant export started by the operator");
    let body = futures_util::stream::unfold(chunks, |mut chunks| async move {
        let chunk = chunks.recv().await?;
        Some((Ok::<_, actix_web::Error>(web::Bytes::from(chunk)), chunks))
    });
    let disposition = format!("attachment; filename=\"merchant-{id}.ndjson\"");
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, HeaderValue::from_static(NDJSON)))
        .insert_header((
            header::CONTENT_DISPOSITION,
            HeaderValue::from_str(&disposition).map_err(ApiError::internal)?,
        ))
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .streaming(body))
}

/// `POST /operator/merchant/import`: an archive (`application/x-ndjson`) into this database,
/// whole or not at all. It is saved to a temporary file first, so the database's writer is not
/// held while the client sends.
pub async fn import(
    req: HttpRequest,
    mut payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<Reply, ApiError> {
    if media_type(&req) != NDJSON {
        return Err(ApiError::UnsupportedMediaType {
            detail: format!("Content-Type: send the archive as {NDJSON}."),
        });
    }
    // Before the body: a bad header refuses the request without reading gigabytes.
    let pod = match req.headers().get("pod") {
        None => None,
        Some(value) => Some(value.to_str().map_err(|_| {
            ApiError::bad_header("pod", "name a pod of the fleet, in visible ASCII.")
        })?),
    };
    let saved = Saved::new();
    let mut file = tokio::fs::File::create(&saved.0)
        .await
        .map_err(ApiError::internal)?;
    let mut size = 0u64;
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|e| ApiError::bad_body(format!("the body was cut: {e}")))?;
        size += chunk.len() as u64;
        if size > MAX_ARCHIVE_BYTES {
            return Err(ApiError::PayloadTooLarge {
                detail: format!("an archive may hold at most {MAX_ARCHIVE_BYTES} bytes."),
            });
        }
        file.write_all(&chunk).await.map_err(staging)?;
    }
    file.flush().await.map_err(staging)?;
    drop(file);
    let imported = match state.services.operator.import(&saved.0, pod).await? {
        Ok(imported) => imported,
        Err(ImportRefused::Invalid(why)) => return Err(ApiError::bad_body(why)),
        Err(ImportRefused::Conflict(why)) => {
            return Err(ApiError::Unprocessable {
                message: Message::Conflict,
                detail: why,
            })
        }
    };
    let id = imported.merchant_id;
    tracing::info!(
        merchant_id = id,
        rows = imported.totals.rows,
        "merchant imported by the operator"
    );
    let mut messages = Messages::default();
    let key = id.to_string();
    messages.add(
        Message::Created,
        Some(&key),
        format!("Merchant {id} imported."),
    );
    let mut merchants = serde_json::Map::new();
    merchants.insert(
        key,
        json!({
            "id": id,
            "key": imported.key,
            "tables": imported.totals.tables,
            "rows": imported.totals.rows,
        }),
    );
    Ok(Reply::new(StatusCode::CREATED)
        .field("merchants", merchants)
        .messages(messages))
}

/// `POST /operator/merchant/move` with `merchantIds` naming one merchant and `pod` the pod of
/// the fleet it goes to: moved while every replica keeps serving it (its writes wait during
/// the switch). 200 with the move's figures; 404 for no such merchant; 422 when it cannot go.
pub async fn move_merchant(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<Reply, ApiError> {
    let id = one_merchant(&req, "move")?;
    let pod = req
        .headers()
        .get("pod")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .ok_or_else(|| ApiError::bad_header("pod", "name the pod the merchant moves to."))?;
    if state.services.merchant(id).await?.is_none() {
        return Err(ApiError::NotFound {
            detail: format!("Merchant {id} does not exist."),
        });
    }
    let moved = match state
        .services
        .operator
        .move_to_pod(id, pod, &std::env::temp_dir())
        .await
    {
        Ok(moved) => moved,
        Err(MoveError::Refused(why)) => {
            return Err(ApiError::Unprocessable {
                message: Message::Conflict,
                detail: why,
            })
        }
        Err(MoveError::Differs(why)) => {
            return Err(ApiError::internal(anyhow::anyhow!(
                "the copy differs from the source: {why}"
            )))
        }
        Err(MoveError::Failed(failure)) => return Err(failure.into()),
    };
    tracing::info!(
        merchant_id = id,
        from = %moved.from,
        to = %moved.to,
        held_ms = moved.held_millis as u64,
        "merchant moved between pods by the operator"
    );
    let key = id.to_string();
    let mut messages = Messages::default();
    messages.add(
        Message::RequestSuccessful,
        Some(&key),
        format!(
            "Merchant {id} moved from pod {} to pod {}; its writes waited {} ms.",
            moved.from, moved.to, moved.held_millis
        ),
    );
    let mut merchants = serde_json::Map::new();
    merchants.insert(
        key,
        json!({
            "id": id,
            "key": moved.key,
            "from": moved.from,
            "to": moved.to,
            "rows": moved.rows,
            "heldMilliseconds": moved.held_millis as u64,
            "milliseconds": moved.millis as u64,
        }),
    );
    Ok(Reply::ok().field("merchants", merchants).messages(messages))
}

/// A failure to stage the archive: out of temporary space is the request's size against this
/// server's room (413, saying where), anything else internal.
fn staging(error: std::io::Error) -> ApiError {
    if error.kind() == std::io::ErrorKind::StorageFull {
        return ApiError::PayloadTooLarge {
            detail: format!(
                "the archive does not fit in this server's temporary space ({}); import it with \
                 `merchantd tenant import`, or give the server more room (Helm: tmpSizeLimit).",
                std::env::temp_dir().display()
            ),
        };
    }
    ApiError::internal(error)
}

/// A temporary file, removed when dropped.
struct Saved(std::path::PathBuf);

impl Saved {
    fn new() -> Self {
        let name = format!("merchantd-import-{}.ndjson", uuid::Uuid::new_v4());
        Saved(std::env::temp_dir().join(name))
    }
}

impl Drop for Saved {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
