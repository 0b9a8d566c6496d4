//! Filter headers' id lists: read, or refused with a 400 naming the header; never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use merchantd::http::error::ApiError;
use merchantd::http::filters::{parse_id_list, MAX_IDS};

fuzz_target!(|text: &str| {
    match parse_id_list("productIds", text) {
        Ok(ids) => assert!(ids.len() <= MAX_IDS),
        Err(ApiError::BadRequest { .. }) => {}
        Err(other) => panic!("unexpected {other:?}"),
    }
});
