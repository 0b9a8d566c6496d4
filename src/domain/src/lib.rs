//! merchantd's domain: typed records and values parsed at the edge, each resource's rules, the
//! sale engine, the authorization server's rules (`oauth`) and hashing (`crypto`). No I/O lives
//! here: no database, no network, no files.

#![forbid(unsafe_code)]
// `#[record(computed(..), computed(..))]` lists one entry per computed field; the lint reads
// their repeated keys (`kind = "money"`) as one attribute given twice.
#![allow(clippy::duplicated_attributes)]

pub mod address;
pub mod application;
pub mod archive;
pub mod basket;
pub mod batch;
pub mod catalogue;
pub mod category;
pub mod clock;
pub mod crypto;
pub mod customer;
pub mod dates;
pub mod digest;
pub mod draft;
pub mod employee;
pub mod erase;
pub mod event;
pub mod failure;
pub mod fields;
pub mod file;
pub mod log;
pub mod manifest;
pub mod merchant;
pub mod money;
pub mod oauth;
pub mod offline;
pub mod operator;
pub mod pricing;
pub mod product;
pub mod promotion;
pub mod reconcile;
pub mod record;
pub mod redirect_uri;
pub mod refusal;
pub mod register;
pub mod registry;
pub mod report;
pub mod role;
pub mod sales;
pub mod sales_totals;
pub mod scope;
pub mod stock;
pub mod store;
pub mod supplier;
pub mod tenant;
pub mod till;
pub mod token;
pub mod webhook;

#[cfg(test)]
pub(crate) mod testing;

pub use clock::now_millis;
pub use failure::Failure;
pub use refusal::Refusal;
pub use role::Role;
pub use scope::{Scope, ScopeSet};
