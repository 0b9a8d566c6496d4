//! Dates as the API reads and writes them: read as UTC ISO 8601 with milliseconds, written as
//! that or `YYYY-MM-DD HH:MM:SS` (UTC). Stored as epoch milliseconds.

use chrono::{DateTime, NaiveDateTime, SecondsFormat, Utc};

pub fn to_iso(millis: i64) -> Option<String> {
    DateTime::<Utc>::from_timestamp_millis(millis)
        .map(|d| d.to_rfc3339_opts(SecondsFormat::Millis, true))
}

/// Parses a written date; `Err` says what forms are accepted.
pub fn parse(text: &str) -> Result<i64, String> {
    let t = text.trim();
    if let Ok(d) = DateTime::parse_from_rfc3339(t) {
        return Ok(d.with_timezone(&Utc).timestamp_millis());
    }
    NaiveDateTime::parse_from_str(t, "%Y-%m-%d %H:%M:%S")
        .map(|n| n.and_utc().timestamp_millis())
        .map_err(|_| {
            format!("\"{t}\" is not a date (use 2026-03-28T13:58:00.000Z or 2026-03-28 13:58:00)")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_written_forms_read_back_the_same() {
        let a = parse("2026-03-28T13:58:00.000Z").unwrap();
        let b = parse("2026-03-28 13:58:00").unwrap();
        assert_eq!(a, b);
        assert_eq!(to_iso(a).unwrap(), "2026-03-28T13:58:00.000Z");
        assert!(parse("28/03/2026").is_err());
    }
}

#[cfg(test)]
mod props {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn any_text_is_a_date_or_a_reason(text in ".{0,40}") {
            let _ = parse(&text);
        }

        #[test]
        fn a_written_date_reads_back(millis in 0i64..4_102_444_800_000) {
            let millis = millis - millis % 1000;
            if let Some(iso) = to_iso(millis) {
                prop_assert_eq!(parse(&iso), Ok(millis));
            }
        }
    }
}

/// The day of the week at `millis` in the IANA time zone `tz` (UTC when unknown), 0 = Sunday.
pub fn weekday(millis: i64, tz: &str) -> i64 {
    use chrono::{Datelike, TimeZone};
    let zone: chrono_tz::Tz = tz.parse().unwrap_or(chrono_tz::UTC);
    zone.timestamp_millis_opt(millis)
        .single()
        .map_or(0, |t| i64::from(t.weekday().num_days_from_sunday()))
}
