//! Tills that sell offline: sales synced later under the till's own ids, and the record
//! digests a till compares its copy with.

pub mod digest;
pub mod fingerprint;
pub mod sync;
