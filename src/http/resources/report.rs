//! `GET /report/basket` → `basketReport` (api-reference.md Reports; examples §2.15): headers
//! `reportFrom`* and `reportTo`* (`YYYY-MM-DD HH:MM:SS`, UTC, from inclusive, to exclusive, at
//! most 366 days apart) and `storeIds` (default: every store). The report is read from the
//! database (through `services`).

use actix_web::{web, HttpRequest};

use crate::http::auth::Caller;
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::filters::HeaderCheck;
use crate::http::AppState;

const MAX_REPORT_DAYS: i64 = 366;

pub async fn basket(
    req: HttpRequest,
    caller: Caller,
    state: web::Data<AppState>,
) -> Result<Reply, ApiError> {
    let mut check = HeaderCheck::new(req.headers());
    let from = check.date_time("reportFrom", true);
    let to = check.date_time("reportTo", true);
    let stores = check.ids("storeIds", false);
    check.range(
        ("reportFrom", from),
        ("reportTo", to),
        Some(MAX_REPORT_DAYS),
    );
    check.finish(&[])?;
    let (Some(from), Some(to)) = (from, to) else {
        return Err(ApiError::bad_header("reportFrom", "the header is missing."));
    };
    let report = state
        .services
        .basket_report(
            caller.merchant_id,
            from.timestamp_millis(),
            to.timestamp_millis(),
            stores.as_ref(),
        )
        .await?;
    Ok(Reply::ok().field("basketReport", report.to_json()))
}
