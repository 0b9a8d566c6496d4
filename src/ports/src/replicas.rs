//! Hearing the other processes that share one database: what they announce as their writes
//! commit.

use crate::Pending;

/// What another process committed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Announcement {
    /// A merchant's write committed at this version.
    MerchantChanged { merchant_id: i64, version: i64 },
    /// Access tokens revoked: these hashes, or `None` for "any of them may be".
    TokensRevoked(Option<Vec<String>>),
}

/// Where announcements are heard (PostgreSQL's `LISTEN`; SQLite serves one process and has
/// none).
pub trait Replicas: Send + Sync {
    /// Starts listening under `name`. Whatever storage cached of where merchants live is
    /// forgotten: announcements may have been missed.
    fn listen<'a>(&'a self, name: &'a str) -> Pending<'a, Box<dyn Listening>>;
}

/// A connection listening.
pub trait Listening: Send {
    /// Marks the process as hearing the others again (reads stop checking the database).
    fn go_live(&mut self);
    /// The next announcement; an error when the connection is lost.
    fn next(&mut self) -> Pending<'_, Announcement>;
}
