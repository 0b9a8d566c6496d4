//! Typed values parsed at the edge. No I/O lives here.

pub mod category;
pub mod dates;
pub mod fields;
pub mod money;
pub mod redirect_uri;
pub mod role;
pub mod scope;
pub mod store;

pub use role::Role;
pub use scope::{Scope, ScopeSet};
