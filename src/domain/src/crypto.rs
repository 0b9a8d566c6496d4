//! Hashing and random material. Tokens and generated secrets are 256 random bits, so a fast hash
//! (SHA-256) is safe for them; human passwords get PBKDF2.

use std::num::NonZeroU32;

use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use base64::Engine;
use ring::rand::{SecureRandom, SystemRandom};
use ring::{digest, pbkdf2};

const PBKDF2_ALG: pbkdf2::Algorithm = pbkdf2::PBKDF2_HMAC_SHA256;
const PASSWORD_SCHEME: &str = "pbkdf2-sha256";
const SALT_LEN: usize = 16;
const HASH_LEN: usize = 32;

/// The iteration count OWASP recommends for PBKDF2-HMAC-SHA256; the configured default.
pub const DEFAULT_PBKDF2_ITERATIONS: u32 = 600_000;

/// 32 bytes from the system CSPRNG.
pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut buf = [0u8; N];
    // The system RNG only fails when the OS cannot provide randomness at all; nothing safe can
    // be done then, so stopping is the right answer.
    SystemRandom::new()
        .fill(&mut buf)
        .expect("the operating system's random number generator failed");
    buf
}

/// A new credential: `prefix` followed by 256 random bits in unpadded base64url.
pub fn random_token(prefix: &str) -> String {
    format!("{prefix}{}", URL_SAFE_NO_PAD.encode(random_bytes::<32>()))
}

/// Lower-case hex SHA-256: how codes, tokens and client secrets are stored.
pub fn sha256_hex(input: &str) -> String {
    hex(digest::digest(&digest::SHA256, input.as_bytes()).as_ref())
}

/// The SHA-256 of `input`, as bytes.
pub fn sha256(input: &[u8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(digest::digest(&digest::SHA256, input).as_ref());
    out
}

/// Lower-case hex SHA-256 of several parts, each length-prefixed so that no two different
/// lists of parts hash alike.
pub fn sha256_hex_of(parts: &[&[u8]]) -> String {
    let mut context = digest::Context::new(&digest::SHA256);
    for part in parts {
        context.update(&(part.len() as u64).to_be_bytes());
        context.update(part);
    }
    hex(context.finish().as_ref())
}

/// Lower-case hex. By table, not `write!`: every API request hashes its bearer token, and the
/// formatter's per-byte call was 1-2 % of a read's samples.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

/// Equality that takes the same time wherever the inputs differ.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Hashes a password as `pbkdf2-sha256$<iterations>$<salt>$<hash>` (base64, no padding). The
/// iteration count travels with the hash, so raising the default never breaks old hashes.
pub fn hash_password(password: &str, iterations: u32) -> String {
    let iterations = NonZeroU32::new(iterations.max(1)).unwrap_or(NonZeroU32::MIN);
    let salt = random_bytes::<SALT_LEN>();
    let mut out = [0u8; HASH_LEN];
    pbkdf2::derive(PBKDF2_ALG, iterations, &salt, password.as_bytes(), &mut out);
    format!(
        "{PASSWORD_SCHEME}${iterations}${}${}",
        STANDARD_NO_PAD.encode(salt),
        STANDARD_NO_PAD.encode(out)
    )
}

/// Checks a password against a stored hash in constant time. A malformed hash never verifies.
pub fn verify_password(password: &str, stored: &str) -> bool {
    let Some(parsed) = ParsedHash::parse(stored) else {
        return false;
    };
    pbkdf2::verify(
        PBKDF2_ALG,
        parsed.iterations,
        &parsed.salt,
        password.as_bytes(),
        &parsed.hash,
    )
    .is_ok()
}

/// True when `stored` has the shape [`hash_password`] produces (used to accept pre-hashed
/// passwords in manifests).
pub fn is_password_hash(stored: &str) -> bool {
    ParsedHash::parse(stored).is_some()
}

struct ParsedHash {
    iterations: NonZeroU32,
    salt: Vec<u8>,
    hash: Vec<u8>,
}

impl ParsedHash {
    fn parse(stored: &str) -> Option<Self> {
        let mut parts = stored.split('$');
        if parts.next()? != PASSWORD_SCHEME {
            return None;
        }
        let iterations = NonZeroU32::new(parts.next()?.parse().ok()?)?;
        let salt = STANDARD_NO_PAD.decode(parts.next()?).ok()?;
        let hash = STANDARD_NO_PAD.decode(parts.next()?).ok()?;
        if parts.next().is_some() || salt.is_empty() || hash.len() != HASH_LEN {
            return None;
        }
        Some(Self {
            iterations,
            salt,
            hash,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn password_round_trip_and_rejection() {
        let stored = hash_password("correct horse", 1_000);
        assert!(stored.starts_with("pbkdf2-sha256$1000$"));
        assert!(verify_password("correct horse", &stored));
        assert!(!verify_password("Correct horse", &stored));
        assert!(!stored.contains("correct horse"));
    }

    #[test]
    fn same_password_gets_a_new_salt_each_time() {
        assert_ne!(hash_password("pw", 10), hash_password("pw", 10));
    }

    #[test]
    fn malformed_hashes_never_verify() {
        for bad in [
            "",
            "plain",
            "pbkdf2-sha256$0$AA$AA",
            "pbkdf2-sha256$10$$",
            "md5$1$a$b",
        ] {
            assert!(!verify_password("x", bad), "{bad}");
            assert!(!is_password_hash(bad), "{bad}");
        }
    }

    #[test]
    fn tokens_carry_their_prefix_and_256_bits() {
        let t = random_token("mcd_at_");
        assert!(t.starts_with("mcd_at_"));
        assert_eq!(t.len(), "mcd_at_".len() + 43);
        assert_ne!(t, random_token("mcd_at_"));
    }

    #[test]
    fn sha256_is_hex() {
        assert_eq!(
            sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
