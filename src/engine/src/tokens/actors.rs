//! TokenActors: the owner of OAuth state. Every take of an authorization code or refresh token
//! is a message to the shard that owns its hash, so concurrent uses of one credential are
//! serialized in this process; the shard runs the grant's rules (`oauth::grants`) on the steps
//! of one transaction, whose conditional UPDATE makes the same guarantee across processes.
//! Access tokens are looked up through a cache in front of the database, and every revocation
//! made here evicts what it revoked.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use crate::merchant::ports::StorageError;
use crate::merchant::ports::{Grant, Granted, NewCode, TokenStore};
use crate::tokens::uses::UseRecorder;
use domain::oauth::grants::authorization_code::{CodeExchange, CodeGrant};
use domain::oauth::grants::refresh_token::{RefreshExchange, RefreshGrant};
use domain::oauth::token::{
    AccessTokenRecord, Client, CodeFacts, ConnectedGrant, GrantsOf, NewFamily, NewSession,
    RevokedGrant, SessionPurpose, SessionRecord, SignInCandidate, TokenInfo,
};
use domain::{now_millis, Failure};
use metrics::Metrics;

/// The token actors' storage.
pub type Store = Arc<dyn TokenStore>;

/// A grant with the way back to its caller.
struct Job {
    grant: Grant,
    answer: oneshot::Sender<Result<Granted, StorageError>>,
}

/// Grants a shard takes off its queue at once.
const BATCH: usize = 128;

/// A shard: one task that takes the grants queued for it, runs the refresh grants among them
/// as one batch (one transaction, a few multi-row statements) and each other grant in its own
/// transaction, one after the other, so concurrent uses of one credential stay serialized in
/// this process. Answers go out only once what they say is committed.
fn start_shard(store: Store) -> mpsc::Sender<Job> {
    let (sender, mut queue) = mpsc::channel::<Job>(4 * BATCH);
    actix_rt::spawn(async move {
        let mut jobs = Vec::with_capacity(BATCH);
        while queue.recv_many(&mut jobs, BATCH).await > 0 {
            run_jobs(&*store, std::mem::take(&mut jobs)).await;
        }
    });
    sender
}

async fn run_jobs(store: &dyn TokenStore, jobs: Vec<Job>) {
    let (batch, mut alone): (Vec<Job>, Vec<Job>) = jobs
        .into_iter()
        .partition(|job| matches!(&job.grant, Grant::Refresh(g) if g.rotate));
    if batch.len() > 1 {
        alone.extend(run_batch(store, batch).await);
    } else {
        alone.extend(batch);
    }
    for job in alone {
        let outcome = store.grant(&job.grant).await;
        let _ = job.answer.send(outcome); // the caller may have gone (its request timed out)
    }
}

/// Runs rotating refresh grants together; what the batch leaves undecided comes back, to run
/// alone after the batch committed (see [`refresh_token::rotate_batch`]).
async fn run_batch(store: &dyn TokenStore, jobs: Vec<Job>) -> Vec<Job> {
    let grants: Vec<&RefreshGrant> = jobs
        .iter()
        .filter_map(|job| match &job.grant {
            Grant::Refresh(g) => Some(g),
            Grant::Code(_) => None,
        })
        .collect();
    match store.rotate_batch(&grants).await {
        Ok(answers) => jobs
            .into_iter()
            .zip(answers)
            .filter_map(|(job, answer)| match answer {
                Some(outcome) => {
                    let _ = job.answer.send(Ok(Granted::Refresh(outcome)));
                    None
                }
                None => Some(job),
            })
            .collect(),
        Err(e) if e.is_unavailable() => {
            let why = e.to_string();
            for job in jobs {
                let _ = job.answer.send(Err(StorageError::Unavailable(why.clone())));
            }
            Vec::new()
        }
        // Whatever failed, each grant's own transaction says whose it was.
        Err(e) => {
            tracing::warn!(error = %e, grants = jobs.len(), "a batch of refresh grants failed; running them one by one");
            jobs
        }
    }
}

/// The shards, addressed by credential hash, with the access-token cache and the rest of the
/// authorization server's state operations.
#[derive(Clone)]
pub struct TokenActors {
    shards: Vec<mpsc::Sender<Job>>,
    store: Store,
    access: AccessTokenCache,
    /// Applications by client id, for client authentication at the token endpoint.
    clients: moka::future::Cache<String, Option<Arc<Client>>>,
    /// When families' access tokens were last used (written off the request path).
    uses: UseRecorder,
}

impl TokenActors {
    /// Starts `n` shards on the current arbiter.
    pub fn start(store: Store, n: usize, metrics: &Metrics) -> Self {
        let shards = (0..n.max(1)).map(|_| start_shard(store.clone())).collect();
        Self {
            shards,
            access: AccessTokenCache::new(metrics),
            clients: moka::future::Cache::builder()
                .max_capacity(10_000)
                .time_to_live(CACHED_FOR)
                .build(),
            uses: UseRecorder::start(store.clone()),
            store,
        }
    }

    fn shard(&self, hash: &str) -> &mpsc::Sender<Job> {
        let bucket = u64::from_str_radix(hash.get(..8).unwrap_or("0"), 16).unwrap_or(0);
        &self.shards[(bucket % self.shards.len() as u64) as usize]
    }

    async fn grant(&self, hash: &str, grant: Grant) -> Result<Granted, Failure> {
        let gone = || Failure::internal("the token shard has stopped");
        let (answer, answered) = oneshot::channel();
        self.shard(hash)
            .send(Job { grant, answer })
            .await
            .map_err(|_| gone())?;
        Ok(answered.await.map_err(|_| gone())??)
    }

    /// Exchanges an authorization code for the pair in `grant`.
    #[tracing::instrument(skip_all, fields(application_id = grant.application_id))]
    pub async fn exchange_code(&self, grant: CodeGrant) -> Result<CodeExchange, Failure> {
        let hash = grant.code_hash.clone();
        let Granted::Code(outcome) = self.grant(&hash, Grant::Code(grant)).await? else {
            return Err(Failure::internal("a code grant answered as another grant"));
        };
        if let CodeExchange::Reused {
            revoked_access_hashes,
        } = &outcome
        {
            self.access.evict(revoked_access_hashes).await;
        }
        Ok(outcome)
    }

    /// Rotates the refresh token in `grant`.
    #[tracing::instrument(skip_all, fields(application_id = grant.application_id))]
    pub async fn rotate(&self, grant: RefreshGrant) -> Result<RefreshExchange, Failure> {
        let hash = domain::crypto::sha256_hex(&grant.presented);
        let Granted::Refresh(outcome) = self.grant(&hash, Grant::Refresh(grant)).await? else {
            return Err(Failure::internal(
                "a refresh grant answered as another grant",
            ));
        };
        if let RefreshExchange::Reused {
            revoked_access_hashes,
        } = &outcome
        {
            self.access.evict(revoked_access_hashes).await;
        }
        Ok(outcome)
    }

    /// What a live access token grants, from the cache or the database.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn access_token(
        &self,
        hash: &str,
    ) -> Result<Option<Arc<AccessTokenRecord>>, Failure> {
        if !self.store.hears_revocations() {
            // Another process's revocation could go unheard: ask the database every time. When
            // it cannot be reached, the request fails as unavailable (503): another replica
            // may reach it and have revoked the token meanwhile.
            let found = self.store.access_token(hash).await?;
            return Ok(found.map(Arc::new));
        }
        self.access.lookup(&*self.store, hash).await
    }

    /// Another process revoked these access tokens.
    pub async fn evict_revoked(&self, hashes: &[String]) {
        self.access.evict(hashes).await;
    }

    /// RFC 7009 revocation of a token of `application_id`.
    #[tracing::instrument(level = "debug", skip_all, fields(application_id))]
    pub async fn revoke(&self, hash: &str, application_id: i64) -> Result<usize, Failure> {
        let revoked = self.store.revoke_token(hash, application_id).await?;
        self.access.evict(&revoked).await;
        Ok(revoked.len())
    }

    /// RFC 7662: a live token of `application_id`.
    #[tracing::instrument(level = "debug", skip_all, fields(application_id))]
    pub async fn introspect(
        &self,
        hash: &str,
        application_id: i64,
    ) -> Result<Option<TokenInfo>, Failure> {
        Ok(self.store.token_info(hash, application_id).await?)
    }

    /// A live application by client id (cached: its secret hash changes only through a write
    /// that forgets the cache, or, from another process, within the cache's lifetime).
    pub async fn client(&self, client_id: &str) -> Result<Option<Arc<Client>>, Failure> {
        if let Some(hit) = self.clients.get(client_id).await {
            return Ok(hit);
        }
        let found = self.store.client(client_id).await?.map(Arc::new);
        self.clients
            .insert(client_id.to_owned(), found.clone())
            .await;
        Ok(found)
    }

    pub async fn sign_in_candidates(&self, email: &str) -> Result<Vec<SignInCandidate>, Failure> {
        Ok(self.store.sign_in_candidates(email).await?)
    }

    pub async fn create_session(&self, hash: &str, session: &NewSession) -> Result<(), Failure> {
        Ok(self.store.create_session(hash, session).await?)
    }

    /// The live session for `purpose` whose cookie value hashes to `hash`.
    pub async fn session(
        &self,
        hash: &str,
        purpose: SessionPurpose,
    ) -> Result<Option<SessionRecord>, Failure> {
        Ok(self.store.session(hash, purpose).await?)
    }

    /// Notes that an access token of `family_id` was just used, for the connected-applications
    /// page. Never waits: at most one note a minute per family reaches the database, written
    /// by a task of its own.
    pub fn note_use(&self, family_id: &str, merchant_id: i64, now: i64) {
        self.uses.note(family_id, merchant_id, now);
    }

    /// The live grants of `of`, newest first.
    pub async fn connected_grants(&self, of: GrantsOf) -> Result<Vec<ConnectedGrant>, Failure> {
        Ok(self.store.connected_grants(of, now_millis()).await?)
    }

    /// Revokes one grant of `of` (the whole family: code, refresh and access tokens) and
    /// evicts its access tokens from the cache before answering, so the application's next
    /// call is refused here; other replicas hear it at commit. `None`: no such grant of `of`.
    pub async fn revoke_grant(
        &self,
        of: GrantsOf,
        family_id: &str,
    ) -> Result<Option<RevokedGrant>, Failure> {
        let Some((application_id, employee_id, hashes)) =
            self.store.revoke_grant(of, family_id).await?
        else {
            return Ok(None);
        };
        self.access.evict(&hashes).await;
        Ok(Some(RevokedGrant {
            application_id,
            employee_id,
            access_tokens: hashes.len(),
        }))
    }

    pub async fn end_session(&self, hash: &str) -> Result<(), Failure> {
        Ok(self.store.end_session(hash).await?)
    }

    /// Starts a token family with its authorization code.
    pub async fn issue_code(
        &self,
        family: &NewFamily,
        code_hash: &str,
        facts: &CodeFacts,
        expires_at: i64,
    ) -> Result<(), Failure> {
        let code = NewCode {
            family,
            code_hash,
            facts,
            expires_at,
        };
        Ok(self.store.issue_code(code).await?)
    }

    /// Starts a family with an access token and no code (tests, benchmarks, operator tools).
    pub async fn issue_access_token(
        &self,
        family: &NewFamily,
        access_hash: &str,
        expires_at: i64,
    ) -> Result<(), Failure> {
        Ok(self
            .store
            .issue_access_token(family, access_hash, expires_at)
            .await?)
    }

    /// Deletes tombstones that expired before `before`.
    pub async fn purge_expired(&self, before: i64) -> Result<u64, Failure> {
        Ok(self.store.purge_expired(before).await?)
    }

    /// Forgets every cached access token and client (after revocations whose hashes are not
    /// all known here, such as a deleted employee's or a rotated application secret's).
    pub fn forget_cached_tokens(&self) {
        self.access.evictions.fetch_add(1, Ordering::SeqCst);
        self.access.cache.invalidate_all();
        self.clients.invalidate_all();
    }
}

/// How long another process's secret change may take to be seen here.
const CACHED_FOR: Duration = Duration::from_secs(30);

/// How long an access token's record is kept. Every change that ends or narrows a token
/// (revocation, an employee's or application's change, a suspension, a deletion) evicts it in
/// this process at once and reaches the others by their announcements; a process that cannot
/// hear those does not use this cache (see [`TokenActors::access_token`]). So the bound only
/// limits what a change made outside merchantd (SQL by hand) leaves cached. At 30 s, a replica
/// serving 10,000 merchants' tokens looked up 10,000 of them every 30 s again: 10 % of its
/// samples in `find_access_token` (benches/load/results/HISTORY.md, "Ten thousand merchants
/// on one replica: the access-token cache").
const TOKEN_CACHED_FOR: Duration = Duration::from_secs(300);

/// Access tokens by hash, in front of the database, for [`TOKEN_CACHED_FOR`]; revocations in
/// this process evict at once, other processes' by their announcements.
#[derive(Clone)]
struct AccessTokenCache {
    /// Each hash's record (`None`: no live token has it).
    cache: moka::future::Cache<String, Option<Arc<AccessTokenRecord>>>,
    /// Counts evictions, so a look-up that raced one does not cache what it read before it.
    evictions: Arc<AtomicU64>,
    hits: prometheus::IntCounter,
    misses: prometheus::IntCounter,
}

impl AccessTokenCache {
    fn new(metrics: &Metrics) -> Self {
        Self {
            cache: moka::future::Cache::builder()
                .max_capacity(100_000)
                .time_to_live(TOKEN_CACHED_FOR)
                .build(),
            evictions: Arc::default(),
            hits: metrics
                .cache_requests
                .with_label_values(&["access_token", "hit"]),
            misses: metrics
                .cache_requests
                .with_label_values(&["access_token", "miss"]),
        }
    }

    async fn lookup(
        &self,
        store: &dyn TokenStore,
        hash: &str,
    ) -> Result<Option<Arc<AccessTokenRecord>>, Failure> {
        if let Some(hit) = self.cache.get(hash).await {
            self.hits.inc();
            return Ok(hit);
        }
        self.misses.inc();
        let evictions = self.evictions.load(Ordering::SeqCst);
        let found = store.access_token(hash).await?.map(Arc::new);
        if self.evictions.load(Ordering::SeqCst) == evictions {
            self.cache.insert(hash.to_owned(), found.clone()).await;
            // An eviction that came between the check and the insert may concern what was
            // just inserted: take it out again.
            if self.evictions.load(Ordering::SeqCst) != evictions {
                self.cache.invalidate(hash).await;
            }
        }
        Ok(found)
    }

    async fn evict(&self, hashes: &[String]) {
        if hashes.is_empty() {
            return;
        }
        self.evictions.fetch_add(1, Ordering::SeqCst);
        for hash in hashes {
            self.cache.invalidate(hash).await;
        }
    }
}
