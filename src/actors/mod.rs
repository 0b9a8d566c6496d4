//! Actors that own state and serialize the operations on it.

pub mod token;

pub use token::TokenActors;
