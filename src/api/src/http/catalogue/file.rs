//! `POST /product/import` (a catalogue file, `text/csv`) and `GET /product/export`: the
//! catalogue file of docs/catalogue.md over the API, for tills and back offices. The import is
//! the merchant actor's one write (every product or none, unless `skipInvalid: true`).

use std::collections::BTreeMap;

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};

use crate::http::auth::{Call, Caller};
use crate::http::envelope::{ErrorObject, Messages, Reply};
use crate::http::error::ApiError;
use crate::http::messages::Message;
use crate::http::{batch, filters, idempotency, AppState};
use domain::catalogue::file::{self as catalogue, ImportOptions, ImportReport};

/// The media types a catalogue file may be sent as (spreadsheets and browsers differ).
const CSV_TYPES: [&str; 4] = [
    "text/csv",
    "application/csv",
    "text/plain",
    "application/vnd.ms-excel",
];

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/product/import").route(web::post().to(import)))
        .service(web::resource("/product/export").route(web::get().to(export)));
}

pub async fn import(call: Call, body: web::Bytes) -> Result<Reply, ApiError> {
    let Call { req, caller, state } = call;
    require_csv(&req)?;
    let skip_invalid = filters::boolean(req.headers(), "skipInvalid")?.unwrap_or(false);
    let file = catalogue::parse(&body).map_err(|e| ApiError::bad_body(e.to_string()))?;
    let fingerprint = [format!("skipInvalid={skip_invalid}\n").as_bytes(), &body].concat();
    let key = idempotency::key(&req, &caller, &fingerprint)?;
    let answer = state
        .merchants
        .import(
            caller.merchant_id,
            file,
            ImportOptions {
                skip_invalid,
                progress: None,
            },
            caller.employee_id,
            key,
        )
        .await?;
    idempotency::reply(answer, import_reply)
}

fn require_csv(req: &HttpRequest) -> Result<(), ApiError> {
    if CSV_TYPES.contains(&batch::media_type(req).as_str()) {
        Ok(())
    } else {
        Err(ApiError::UnsupportedMediaType {
            detail: "Content-Type: send the catalogue file as text/csv (UTF-8).".into(),
        })
    }
}

/// 201 with what was imported (and, with `skipInvalid`, a 110 record per refused cell); 422
/// with every problem when nothing was imported.
fn import_reply(report: ImportReport) -> Reply {
    let mut messages = Messages::default();
    let mut by_cell: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for problem in &report.problems {
        let key = match problem.column.as_str() {
            "" => format!("row {}", problem.row),
            column => format!("row {} {column}", problem.row),
        };
        by_cell.entry(key).or_default().push(&problem.message);
    }
    for (key, details) in &by_cell {
        messages.add(Message::InvalidObject, Some(key), details.join(" "));
    }
    let data = serde_json::to_string(&report).unwrap_or_else(|_| "{}".into());
    if report.refused_whole() {
        return Reply::new(StatusCode::UNPROCESSABLE_ENTITY)
            .raw_field("import", data)
            .messages(messages)
            .error(ErrorObject {
                code: 422,
                message: format!(
                    "{} of the file's rows were refused; nothing was imported (send \
                     skipInvalid: true to import the other products).",
                    report.refused_rows()
                ),
                details: report.problems.iter().map(ToString::to_string).collect(),
            });
    }
    messages.add(
        Message::RequestSuccessful,
        None,
        format!(
            "Imported {} products ({} price instances), created {} categories and booked \
             opening stock at {} stores.",
            report.products,
            report.instances,
            report.categories,
            report.stock_counts.len()
        ),
    );
    let status = if report.written {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Reply::new(status)
        .raw_field("import", data)
        .messages(messages)
}

/// The catalogue file of the merchant's live products, as `merchantd catalogue export` writes.
pub async fn export(caller: Caller, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let file = state.merchants.export(caller.merchant_id).await?;
    let bytes = catalogue::render(&file)
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("rendering the catalogue file: {e}")))?;
    Ok(HttpResponse::Ok()
        .insert_header((
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/csv; charset=utf-8"),
        ))
        .insert_header((
            header::CONTENT_DISPOSITION,
            HeaderValue::from_static("attachment; filename=\"catalogue.csv\""),
        ))
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .body(bytes))
}
