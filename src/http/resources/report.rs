//! `GET /report/basket` → `basketReport` (api-reference.md Reports; examples §2.15): headers
//! `reportFrom`* and `reportTo`* (`YYYY-MM-DD HH:MM:SS`, UTC, from inclusive, to exclusive, at
//! most 366 days apart) and `storeIds` (default: every store). The report is read from the
//! database (through `services`). Applications allowed the old clients' conventions
//! (`legacy_clients`) may name the range `from` and `to`.

use actix_web::HttpRequest;

use crate::domain::report::ReportRange;
use crate::http::auth::{Call, Caller};
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::filters::HeaderCheck;
use crate::http::AppState;

const MAX_REPORT_DAYS: i64 = 366;

pub async fn basket(call: Call) -> Result<Reply, ApiError> {
    let Call { req, caller, state } = call;
    let (from_header, to_header) = range_headers(&req, &caller, &state).await?;
    let mut check = HeaderCheck::new(req.headers());
    let from = check.date_time(from_header, true);
    let to = check.date_time(to_header, true);
    let stores = check.ids("storeIds", false);
    check.range((from_header, from), (to_header, to), Some(MAX_REPORT_DAYS));
    check.finish(&[])?;
    let (Some(from), Some(to)) = (from, to) else {
        return Err(ApiError::bad_header(from_header, "the header is missing."));
    };
    let report = state
        .services
        .basket_report(&ReportRange {
            merchant_id: caller.merchant_id,
            from: from.timestamp_millis(),
            to: to.timestamp_millis(),
            stores: stores.as_ref(),
        })
        .await?;
    Ok(Reply::ok().field("basketReport", crate::views::report::basket_report(&report)))
}

/// `GET /report`: the old Shopwave Node client's name of the basket report, served where the
/// caller's merchant allows the old clients (`legacy_clients`).
pub async fn legacy(call: Call) -> Result<Reply, ApiError> {
    if !call
        .state
        .services
        .legacy_application(call.caller.application_id)
        .await?
    {
        return Err(ApiError::NotFound {
            detail: "GET /report is the old Shopwave clients' name of the basket report, served \
                     where the merchant turned legacy_clients on: call GET /report/basket."
                .into(),
        });
    }
    basket(call).await
}

/// The headers of the range: `reportFrom`/`reportTo`, or the `from`/`to` the old Shopwave
/// client libraries send, where their merchant allows them (`legacy_clients`).
async fn range_headers(
    req: &HttpRequest,
    caller: &Caller,
    state: &AppState,
) -> Result<(&'static str, &'static str), ApiError> {
    let headers = req.headers();
    let old_names = !headers.contains_key("reportFrom")
        && !headers.contains_key("reportTo")
        && (headers.contains_key("from") || headers.contains_key("to"));
    if old_names
        && state
            .services
            .legacy_application(caller.application_id)
            .await?
    {
        Ok(("from", "to"))
    } else {
        Ok(("reportFrom", "reportTo"))
    }
}
