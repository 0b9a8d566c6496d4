//! The body of the token, revoke and introspect endpoints (JSON, as the spec shows, or
//! form-encoded, as RFC 6749 requires) and client authentication (body or HTTP Basic).

use std::collections::BTreeMap;
use std::sync::Arc;

use actix_web::http::header;
use actix_web::HttpRequest;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;

use crate::http::oauth::error::OAuthError;
use domain::crypto::{constant_time_eq, sha256_hex};
use domain::oauth::token::Client;
use engine::TokenActors;

/// Request parameters, each present at most once.
#[derive(Debug, Default)]
pub struct Params(BTreeMap<String, String>);

impl Params {
    pub fn parse(req: &HttpRequest, body: &[u8]) -> Result<Self, OAuthError> {
        let content_type = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let mime = content_type.split(';').next().unwrap_or("").trim();
        let mut map = BTreeMap::new();
        match mime {
            "application/json" => {
                let value: serde_json::Value = serde_json::from_slice(body).map_err(|e| {
                    OAuthError::invalid_request(format!("The body is not valid JSON: {e}."))
                })?;
                let object = value.as_object().ok_or_else(|| {
                    OAuthError::invalid_request("The body must be a JSON object.")
                })?;
                for (key, value) in object {
                    let text = match value {
                        serde_json::Value::String(s) => s.clone(),
                        serde_json::Value::Null => continue,
                        _ => {
                            return Err(OAuthError::invalid_request(format!(
                                "{key} must be a string."
                            )))
                        }
                    };
                    map.insert(key.clone(), text);
                }
            }
            "application/x-www-form-urlencoded" => {
                let pairs: Vec<(String, String)> =
                    serde_urlencoded::from_bytes(body).map_err(|_| {
                        OAuthError::invalid_request("The form body could not be decoded.")
                    })?;
                for (key, value) in pairs {
                    if map.insert(key.clone(), value).is_some() {
                        return Err(OAuthError::invalid_request(format!(
                            "The parameter {key} is repeated."
                        )));
                    }
                }
            }
            _ => {
                return Err(OAuthError::invalid_request(
                    "Content-Type must be application/json or application/x-www-form-urlencoded.",
                ))
            }
        }
        Ok(Self(map))
    }

    /// A parameter, with empty values treated as absent.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    pub fn require(&self, key: &str) -> Result<&str, OAuthError> {
        self.get(key)
            .ok_or_else(|| OAuthError::invalid_request(format!("The parameter {key} is required.")))
    }
}

/// Credentials as presented, before they are checked.
pub struct Presented {
    pub client_id: Option<String>,
    secret: Option<String>,
    pub basic: bool,
}

/// Reads client credentials from `Authorization: Basic` (each part form-urldecoded, RFC 6749
/// §2.3.1) or from the body; using both for the secret is an error.
pub fn presented_client(req: &HttpRequest, params: &Params) -> Result<Presented, OAuthError> {
    let basic = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, rest) = v.trim().split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("basic")
                .then(|| rest.trim().to_owned())
        });
    if let Some(encoded) = basic {
        if params.get("client_secret").is_some() {
            return Err(OAuthError::invalid_request(
                "Use one client authentication method, not Basic and client_secret together.",
            ));
        }
        let decoded = STANDARD
            .decode(encoded)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or_else(|| OAuthError::invalid_client(true))?;
        let (id, secret) = decoded
            .split_once(':')
            .ok_or_else(|| OAuthError::invalid_client(true))?;
        let id = form_decode(id).ok_or_else(|| OAuthError::invalid_client(true))?;
        let secret = form_decode(secret).ok_or_else(|| OAuthError::invalid_client(true))?;
        if params.get("client_id").is_some_and(|body_id| body_id != id) {
            return Err(OAuthError::invalid_request(
                "client_id differs from the Basic credentials.",
            ));
        }
        return Ok(Presented {
            client_id: Some(id),
            secret: Some(secret),
            basic: true,
        });
    }
    Ok(Presented {
        client_id: params.get("client_id").map(str::to_owned),
        secret: params.get("client_secret").map(str::to_owned),
        basic: false,
    })
}

fn form_decode(s: &str) -> Option<String> {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(&format!("v={s}")).ok()?;
    pairs.into_iter().next().map(|(_, v)| v)
}

/// Checks presented credentials; the secret is compared by hash in constant time.
pub async fn authenticate(
    tokens: &TokenActors,
    presented: &Presented,
) -> Result<Arc<Client>, OAuthError> {
    let fail = || OAuthError::invalid_client(presented.basic);
    let (Some(client_id), Some(secret)) = (&presented.client_id, &presented.secret) else {
        return Err(fail());
    };
    let presented_hash = sha256_hex(secret);
    let app = tokens
        .client(client_id)
        .await
        .map_err(|e| {
            tracing::error!(error = %e, "client lookup failed");
            OAuthError::server_error()
        })?
        .ok_or_else(fail)?;
    if constant_time_eq(presented_hash.as_bytes(), app.secret_hash.as_bytes()) {
        Ok(app)
    } else {
        Err(fail())
    }
}

#[cfg(test)]
mod tests {
    use super::form_decode;

    #[test]
    fn basic_parts_are_form_decoded() {
        assert_eq!(form_decode("a%3Ab+c").as_deref(), Some("a:b c"));
    }
}

#[cfg(test)]
mod props {
    use actix_web::test::TestRequest;
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn any_token_request_body_is_params_or_invalid_request(
            body in proptest::collection::vec(any::<u8>(), 0..200),
            json in any::<bool>(),
            basic in "[ -~]{0,60}",
        ) {
            let content_type = if json { "application/json" } else { "application/x-www-form-urlencoded" };
            let mut req = TestRequest::default().insert_header((header::CONTENT_TYPE, content_type));
            if let Ok(value) = header::HeaderValue::from_str(&format!("Basic {basic}")) {
                req = req.insert_header((header::AUTHORIZATION, value));
            }
            let req = req.to_http_request();
            match Params::parse(&req, &body) {
                Ok(params) => {
                    // Client credentials are read or refused, never a panic.
                    if let Err(e) = presented_client(&req, &params) {
                        prop_assert!(matches!(e.error, "invalid_request" | "invalid_client"), "{}", e.error);
                    }
                }
                Err(e) => prop_assert_eq!(e.error, "invalid_request"),
            }
        }

        #[test]
        fn form_parameters_read_back(grant in "[a-z_]{1,20}", code in "[ -~]{1,40}") {
            let body = serde_urlencoded::to_string([("grant_type", &grant), ("code", &code)]).unwrap();
            let req = TestRequest::default()
                .insert_header((header::CONTENT_TYPE, "application/x-www-form-urlencoded"))
                .to_http_request();
            let params = Params::parse(&req, body.as_bytes()).unwrap();
            prop_assert_eq!(params.get("grant_type"), Some(grant.as_str()));
            prop_assert_eq!(params.get("code"), Some(code.as_str()));
        }
    }
}
