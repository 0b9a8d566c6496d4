//! One error type for the HTTP layer, mapped to status, `WWW-Authenticate`, the top-level
//! `error` object and the message record in one place.

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};

use crate::http::envelope::{
    ErrorObject, Messages, PendingEnvelope, API_VERSION, CODE_BASE_VERSION,
};
use crate::http::messages::Message;
use domain::{Failure, Scope};

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// Missing, malformed, unknown or revoked token (100). `detail` says which, never the token.
    #[error("token invalid: {detail}")]
    TokenInvalid { detail: String },
    #[error("token expired")]
    TokenExpired,
    #[error("insufficient scope: {detail}")]
    InsufficientScope { needed: Scope, detail: String },
    /// A malformed request (101): a header, the JSON body. `object_ref` names the header.
    #[error("bad request: {}", details.join("; "))]
    BadRequest {
        message: String,
        details: Vec<String>,
        object_ref: Option<String>,
    },
    #[error("unsupported version: {detail}")]
    UnsupportedVersion { detail: String },
    #[error("not found: {detail}")]
    NotFound { detail: String },
    #[error("method not allowed: {detail}")]
    MethodNotAllowed { detail: String },
    #[error("unsupported media type: {detail}")]
    UnsupportedMediaType { detail: String },
    /// An upload whose content is not an accepted image (106, "Unsupported file type.").
    #[error("unsupported file type: {detail}")]
    UnsupportedFileType { detail: String },
    #[error("payload too large: {detail}")]
    PayloadTooLarge { detail: String },
    #[error("rate limited")]
    RateLimited { retry_after_secs: u64 },
    /// The token's merchant is suspended by the operator (109): its data is kept.
    #[error("merchant suspended")]
    MerchantSuspended,
    /// A write past one of the merchant's quotas (116): what it holds and the quota.
    #[error("quota exceeded: {detail}")]
    QuotaExceeded { detail: String },
    /// A well-formed request with a semantic error at request level (110 and friends).
    #[error("unprocessable: {detail}")]
    Unprocessable { message: Message, detail: String },
    /// A delta read from before what the event log keeps (115).
    #[error("gone: {detail}")]
    Gone { detail: String },
    #[error("service unavailable: {0}")]
    Unavailable(String),
    /// Anything unexpected. The cause goes to the log, never to the client.
    #[error("internal error: {0:#}")]
    Internal(anyhow::Error),
}

impl ApiError {
    pub fn bad_header(header: &str, detail: impl Into<String>) -> Self {
        let detail = detail.into();
        ApiError::BadRequest {
            message: "A request header is not valid.".into(),
            details: vec![format!("{header}: {detail}")],
            object_ref: Some(header.to_owned()),
        }
    }

    pub fn bad_body(detail: impl Into<String>) -> Self {
        ApiError::BadRequest {
            message: "The request body is not valid.".into(),
            details: vec![detail.into()],
            object_ref: None,
        }
    }

    pub fn internal(err: impl Into<anyhow::Error>) -> Self {
        ApiError::Internal(err.into())
    }

    fn message(&self) -> Message {
        match self {
            ApiError::TokenInvalid { .. } => Message::TokenInvalid,
            ApiError::TokenExpired => Message::TokenExpired,
            ApiError::InsufficientScope { .. } => Message::InsufficientScope,
            ApiError::BadRequest { .. } | ApiError::UnsupportedVersion { .. } => {
                Message::BadRequest
            }
            ApiError::NotFound { .. } => Message::NotFound,
            ApiError::MethodNotAllowed { .. } => Message::MethodNotAllowed,
            ApiError::UnsupportedMediaType { .. } | ApiError::UnsupportedFileType { .. } => {
                Message::UnsupportedMediaType
            }
            ApiError::PayloadTooLarge { .. } => Message::PayloadTooLarge,
            ApiError::RateLimited { .. } => Message::RateLimited,
            ApiError::MerchantSuspended => Message::MerchantSuspended,
            ApiError::QuotaExceeded { .. } => Message::QuotaExceeded,
            ApiError::Unprocessable { message, .. } => *message,
            ApiError::Gone { .. } => Message::SequenceExpired,
            ApiError::Unavailable(_) => Message::ServiceUnavailable,
            ApiError::Internal(_) => Message::InternalError,
        }
    }

    /// (top-level message, top-level details, record details, record objectRef)
    fn parts(&self) -> Parts {
        match self {
            ApiError::TokenInvalid { detail } => (
                "A valid bearer token is required.".into(),
                vec![format!("Authorization: {detail}")],
                sentence(detail),
                None,
            ),
            ApiError::TokenExpired => (
                "A valid bearer token is required.".into(),
                vec!["Authorization: the token expired; refresh it and retry.".into()],
                "The access token expired.".into(),
                None,
            ),
            ApiError::InsufficientScope { detail, .. } => {
                plain("The token's scope does not allow this operation.", detail)
            }
            ApiError::BadRequest {
                message,
                details,
                object_ref,
            } => (
                message.clone(),
                details.clone(),
                details.join(" "),
                object_ref.clone(),
            ),
            ApiError::UnsupportedVersion { detail } => (
                "Missing or unsupported API version.".into(),
                vec![detail.clone()],
                "Supported versions: 2.0.".into(),
                None,
            ),
            ApiError::NotFound { detail } => plain("Not found.", detail),
            ApiError::MethodNotAllowed { detail } => plain("Method not allowed.", detail),
            ApiError::UnsupportedMediaType { detail } => plain("Unsupported media type.", detail),
            ApiError::UnsupportedFileType { detail } => plain("Unsupported file type.", detail),
            ApiError::PayloadTooLarge { detail } => plain("The request is too large.", detail),
            ApiError::RateLimited { retry_after_secs } => plain(
                "Too many requests.",
                &format!("Too many requests; retry after {retry_after_secs} s."),
            ),
            ApiError::MerchantSuspended => plain(
                "The merchant is suspended.",
                "The merchant's account is suspended by its host; its data is kept, and every \
                 token works again once the host resumes it.",
            ),
            ApiError::QuotaExceeded { detail } => {
                plain("The merchant's quota does not allow this.", detail)
            }
            ApiError::Unprocessable { detail, .. } => {
                plain("The request could not be processed.", detail)
            }
            ApiError::Gone { detail } => plain("The sequence is no longer kept.", detail),
            ApiError::Unavailable(_) => plain(
                "Service unavailable.",
                "The service is temporarily unavailable; retry with backoff.",
            ),
            ApiError::Internal(_) => plain(
                "Internal server error.",
                "An unexpected error occurred; it may be retried.",
            ),
        }
    }

    /// The envelope body this error renders to (also used outside actix's error path).
    pub fn envelope(&self) -> PendingEnvelope {
        let message = self.message();
        let (top, details, record_details, object_ref) = self.parts();
        let mut messages = Messages::default();
        match object_ref {
            Some(r) => messages.add_with_ref(message, &r, record_details),
            None => messages.add(message, None, record_details),
        }
        PendingEnvelope {
            data: Default::default(),
            messages,
            error: Some(ErrorObject {
                code: message.status().as_u16(),
                message: top,
                details,
            }),
        }
    }

    /// The error the middleware substitutes for a bare error response produced outside our
    /// handlers (actix's own 404/405/413, a payload error).
    pub fn from_status(
        status: StatusCode,
        method: &str,
        path: &str,
        cause: Option<String>,
    ) -> Self {
        match status {
            StatusCode::NOT_FOUND => ApiError::NotFound {
                detail: format!("No route {method} {path}."),
            },
            StatusCode::METHOD_NOT_ALLOWED => ApiError::MethodNotAllowed {
                detail: format!("{method} is not allowed on {path}."),
            },
            StatusCode::PAYLOAD_TOO_LARGE => ApiError::PayloadTooLarge {
                detail: "The request body is larger than the limit.".into(),
            },
            StatusCode::UNSUPPORTED_MEDIA_TYPE => ApiError::UnsupportedMediaType {
                detail: cause.unwrap_or_else(|| "The Content-Type is not accepted here.".into()),
            },
            StatusCode::SERVICE_UNAVAILABLE => ApiError::Unavailable("upstream".into()),
            s if s.is_client_error() => ApiError::bad_body(
                cause.unwrap_or_else(|| "The request could not be understood.".into()),
            ),
            _ => ApiError::Internal(anyhow::anyhow!(
                "bare {status} response: {}",
                cause.unwrap_or_default()
            )),
        }
    }
}

/// An error's parts: (top-level message, top-level details, record details, record objectRef).
type Parts = (String, Vec<String>, String, Option<String>);

/// The parts of an error whose one detail is both the top-level detail and the record's.
fn plain(message: &str, detail: &str) -> Parts {
    (
        message.into(),
        vec![detail.to_owned()],
        detail.to_owned(),
        None,
    )
}

/// "unknown or revoked token" → "Unknown or revoked token."
fn sentence(detail: &str) -> String {
    let mut chars = detail.trim_end_matches('.').chars();
    match chars.next() {
        Some(first) => format!("{}{}.", first.to_uppercase(), chars.as_str()),
        None => String::new(),
    }
}

/// When a client told 503 (121) may retry: the database may be back in a second, and a replica
/// that lost the others listens again within a few (retrying with backoff is still the rule).
const RETRY_UNAVAILABLE_AFTER_SECS: &str = "1";

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.message().status()
    }

    fn error_response(&self) -> HttpResponse {
        let mut builder = HttpResponse::build(self.status_code());
        match self {
            ApiError::TokenInvalid { .. } => {
                builder.insert_header((
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static(
                        "Bearer realm=\"merchantd\", error=\"invalid_token\", \
                         error_description=\"The access token is not valid\"",
                    ),
                ));
            }
            ApiError::TokenExpired => {
                builder.insert_header((
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static(
                        "Bearer realm=\"merchantd\", error=\"invalid_token\", \
                         error_description=\"The access token expired\"",
                    ),
                ));
            }
            ApiError::InsufficientScope { needed, .. } => {
                let value = format!(
                    "Bearer realm=\"merchantd\", error=\"insufficient_scope\", scope=\"{needed}\""
                );
                if let Ok(v) = HeaderValue::from_str(&value) {
                    builder.insert_header((header::WWW_AUTHENTICATE, v));
                }
            }
            ApiError::RateLimited { retry_after_secs } => {
                builder.insert_header((header::RETRY_AFTER, retry_after_secs.to_string()));
            }
            ApiError::Internal(err) => {
                tracing::error!(error = format!("{err:#}"), "request failed");
            }
            ApiError::Unavailable(why) => {
                tracing::warn!(reason = %why, "service unavailable");
                // Message 121 says "retry"; this says when (docs/operations.md, "When the
                // database is away").
                builder.insert_header((header::RETRY_AFTER, RETRY_UNAVAILABLE_AFTER_SECS));
            }
            _ => {}
        }
        // A complete body now, for the paths where no middleware runs after us (a panic); the
        // envelope middleware re-renders it with the real execution time when it can.
        let envelope = self.envelope();
        builder.insert_header((API_VERSION, HeaderValue::from_static(CODE_BASE_VERSION)));
        builder.content_type("application/json");
        let mut response = builder.body(envelope.clone().render(0));
        response.extensions_mut().insert(envelope);
        response
    }
}

impl From<Failure> for ApiError {
    fn from(failure: Failure) -> Self {
        match failure {
            Failure::Unavailable(why) => ApiError::Unavailable(why),
            Failure::Internal(why) => ApiError::Internal(anyhow::anyhow!(why)),
        }
    }
}
