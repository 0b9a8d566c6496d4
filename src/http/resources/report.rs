//! `GET /report/basket` → `basketReport` (api-reference.md Reports; examples §2.15): headers
//! `reportFrom`* and `reportTo`* (`YYYY-MM-DD HH:MM:SS`, UTC, from inclusive, to exclusive, at
//! most 366 days apart) and `storeIds` (default: every store). The report is read from the
//! database (`store::report`). Also the header checks it shares with `/stock/reconcile`.

use actix_web::http::header::HeaderMap;
use actix_web::{web, HttpRequest};
use chrono::{DateTime, Duration, Utc};

use crate::http::auth::Caller;
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::{filters, AppState};

const MAX_REPORT_DAYS: i64 = 366;

/// Reads the headers of a request and names every missing or malformed one in one 400.
pub(super) struct HeaderCheck<'a> {
    headers: &'a HeaderMap,
    problems: Vec<(&'static str, String)>,
}

impl<'a> HeaderCheck<'a> {
    pub fn new(headers: &'a HeaderMap) -> Self {
        Self {
            headers,
            problems: Vec::new(),
        }
    }

    fn take<T>(
        &mut self,
        name: &'static str,
        parsed: Result<Option<T>, ApiError>,
        required: bool,
    ) -> Option<T> {
        match parsed {
            Ok(Some(v)) => Some(v),
            Ok(None) => {
                if required {
                    self.problems
                        .push((name, format!("{name}: the header is missing.")));
                }
                None
            }
            Err(ApiError::BadRequest { details, .. }) => {
                self.problems.extend(details.into_iter().map(|d| (name, d)));
                None
            }
            Err(other) => {
                self.problems.push((name, format!("{name}: {other}")));
                None
            }
        }
    }

    /// A `YYYY-MM-DD HH:MM:SS` (UTC) header.
    pub fn date_time(&mut self, name: &'static str, required: bool) -> Option<DateTime<Utc>> {
        let parsed = filters::date_time(self.headers, name);
        self.take(name, parsed, required)
    }

    /// A comma-separated id list header.
    pub fn ids(
        &mut self,
        name: &'static str,
        required: bool,
    ) -> Option<std::collections::BTreeSet<i64>> {
        let parsed = filters::id_list(self.headers, name);
        self.take(name, parsed, required)
    }

    /// `from` not after `to`, and at most `max_days` apart when given; checked once both
    /// parsed.
    pub fn range(
        &mut self,
        (from_name, from): (&'static str, Option<DateTime<Utc>>),
        (to_name, to): (&'static str, Option<DateTime<Utc>>),
        max_days: Option<i64>,
    ) {
        let (Some(from), Some(to)) = (from, to) else {
            return;
        };
        if from > to {
            self.problems.push((
                from_name,
                format!(
                    "{from_name}: {} is after {to_name} {}.",
                    plain(from),
                    plain(to)
                ),
            ));
        } else if let Some(days) = max_days.filter(|d| to - from > Duration::days(*d)) {
            self.problems.push((
                to_name,
                format!("{to_name}: the range from {from_name} is longer than {days} days."),
            ));
        }
    }

    /// Ok when every header was well formed, else one 400 naming each problem.
    pub fn finish(self) -> Result<(), ApiError> {
        if self.problems.is_empty() {
            return Ok(());
        }
        let mut names: Vec<&str> = Vec::new();
        for (name, _) in &self.problems {
            if !names.contains(name) {
                names.push(name);
            }
        }
        let message = if self.problems.len() == 1 {
            "A request header is not valid."
        } else {
            "Request headers are not valid."
        };
        Err(ApiError::BadRequest {
            message: message.into(),
            details: self.problems.into_iter().map(|(_, d)| d).collect(),
            object_ref: Some(names.join(",")),
        })
    }
}

/// A date-time as the headers write it.
fn plain(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M:%S").to_string()
}

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
    check.finish()?;
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
