//! The hosting operator's realm (docs/operator.md): its tokens and its view of merchants.

use std::fmt;

/// Operator tokens start so, which tells them apart from a merchant's in a log or a secret
/// scanner (a merchant's token on an operator route, or the other way, is still refused by
/// lookup: each realm only knows its own).
pub const TOKEN_PREFIX: &str = "mop_";

/// How long an operator token lives unless `--days` says otherwise.
pub const DEFAULT_TOKEN_DAYS: u32 = 90;

/// An operator token as stored: its name (who holds it) and when it stops working.
#[derive(Clone, PartialEq, Eq)]
pub struct OperatorToken {
    pub name: String,
    pub expires_at: i64,
}

impl fmt::Debug for OperatorToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OperatorToken")
            .field("name", &self.name)
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

/// A merchant as the operator lists it: who it is, whether it is suspended, and what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MerchantSummary {
    pub id: i64,
    pub key: String,
    pub name: String,
    pub created_at: i64,
    pub suspend_date: Option<i64>,
    /// When its rows go, if the operator deleted it.
    pub delete_after: Option<i64>,
    pub stored: StoredUsage,
}

/// What a merchant holds in the database.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoredUsage {
    /// Live products.
    pub products: i64,
    /// Completed baskets.
    pub sales: i64,
    /// Uploaded files' bytes.
    pub file_bytes: i64,
}

/// What a merchant did on this replica since it started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LiveUsage {
    pub requests: u64,
    pub writes: u64,
    /// Event streams open now.
    pub event_clients: i64,
}
