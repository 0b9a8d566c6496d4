//! The Standard Webhooks signature (<https://www.standardwebhooks.com/>): HMAC-SHA256 over
//! `<webhook-id>.<webhook-timestamp>.<body>` with the secret's bytes (the base64 after
//! `whsec_`), sent as `v1,<base64>`; several space-separated while a rotated secret overlaps.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use ring::hmac;

use domain::webhooks::webhook::SECRET_PREFIX;

/// The `webhook-signature` header for a message, one `v1,` signature per secret; secrets that
/// do not decode are skipped (every stored one does: the server made them).
pub fn signature(secrets: &[String], id: &str, timestamp: i64, body: &[u8]) -> String {
    let mut signed = Vec::with_capacity(id.len() + body.len() + 24);
    signed.extend_from_slice(id.as_bytes());
    signed.push(b'.');
    signed.extend_from_slice(timestamp.to_string().as_bytes());
    signed.push(b'.');
    signed.extend_from_slice(body);
    secrets
        .iter()
        .filter_map(|secret| {
            let key = STANDARD.decode(secret.strip_prefix(SECRET_PREFIX)?).ok()?;
            let tag = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, &key), &signed);
            Some(format!("v1,{}", STANDARD.encode(tag.as_ref())))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of the Standard Webhooks specification's test vectors.
    #[test]
    fn matches_the_specification_example() {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".to_owned();
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            signature(&[secret], "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn an_overlapping_secret_adds_a_second_signature() {
        let both = signature(
            &["whsec_YQ==".to_owned(), "whsec_Yg==".to_owned()],
            "msg_1",
            1,
            b"{}",
        );
        assert_eq!(both.split(' ').count(), 2);
        assert!(both.split(' ').all(|s| s.starts_with("v1,")));
    }
}
