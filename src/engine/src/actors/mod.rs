//! Actors that own state and serialize the operations on it: the merchant registry and its
//! supervisors (one a merchant, with a StoreActor a store), and the token actors.

pub mod catalogue;
pub mod lifetime;
pub mod ports;
pub mod registry;
pub mod render;
pub mod replicas;
pub mod resource;
pub mod store;
pub mod token;
mod token_use;

pub use registry::Merchants;
pub use token::TokenActors;
