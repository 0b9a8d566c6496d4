//! The fleet's storage (the operator's realm, docs/operator.md): operator tokens, merchants
//! created, suspended, deleted and listed across pods, a merchant's archive out and in, and
//! moves of merchants between databases.

mod archive;
mod digest;
pub mod moves;
mod pod_moves;
mod store;

use crate::pods::Pods;
use crate::Db;

pub use digest::Digest;
pub use moves::{Moved, Mover};

/// The fleet's databases: the home one (operator tokens, imports without pods) and the pods.
#[derive(Clone)]
pub struct Fleet {
    pub(crate) db: Db,
    pub(crate) pods: Pods,
}

impl Fleet {
    pub fn new(pods: Pods) -> Self {
        Self {
            db: pods.home().clone(),
            pods,
        }
    }

    /// The fleet of one database alone (the command line's).
    pub fn on(db: Db) -> Self {
        Self::new(Pods::single(db))
    }
}
