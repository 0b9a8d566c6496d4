//! `grant_type=authorization_code` (RFC 6749 §4.1.3, PKCE RFC 7636 §4.6).

use super::FreshPair;
use crate::actors::token::ExchangeCode;
use crate::crypto::sha256_hex;
use crate::db::oauth::{ApplicationRecord, CodeExchange};
use crate::http::envelope::Reply;
use crate::http::AppState;
use crate::oauth::error::OAuthError;
use crate::oauth::params::Params;
use crate::oauth::token::token_reply;

const INVALID_CODE: &str = "The authorization code is invalid, expired or already used.";

pub async fn exchange(
    state: &AppState,
    app: &ApplicationRecord,
    params: &Params,
) -> Result<(Reply, &'static str), OAuthError> {
    let code = params.require("code")?;
    let pair = FreshPair::new(
        state.settings.access_token_ttl_secs,
        state.settings.refresh_token_ttl_secs,
    );
    let outcome = state
        .oauth
        .actors
        .exchange_code(ExchangeCode {
            code_hash: sha256_hex(code),
            application_id: app.id,
            redirect_uri: params.get("redirect_uri").map(str::to_owned),
            code_verifier: params.get("code_verifier").map(str::to_owned),
            pair: pair.stored.clone(),
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
                &pair.access,
                &pair.refresh,
                pair.expires_in(),
                &family.scope,
            );
            Ok((reply, "authorization_code"))
        }
        CodeExchange::Reused {
            revoked_access_hashes,
        } => {
            for hash in &revoked_access_hashes {
                state.tokens.evict(hash).await;
            }
            tracing::warn!(
                target: "merchantd::audit",
                event = "code_reuse",
                application_id = app.id,
                revoked_access_tokens = revoked_access_hashes.len(),
                outcome = "family_revoked",
                "an authorization code was presented again; its tokens are revoked"
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
