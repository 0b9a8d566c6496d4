//! What the actors need from storage, one small trait per user of it: activation
//! ([`StateStore`]), a group's write ([`GroupStore`], [`OpenGroup`]), a store's stock
//! ([`StockStore`]), finished sales records ([`HistoryStore`]) and the authorization server's
//! records ([`TokenStore`]). The database implements them in `actors/storage.rs` and
//! `actors/token_storage.rs`, choosing its write protocol inside `db/`; `actors/memory.rs`
//! implements the merchant's in memory for the actors' own tests.
//!
//! The traits are object-safe (boxed futures): a supervisor holds `Arc<dyn MerchantStorage>`
//! and pays one allocation per call, which is per group or per load, never per record.

use std::any::Any;
use std::future::Future;
use std::pin::Pin;

use super::merchant::state::MerchantState;
use super::resource::Kind;
use super::store::StockMap;
use domain::batch::Idempotency;
use domain::event::NewEvent;
use domain::oauth::grants::authorization_code::{CodeExchange, CodeGrant};
use domain::oauth::grants::refresh_token::{RefreshExchange, RefreshGrant};
use domain::sales_totals::Deltas;
use domain::stock::StockMove;
use domain::token::{
    AccessTokenRecord, Client, CodeFacts, ConnectedGrant, FamilyUse, GrantsOf, NewFamily,
    NewSession, SessionPurpose, SessionRecord, SignInCandidate, TokenInfo,
};
use storage::idempotency::StoredAnswer;
use storage::{DbError, SalesFilter, Tx};

/// A storage call's answer, later.
pub type Pending<'a, T> = Pin<Box<dyn Future<Output = Result<T, DbError>> + Send + 'a>>;

/// A group's writing, later: it runs inside its supervisor, never sent to another thread.
pub type Writing<'a, T> = Pin<Box<dyn Future<Output = Result<T, DbError>> + 'a>>;

/// Writing what a write changed, in a database transaction (the rows of its records).
pub trait Persist {
    fn persist<'a>(&'a self, tx: &'a mut Tx, merchant_id: i64) -> Writing<'a, ()>;
}

/// Activation and reload: a merchant's state as stored.
pub trait StateStore: Send + Sync {
    /// `blank` (a state with nothing loaded, made by the supervisor with its settings)
    /// filled with what is stored for its merchant.
    fn load(&self, blank: MerchantState) -> Pending<'static, MerchantState>;
    /// The merchant's version as stored (what another process may have moved on).
    fn version(&self, merchant_id: i64) -> Pending<'static, i64>;
    /// Whether this process hears every other process's writes as they commit.
    fn hears_others(&self) -> bool;
}

/// Opening one group of writes on a merchant.
pub trait GroupStore: Send + Sync {
    /// `None` when storage is ahead of the cached state at version `expected` (another
    /// process wrote): reload first.
    fn open_group(
        &self,
        merchant_id: i64,
        expected: i64,
    ) -> Pending<'static, Option<Box<dyn OpenGroup>>>;
}

/// One group's write, open: nothing is kept until `commit`.
pub trait OpenGroup: Send {
    /// The merchant's version once this group commits.
    fn version(&self) -> i64;
    /// Identifiers for the group's new records.
    fn allocate_ids(&mut self, n: usize) -> Pending<'_, Vec<i64>>;
    /// The answer kept for an `Idempotency-Key`.
    fn stored_answer<'a>(
        &'a mut self,
        key: &'a Idempotency,
        now: i64,
    ) -> Pending<'a, Option<StoredAnswer>>;
    /// Writes into the group; the merchant's last event number after it.
    fn write<'a>(&'a mut self, writes: Writes<'a>) -> Writing<'a, i64>;
    /// Writes into a part of the group that is taken back alone if it fails (the inner
    /// error); the outer error loses the group.
    fn write_part<'a>(&'a mut self, writes: Writes<'a>) -> Writing<'a, Result<i64, DbError>>;
    fn commit(self: Box<Self>) -> Pending<'static, ()>;
    /// Ends the group without keeping anything (nothing changed, or it failed).
    fn rollback(self: Box<Self>) -> Pin<Box<dyn Future<Output = ()> + Send>>;
}

/// What one write (or a group of them) keeps.
pub struct Writes<'a> {
    pub merchant_id: i64,
    pub records: Vec<&'a dyn Persist>,
    /// Answers to keep for their `Idempotency-Key`.
    pub answers: Vec<(&'a Idempotency, String)>,
    pub moves: &'a [StockMove],
    /// What the writes add to the sales running totals.
    pub totals: &'a Deltas,
    pub events: &'a [NewEvent],
    /// The merchant's last event number before these.
    pub after_event: i64,
    pub now: i64,
    /// The state these writes leave (for storage that keeps states rather than rows).
    pub state: &'a MerchantState,
}

/// A store's stock as stored (a StoreActor's start).
pub trait StockStore: Send + Sync {
    fn store_stock(&self, merchant_id: i64, store_id: i64) -> Pending<'static, StockMap>;
}

/// Sales records past the cached window. The records come back as `Vec<R>` of the kind's
/// record type, boxed: the kinds are a closed set (`history::Kind`), the callers generic.
pub trait HistoryStore: Send + Sync {
    fn find(&self, kind: Kind, merchant_id: i64, ids: Vec<i64>) -> Pending<'static, Found>;
    fn query(&self, kind: Kind, merchant_id: i64, filter: SalesFilter) -> Pending<'static, Found>;
    /// The records of `kind` tills made under these `clientId`s.
    fn made_by_clients(
        &self,
        kind: Kind,
        merchant_id: i64,
        client_ids: Vec<String>,
    ) -> Pending<'static, Vec<i64>>;
}

/// Records of one history kind, as `Vec<R>`.
pub type Found = Box<dyn Any + Send>;

/// Everything a merchant's actors keep and read.
pub trait MerchantStorage: StateStore + GroupStore + StockStore + HistoryStore {}

impl<T: StateStore + GroupStore + StockStore + HistoryStore> MerchantStorage for T {}

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
