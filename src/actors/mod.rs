//! Actors that own state and serialize the operations on it.

pub mod catalogue;
pub mod merchant;
pub mod registry;
pub mod resource;
pub mod store;
pub mod token;

pub use registry::Merchants;
pub use token::TokenActors;
