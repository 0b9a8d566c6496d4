//! Filter headers parsed at the edge (DESIGN §6): id lists, booleans and date-times. A bad value
//! is a 400 (101) naming the header and the item.

use std::collections::BTreeSet;

use actix_web::http::header::HeaderMap;
use chrono::{DateTime, Duration, NaiveDateTime, Utc};

use crate::http::error::ApiError;

/// A filter header a list reads beyond its id headers and its record's declared filters,
/// declared once: the handler parses it by this, the document shows it from this.
#[derive(Clone, Copy, Debug)]
pub struct FilterHeader {
    pub name: &'static str,
    pub kind: FilterKind,
    pub required: bool,
    /// What it narrows the list to.
    pub doc: &'static str,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilterKind {
    /// Comma-separated ids, at most [`MAX_IDS`].
    Ids,
    /// One id.
    OneId,
    /// `true` or `false`.
    Bool,
    /// `YYYY-MM-DD HH:MM:SS`, UTC.
    DateTime,
    /// Free text of at most this many characters.
    Search(usize),
}

impl FilterHeader {
    pub const fn new(name: &'static str, kind: FilterKind, doc: &'static str) -> Self {
        Self {
            name,
            kind,
            required: false,
            doc,
        }
    }

    pub const fn required(self) -> Self {
        Self {
            required: true,
            ..self
        }
    }
}

/// The text of a header, if sent. A header that is not visible ASCII is a 400.
fn header_text<'a>(headers: &'a HeaderMap, name: &str) -> Result<Option<&'a str>, ApiError> {
    match headers.get(name) {
        None => Ok(None),
        Some(v) => v
            .to_str()
            .map(Some)
            .map_err(|_| ApiError::bad_header(name, "the value is not text.")),
    }
}

/// Comma-separated identifiers: `9, 1040`. Spaces around items are ignored.
pub fn id_list(headers: &HeaderMap, name: &str) -> Result<Option<BTreeSet<i64>>, ApiError> {
    let Some(text) = header_text(headers, name)? else {
        return Ok(None);
    };
    parse_id_list(name, text).map(Some)
}

/// The first of several names that was sent (`productIds` or `productId`).
pub fn id_list_any(headers: &HeaderMap, names: &[&str]) -> Result<Option<BTreeSet<i64>>, ApiError> {
    for name in names {
        if let Some(ids) = id_list(headers, name)? {
            return Ok(Some(ids));
        }
    }
    Ok(None)
}

/// Ids one filter header may list: a bound on what one request can make the server look up.
pub const MAX_IDS: usize = 1_000;

pub fn parse_id_list(name: &str, text: &str) -> Result<BTreeSet<i64>, ApiError> {
    let mut ids = BTreeSet::new();
    for (i, raw) in text.split(',').enumerate() {
        if i == MAX_IDS {
            return Err(ApiError::bad_header(
                name,
                format!("at most {MAX_IDS} ids; send several requests."),
            ));
        }
        let item = raw.trim();
        if item.is_empty() {
            return Err(ApiError::bad_header(
                name,
                format!("item {} is empty.", i + 1),
            ));
        }
        if !item.bytes().all(|b| b.is_ascii_digit()) {
            return Err(ApiError::bad_header(
                name,
                format!("item \"{}\" is not a non-negative integer.", clip(item)),
            ));
        }
        let id: i64 = item.parse().map_err(|_| {
            ApiError::bad_header(name, format!("item \"{}\" is out of range.", clip(item)))
        })?;
        ids.insert(id);
    }
    Ok(ids)
}

/// `true` or `false`, nothing else.
pub fn boolean(headers: &HeaderMap, name: &str) -> Result<Option<bool>, ApiError> {
    match header_text(headers, name)?.map(str::trim) {
        None => Ok(None),
        Some("true") => Ok(Some(true)),
        Some("false") => Ok(Some(false)),
        Some(other) => Err(ApiError::bad_header(
            name,
            format!("\"{}\" is not true or false.", clip(other)),
        )),
    }
}

/// `YYYY-MM-DD HH:MM:SS`, UTC.
pub fn date_time(headers: &HeaderMap, name: &str) -> Result<Option<DateTime<Utc>>, ApiError> {
    let Some(text) = header_text(headers, name)? else {
        return Ok(None);
    };
    NaiveDateTime::parse_from_str(text.trim(), "%Y-%m-%d %H:%M:%S")
        .map(|naive| Some(naive.and_utc()))
        .map_err(|_| {
            ApiError::bad_header(
                name,
                format!(
                    "\"{}\" is not a date-time of the form YYYY-MM-DD HH:MM:SS.",
                    clip(text)
                ),
            )
        })
}

/// Reads the headers of a request and names every missing or malformed one in one 400.
pub struct HeaderCheck<'a> {
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

    /// The value of a parse that may find nothing, recording what went wrong.
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
        let parsed = date_time(self.headers, name);
        self.take(name, parsed, required)
    }

    /// A comma-separated id list header.
    pub fn ids(
        &mut self,
        name: &'static str,
        required: bool,
    ) -> Option<std::collections::BTreeSet<i64>> {
        let parsed = id_list(self.headers, name);
        self.take(name, parsed, required)
    }

    /// A `true`/`false` header.
    pub fn boolean(&mut self, name: &'static str) -> Option<bool> {
        let parsed = boolean(self.headers, name);
        self.take(name, parsed, false)
    }

    /// A header read with `parse` (after trimming); its error names only the problem.
    pub fn parsed<T>(
        &mut self,
        name: &'static str,
        parse: impl FnOnce(&str) -> Result<T, String>,
    ) -> Option<T> {
        let text = match header_text(self.headers, name) {
            Ok(text) => text?,
            Err(e) => return self.take(name, Err(e), false),
        };
        match parse(text.trim()) {
            Ok(v) => Some(v),
            Err(why) => {
                self.problems.push((name, format!("{name}: {why}")));
                None
            }
        }
    }

    /// Records a problem a rule across headers found (`detail` names the header).
    pub fn reject(&mut self, name: &'static str, detail: impl Into<String>) {
        self.problems.push((name, detail.into()));
    }

    /// Whether a header was found malformed.
    pub fn has_problem(&self, name: &str) -> bool {
        self.problems.iter().any(|(n, _)| *n == name)
    }

    /// Records "the header is missing." for a required header that was not sent, unless it
    /// was already reported as malformed.
    pub fn missing(&mut self, name: &'static str) {
        if !self.problems.iter().any(|(n, _)| *n == name) {
            self.problems
                .push((name, format!("{name}: the header is missing.")));
        }
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

    /// Ok when every header was well formed, else one 400 naming each problem (in the order
    /// of `order` when given, else as found).
    pub fn finish(&mut self, order: &[&str]) -> Result<(), ApiError> {
        if self.problems.is_empty() {
            return Ok(());
        }
        self.problems
            .sort_by_key(|(name, _)| order.iter().position(|o| o == name));
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
            details: std::mem::take(&mut self.problems)
                .into_iter()
                .map(|(_, d)| d)
                .collect(),
            object_ref: Some(names.join(",")),
        })
    }
}

/// A date-time as the headers write it.
fn plain(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M:%S").to_string()
}

/// Long values are cut in messages: they are for a developer to recognise, not to echo.
pub fn clip(s: &str) -> String {
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::header::{HeaderName, HeaderValue};

    fn headers(name: &'static str, value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            HeaderName::from_static(name),
            HeaderValue::from_str(value).unwrap(),
        );
        h
    }

    fn detail(err: ApiError) -> String {
        err.envelope().error.unwrap().details.join(" ")
    }

    #[test]
    fn id_lists_ignore_spaces_and_deduplicate() {
        let ids = id_list(&headers("storeids", " 9, 1040 ,9"), "storeids")
            .unwrap()
            .unwrap();
        assert_eq!(ids.into_iter().collect::<Vec<_>>(), vec![9, 1040]);
        assert_eq!(id_list(&HeaderMap::new(), "storeids").unwrap(), None);
    }

    #[test]
    fn bad_items_name_the_header_and_the_item() {
        for (value, expected) in [
            ("1,,2", "categoryids: item 2 is empty."),
            (
                "1041,abc",
                "categoryids: item \"abc\" is not a non-negative integer.",
            ),
            (
                "-1",
                "categoryids: item \"-1\" is not a non-negative integer.",
            ),
            (
                "99999999999999999999",
                "categoryids: item \"99999999999999999999\" is out of range.",
            ),
            ("", "categoryids: item 1 is empty."),
        ] {
            let err = id_list(&headers("categoryids", value), "categoryids").unwrap_err();
            assert_eq!(detail(err), expected, "{value}");
        }
    }

    #[test]
    fn booleans_accept_only_true_and_false() {
        assert_eq!(
            boolean(&headers("active", "true"), "active").unwrap(),
            Some(true)
        );
        assert_eq!(
            boolean(&headers("active", "false"), "active").unwrap(),
            Some(false)
        );
        assert!(
            detail(boolean(&headers("active", "yes"), "active").unwrap_err()).contains("\"yes\"")
        );
    }

    #[test]
    fn date_times_take_one_form_only() {
        let t = date_time(&headers("reportfrom", "2026-03-28 00:00:00"), "reportfrom")
            .unwrap()
            .unwrap();
        assert_eq!(t.to_rfc3339(), "2026-03-28T00:00:00+00:00");
        let err =
            date_time(&headers("reportfrom", "2026-03-28T00:00:00Z"), "reportfrom").unwrap_err();
        assert!(detail(err).contains("YYYY-MM-DD HH:MM:SS"));
    }
}

#[cfg(test)]
mod props {
    use actix_web::http::header::{HeaderName, HeaderValue};
    use proptest::prelude::*;

    use super::*;

    fn headers(name: &'static str, value: &str) -> Option<HeaderMap> {
        let mut map = HeaderMap::new();
        map.insert(
            HeaderName::from_static(name),
            HeaderValue::from_str(value).ok()?,
        );
        Some(map)
    }

    proptest! {
        #[test]
        fn an_id_list_reads_back_the_ids_written(ids in proptest::collection::vec(0..i64::MAX, 1..200), spaced in any::<bool>()) {
            let sep = if spaced { " , " } else { "," };
            let text = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(sep);
            let parsed = parse_id_list("productIds", &text).unwrap();
            prop_assert_eq!(parsed, ids.into_iter().collect::<BTreeSet<_>>());
        }

        #[test]
        fn any_id_list_text_is_ids_or_a_400_naming_the_header(text in ".{0,300}") {
            match parse_id_list("productIds", &text) {
                Ok(ids) => prop_assert!(ids.len() <= MAX_IDS),
                Err(ApiError::BadRequest { object_ref, .. }) => {
                    prop_assert_eq!(object_ref.as_deref(), Some("productIds"))
                }
                Err(other) => prop_assert!(false, "unexpected {other:?}"),
            }
        }

        #[test]
        fn a_boolean_is_true_or_false_and_nothing_else(text in "[ -~]{0,12}") {
            if let Some(map) = headers("completed", &text) {
                match boolean(&map, "completed") {
                    Ok(Some(b)) => prop_assert_eq!(text.trim(), if b { "true" } else { "false" }),
                    Ok(None) => prop_assert!(false, "a sent header read as absent"),
                    Err(_) => prop_assert!(!matches!(text.trim(), "true" | "false")),
                }
            }
        }

        #[test]
        fn a_date_time_header_never_panics_and_round_trips(secs in 0i64..4_102_444_800, junk in "[ -~]{0,30}") {
            let t = DateTime::<Utc>::from_timestamp(secs, 0).unwrap();
            let text = t.format("%Y-%m-%d %H:%M:%S").to_string();
            let map = headers("from", &text).unwrap();
            prop_assert_eq!(date_time(&map, "from").unwrap(), Some(t));
            if let Some(map) = headers("from", &junk) {
                let _ = date_time(&map, "from");
            }
        }
    }
}

/// A search text (UTF-8, at most `max` characters), if sent and not blank.
pub fn search(headers: &HeaderMap, name: &str, max: usize) -> Result<Option<String>, ApiError> {
    let Some(value) = headers.get(name) else {
        return Ok(None);
    };
    let text = std::str::from_utf8(value.as_bytes())
        .map_err(|_| ApiError::bad_header(name, "the value is not UTF-8 text."))?
        .trim();
    if text.chars().count() > max {
        return Err(ApiError::bad_header(
            name,
            format!("at most {max} characters."),
        ));
    }
    Ok((!text.is_empty()).then(|| text.to_owned()))
}
