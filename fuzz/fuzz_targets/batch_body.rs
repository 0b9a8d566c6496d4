//! Write bodies, JSON or `postBody` form: objects, or a 4xx; never a panic.
#![no_main]
use actix_web::http::header;
use actix_web::test::TestRequest;
use libfuzzer_sys::fuzz_target;
use merchantd::http::batch::{json_document, objects};
use merchantd::http::error::ApiError;

fuzz_target!(|input: (bool, &[u8])| {
    let (form, body) = input;
    let content_type = if form {
        "application/x-www-form-urlencoded"
    } else {
        "application/json"
    };
    let req = TestRequest::default()
        .insert_header((header::CONTENT_TYPE, content_type))
        .to_http_request();
    match json_document(&req, body) {
        Ok(document) => match objects(document, "products", 200) {
            Ok(list) => assert!(!list.is_empty() && list.len() <= 200),
            Err(ApiError::BadRequest { .. } | ApiError::PayloadTooLarge { .. }) => {}
            Err(other) => panic!("unexpected {other:?}"),
        },
        Err(ApiError::BadRequest { .. }) => {}
        Err(other) => panic!("unexpected {other:?}"),
    }
});
