//! Typed values parsed at the edge. No I/O lives here.

pub mod redirect_uri;
pub mod role;
pub mod scope;

pub use role::Role;
pub use scope::{Scope, ScopeSet};
