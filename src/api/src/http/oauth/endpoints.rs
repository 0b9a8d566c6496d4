//! Revocation (RFC 7009), introspection (RFC 7662) and server metadata (RFC 8414).

use std::sync::Arc;

use actix_web::http::header::{self, HeaderValue};
use actix_web::{web, HttpRequest, HttpResponse};
use serde_json::json;

use crate::http::envelope::Reply;
use crate::http::oauth::error::OAuthError;
use crate::http::oauth::pages::STYLESHEET;
use crate::http::oauth::token::{admit_client, Admission};
use crate::http::AppState;
use domain::crypto::sha256_hex;
use domain::oauth::token::Client;
use domain::{Failure, Scope};

fn no_store(reply: Reply) -> Reply {
    reply
        .header(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))
        .header(header::PRAGMA, HeaderValue::from_static("no-cache"))
}

/// The authenticated client of a revocation or introspection, and the hash of the token it
/// names.
async fn client_and_token(
    req: &HttpRequest,
    body: &[u8],
    state: &AppState,
) -> Result<(Arc<Client>, String), actix_web::Error> {
    let (app, params) = match admit_client(req, body, state).await {
        Ok(ok) => ok,
        Err(Admission::Limited(e)) => return Err(e.into()),
        Err(Admission::Refused(e)) => return Err(e.into()),
    };
    let token = params.require("token")?;
    Ok((app, sha256_hex(token)))
}

/// Logs a failure of the token actors; the client sees only `server_error`.
fn server_error(what: &'static str) -> impl FnOnce(Failure) -> OAuthError {
    move |e| {
        tracing::error!(error = %e, "{what} failed");
        OAuthError::server_error()
    }
}

/// Revokes a token of the calling client. Unknown tokens and other clients' tokens answer 200
/// too (RFC 7009 §2.2): the answer never says whether a token exists.
pub async fn revoke(
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<AppState>,
) -> Result<Reply, actix_web::Error> {
    let (app, hash) = client_and_token(&req, &body, &state).await?;
    let revoked = state
        .tokens
        .revoke(&hash, app.id)
        .await
        .map_err(server_error("revocation"))?;
    tracing::info!(
        target: "merchantd::audit",
        event = "revoke",
        application_id = app.id,
        revoked_access_tokens = revoked,
        outcome = "ok",
        "revocation requested"
    );
    state
        .metrics
        .oauth_revocations
        .with_label_values(&["revoke_endpoint"])
        .inc();
    Ok(no_store(Reply::ok()))
}

/// Describes a live token of the calling client; anything else is `{"active": false}`.
pub async fn introspect(
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<AppState>,
) -> Result<Reply, actix_web::Error> {
    let (app, hash) = client_and_token(&req, &body, &state).await?;
    let info = state
        .tokens
        .introspect(&hash, app.id)
        .await
        .map_err(server_error("introspection"))?;
    let reply = match info {
        None => Reply::ok().field("active", false),
        Some(info) => Reply::ok()
            .field("active", true)
            .field("scope", info.scope)
            .field("client_id", &app.client_id)
            .field(
                "token_type",
                if info.kind == "access_token" {
                    "Bearer"
                } else {
                    "refresh_token"
                },
            )
            .field("exp", info.expires_at / 1000)
            .field("iat", info.issued_at / 1000)
            .field("sub", info.family.employee_id.to_string())
            .field("merchant_id", info.family.merchant_id),
    };
    Ok(no_store(reply))
}

pub async fn metadata(state: web::Data<AppState>) -> Reply {
    let issuer = state.settings.public_auth_url();
    let scopes: Vec<&str> = Scope::ALL.iter().map(|s| s.as_str()).collect();
    Reply::ok()
        .field("issuer", &issuer)
        .field(
            "authorization_endpoint",
            format!("{issuer}/oauth/authorize"),
        )
        .field("token_endpoint", format!("{issuer}/oauth/token"))
        .field("revocation_endpoint", format!("{issuer}/oauth/revoke"))
        .field(
            "introspection_endpoint",
            format!("{issuer}/oauth/introspect"),
        )
        .field("response_types_supported", json!(["code"]))
        .field(
            "grant_types_supported",
            json!(["authorization_code", "refresh_token"]),
        )
        .field("code_challenge_methods_supported", json!(["S256"]))
        .field("scopes_supported", scopes)
        .field(
            "token_endpoint_auth_methods_supported",
            json!(["client_secret_basic", "client_secret_post"]),
        )
        .field(
            "revocation_endpoint_auth_methods_supported",
            json!(["client_secret_basic", "client_secret_post"]),
        )
        .field(
            "introspection_endpoint_auth_methods_supported",
            json!(["client_secret_basic", "client_secret_post"]),
        )
}

pub async fn stylesheet() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/css; charset=utf-8")
        .insert_header((
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=86400"),
        ))
        .body(STYLESHEET)
}
