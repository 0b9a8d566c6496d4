//! The token actors: grants run in the shard owning their credential, the access-token cache
//! and revocations, and when each grant was last used.

pub mod actors;
mod uses;
