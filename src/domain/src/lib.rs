//! merchantd's domain: typed records and values parsed at the edge, each resource's rules, the
//! sale engine, the authorization server's rules (`oauth`) and hashing (`crypto`). No I/O lives
//! here: no database, no network, no files.
//!
//! The shared parts sit at the top (record declarations and the registry of record types,
//! fields of a write, batches, events, money, dates, scopes and roles); each feature has a
//! folder: `catalogue`, `stock`, `sales`, `till`, `offline`, `customers`, `people`, `oauth`,
//! `webhooks`, `fleet`. Uploaded files (`file`) and logs (`log`) are a file each.

#![forbid(unsafe_code)]
// `#[record(computed(..), computed(..))]` lists one entry per computed field; the lint reads
// their repeated keys (`kind = "money"`) as one attribute given twice.
#![allow(clippy::duplicated_attributes)]

pub mod address;
pub mod batch;
pub mod catalogue;
pub mod clock;
pub mod crypto;
pub mod customers;
pub mod dates;
pub mod event;
pub mod failure;
pub mod fields;
pub mod file;
pub mod fleet;
pub mod log;
pub mod money;
pub mod oauth;
pub mod offline;
pub mod people;
pub mod plain;
pub mod record;
pub mod refusal;
pub mod registry;
pub mod role;
pub mod sales;
pub mod scope;
pub mod stock;
pub mod till;
pub mod webhooks;

#[cfg(test)]
pub(crate) mod testing;

pub use clock::now_millis;
pub use failure::Failure;
pub use refusal::Refusal;
pub use role::Role;
pub use scope::{Scope, ScopeSet};
