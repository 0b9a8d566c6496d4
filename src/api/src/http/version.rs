//! The `x-accept-version` check (DESIGN §6).

use actix_web::http::header::HeaderMap;

use crate::http::error::ApiError;

pub const HEADER: &str = "x-accept-version";
const SUPPORTED: &str = "2.0";

/// The values the header may take (the same version), each with the name generated clients
/// give it.
pub const ACCEPTED: [(&str, &str); 2] = [(SUPPORTED, "V2_0"), ("2", "V2")];

/// Accepts [`ACCEPTED`]; anything else, or no header, is a 400 (101).
pub fn check(headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(raw) = headers.get(HEADER) else {
        return Err(ApiError::UnsupportedVersion {
            detail: format!("{HEADER}: the header is missing; supported versions: {SUPPORTED}."),
        });
    };
    match raw.to_str().map(str::trim) {
        Ok(value) if ACCEPTED.iter().any(|(accepted, _)| *accepted == value) => Ok(()),
        Ok(other) => Err(ApiError::UnsupportedVersion {
            detail: format!(
                "{HEADER}: \"{}\" is not supported; supported versions: {SUPPORTED}.",
                other.chars().take(32).collect::<String>()
            ),
        }),
        Err(_) => Err(ApiError::UnsupportedVersion {
            detail: format!("{HEADER}: the value is not text; supported versions: {SUPPORTED}."),
        }),
    }
}

/// A version the old Shopwave client libraries send: none, or `0.x` (0.4, 0.5, 0.6). Served as
/// 2.0 for applications whose merchant turned `legacy_clients` on.
pub fn is_legacy(headers: &HeaderMap) -> bool {
    match headers.get(HEADER).map(|v| v.to_str().map(str::trim)) {
        None => true,
        Some(Ok(v)) => {
            v == "0"
                || v.strip_prefix("0.").is_some_and(|minor| {
                    !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit())
                })
        }
        Some(Err(_)) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::header::{HeaderName, HeaderValue};
    use actix_web::ResponseError;

    fn headers(value: Option<&'static [u8]>) -> HeaderMap {
        let mut map = HeaderMap::new();
        if let Some(v) = value {
            map.insert(
                HeaderName::from_static(HEADER),
                HeaderValue::from_bytes(v).unwrap(),
            );
        }
        map
    }

    #[test]
    fn old_clients_send_no_version_or_a_0_x_one() {
        assert!(is_legacy(&headers(None)));
        assert!(is_legacy(&headers(Some(b"0.6"))));
        assert!(is_legacy(&headers(Some(b" 0.5"))));
        assert!(!is_legacy(&headers(Some(b"9.9"))));
        assert!(!is_legacy(&headers(Some(b"0."))));
        assert!(!is_legacy(&headers(Some(b"0.6a"))));
        assert!(!is_legacy(&headers(Some(b"\xff"))));
    }

    #[test]
    fn accepts_2_0_and_2() {
        assert!(check(&headers(Some(b"2.0"))).is_ok());
        assert!(check(&headers(Some(b" 2 "))).is_ok());
    }

    #[test]
    fn missing_or_other_versions_are_400_with_message_101() {
        for (value, needle) in [
            (None, "the header is missing"),
            (Some(&b"9.9"[..]), "\"9.9\" is not supported"),
            (Some(&b"1.0"[..]), "\"1.0\" is not supported"),
            (Some(&b"\xff"[..]), "not text"),
        ] {
            let err = check(&headers(value)).unwrap_err();
            assert_eq!(err.status_code().as_u16(), 400);
            let env = err.envelope();
            let details = &env.error.as_ref().unwrap().details[0];
            assert!(details.contains(needle), "{details}");
            assert!(details.contains("supported versions: 2.0"), "{details}");
            assert_eq!(env.messages.error["101"].code, Some("validationError"));
            assert_eq!(env.error.unwrap().code, 400);
        }
    }
}
