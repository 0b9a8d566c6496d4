//! One file per grant type, as rauthy does it.

pub mod authorization_code;
pub mod refresh_token;

use crate::crypto::{random_token, sha256_hex};
use crate::store::now_millis;
use crate::store::oauth::NewPair;

/// A fresh access/refresh pair: the clear tokens for the client, the hashes for the store.
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

    pub fn expires_in(&self) -> i64 {
        (self.stored.access_expires_at - now_millis()) / 1000
    }
}
