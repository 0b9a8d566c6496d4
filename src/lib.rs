//! merchantd: a multi-tenant merchant commerce API server.
//!
//! Layout follows the request (docs/architecture.md): `http` (routes, envelope, errors,
//! handlers, the OAuth pages) → `actors` (per-merchant supervisors owning cached state and
//! write groups, store actors, token actors) and `services` (logs, files, the report) →
//! `db` (the only module that speaks SQL: `Db` for reads, `Tx` for writes). `oauth` holds the
//! grants' rules, `domain` typed records, values and rules with no I/O, and `tenants` the
//! manifest importer, `webhooks` the dispatcher that delivers the event log to merchants'
//! endpoints. `tests/api/layers.rs` keeps these rules.

#![forbid(unsafe_code)]
// `#[record(computed(..), computed(..))]` lists one entry per computed field; the lint reads
// their repeated keys (`kind = "money"`) as one attribute given twice.
#![allow(clippy::duplicated_attributes)]

pub use api::{http, views};
pub use config;
pub use domain::{self, crypto, oauth};
pub use engine;
pub use metrics;
pub use openapi;
pub use storage as db;
pub use webhooks;

pub mod cli;
pub mod startup;
pub mod telemetry;
pub mod tenants;
pub mod tls;
