//! merchantd's HTTP surface: routes, the envelope, the one error mapping, the handlers, the
//! OAuth pages and endpoints, the OpenAPI document, the read side (`views`) and the webhook
//! dispatcher that delivers the event log to merchants' endpoints.

#![forbid(unsafe_code)]

pub mod http;
pub mod views;
pub mod webhooks;
