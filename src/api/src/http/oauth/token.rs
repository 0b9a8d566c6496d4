//! `POST /oauth/token` (RFC 6749 §3.2): client authentication, rate limits, then the grant.

use std::sync::Arc;

use actix_web::http::header::{self, HeaderValue};
use actix_web::{web, HttpRequest};

use crate::http::envelope::Reply;
use crate::http::error::ApiError;
use crate::http::oauth::error::OAuthError;
use crate::http::oauth::params::{self, Params};
use crate::http::AppState;
use domain::crypto::sha256_hex;
use domain::oauth::grants::authorization_code::{CodeExchange, CodeGrant};
use domain::oauth::grants::refresh_token::{RefreshExchange, RefreshGrant};
use domain::oauth::grants::{seconds_until, FreshPair};
use domain::oauth::token::Client;
use domain::ScopeSet;

pub async fn token(
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<AppState>,
) -> Result<Reply, actix_web::Error> {
    let client = admit_client(&req, &body, &state).await;
    let outcome = match client {
        Ok((app, params)) => match params.get("grant_type") {
            Some("authorization_code") => exchange_code(&state, &app, &params).await,
            Some("refresh_token") => refresh(&state, &app, &params).await,
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
) -> Result<(Arc<Client>, Params), Admission> {
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
    let app = match params::authenticate(&state.tokens, &presented).await {
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

const INVALID_CODE: &str = "The authorization code is invalid, expired or already used.";

fn fresh_pair(state: &AppState) -> FreshPair {
    FreshPair::new(
        state.settings.access_token_ttl_secs,
        state.settings.refresh_token_ttl_secs,
    )
}

/// `grant_type=authorization_code`: the wire side of `oauth::grants::authorization_code`.
async fn exchange_code(
    state: &AppState,
    app: &Client,
    params: &Params,
) -> Result<(Reply, &'static str), OAuthError> {
    let code = params.require("code")?;
    let fresh = fresh_pair(state);
    let outcome = state
        .tokens
        .exchange_code(CodeGrant {
            code_hash: sha256_hex(code),
            application_id: app.id,
            redirect_uri: params.get("redirect_uri").map(str::to_owned),
            code_verifier: params.get("code_verifier").map(str::to_owned),
            pair: fresh.stored.clone(),
        })
        .await
        .map_err(|e| {
            tracing::error!(error = %e, "code exchange failed");
            OAuthError::server_error()
        })?;
    match outcome {
        CodeExchange::Issued(family) => {
            tracing::info!(
                target: "merchantd::audit",
                event = "grant",
                grant_type = "authorization_code",
                merchant_id = family.merchant_id,
                application_id = family.application_id,
                employee_id = family.employee_id,
                outcome = "issued",
                "tokens issued for an authorization code"
            );
            let reply = token_reply(
                &fresh.access,
                &fresh.refresh,
                fresh.expires_in(),
                &family.scope,
            );
            Ok((reply, "authorization_code"))
        }
        CodeExchange::Reused {
            revoked_access_hashes,
        } => {
            audit_reuse(
                "code_reuse",
                app.id,
                revoked_access_hashes.len(),
                "an authorization code was presented again; its tokens are revoked",
            );
            Err(OAuthError::invalid_grant(INVALID_CODE))
        }
        CodeExchange::Refused(why) => {
            tracing::info!(
                target: "merchantd::audit",
                event = "grant",
                grant_type = "authorization_code",
                application_id = app.id,
                outcome = "refused",
                reason = %why,
                "code exchange refused"
            );
            let description = if why.contains("unknown") || why.contains("expired") {
                INVALID_CODE.to_owned()
            } else {
                format!("{INVALID_CODE} ({why})")
            };
            Err(OAuthError::invalid_grant(description))
        }
    }
}

/// `grant_type=refresh_token`: the wire side of `oauth::grants::refresh_token`.
async fn refresh(
    state: &AppState,
    app: &Client,
    params: &Params,
) -> Result<(Reply, &'static str), OAuthError> {
    let presented = params.require("refresh_token")?.to_owned();
    let requested = match params.get("scope").map(ScopeSet::parse) {
        None => None,
        Some(Ok(scope)) => scope,
        // The old Shopwave clients send their comma-separated old names again on every
        // refresh: ignored, so the grant keeps what was consented to.
        Some(Err(_)) if app.legacy => None,
        Some(Err(unknown)) => {
            return Err(OAuthError::invalid_scope(format!(
                "Unknown scope {unknown}."
            )))
        }
    };
    let fresh = fresh_pair(state);
    let outcome = state
        .tokens
        .rotate(RefreshGrant {
            presented: presented.clone(),
            application_id: app.id,
            grace_millis: (state.settings.refresh_retry_grace_secs as i64) * 1000,
            requested,
            fresh: fresh.clone(),
            // Every client here is confidential (it authenticated with its secret).
            rotate: !app.legacy,
        })
        .await
        .map_err(|e| {
            tracing::error!(error = %e, "refresh failed");
            OAuthError::server_error()
        })?;
    let audit = |outcome: &str, merchant_id: Option<i64>| {
        tracing::info!(
            target: "merchantd::audit",
            event = "refresh",
            application_id = app.id,
            merchant_id = merchant_id,
            outcome = outcome,
            "refresh token presented"
        );
    };
    match outcome {
        RefreshExchange::Rotated { family, scope } => {
            audit("rotated", Some(family.merchant_id));
            let reply = token_reply(&fresh.access, &fresh.refresh, fresh.expires_in(), &scope);
            Ok((reply, "refresh_token"))
        }
        RefreshExchange::Renewed { family, scope } => {
            audit("renewed", Some(family.merchant_id));
            let reply = token_reply(&fresh.access, &presented, fresh.expires_in(), &scope);
            Ok((reply, "refresh_token"))
        }
        RefreshExchange::Retry { family, successor } => {
            audit("retry_within_grace", Some(family.merchant_id));
            let reply = token_reply(
                &successor.access_token,
                &successor.refresh_token,
                seconds_until(successor.access_expires_at),
                &successor.scope,
            );
            Ok((reply, "refresh_token"))
        }
        RefreshExchange::Reused {
            revoked_access_hashes,
        } => {
            audit_reuse(
                "refresh_reuse",
                app.id,
                revoked_access_hashes.len(),
                "a used refresh token was presented again; its family is revoked",
            );
            state
                .metrics
                .oauth_revocations
                .with_label_values(&["refresh_reuse"])
                .inc();
            Err(OAuthError::invalid_grant(
                "The refresh token was already used; every token of this grant is now revoked.",
            ))
        }
        RefreshExchange::ScopeRefused(why) => Err(OAuthError::invalid_scope(why)),
        RefreshExchange::Refused(why) => {
            audit("refused", None);
            Err(OAuthError::invalid_grant(format!(
                "The refresh token is invalid, expired or revoked ({why})."
            )))
        }
    }
}

/// A code or refresh token presented a second time: the whole grant was revoked (RFC 6749
/// §10.5, §10.4), which the audit log records as a warning.
fn audit_reuse(event: &'static str, application_id: i64, revoked: usize, message: &'static str) {
    tracing::warn!(
        target: "merchantd::audit",
        event,
        application_id,
        revoked_access_tokens = revoked,
        outcome = "family_revoked",
        "{message}"
    );
}
