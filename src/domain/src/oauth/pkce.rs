//! PKCE (RFC 7636), S256 only.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ring::digest;

use crate::crypto::constant_time_eq;

/// A `code_challenge` as sent: 43 base64url characters (a SHA-256).
pub fn valid_challenge(challenge: &str) -> bool {
    challenge.len() == 43
        && challenge
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A `code_verifier`: 43–128 unreserved characters.
pub fn valid_verifier(verifier: &str) -> bool {
    (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

pub fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(digest::digest(&digest::SHA256, verifier.as_bytes()))
}

/// The token request's verifier against the stored challenge. A verifier without a challenge is
/// a downgrade attempt and fails too (RFC 9700 §2.1.1).
pub fn check(challenge: Option<&str>, verifier: Option<&str>) -> Result<(), String> {
    match (challenge, verifier) {
        (None, None) => Ok(()),
        (Some(_), None) => Err("code_verifier is required for this code".into()),
        (None, Some(_)) => Err("this code was issued without a code_challenge".into()),
        (Some(c), Some(v)) if !valid_verifier(v) => {
            let _ = c;
            Err("code_verifier is malformed".into())
        }
        (Some(c), Some(v)) if constant_time_eq(s256(v).as_bytes(), c.as_bytes()) => Ok(()),
        _ => Err("code_verifier does not match the code_challenge".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VERIFIER: &str = "9fRidZwC5aj2RPI9NW58Xq_ktTn1CSBbiALqpXBdDP4";
    const CHALLENGE: &str = "X5OSxWHWILrUNPmT-ld32v80_QFCaNGlG8wS493of0k";

    #[test]
    fn the_worked_example_verifies() {
        assert_eq!(s256(VERIFIER), CHALLENGE);
        assert!(valid_challenge(CHALLENGE));
        assert_eq!(check(Some(CHALLENGE), Some(VERIFIER)), Ok(()));
    }

    #[test]
    fn wrong_missing_and_downgraded_verifiers_fail() {
        let other = "A".repeat(43);
        assert!(check(Some(CHALLENGE), Some(&other)).is_err());
        assert!(check(Some(CHALLENGE), None).is_err());
        assert!(check(None, Some(VERIFIER)).is_err());
        assert!(check(Some(CHALLENGE), Some("short")).is_err());
        assert_eq!(check(None, None), Ok(()));
    }
}
