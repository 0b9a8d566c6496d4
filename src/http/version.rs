//! The `x-accept-version` check (DESIGN §6).

use actix_web::http::header::HeaderMap;

use super::error::ApiError;

pub const HEADER: &str = "x-accept-version";
const SUPPORTED: &str = "2.0";

/// Accepts `2.0` and `2` (the same version); anything else, or no header, is a 400 (101).
pub fn check(headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(raw) = headers.get(HEADER) else {
        return Err(ApiError::UnsupportedVersion {
            detail: format!("{HEADER}: the header is missing; supported versions: {SUPPORTED}."),
        });
    };
    match raw.to_str().map(str::trim) {
        Ok("2.0" | "2") => Ok(()),
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
