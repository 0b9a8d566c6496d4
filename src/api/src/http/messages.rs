//! The message catalogue of api-reference.md: every id, code, status and title in one place.

use actix_web::http::StatusCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Message {
    TokenInvalid,
    BadRequest,
    TokenExpired,
    InsufficientScope,
    NotFound,
    MethodNotAllowed,
    UnsupportedMediaType,
    PayloadTooLarge,
    RateLimited,
    /// The operator suspended the token's merchant (ours: docs/operator.md).
    MerchantSuspended,
    InvalidObject,
    AlreadyComplete,
    NotComplete,
    Conflict,
    /// An `Idempotency-Key` sent again with another request (ours: the catalogue has no id
    /// for it).
    IdempotencyKeyReused,
    /// A `changedSince` older than the event log keeps (ours: 410).
    SequenceExpired,
    /// A write past one of the merchant's quotas (ours: docs/operator.md, "Quotas").
    QuotaExceeded,
    InternalError,
    ServiceUnavailable,
    Created,
    Updated,
    TokenValid,
    RequestSuccessful,
    Deleted,
}

impl Message {
    /// Every message, in catalogue order (the API description lists them).
    pub const ALL: [Message; 24] = [
        Message::TokenInvalid,
        Message::BadRequest,
        Message::TokenExpired,
        Message::InsufficientScope,
        Message::NotFound,
        Message::MethodNotAllowed,
        Message::UnsupportedMediaType,
        Message::PayloadTooLarge,
        Message::RateLimited,
        Message::MerchantSuspended,
        Message::InvalidObject,
        Message::AlreadyComplete,
        Message::NotComplete,
        Message::Conflict,
        Message::IdempotencyKeyReused,
        Message::SequenceExpired,
        Message::QuotaExceeded,
        Message::InternalError,
        Message::ServiceUnavailable,
        Message::Created,
        Message::Updated,
        Message::TokenValid,
        Message::RequestSuccessful,
        Message::Deleted,
    ];

    pub fn id(self) -> u16 {
        match self {
            Message::TokenInvalid => 100,
            Message::BadRequest => 101,
            Message::TokenExpired => 102,
            Message::InsufficientScope => 103,
            Message::NotFound => 104,
            Message::MethodNotAllowed => 105,
            Message::UnsupportedMediaType => 106,
            Message::PayloadTooLarge => 107,
            Message::RateLimited => 108,
            Message::MerchantSuspended => 109,
            Message::InvalidObject => 110,
            Message::AlreadyComplete => 111,
            Message::NotComplete => 112,
            Message::Conflict => 113,
            Message::IdempotencyKeyReused => 114,
            Message::SequenceExpired => 115,
            Message::QuotaExceeded => 116,
            Message::InternalError => 120,
            Message::ServiceUnavailable => 121,
            Message::Created => 200,
            Message::Updated => 201,
            Message::TokenValid => 202,
            Message::RequestSuccessful => 203,
            Message::Deleted => 205,
        }
    }

    /// The machine-readable code; success records have none on the wire.
    pub fn code(self) -> &'static str {
        match self {
            Message::TokenInvalid => "tokenInvalid",
            Message::BadRequest | Message::InvalidObject => "validationError",
            Message::TokenExpired => "tokenExpired",
            Message::InsufficientScope => "insufficientScope",
            Message::NotFound => "notFound",
            Message::MethodNotAllowed => "methodNotAllowed",
            Message::UnsupportedMediaType => "unsupportedMediaType",
            Message::PayloadTooLarge => "payloadTooLarge",
            Message::RateLimited => "rateLimited",
            Message::MerchantSuspended => "merchantSuspended",
            Message::AlreadyComplete => "alreadyComplete",
            Message::NotComplete => "notComplete",
            Message::Conflict => "conflict",
            Message::IdempotencyKeyReused => "idempotencyKeyReused",
            Message::SequenceExpired => "sequenceExpired",
            Message::QuotaExceeded => "quotaExceeded",
            Message::InternalError => "internalError",
            Message::ServiceUnavailable => "serviceUnavailable",
            Message::Created => "created",
            Message::Updated => "updated",
            Message::TokenValid => "tokenValid",
            Message::RequestSuccessful => "requestSuccessful",
            Message::Deleted => "deleted",
        }
    }

    pub fn status(self) -> StatusCode {
        match self {
            Message::TokenInvalid | Message::TokenExpired => StatusCode::UNAUTHORIZED,
            Message::BadRequest => StatusCode::BAD_REQUEST,
            Message::InsufficientScope | Message::MerchantSuspended | Message::QuotaExceeded => {
                StatusCode::FORBIDDEN
            }
            Message::NotFound => StatusCode::NOT_FOUND,
            Message::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Message::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Message::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Message::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            Message::InvalidObject
            | Message::AlreadyComplete
            | Message::NotComplete
            | Message::Conflict
            | Message::IdempotencyKeyReused => StatusCode::UNPROCESSABLE_ENTITY,
            Message::SequenceExpired => StatusCode::GONE,
            Message::InternalError => StatusCode::INTERNAL_SERVER_ERROR,
            Message::ServiceUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            Message::Created | Message::Updated => StatusCode::CREATED,
            Message::TokenValid | Message::RequestSuccessful => StatusCode::OK,
            Message::Deleted => StatusCode::RESET_CONTENT,
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Message::TokenInvalid => "Token invalid",
            Message::BadRequest | Message::InvalidObject => "Validation error",
            Message::TokenExpired => "Token expired",
            Message::InsufficientScope => "Insufficient scope",
            Message::NotFound => "Not found",
            Message::MethodNotAllowed => "Method not allowed",
            Message::UnsupportedMediaType => "Unsupported media type",
            Message::PayloadTooLarge => "Payload too large",
            Message::RateLimited => "Rate limited",
            Message::MerchantSuspended => "Merchant suspended",
            Message::AlreadyComplete => "Already complete",
            Message::NotComplete => "Not complete",
            Message::Conflict => "Conflict",
            Message::IdempotencyKeyReused => "Idempotency key reused",
            Message::SequenceExpired => "Sequence expired",
            Message::QuotaExceeded => "Quota exceeded",
            Message::InternalError => "Internal error",
            Message::ServiceUnavailable => "Service unavailable",
            Message::Created => "Created",
            Message::Updated => "Updated",
            Message::TokenValid => "Token valid",
            Message::RequestSuccessful => "Request successful",
            Message::Deleted => "Deleted",
        }
    }

    pub fn is_error(self) -> bool {
        self.status().is_client_error() || self.status().is_server_error()
    }
}

#[cfg(test)]
mod tests {
    use super::Message::*;

    #[test]
    fn catalogue_matches_the_reference() {
        let table = [
            (TokenInvalid, 100, "tokenInvalid", 401),
            (BadRequest, 101, "validationError", 400),
            (TokenExpired, 102, "tokenExpired", 401),
            (InsufficientScope, 103, "insufficientScope", 403),
            (NotFound, 104, "notFound", 404),
            (MethodNotAllowed, 105, "methodNotAllowed", 405),
            (UnsupportedMediaType, 106, "unsupportedMediaType", 415),
            (PayloadTooLarge, 107, "payloadTooLarge", 413),
            (RateLimited, 108, "rateLimited", 429),
            (MerchantSuspended, 109, "merchantSuspended", 403),
            (InvalidObject, 110, "validationError", 422),
            (AlreadyComplete, 111, "alreadyComplete", 422),
            (NotComplete, 112, "notComplete", 422),
            (Conflict, 113, "conflict", 422),
            (IdempotencyKeyReused, 114, "idempotencyKeyReused", 422),
            (SequenceExpired, 115, "sequenceExpired", 410),
            (QuotaExceeded, 116, "quotaExceeded", 403),
            (InternalError, 120, "internalError", 500),
            (ServiceUnavailable, 121, "serviceUnavailable", 503),
            (Created, 200, "created", 201),
            (Updated, 201, "updated", 201),
            (TokenValid, 202, "tokenValid", 200),
            (RequestSuccessful, 203, "requestSuccessful", 200),
            (Deleted, 205, "deleted", 205),
        ];
        for (m, id, code, status) in table {
            assert_eq!(
                (m.id(), m.code(), m.status().as_u16()),
                (id, code, status),
                "{m:?}"
            );
        }
    }
}
