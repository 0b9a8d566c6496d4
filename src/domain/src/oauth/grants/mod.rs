//! One file per grant type, as rauthy does it: each holds the grant's rules, written against
//! the storage steps of [`TokenSteps`](crate::oauth::token::TokenSteps) and run by the token
//! actors inside one transaction.

pub mod authorization_code;
pub mod refresh_token;

use crate::crypto::{random_token, sha256_hex};
use crate::now_millis;
use crate::oauth::token::NewPair;

/// A fresh access/refresh pair: the clear tokens for the client, the hashes for the store.
#[derive(Debug, Clone)]
pub struct FreshPair {
    pub access: String,
    pub refresh: String,
    pub stored: NewPair,
}

impl FreshPair {
    pub fn new(access_ttl_secs: u64, refresh_ttl_secs: u64) -> Self {
        let access = random_token("mcd_at_");
        let refresh = random_token("mcd_rt_");
        let now = now_millis();
        let stored = NewPair {
            access_hash: sha256_hex(&access),
            access_expires_at: now + (access_ttl_secs as i64) * 1000,
            access_scope: String::new(),
            refresh_hash: sha256_hex(&refresh),
            refresh_expires_at: now + (refresh_ttl_secs as i64) * 1000,
        };
        Self {
            access,
            refresh,
            stored,
        }
    }

    /// Seconds until the access token expires, rounded up (a token issued now with a one-hour
    /// lifetime says 3600, not 3599 after a millisecond of database work).
    pub fn expires_in(&self) -> i64 {
        seconds_until(self.stored.access_expires_at)
    }
}

/// Whole seconds from now until `millis`, rounded up, never negative.
pub fn seconds_until(millis: i64) -> i64 {
    ((millis - now_millis()).max(0) + 999) / 1000
}
