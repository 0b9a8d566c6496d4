//! Tills that sell offline: a synced sale recorded against the merchant's state, the sync job
//! that writes a batch of them, and the digests kept current for tills that compare.

pub mod digests;
pub(crate) mod sale;
pub mod sync;
