//! Webhooks' routes: the endpoints, their deliveries, and deliveries sent again.

pub mod endpoints;

pub use endpoints::routes;
