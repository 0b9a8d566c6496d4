//! Webhooks: merchants' endpoints, their secrets and filters, the delivery queue's records
//! and the address guard.

pub mod webhook;
