//! The fleet's storage as the operator's realm asks for it: operator tokens, merchants
//! created, suspended, deleted and listed across pods, a merchant's archive out and in, and a
//! merchant's move between pods.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;

use domain::fleet::archive::Totals;
use domain::fleet::operator::{MerchantSummary, OperatorToken};
use domain::fleet::tenant::{AppliedTenant, Manifest};
use domain::Failure;
use tokio::sync::mpsc;

/// A fleet call's answer, later.
pub type Answer<'a, T> = Pin<Box<dyn Future<Output = Result<T, Failure>> + Send + 'a>>;

/// What the operator's realm keeps in the fleet's databases.
pub trait FleetStore: Send + Sync {
    /// The operator token with this hash, live or not.
    fn operator_token<'a>(&'a self, hash: &'a str) -> Answer<'a, Option<OperatorToken>>;
    fn insert_operator_token<'a>(
        &'a self,
        hash: &'a str,
        token: &'a OperatorToken,
    ) -> Answer<'a, ()>;
    /// Creates merchants (their passwords already hashed) in the pod holding fewest, in one
    /// transaction there, and records where they are: each created, or why not (a key or
    /// client id taken in any pod).
    fn create_merchants<'a>(
        &'a self,
        manifests: &'a [&'a Manifest],
        pbkdf2_iterations: u32,
    ) -> Answer<'a, Vec<Result<AppliedTenant, String>>>;
    /// Suspends (since `since`) or resumes (`None`) these merchants; the ids that exist.
    fn set_suspended<'a>(&'a self, ids: &'a [i64], since: Option<i64>) -> Answer<'a, Vec<i64>>;
    /// Suspends these merchants now and has their rows removed after `after`; the ids that
    /// exist, with that time.
    fn schedule_deletion<'a>(&'a self, ids: &'a [i64], after: i64) -> Answer<'a, Vec<(i64, i64)>>;
    /// Removes every row of the merchants whose deletion time has passed; how many went.
    fn purge_due(&self, now: i64) -> Answer<'_, usize>;
    /// A page of merchants by id: those after `after`, at most `limit` (of `ids` when given).
    fn merchants<'a>(
        &'a self,
        ids: Option<&'a [i64]>,
        after: i64,
        limit: i64,
    ) -> Answer<'a, Vec<MerchantSummary>>;
    /// The merchant's archive as a stream of chunks; `None` when there is no such merchant.
    fn export(&self, merchant_id: i64) -> Answer<'_, Option<mpsc::Receiver<Vec<u8>>>>;
    /// Imports the archive in the file at `path`: every row or none (see docs/operator.md).
    fn import<'a>(
        &'a self,
        path: &'a Path,
        pod: Option<&'a str>,
    ) -> Answer<'a, Result<Imported, ImportRefused>>;
    /// Moves a merchant to pod `to` while every replica keeps serving it, its archive kept in
    /// the folder `scratch` meanwhile.
    fn move_to_pod<'a>(
        &'a self,
        merchant_id: i64,
        to: &'a str,
        scratch: &'a Path,
    ) -> Pin<Box<dyn Future<Output = Result<PodMoved, MoveError>> + Send + 'a>>;
}

/// Why an archive was not imported. Nothing of it was stored.
#[derive(Debug, thiserror::Error)]
pub enum ImportRefused {
    /// Not an archive this server can take: where and why.
    #[error("{0}")]
    Invalid(String),
    /// Its merchant, one of its keys or its ids are taken here.
    #[error("{0}")]
    Conflict(String),
}

/// A merchant imported.
#[derive(Debug, Clone)]
pub struct Imported {
    pub merchant_id: i64,
    pub key: String,
    pub totals: Totals,
}

/// Why a merchant did not move. In each case the source still holds it whole.
#[derive(Debug, thiserror::Error)]
pub enum MoveError {
    /// The target cannot take it (its id or key is there, ids could meet, schemas differ).
    #[error("{0}")]
    Refused(String),
    /// The target's copy read back differs from the source's: the copy was removed again.
    #[error("the copy differs from the source in {0}; it was removed from the target")]
    Differs(String),
    #[error(transparent)]
    Failed(#[from] Failure),
}

/// A merchant moved between pods.
#[derive(Debug, Clone)]
pub struct PodMoved {
    pub merchant_id: i64,
    pub key: String,
    pub from: String,
    pub to: String,
    pub tables: u64,
    pub rows: u64,
    /// How long its writes were held.
    pub held_millis: u128,
    /// From the start to the old pod's rows removed.
    pub millis: u128,
    /// Milliseconds of each step: `pause` (deliveries in flight finish), `copy`, `verify`
    /// (while the merchant is written as usual), `catch-up-ahead` (likewise), `hold` (the
    /// write in progress commits), `catch-up` (under the hold), `switch`, `remove`.
    pub phases: Vec<(&'static str, u128)>,
}
