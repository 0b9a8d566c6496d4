//! Sealing a refresh token's successor pair under a key derived from the refresh token itself.
//!
//! The database keeps only hashes of tokens. To answer an idempotent retry with the *same* pair,
//! the pair is stored encrypted (ChaCha20-Poly1305) under SHA-256("merchantd successor" ‖
//! predecessor): only someone who holds the predecessor — the client retrying — can open it.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, CHACHA20_POLY1305, NONCE_LEN};
use ring::digest;
use serde::{Deserialize, Serialize};

use crate::crypto::random_bytes;

/// The successor pair as the client saw it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SealedPair {
    pub access_token: String,
    pub refresh_token: String,
    pub access_expires_at: i64,
    pub scope: String,
}

fn key_for(predecessor: &str) -> LessSafeKey {
    let mut ctx = digest::Context::new(&digest::SHA256);
    ctx.update(b"merchantd successor\0");
    ctx.update(predecessor.as_bytes());
    let key = ctx.finish();
    // A 32-byte key always fits ChaCha20-Poly1305.
    LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, key.as_ref()).expect("32-byte key"))
}

pub fn seal(predecessor: &str, pair: &SealedPair) -> String {
    let nonce_bytes = random_bytes::<NONCE_LEN>();
    let mut data = serde_json::to_vec(pair).unwrap_or_default();
    let tag_ok = key_for(predecessor).seal_in_place_append_tag(
        Nonce::assume_unique_for_key(nonce_bytes),
        Aad::empty(),
        &mut data,
    );
    if tag_ok.is_err() {
        return String::new();
    }
    let mut out = nonce_bytes.to_vec();
    out.extend_from_slice(&data);
    URL_SAFE_NO_PAD.encode(out)
}

/// Opens what [`seal`] made with the same predecessor; `None` for anything else.
pub fn open(predecessor: &str, sealed: &str) -> Option<SealedPair> {
    let raw = URL_SAFE_NO_PAD.decode(sealed).ok()?;
    if raw.len() < NONCE_LEN {
        return None;
    }
    let (nonce, ciphertext) = raw.split_at(NONCE_LEN);
    let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
    let mut buf = ciphertext.to_vec();
    let plain = key_for(predecessor)
        .open_in_place(nonce, Aad::empty(), &mut buf)
        .ok()?;
    serde_json::from_slice(plain).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_predecessor_opens_the_seal() {
        let pair = SealedPair {
            access_token: "mcd_at_a".into(),
            refresh_token: "mcd_rt_b".into(),
            access_expires_at: 42,
            scope: "read".into(),
        };
        let sealed = seal("mcd_rt_old", &pair);
        assert!(!sealed.contains("mcd_at_a"));
        assert_eq!(open("mcd_rt_old", &sealed), Some(pair));
        assert_eq!(open("mcd_rt_other", &sealed), None);
        assert_eq!(open("mcd_rt_old", "garbage"), None);
    }
}
