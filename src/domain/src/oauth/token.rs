//! OAuth records as the authorization server reasons about them, and [`TokenSteps`]: the
//! storage steps its grants are made of. The grants' rules live in `oauth::grants`; the storage
//! layer implements the steps on its transaction handle; the token actors run one inside the
//! other. Only hashes of codes and tokens ever appear here.

/// A registered, live application as a client of the authorization server.
#[derive(Debug, Clone)]
pub struct Client {
    pub merchant_id: i64,
    pub id: i64,
    pub client_id: String,
    pub name: String,
    pub secret_hash: String,
    pub redirect_uris: Vec<String>,
    /// Its merchant lets it use the old Shopwave clients' conventions (`legacy_clients`).
    pub legacy: bool,
}

/// An employee who might be signing in with an email.
#[derive(Debug, Clone)]
pub struct SignInCandidate {
    pub merchant_id: i64,
    pub employee_id: i64,
    pub role_id: i64,
    pub password_hash: Option<String>,
    pub exit_date: Option<i64>,
}

/// A signed-in browser session, with the employee's current role.
#[derive(Debug, Clone)]
pub struct SessionRecord {
    pub merchant_id: i64,
    pub employee_id: i64,
    pub email: String,
    pub role_id: i64,
    pub exit_date: Option<i64>,
}

/// A sign-in session about to be stored (under the hash of its cookie's value).
#[derive(Debug, Clone, Copy)]
pub struct NewSession {
    pub merchant_id: i64,
    pub employee_id: i64,
    pub purpose: SessionPurpose,
    pub expires_at: i64,
}

/// What a sign-in session is for. A session serves only its own page, so a consent session
/// cannot manage connected applications and an account session cannot approve a consent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionPurpose {
    /// Between the sign-in and the consent page of `/oauth/authorize` (used once).
    Consent,
    /// The connected-applications page, `/account`.
    Account,
}

impl SessionPurpose {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionPurpose::Consent => "consent",
            SessionPurpose::Account => "account",
        }
    }
}

/// Whose grants a connected-applications request concerns: one employee's, or (an owner's
/// view) every employee's of the merchant. Always within one merchant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GrantsOf {
    pub merchant_id: i64,
    /// `None`: every employee of the merchant.
    pub employee_id: Option<i64>,
}

/// A live grant as the connected-applications page shows it: a token family that is not
/// revoked and still holds a live access or refresh token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectedGrant {
    pub family_id: String,
    pub application_id: i64,
    pub application_name: String,
    pub employee_id: i64,
    pub employee_email: String,
    /// First and last name, when the employee has them.
    pub employee_name: Option<String>,
    pub scope: String,
    pub authorized_at: i64,
    /// When an access token of it was last presented (to about a minute); `None`: never.
    pub last_used_at: Option<i64>,
}

/// A grant just revoked from the connected-applications page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevokedGrant {
    pub application_id: i64,
    pub employee_id: i64,
    /// Access tokens that stopped working (now evicted from the cache).
    pub access_tokens: usize,
}

/// What an access token grants, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessTokenRecord {
    pub family_id: String,
    pub merchant_id: i64,
    pub employee_id: i64,
    pub application_id: i64,
    pub role_id: i64,
    pub scope: String,
    pub expires_at: i64,
    /// The employee's exit date: a token stops working once it has passed.
    pub exit_date: Option<i64>,
    /// The operator suspended the token's merchant (docs/operator.md): refused with 403.
    pub suspended: bool,
}

/// A use of a token family's access tokens, for "last used" on the connected-applications
/// page; the merchant says which pod holds the family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FamilyUse {
    pub family_id: String,
    pub merchant_id: i64,
    /// Epoch ms.
    pub at: i64,
}

/// Everything a new token family needs.
#[derive(Debug, Clone)]
pub struct NewFamily {
    pub id: String,
    pub merchant_id: i64,
    pub employee_id: i64,
    pub application_id: i64,
    pub scope: String,
}

/// Whom an operator's grant is for: a merchant's application acting for one of its live
/// employees, with the role that caps the scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GrantSubject {
    pub merchant_id: i64,
    pub application_id: i64,
    pub employee_id: i64,
    pub role_id: i64,
}

/// A family as stored.
#[derive(Debug, Clone)]
pub struct FamilyRecord {
    pub id: String,
    pub merchant_id: i64,
    pub employee_id: i64,
    pub application_id: i64,
    pub scope: String,
    pub revoked: bool,
}

/// The hashes and lifetimes of a pair about to be issued.
#[derive(Debug, Clone)]
pub struct NewPair {
    pub access_hash: String,
    pub access_expires_at: i64,
    pub access_scope: String,
    pub refresh_hash: String,
    pub refresh_expires_at: i64,
}

/// The stored facts about a code that the grant checks before accepting it.
#[derive(Debug, Clone)]
pub struct CodeFacts {
    pub redirect_uri: String,
    pub code_challenge: Option<String>,
}

/// A code just taken (marked used): its family and facts.
#[derive(Debug, Clone)]
pub struct TakenCode {
    pub family_id: String,
    pub facts: CodeFacts,
}

/// A code or refresh token that could not be taken, as stored.
#[derive(Debug, Clone)]
pub struct Spent {
    /// When it was used; `None` when it is unused but expired.
    pub used_at: Option<i64>,
    pub family_id: String,
    /// For a refresh token: the successor pair sealed under it, kept for idempotent retries.
    pub successor_sealed: Option<String>,
}

/// What introspection may say about a token.
#[derive(Debug, Clone)]
pub struct TokenInfo {
    pub kind: &'static str,
    pub family: FamilyRecord,
    pub scope: String,
    pub issued_at: i64,
    pub expires_at: i64,
}

/// The storage steps of the code and refresh grants, inside one transaction. "Take" is one
/// conditional statement (`... WHERE used_at IS NULL AND expires_at > now`) whose row count
/// decides who won, so the single-use guarantee holds across processes.
#[allow(async_fn_in_trait)]
pub trait TokenSteps {
    type Error;

    /// Marks an unused, unexpired code used; `None` when it is not such a code.
    async fn take_code(&mut self, hash: &str, now: i64) -> Result<Option<TakenCode>, Self::Error>;
    /// A code that could not be taken: used before, or expired. `None` when unknown.
    async fn spent_code(&mut self, hash: &str) -> Result<Option<Spent>, Self::Error>;
    /// Marks an unused, unexpired refresh token used; its family id.
    async fn take_refresh(&mut self, hash: &str, now: i64) -> Result<Option<String>, Self::Error>;
    /// The family of an unused, unexpired refresh token, leaving it unused (no rotation).
    async fn live_refresh(&mut self, hash: &str, now: i64) -> Result<Option<String>, Self::Error>;
    /// A refresh token that could not be taken. `None` when unknown.
    async fn spent_refresh(&mut self, hash: &str) -> Result<Option<Spent>, Self::Error>;
    /// True while a refresh token exists and is unused.
    async fn refresh_unused(&mut self, hash: &str) -> Result<bool, Self::Error>;
    /// Keeps the sealed successor pair with the refresh token that bought it.
    async fn seal_successor(&mut self, hash: &str, sealed: &str) -> Result<(), Self::Error>;
    async fn family(&mut self, id: &str) -> Result<Option<FamilyRecord>, Self::Error>;
    /// The employee's role while they may still use tokens (not deleted, not past their exit).
    async fn active_role(
        &mut self,
        family: &FamilyRecord,
        now: i64,
    ) -> Result<Option<i64>, Self::Error>;
    async fn insert_pair(
        &mut self,
        family: &FamilyRecord,
        pair: &NewPair,
        now: i64,
    ) -> Result<(), Self::Error>;
    /// Only the access token of a pair (its refresh token is kept, not replaced).
    async fn insert_access(
        &mut self,
        family: &FamilyRecord,
        pair: &NewPair,
        now: i64,
    ) -> Result<(), Self::Error>;
    /// Revokes a family and every access token in it; the access hashes, for cache eviction.
    async fn revoke_family(&mut self, id: &str, now: i64) -> Result<Vec<String>, Self::Error>;

    // Steps of a batch of refresh grants: each one statement however many grants it carries,
    // so concurrent grants cost a transaction together (the way writes group-commit).

    /// The unused, unexpired refresh tokens among `hashes`, each with its family and its
    /// employee's active role (the facts [`TokenSteps::family`] and
    /// [`TokenSteps::active_role`] give one grant at a time).
    async fn live_refreshes(
        &mut self,
        hashes: &[&str],
        now: i64,
    ) -> Result<Vec<LiveRefresh>, Self::Error>;
    /// Takes each `(hash, sealed successor)` that is still unused and unexpired, keeping its
    /// sealed successor; the hashes taken (a token another process took meanwhile is absent).
    async fn take_refreshes(
        &mut self,
        taken: &[(&str, String)],
        now: i64,
    ) -> Result<Vec<String>, Self::Error>;
    /// Inserts each pair into its family.
    async fn insert_pairs(
        &mut self,
        pairs: &[(&FamilyRecord, &NewPair)],
        now: i64,
    ) -> Result<(), Self::Error>;
}

/// A live refresh token as a batch of grants reads it.
#[derive(Debug, Clone)]
pub struct LiveRefresh {
    pub hash: String,
    pub family: FamilyRecord,
    /// The employee's role while they may still use tokens; `None` once they may not.
    pub role: Option<i64>,
}
