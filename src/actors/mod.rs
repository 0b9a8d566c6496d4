//! Actors that own state and serialize the operations on it.

pub mod merchant;
pub mod registry;
pub mod token;

pub use registry::Merchants;
pub use token::TokenActors;
