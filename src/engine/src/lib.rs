//! merchantd's engine: the merchant registry and supervisors that own each merchant's cached
//! state and serialize its writes, the store actors (stock), the token actors, and the small
//! services for what no actor owns. It knows no wire.

#![forbid(unsafe_code)]

pub mod actors;
pub mod services;
pub mod catalogue;
pub mod customers;
pub mod offline;
pub mod merchant;
