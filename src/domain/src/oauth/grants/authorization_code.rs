//! `grant_type=authorization_code` (RFC 6749 §4.1.3, PKCE RFC 7636 §4.6): the rules, over the
//! storage steps of one transaction.

use crate::oauth::pkce;
use crate::oauth::token::{FamilyRecord, NewPair, Spent, TokenSteps};

/// A token request for a code, as the token endpoint parsed it.
#[derive(Debug, Clone)]
pub struct CodeGrant {
    pub code_hash: String,
    pub application_id: i64,
    pub redirect_uri: Option<String>,
    pub code_verifier: Option<String>,
    pub pair: NewPair,
}

#[derive(Debug)]
pub enum CodeExchange {
    /// The code was taken and the pair stored.
    Issued(FamilyRecord),
    /// The code had been used before: its family is now revoked.
    Reused { revoked_access_hashes: Vec<String> },
    /// Unknown, expired, revoked, or refused by a check (the code stays usable then).
    Refused(String),
}

impl CodeExchange {
    /// Whether the transaction the exchange ran in is to be committed. A refusal rolls the
    /// take back, so a failed PKCE or redirect check does not burn the code.
    pub fn commits(&self) -> bool {
        !matches!(self, CodeExchange::Refused(_))
    }
}

pub async fn exchange<S: TokenSteps>(
    steps: &mut S,
    grant: &CodeGrant,
    now: i64,
) -> Result<CodeExchange, S::Error> {
    let Some(taken) = steps.take_code(&grant.code_hash, now).await? else {
        return Ok(match steps.spent_code(&grant.code_hash).await? {
            Some(Spent {
                used_at: Some(_),
                family_id,
                ..
            }) => CodeExchange::Reused {
                revoked_access_hashes: steps.revoke_family(&family_id, now).await?,
            },
            Some(_) => CodeExchange::Refused("the code expired".into()),
            None => CodeExchange::Refused("the code is unknown".into()),
        });
    };
    let Some(family) = steps.family(&taken.family_id).await? else {
        return Ok(CodeExchange::Refused("the code has no grant".into()));
    };
    let role = steps.active_role(&family, now).await?;
    let refusal = if family.revoked {
        Some("the grant was revoked".to_owned())
    } else if family.application_id != grant.application_id {
        Some("the code was issued to another client".into())
    } else if role.is_none() {
        Some("the user can no longer sign in".into())
    } else if grant.redirect_uri.as_deref() != Some(taken.facts.redirect_uri.as_str()) {
        Some("redirect_uri differs from the authorization request".into())
    } else {
        pkce::check(
            taken.facts.code_challenge.as_deref(),
            grant.code_verifier.as_deref(),
        )
        .err()
    };
    if let Some(why) = refusal {
        return Ok(CodeExchange::Refused(why));
    }
    let mut pair = grant.pair.clone();
    pair.access_scope = family.scope.clone();
    steps.insert_pair(&family, &pair, now).await?;
    Ok(CodeExchange::Issued(family))
}
