//! `POST /oauth/token` (RFC 6749 §3.2): client authentication, rate limits, then the grant.

use actix_web::http::header::{self, HeaderValue};
use actix_web::{web, HttpRequest};

use super::error::OAuthError;
use super::grants;
use super::params::{self, Params};
use crate::db::oauth::ApplicationRecord;
use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::AppState;

pub async fn token(
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<AppState>,
) -> Result<Reply, actix_web::Error> {
    let client = admit_client(&req, &body, &state).await;
    let outcome = match client {
        Ok((app, params)) => match params.get("grant_type") {
            Some("authorization_code") => {
                grants::authorization_code::exchange(&state, &app, &params).await
            }
            Some("refresh_token") => grants::refresh_token::refresh(&state, &app, &params).await,
            Some(other) => Err(OAuthError::unsupported_grant_type(format!(
                "The grant type \"{}\" is not supported; use authorization_code or refresh_token.",
                other.chars().take(40).collect::<String>()
            ))),
            None => Err(OAuthError::invalid_request(
                "The parameter grant_type is required.",
            )),
        },
        Err(Admission::Limited(err)) => return Err(err.into()),
        Err(Admission::Refused(err)) => Err(err),
    };
    match outcome {
        Ok((reply, grant_type)) => {
            state
                .metrics
                .oauth_tokens_issued
                .with_label_values(&[grant_type])
                .inc();
            Ok(reply)
        }
        Err(err) => {
            state
                .metrics
                .oauth_token_errors
                .with_label_values(&[err.error])
                .inc();
            Err(err.into())
        }
    }
}

/// Why a request did not reach its grant.
pub enum Admission {
    /// Over a rate limit: 429 with `Retry-After`.
    Limited(ApiError),
    /// Malformed, or the client failed to authenticate.
    Refused(OAuthError),
}

fn peer_ip(req: &HttpRequest) -> String {
    // The socket's address, not a forwarded header a client could forge.
    req.peer_addr()
        .map(|a| a.ip().to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// Rate limits per IP (counting failed client authentications apart) and per client, body
/// parsing and client authentication: the common front of token, revoke and introspect.
pub async fn admit_client(
    req: &HttpRequest,
    body: &[u8],
    state: &AppState,
) -> Result<(ApplicationRecord, Params), Admission> {
    let settings = &state.settings;
    let ip = peer_ip(req);
    let limited = |retry_after_secs| Admission::Limited(ApiError::RateLimited { retry_after_secs });
    state
        .oauth
        .limiter
        .check(
            &format!("authfail:{ip}"),
            settings.oauth_failed_auths_per_minute,
        )
        .map_err(limited)?;
    state
        .oauth
        .limiter
        .hit(&format!("ip:{ip}"), settings.oauth_requests_per_minute)
        .map_err(limited)?;
    let params = Params::parse(req, body).map_err(Admission::Refused)?;
    let presented = params::presented_client(req, &params).map_err(Admission::Refused)?;
    let app = match params::authenticate(&state.db, &presented).await {
        Ok(app) => app,
        Err(err) => {
            let _ = state.oauth.limiter.hit(&format!("authfail:{ip}"), u32::MAX);
            tracing::info!(
                target: "merchantd::audit",
                event = "client_auth_failed",
                client_id = presented.client_id.as_deref().unwrap_or(""),
                "client authentication failed"
            );
            return Err(Admission::Refused(err));
        }
    };
    state
        .oauth
        .limiter
        .hit(
            &format!("client:{}", app.client_id),
            settings.oauth_requests_per_minute,
        )
        .map_err(limited)?;
    Ok((app, params))
}

/// The token response (RFC 6749 §5.1) with the envelope; never cached.
pub fn token_reply(access: &str, refresh: &str, expires_in: i64, scope: &str) -> Reply {
    Reply::ok()
        .field("access_token", access)
        .field("token_type", "Bearer")
        .field("expires_in", expires_in.max(0))
        .field("refresh_token", refresh)
        .field("scope", scope)
        .header(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))
        .header(header::PRAGMA, HeaderValue::from_static("no-cache"))
}
