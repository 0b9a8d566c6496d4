//! `grant_type=refresh_token` (RFC 6749 §6) with rotation, an idempotent retry grace and family
//! revocation on reuse (RFC 9700 §4.14.2).

use super::FreshPair;
use crate::actors::token::Rotate;
use crate::crypto::sha256_hex;
use crate::db::oauth::{ApplicationRecord, RefreshExchange};
use crate::domain::{Role, ScopeSet};
use crate::http::envelope::Reply;
use crate::http::AppState;
use crate::oauth::error::OAuthError;
use crate::oauth::params::Params;
use crate::oauth::seal::{self, SealedPair};
use crate::oauth::token::token_reply;

pub async fn refresh(
    state: &AppState,
    app: &ApplicationRecord,
    params: &Params,
) -> Result<(Reply, &'static str), OAuthError> {
    let presented = params.require("refresh_token")?.to_owned();
    let requested = match params.get("scope") {
        None => None,
        Some(s) => ScopeSet::parse(s)
            .map_err(|unknown| OAuthError::invalid_scope(format!("Unknown scope {unknown}.")))?,
    };
    let pair = FreshPair::new(
        state.settings.access_token_ttl_secs,
        state.settings.refresh_token_ttl_secs,
    );
    let (access, refresh, expires_at) = (
        pair.access.clone(),
        pair.refresh.clone(),
        pair.stored.access_expires_at,
    );
    let sealing_key = presented.clone();
    let opening_key = presented.clone();
    let outcome = state
        .oauth
        .actors
        .rotate(Rotate {
            refresh_hash: sha256_hex(&presented),
            application_id: app.id,
            grace_millis: (state.settings.refresh_retry_grace_secs as i64) * 1000,
            pair: pair.stored.clone(),
            decide: Box::new(move |family_scope, role_id| {
                let granted = ScopeSet::parse(family_scope)
                    .ok()
                    .flatten()
                    .ok_or_else(|| "the stored grant has no scope".to_owned())?;
                let cap = Role::from_id(role_id)
                    .map(Role::highest_scope)
                    .ok_or_else(|| "the user's role is unknown".to_owned())?;
                let wanted = match requested {
                    Some(r) if r.highest() > granted.highest() => {
                        return Err(format!(
                            "The requested scope is wider than the grant ({}).",
                            granted.to_scope_string()
                        ))
                    }
                    Some(r) => r,
                    None => granted,
                };
                Ok(wanted.capped(cap).to_scope_string())
            }),
            seal: Box::new(move |scope| {
                seal::seal(
                    &sealing_key,
                    &SealedPair {
                        access_token: access,
                        refresh_token: refresh,
                        access_expires_at: expires_at,
                        scope: scope.to_owned(),
                    },
                )
            }),
            successor_of: Box::new(move |sealed| {
                seal::open(&opening_key, sealed).map(|p| sha256_hex(&p.refresh_token))
            }),
        })
        .await
        .map_err(|e| {
            tracing::error!(error = %e, "refresh failed");
            OAuthError::server_error()
        })?;
    let audit = |outcome: &str, family_merchant: Option<i64>| {
        tracing::info!(
            target: "merchantd::audit",
            event = "refresh",
            application_id = app.id,
            merchant_id = family_merchant,
            outcome = outcome,
            "refresh token presented"
        );
    };
    match outcome {
        RefreshExchange::Rotated { family, scope } => {
            audit("rotated", Some(family.merchant_id));
            let reply = token_reply(&pair.access, &pair.refresh, pair.expires_in(), &scope);
            Ok((reply, "refresh_token"))
        }
        RefreshExchange::Retry { family, sealed } => {
            let successor = seal::open(&presented, &sealed).ok_or_else(OAuthError::server_error)?;
            audit("retry_within_grace", Some(family.merchant_id));
            let expires_in = super::seconds_until(successor.access_expires_at);
            let reply = token_reply(
                &successor.access_token,
                &successor.refresh_token,
                expires_in,
                &successor.scope,
            );
            Ok((reply, "refresh_token"))
        }
        RefreshExchange::Reused {
            revoked_access_hashes,
        } => {
            for hash in &revoked_access_hashes {
                state.tokens.evict(hash).await;
            }
            tracing::warn!(
                target: "merchantd::audit",
                event = "refresh_reuse",
                application_id = app.id,
                revoked_access_tokens = revoked_access_hashes.len(),
                outcome = "family_revoked",
                "a used refresh token was presented again; its family is revoked"
            );
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
