//! Webhooks: the endpoint records as the merchant supervisor writes them, and the address
//! guard for the URLs they name.

pub mod guard;
mod webhook;
