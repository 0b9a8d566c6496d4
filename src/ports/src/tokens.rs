//! The authorization server's records, as the token actors keep them.

use domain::oauth::grants::authorization_code::{CodeExchange, CodeGrant};
use domain::oauth::grants::refresh_token::{RefreshExchange, RefreshGrant};
use domain::oauth::token::{
    AccessTokenRecord, Client, CodeFacts, ConnectedGrant, FamilyUse, GrantsOf, NewFamily,
    NewSession, SessionPurpose, SessionRecord, SignInCandidate, TokenInfo,
};

use crate::Pending;

/// The authorization server's records, as the token actors keep them: each call is one
/// transaction, committed before it answers (a grant's only when its outcome says so). Calls
/// that judge expiry read the clock once their transaction has begun, so a wait for a
/// connection never makes "now" stale.
pub trait TokenStore: Send + Sync {
    /// Refresh grants as one batch: the outcome of each, `None` for one the batch leaves to a
    /// transaction of its own.
    fn rotate_batch<'a>(
        &'a self,
        grants: &'a [&'a RefreshGrant],
    ) -> Pending<'a, Vec<Option<RefreshExchange>>>;
    /// One grant's rules in its own transaction, kept only when its outcome says so (a
    /// refused code stays usable).
    fn grant<'a>(&'a self, grant: &'a Grant) -> Pending<'a, Granted>;
    /// Whether this process hears every other process's revocations as they commit.
    fn hears_revocations(&self) -> bool;
    fn access_token<'a>(&'a self, hash: &'a str) -> Pending<'a, Option<AccessTokenRecord>>;
    /// Revokes a token of `application_id` (RFC 7009); the access-token hashes it revoked.
    fn revoke_token<'a>(&'a self, hash: &'a str, application_id: i64) -> Pending<'a, Vec<String>>;
    fn token_info<'a>(
        &'a self,
        hash: &'a str,
        application_id: i64,
    ) -> Pending<'a, Option<TokenInfo>>;
    fn client<'a>(&'a self, client_id: &'a str) -> Pending<'a, Option<Client>>;
    fn sign_in_candidates<'a>(&'a self, email: &'a str) -> Pending<'a, Vec<SignInCandidate>>;
    fn create_session<'a>(&'a self, hash: &'a str, session: &'a NewSession) -> Pending<'a, ()>;
    fn session<'a>(
        &'a self,
        hash: &'a str,
        purpose: SessionPurpose,
    ) -> Pending<'a, Option<SessionRecord>>;
    fn end_session<'a>(&'a self, hash: &'a str) -> Pending<'a, ()>;
    fn connected_grants(&self, of: GrantsOf, now: i64) -> Pending<'_, Vec<ConnectedGrant>>;
    /// Revokes one family of `of`: its application, employee and access-token hashes, or
    /// `None` (nothing changed) when `of` has no such grant.
    fn revoke_grant<'a>(
        &'a self,
        of: GrantsOf,
        family_id: &'a str,
    ) -> Pending<'a, Option<(i64, i64, Vec<String>)>>;
    fn issue_code<'a>(&'a self, code: NewCode<'a>) -> Pending<'a, ()>;
    fn issue_access_token<'a>(
        &'a self,
        family: &'a NewFamily,
        access_hash: &'a str,
        expires_at: i64,
    ) -> Pending<'a, ()>;
    /// Deletes tombstones that expired before `before`; how many.
    fn purge_expired(&self, before: i64) -> Pending<'_, u64>;
    /// When families' access tokens were last used.
    fn record_uses<'a>(&'a self, uses: &'a [FamilyUse]) -> Pending<'a, ()>;
}

/// A grant to run in the shard that owns its credential.
pub enum Grant {
    Code(CodeGrant),
    Refresh(RefreshGrant),
}

pub enum Granted {
    Code(CodeExchange),
    Refresh(RefreshExchange),
}

/// A family started with its authorization code.
#[derive(Clone, Copy)]
pub struct NewCode<'a> {
    pub family: &'a NewFamily,
    pub code_hash: &'a str,
    pub facts: &'a CodeFacts,
    pub expires_at: i64,
}
