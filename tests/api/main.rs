//! One integration-test binary (linked once); modules grouped by what they prove.

#[allow(dead_code)]
mod helpers;

mod account;
mod actors;
mod applications;
mod browser;
mod catalogue;
mod categories;
mod cli;
mod crash;
mod employees;
mod envelope;
mod events;
mod idempotency;
mod layers;
mod legacy_clients;
mod limits;
mod logs;
mod oauth_client_library;
mod oauth_concurrency;
mod oauth_endpoints;
mod oauth_pkce;
mod oauth_scopes;
mod oauth_secrets;
mod oauth_support;
mod oauth_token;
mod openapi;
mod outage;
mod process;
mod products;
mod promotions;
mod readme;
mod reconcile;
mod replicas;
mod report;
mod sales;
mod scale;
mod shop_day;
mod storage;
mod stores;
mod suppliers;
mod tenants;
mod tls;
mod uploads;
mod webhooks;
