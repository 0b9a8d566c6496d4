//! Dates in bodies and date-time filter headers: a time, or a reason; never a panic.
#![no_main]
use actix_web::http::header::{HeaderMap, HeaderName, HeaderValue};
use libfuzzer_sys::fuzz_target;
use merchantd::domain::dates;
use merchantd::http::filters;

fuzz_target!(|text: &str| {
    if let Ok(millis) = dates::parse(text) {
        let _ = dates::to_iso(millis);
    }
    if let Ok(value) = HeaderValue::from_str(text) {
        let mut headers = HeaderMap::new();
        headers.insert(HeaderName::from_static("from"), value);
        let _ = filters::date_time(&headers, "from");
    }
});
