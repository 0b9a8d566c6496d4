//! RFC 6749 §5.2 errors for the token, revoke and introspect endpoints, with the `api` envelope.

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};

use crate::http::envelope::{PendingEnvelope, API_VERSION, CODE_BASE_VERSION};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthError {
    pub error: &'static str,
    pub description: String,
    /// The client tried HTTP Basic: a 401 then challenges with `WWW-Authenticate: Basic`.
    pub basic_auth_used: bool,
}

impl OAuthError {
    fn new(error: &'static str, description: impl Into<String>) -> Self {
        Self {
            error,
            description: description.into(),
            basic_auth_used: false,
        }
    }

    pub fn invalid_request(d: impl Into<String>) -> Self {
        Self::new("invalid_request", d)
    }

    pub fn invalid_client(basic_auth_used: bool) -> Self {
        Self {
            basic_auth_used,
            ..Self::new("invalid_client", "Client authentication failed.")
        }
    }

    pub fn invalid_grant(d: impl Into<String>) -> Self {
        Self::new("invalid_grant", d)
    }

    pub fn unsupported_grant_type(d: impl Into<String>) -> Self {
        Self::new("unsupported_grant_type", d)
    }

    pub fn invalid_scope(d: impl Into<String>) -> Self {
        Self::new("invalid_scope", d)
    }

    pub fn server_error() -> Self {
        Self::new(
            "server_error",
            "The server failed; the request may be retried.",
        )
    }

    fn envelope(&self) -> PendingEnvelope {
        let mut env = PendingEnvelope::default();
        env.data.insert("error", self.error);
        env.data.insert("error_description", &self.description);
        env
    }
}

impl std::fmt::Display for OAuthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.error, self.description)
    }
}

impl std::error::Error for OAuthError {}

impl ResponseError for OAuthError {
    fn status_code(&self) -> StatusCode {
        match self.error {
            "invalid_client" => StatusCode::UNAUTHORIZED,
            "server_error" => StatusCode::INTERNAL_SERVER_ERROR,
            _ => StatusCode::BAD_REQUEST,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let mut builder = HttpResponse::build(self.status_code());
        builder
            .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
            .insert_header((header::PRAGMA, HeaderValue::from_static("no-cache")))
            .insert_header((API_VERSION, HeaderValue::from_static(CODE_BASE_VERSION)))
            .content_type("application/json");
        if self.basic_auth_used && self.error == "invalid_client" {
            builder.insert_header((
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"merchantd\""),
            ));
        }
        let envelope = self.envelope();
        let mut response = builder.body(envelope.clone().render(0));
        response.extensions_mut().insert(envelope);
        response
    }
}
