//! `grant_type=refresh_token` (RFC 6749 §6) with rotation, an idempotent retry grace and family
//! revocation on reuse (RFC 9700 §4.14.2): the rules, over the storage steps of one
//! transaction. Rotation is required only for public clients (§4.14.2); the old Shopwave
//! libraries present their first refresh token again on every refresh, so a confidential
//! client whose merchant turned `legacy_clients` on keeps its refresh token (bound to its
//! secret) and only a fresh access token is issued.

use super::FreshPair;
use crate::crypto::sha256_hex;
use crate::oauth::seal::{self, SealedPair};
use crate::oauth::token::{FamilyRecord, LiveRefresh, NewPair, Spent, TokenSteps};
use crate::{Role, ScopeSet};

/// A token request with a refresh token, as the token endpoint parsed it. The clear refresh
/// token is kept only to seal (and later open) its successor for an idempotent retry.
pub struct RefreshGrant {
    pub presented: String,
    pub application_id: i64,
    pub grace_millis: i64,
    pub requested: Option<ScopeSet>,
    pub fresh: FreshPair,
    /// Whether the presented refresh token is replaced (false: it stays valid, see above).
    pub rotate: bool,
}

#[derive(Debug)]
pub enum RefreshExchange {
    /// The token was taken and the fresh pair stored with this access scope.
    Rotated {
        family: FamilyRecord,
        scope: String,
    },
    /// A token kept (no rotation): a fresh access token in its family, with this scope.
    Renewed {
        family: FamilyRecord,
        scope: String,
    },
    /// The immediate predecessor presented again inside the grace: the same successor.
    Retry {
        family: FamilyRecord,
        successor: SealedPair,
    },
    /// Reuse outside the grace, or of an older generation: the family is now revoked.
    Reused {
        revoked_access_hashes: Vec<String>,
    },
    /// The requested scope is wider than the grant (nothing was taken).
    ScopeRefused(String),
    Refused(String),
}

impl RefreshExchange {
    /// Whether the transaction the exchange ran in is to be committed.
    pub fn commits(&self) -> bool {
        matches!(
            self,
            RefreshExchange::Rotated { .. }
                | RefreshExchange::Renewed { .. }
                | RefreshExchange::Reused { .. }
        )
    }
}

pub async fn rotate<S: TokenSteps>(
    steps: &mut S,
    grant: &RefreshGrant,
    now: i64,
) -> Result<RefreshExchange, S::Error> {
    let hash = sha256_hex(&grant.presented);
    let live = if grant.rotate {
        steps.take_refresh(&hash, now).await?
    } else {
        steps.live_refresh(&hash, now).await?
    };
    match live {
        Some(family_id) => issue(steps, grant, &hash, &family_id, now).await,
        None => match steps.spent_refresh(&hash).await? {
            None => Ok(RefreshExchange::Refused(
                "the refresh token is unknown".into(),
            )),
            Some(Spent { used_at: None, .. }) => {
                Ok(RefreshExchange::Refused("the refresh token expired".into()))
            }
            Some(spent) => replay(steps, grant, spent, now).await,
        },
    }
}

/// A live token presented: a fresh access token, and, when rotating, a fresh refresh token
/// that replaces the presented one (sealed under it for an idempotent retry).
async fn issue<S: TokenSteps>(
    steps: &mut S,
    grant: &RefreshGrant,
    hash: &str,
    family_id: &str,
    now: i64,
) -> Result<RefreshExchange, S::Error> {
    let (family, scope) = match usable(steps, grant, family_id, now).await? {
        Ok(usable) => usable,
        Err(refused) => return Ok(refused),
    };
    let mut pair = grant.fresh.stored.clone();
    pair.access_scope = scope.clone();
    if !grant.rotate {
        steps.insert_access(&family, &pair, now).await?;
        return Ok(RefreshExchange::Renewed { family, scope });
    }
    steps.insert_pair(&family, &pair, now).await?;
    let successor = SealedPair {
        access_token: grant.fresh.access.clone(),
        refresh_token: grant.fresh.refresh.clone(),
        access_expires_at: pair.access_expires_at,
        scope: scope.clone(),
    };
    steps
        .seal_successor(hash, &seal::seal(&grant.presented, &successor))
        .await?;
    Ok(RefreshExchange::Rotated { family, scope })
}

/// The family of a live refresh token and the scope a fresh access token gets, or why the
/// grant is refused.
async fn usable<S: TokenSteps>(
    steps: &mut S,
    grant: &RefreshGrant,
    family_id: &str,
    now: i64,
) -> Result<Result<(FamilyRecord, String), RefreshExchange>, S::Error> {
    let Some(family) = steps.family(family_id).await? else {
        return Ok(Err(RefreshExchange::Refused(
            "the token has no grant".into(),
        )));
    };
    let role = if family.revoked || family.application_id != grant.application_id {
        None // judged refused below without reading the role
    } else {
        steps.active_role(&family, now).await?
    };
    Ok(judge(grant, &family, role)
        .map(|scope| (family, scope))
        .map_err(RefreshExchange::from))
}

/// Why a live token's family may not buy a fresh pair.
enum Unusable {
    Refused(&'static str),
    Scope(String),
}

impl From<Unusable> for RefreshExchange {
    fn from(why: Unusable) -> Self {
        match why {
            Unusable::Refused(why) => RefreshExchange::Refused(why.into()),
            Unusable::Scope(why) => RefreshExchange::ScopeRefused(why),
        }
    }
}

/// Whether a live token's family may buy a fresh pair, given its employee's active role: the
/// access scope it gets, or why not.
fn judge(
    grant: &RefreshGrant,
    family: &FamilyRecord,
    role: Option<i64>,
) -> Result<String, Unusable> {
    if family.revoked {
        return Err(Unusable::Refused("the grant was revoked"));
    }
    if family.application_id != grant.application_id {
        return Err(Unusable::Refused("the token was issued to another client"));
    }
    let Some(role) = role else {
        return Err(Unusable::Refused("the user can no longer sign in"));
    };
    granted_scope(&family.scope, role, grant.requested).map_err(Unusable::Scope)
}

/// Rotates a batch of refresh tokens presented at once, in one transaction and in three
/// statements whatever the batch's size (read the live tokens with their families and roles,
/// take them with their sealed successors, insert the fresh pairs), where one grant at a time
/// costs seven. The answers come in the order of `grants`: `Some` where the batch decided,
/// `None` for a grant left to [`rotate`] after this batch commits: a token that is not live
/// (unknown, expired or spent: the replay rules read more), one another process took in
/// between, a second grant of the same token, and a token that is kept rather than rotated.
pub async fn rotate_batch<S: TokenSteps>(
    steps: &mut S,
    grants: &[&RefreshGrant],
    now: i64,
) -> Result<Vec<Option<RefreshExchange>>, S::Error> {
    let hashes: Vec<String> = grants.iter().map(|g| sha256_hex(&g.presented)).collect();
    let mut answers: Vec<Option<RefreshExchange>> = grants.iter().map(|_| None).collect();
    let mut seen = std::collections::HashSet::new();
    let batched: Vec<usize> = (0..grants.len())
        .filter(|&i| grants[i].rotate && seen.insert(hashes[i].as_str()))
        .collect();
    let looked: Vec<&str> = batched.iter().map(|&i| hashes[i].as_str()).collect();
    let live: std::collections::HashMap<String, LiveRefresh> = steps
        .live_refreshes(&looked, now)
        .await?
        .into_iter()
        .map(|live| (live.hash.clone(), live))
        .collect();
    let mut issuing = Vec::new();
    for i in batched {
        let Some(found) = live.get(&hashes[i]) else {
            continue;
        };
        match judge(grants[i], &found.family, found.role) {
            Err(why) => answers[i] = Some(why.into()),
            Ok(scope) => {
                let mut pair = grants[i].fresh.stored.clone();
                pair.access_scope = scope.clone();
                let successor = SealedPair {
                    access_token: grants[i].fresh.access.clone(),
                    refresh_token: grants[i].fresh.refresh.clone(),
                    access_expires_at: pair.access_expires_at,
                    scope,
                };
                let sealed = seal::seal(&grants[i].presented, &successor);
                issuing.push((i, &found.family, pair, successor.scope, sealed));
            }
        }
    }
    let taking: Vec<(&str, String)> = issuing
        .iter()
        .map(|(i, _, _, _, sealed)| (hashes[*i].as_str(), sealed.clone()))
        .collect();
    let taken: std::collections::HashSet<String> = steps
        .take_refreshes(&taking, now)
        .await?
        .into_iter()
        .collect();
    issuing.retain(|(i, ..)| taken.contains(&hashes[*i]));
    let pairs: Vec<(&FamilyRecord, &NewPair)> = issuing
        .iter()
        .map(|(_, family, pair, ..)| (*family, pair))
        .collect();
    steps.insert_pairs(&pairs, now).await?;
    for (i, family, _, scope, _) in issuing {
        answers[i] = Some(RefreshExchange::Rotated {
            family: family.clone(),
            scope,
        });
    }
    Ok(answers)
}

/// A used token presented again: the same successor within the grace (when that successor is
/// itself still unused), otherwise the whole family is revoked.
async fn replay<S: TokenSteps>(
    steps: &mut S,
    grant: &RefreshGrant,
    spent: Spent,
    now: i64,
) -> Result<RefreshExchange, S::Error> {
    let Some(family) = steps.family(&spent.family_id).await? else {
        return Ok(RefreshExchange::Refused("the token has no grant".into()));
    };
    let in_grace = spent
        .used_at
        .is_some_and(|used| now - used < grant.grace_millis);
    let successor = spent
        .successor_sealed
        .as_deref()
        .filter(|_| in_grace && !family.revoked && family.application_id == grant.application_id)
        .and_then(|sealed| seal::open(&grant.presented, sealed));
    if let Some(successor) = successor {
        if steps
            .refresh_unused(&sha256_hex(&successor.refresh_token))
            .await?
        {
            return Ok(RefreshExchange::Retry { family, successor });
        }
    }
    if family.revoked {
        return Ok(RefreshExchange::Refused("the grant was revoked".into()));
    }
    Ok(RefreshExchange::Reused {
        revoked_access_hashes: steps.revoke_family(&family.id, now).await?,
    })
}

/// The access scope of a refreshed pair: what was asked (never wider than the grant), capped
/// by the user's role as it is now.
pub fn granted_scope(
    family_scope: &str,
    role_id: i64,
    requested: Option<ScopeSet>,
) -> Result<String, String> {
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
}
