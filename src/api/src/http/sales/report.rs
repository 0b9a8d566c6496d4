//! `GET /report/basket` → `basketReport` (api-reference.md Reports; examples §2.15): headers
//! `reportFrom`* and `reportTo`* (`YYYY-MM-DD HH:MM:SS`, UTC, from inclusive, to exclusive, at
//! most 366 days apart) and `storeIds` (default: every store). The report is read from the
//! database (through `services`). Applications allowed the old clients' conventions
//! (`legacy_clients`) may name the range `from` and `to`.

use actix_web::HttpRequest;

use crate::http::auth::{Call, Caller};
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::filters::HeaderCheck;
use crate::http::AppState;
use domain::sales::report::ReportRange;

pub const MAX_REPORT_DAYS: i64 = 366;

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
    Ok(Reply::ok().field(
        "basketReport",
        crate::views::sales::report::basket_report(&report),
    ))
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

/// The longest range of `GET /report/sales`, in days.
pub const MAX_SALES_DAYS: i64 = 366;

/// `GET /report/sales` → `salesReport` (docs/sales-report.md): the sales running totals over
/// `reportFrom`* ≤ local time < `reportTo`* (each store's wall clock: `2026-11-27` or
/// `2026-11-27 14:00:00`), by `period` (`day` or `hour`) and `groupBy`, for `storeIds`.
pub async fn sales(call: Call) -> Result<Reply, ApiError> {
    use crate::views::sales::report::GroupBy;
    use domain::sales::totals::{local_hour_of, TotalsRange};
    let Call { req, caller, state } = call;
    let mut check = HeaderCheck::new(req.headers());
    let from = check.parsed("reportFrom", local_hour_of);
    let to = check.parsed("reportTo", local_hour_of);
    let stores = check.ids("storeIds", false);
    let hourly = check.parsed("period", |p| match p {
        "day" => Ok(false),
        "hour" => Ok(true),
        _ => Err("must be day or hour.".to_owned()),
    });
    let group = check.parsed("groupBy", |g| {
        GroupBy::parse(g).ok_or_else(|| format!("must be one of {}.", GroupBy::NAMES.join(", ")))
    });
    if from.is_none() {
        check.missing("reportFrom");
    }
    if to.is_none() {
        check.missing("reportTo");
    }
    let hourly = hourly.unwrap_or(false);
    if let (Some(from), Some(to)) = (from, to) {
        if from > to {
            check.reject("reportFrom", "reportFrom: is after reportTo.");
        } else if to - from > MAX_SALES_DAYS * 24 {
            check.reject(
                "reportTo",
                "reportTo: the range from reportFrom is longer than 366 days.",
            );
        } else if !hourly && (from % 24 != 0 || to % 24 != 0) {
            check.reject(
                "reportFrom",
                "reportFrom: a daily report's range is whole days.",
            );
        }
    }
    check.finish(&["reportFrom", "reportTo", "storeIds", "period", "groupBy"])?;
    let (Some(from), Some(to)) = (from, to) else {
        return Err(ApiError::bad_header("reportFrom", "the header is missing."));
    };
    let group = group.unwrap_or(GroupBy::Store);
    let stores: Option<Vec<i64>> = stores.map(|s| s.into_iter().collect());
    let (from, to) = if hourly {
        (from, to)
    } else {
        (from / 24, to / 24)
    };
    let rows = state
        .services
        .sales_totals(&TotalsRange {
            merchant_id: caller.merchant_id,
            hourly,
            dimension: group.dimension(),
            from,
            to,
            stores: stores.as_deref(),
            by: group.column(),
        })
        .await?;
    Ok(Reply::ok().field(
        "salesReport",
        crate::views::sales::report::sales_report(&rows, group),
    ))
}
