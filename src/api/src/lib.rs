//! merchantd's HTTP surface: routes, the envelope, the one error mapping, the handlers, the
//! OAuth pages and endpoints, the OpenAPI document, and the read side (`views`).

#![forbid(unsafe_code)]

pub mod http;
pub mod views;
