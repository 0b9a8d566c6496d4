//! merchantd's storage in memory: the merchant ports (`merchantd-ports`) over tables of
//! records kept in memory, for the engine's own tests and the conformance suite. No database,
//! and the failures a database has (a refused commit) on demand.
//!
//! Each merchant keeps its records by type and id, as a database keeps rows, with its version,
//! its event log, its stock and the answers kept for idempotency keys. A group writes into a
//! copy of its merchant that its commit puts in place; a refused commit leaves everything as
//! it was.

#![forbid(unsafe_code)]

mod history;
mod merchant;
mod tables;

pub use merchant::MemoryStorage;
