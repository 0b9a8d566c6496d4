//! Webhooks' rows: endpoints with their secrets, and the dispatcher's queue (cursors,
//! deliveries, attempts, leases).

pub mod queue;
