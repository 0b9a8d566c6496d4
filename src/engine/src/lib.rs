//! merchantd's engine: the merchant registry and supervisors that own each merchant's cached
//! state and serialize its writes, the store actors (stock), the token actors, and the small
//! services for what no actor owns. It knows no wire and no database: storage is reached
//! through the ports of `merchantd-ports`.
//!
//! `merchant` holds the machinery every record type shares (registry, supervisor, state,
//! groups, jobs, history, ports); each feature has a folder with its records' rules as the
//! supervisor applies them and its jobs and services: `catalogue`, `stock`, `sales`, `till`,
//! `offline`, `customers`, `people`, `tokens`, `webhooks`, `fleet`.

#![forbid(unsafe_code)]

pub mod catalogue;
pub mod customers;
pub mod fleet;
pub mod merchant;
pub mod offline;
pub mod people;
pub mod sales;
pub mod services;
pub mod stock;
pub mod till;
pub mod tokens;
pub mod webhooks;
pub use merchant::registry::Merchants;
pub use tokens::actors::TokenActors;
