//! merchantd: a multi-tenant merchant commerce API server.
//!
//! Layout follows the request: `http` (routes, envelope, errors) → `store` (all SQL), with
//! `domain` holding typed values and `tenants` the manifest importer.

#![forbid(unsafe_code)]

pub mod actors;
pub mod cli;
pub mod config;
pub mod crypto;
pub mod db;
pub mod domain;
pub mod http;
pub mod metrics;
pub mod oauth;
pub mod services;
pub mod startup;
pub mod telemetry;
pub mod tenants;
