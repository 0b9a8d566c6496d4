//! Typed values parsed at the edge. No I/O lives here.

pub mod application;
pub mod basket;
pub mod category;
pub mod dates;
pub mod employee;
pub mod fields;
pub mod money;
pub mod product;
pub mod promotion;
pub mod reconcile;
pub mod redirect_uri;
pub mod role;
pub mod sales;
pub mod scope;
pub mod store;
pub mod supplier;

pub use role::Role;
pub use scope::{Scope, ScopeSet};
