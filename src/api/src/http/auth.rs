//! Bearer authentication of the API: the gate every API route sits behind, the [`Caller`]
//! extractor handlers use, and the access-token cache.

use std::future::{ready, Ready};

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::{header, Method};
use actix_web::middleware::Next;
use actix_web::{web, FromRequest, HttpMessage, HttpRequest};

use crate::http::error::ApiError;
use crate::http::{rate, version, AppState};
use domain::crypto;
use domain::now_millis;
use domain::{Role, Scope, ScopeSet};

/// Who is calling: the token's merchant, user, application and scopes.
#[derive(Clone, Debug)]
pub struct Caller {
    pub merchant_id: i64,
    pub employee_id: i64,
    pub application_id: i64,
    pub role: Role,
    pub scopes: ScopeSet,
    pub family_id: String,
}

impl FromRequest for Caller {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(
            req.extensions()
                .get::<Caller>()
                .cloned()
                .ok_or_else(|| ApiError::TokenInvalid {
                    detail: "no bearer token was sent".into(),
                }),
        )
    }
}

/// What an API handler takes beside its body: the request (its headers), who calls, and the
/// application's state.
pub struct Call {
    pub req: HttpRequest,
    pub caller: Caller,
    pub state: web::Data<AppState>,
}

impl FromRequest for Call {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let caller = match Caller::from_request(req, payload).into_inner() {
            Ok(caller) => caller,
            Err(e) => return ready(Err(e)),
        };
        ready(
            req.app_data::<web::Data<AppState>>()
                .cloned()
                .map(|state| Call {
                    req: req.clone(),
                    caller,
                    state,
                })
                .ok_or_else(|| ApiError::Internal(anyhow::anyhow!("the app state is not set"))),
        )
    }
}

/// The token from `Authorization: Bearer <t>` (or the legacy `OAuth <t>`).
pub(super) fn presented_token(req: &ServiceRequest) -> Result<&str, ApiError> {
    let Some(value) = req.headers().get(header::AUTHORIZATION) else {
        return Err(ApiError::TokenInvalid {
            detail: "no bearer token was sent".into(),
        });
    };
    let value = value.to_str().map_err(|_| ApiError::TokenInvalid {
        detail: "the header is not text".into(),
    })?;
    let (scheme, token) = value.trim().split_once(' ').ok_or(ApiError::TokenInvalid {
        detail: "expected \"Bearer <token>\"".into(),
    })?;
    if !(scheme.eq_ignore_ascii_case("bearer") || scheme.eq_ignore_ascii_case("oauth")) {
        return Err(ApiError::TokenInvalid {
            detail: "expected \"Bearer <token>\"".into(),
        });
    }
    let token = token.trim();
    if token.is_empty() || token.len() > 512 {
        return Err(ApiError::TokenInvalid {
            detail: "the token is malformed".into(),
        });
    }
    Ok(token)
}

/// Resolves the caller of an API request, or says why not (401).
/// The SHA-256 of the bearer token a request presents, to look it up again later (a
/// long-lived stream checks that it still holds).
pub fn presented_token_hash(headers: &header::HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (_, token) = value.trim().split_once(' ')?;
    Some(crypto::sha256_hex(token.trim()))
}

pub async fn authenticate(state: &AppState, req: &ServiceRequest) -> Result<Caller, ApiError> {
    let token = presented_token(req)?;
    let record = state
        .tokens
        .access_token(&crypto::sha256_hex(token))
        .await?
        .ok_or_else(|| ApiError::TokenInvalid {
            detail: "the token is unknown or revoked".into(),
        })?;
    let now = now_millis();
    if record.expires_at <= now {
        return Err(ApiError::TokenExpired);
    }
    if record.exit_date.is_some_and(|exit| exit <= now) {
        return Err(ApiError::TokenInvalid {
            detail: "the token's user no longer works for the merchant".into(),
        });
    }
    if record.suspended {
        return Err(ApiError::MerchantSuspended);
    }
    let role = Role::from_id(record.role_id).ok_or_else(|| {
        ApiError::internal(anyhow::anyhow!(
            "employee has unknown role {}",
            record.role_id
        ))
    })?;
    let scopes = ScopeSet::parse(&record.scope)
        .ok()
        .flatten()
        .ok_or_else(|| ApiError::internal(anyhow::anyhow!("stored token scope is invalid")))?
        // The role caps the token even if it changed after the grant.
        .capped(role.highest_scope());
    Ok(Caller {
        merchant_id: record.merchant_id,
        employee_id: record.employee_id,
        application_id: record.application_id,
        role,
        scopes,
        family_id: record.family_id.clone(),
    })
}

/// The scope a request needs (DESIGN §5).
pub fn needed_scope(method: &Method, path: &str) -> Scope {
    let is_application = path == "/application" || path.starts_with("/application/");
    // Webhook URLs and deliveries show where a merchant's data goes: admin even to read.
    if path == "/webhook" || path.starts_with("/webhook/") {
        return Scope::Admin;
    }
    // Everything held about a customer, or erasing it for good: an administrator's act.
    if path == "/customer/export" || path == "/customer/erase" {
        return Scope::Admin;
    }
    match *method {
        Method::GET | Method::HEAD | Method::OPTIONS => Scope::Read,
        // A calculation writes nothing.
        Method::POST if path == "/basket/calculate" => Scope::Read,
        Method::DELETE => Scope::Admin,
        _ if is_application => Scope::Admin,
        _ => Scope::Write,
    }
}

/// The gate in front of every API route: token (401), then scope (403), then version (400).
pub async fn api_gate(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    match admit(&req).await {
        Ok((caller, verdict)) => {
            req.extensions_mut().insert(caller);
            let mut res = next.call(req).await?;
            rate::headers(verdict, res.headers_mut());
            Ok(res.map_into_left_body())
        }
        // Answered here, while the request is at hand, so the outer layer sees a response.
        Err(err) => Ok(req.error_response(err).map_into_right_body()),
    }
}

async fn admit(req: &ServiceRequest) -> Result<(Caller, rate::Verdict), ApiError> {
    let state = req
        .app_data::<web::Data<AppState>>()
        .ok_or_else(|| ApiError::internal(anyhow::anyhow!("application state is missing")))?;
    let caller = authenticate(state, req).await?;
    let needed = needed_scope(req.method(), req.path());
    if !caller.scopes.allows(needed) {
        return Err(ApiError::InsufficientScope {
            needed,
            detail: format!(
                "{} {} needs scope {needed}; the token has {}.",
                req.method(),
                req.path(),
                caller.scopes.to_scope_string()
            ),
        });
    }
    if let Err(refused) = version::check(req.headers()) {
        // Old Shopwave client libraries send 0.x or nothing; served as 2.0 where their
        // merchant allows it (`legacy_clients`).
        let legacy = version::is_legacy(req.headers())
            && state
                .services
                .legacy_application(caller.application_id)
                .await?;
        if !legacy {
            return Err(refused);
        }
    }
    // After the version: a request refused anyway does not spend the caller's budget.
    match state.limits.check(&caller.family_id, caller.merchant_id) {
        rate::Verdict::Limited {
            retry_after_secs, ..
        } => Err(ApiError::RateLimited { retry_after_secs }),
        verdict => {
            // For "last used" on the connected-applications page, once the request is let
            // in (a refused one used nothing); never waits (see token_use).
            state
                .tokens
                .note_use(&caller.family_id, caller.merchant_id, now_millis());
            state.services.operator.usage().note_request(
                caller.merchant_id,
                !matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS),
            );
            Ok((caller, verdict))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_follow_methods_and_application_writes_need_admin() {
        assert_eq!(needed_scope(&Method::GET, "/product"), Scope::Read);
        assert_eq!(needed_scope(&Method::POST, "/product"), Scope::Write);
        assert_eq!(needed_scope(&Method::PUT, "/product"), Scope::Write);
        assert_eq!(needed_scope(&Method::DELETE, "/product"), Scope::Admin);
        assert_eq!(needed_scope(&Method::POST, "/application"), Scope::Admin);
        assert_eq!(needed_scope(&Method::GET, "/application"), Scope::Read);
    }
}
