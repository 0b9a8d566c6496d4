//! The token endpoint's parameters and client credentials: read, or invalid_request /
//! invalid_client; never a panic.
#![no_main]
use actix_web::http::header;
use actix_web::test::TestRequest;
use libfuzzer_sys::fuzz_target;
use merchantd::http::oauth::params::{presented_client, Params};

fuzz_target!(|input: (bool, &str, &[u8])| {
    let (json, basic, body) = input;
    let content_type = if json {
        "application/json"
    } else {
        "application/x-www-form-urlencoded"
    };
    let mut req = TestRequest::default().insert_header((header::CONTENT_TYPE, content_type));
    if let Ok(value) = header::HeaderValue::from_str(&format!("Basic {basic}")) {
        req = req.insert_header((header::AUTHORIZATION, value));
    }
    let req = req.to_http_request();
    match Params::parse(&req, body) {
        Ok(params) => {
            if let Err(e) = presented_client(&req, &params) {
                assert!(matches!(e.error, "invalid_request" | "invalid_client"));
            }
        }
        Err(e) => assert_eq!(e.error, "invalid_request"),
    }
});
