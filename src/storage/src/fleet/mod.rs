//! The fleet's storage (the operator's realm, docs/operator.md): pods and the directory of
//! where merchants live, operator tokens, merchants created from manifests, suspended, deleted
//! and listed across pods, a merchant's archive out and in, and moves of merchants between
//! databases (the catch-up under a move's hold).

mod archive;
pub mod archive_rows;
pub mod catch_up;
mod digest;
pub mod merchants;
mod move_target;
pub mod moves;
pub mod operator_rows;
mod pod_moves;
pub mod pods;
mod store;
pub mod tenants;

use crate::fleet::pods::Pods;
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
