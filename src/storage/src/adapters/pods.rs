//! The storage ports over pods (`crate::fleet::pods`): every call about one merchant goes to the
//! pod holding it; credentials and sign-in sessions found by hash are looked for pod by pod, home first. With one
//! pod every call goes straight to the home database.
//!
//! A group opened while its merchant moves waits on the move's hold in the old pod, then
//! learns where the merchant went (`DbError::Moved`) and opens again there: the write waits,
//! it does not fail.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::{Arc, Mutex};

use domain::oauth::grants::refresh_token::{RefreshExchange, RefreshGrant};
use domain::oauth::token::{
    AccessTokenRecord, Client, ConnectedGrant, FamilyUse, GrantsOf, NewFamily, NewSession,
    SessionPurpose, SessionRecord, SignInCandidate, TokenInfo,
};
use domain::stock::levels::StockMap;
use ports::{
    Grant, Granted, GroupStore, HistoryStore, NewCode, OpenGroup, Pending, RecordKind, Records,
    SalesFilter, StateStore, StockStore, StorageError, StoredMerchant, TokenStore,
};

use crate::fleet::pods::Pods;
use crate::{Db, DbError};

/// Pods as the actors' storage, with the application-to-merchant map the grants need.
#[derive(Clone)]
pub struct PodStorage {
    pub(crate) pods: Pods,
    /// Applications never change merchant: each is looked for once.
    owners: Arc<Mutex<HashMap<i64, i64>>>,
}

impl PodStorage {
    pub fn new(pods: Pods) -> Self {
        Self {
            pods,
            owners: Arc::default(),
        }
    }

    async fn of(&self, merchant_id: i64) -> Result<Db, DbError> {
        self.pods.of(merchant_id).await
    }

    /// The pod holding the application's merchant.
    async fn of_application(&self, application_id: i64) -> Result<Db, DbError> {
        if !self.pods.is_fleet() {
            return Ok(self.pods.home().clone());
        }
        let known = self
            .owners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&application_id)
            .copied();
        let merchant_id = match known {
            Some(m) => m,
            None => {
                let mut found = None;
                for pod in self.pods.all() {
                    if let Some(m) = pod.db.application_merchant(application_id).await? {
                        found = Some(m);
                        break;
                    }
                }
                // An application no pod holds: any pod answers "unknown" the same way.
                let Some(m) = found else {
                    return Ok(self.pods.home().clone());
                };
                self.owners
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(application_id, m);
                m
            }
        };
        self.of(merchant_id).await
    }

    /// `work` on the pod holding the merchant.
    pub(super) fn in_pod_of<'a, T, E, F, Fut>(&self, merchant_id: i64, work: F) -> Pending<'a, T>
    where
        F: FnOnce(Db) -> Fut + Send + 'a,
        Fut: Future<Output = Result<T, E>> + Send + 'a,
        StorageError: From<E>,
    {
        let pods = self.pods.clone();
        Box::pin(async move {
            let db = pods.of(merchant_id).await?;
            Ok(work(db).await?)
        })
    }

    /// `work` on the pod holding the merchant, and again on the pod it went to if it moves
    /// meanwhile (see [`Pods::following`]): for writes.
    pub(super) fn following<'a, T, F, Fut>(&self, merchant_id: i64, work: F) -> Pending<'a, T>
    where
        F: Fn(Db) -> Fut + Send + 'a,
        Fut: Future<Output = Result<T, DbError>> + Send + 'a,
        T: Send + 'a,
    {
        let pods = self.pods.clone();
        Box::pin(async move { Ok(pods.following(merchant_id, work).await?) })
    }

    /// The first pod's answer that finds something, home first: for what is found by a hash or
    /// a name, not by merchant.
    pub(super) fn first_found<'a, T, E, F, Fut>(&'a self, find: F) -> Pending<'a, Option<T>>
    where
        F: Fn(&'a Db) -> Fut + Send + 'a,
        Fut: Future<Output = Result<Option<T>, E>> + Send + 'a,
        StorageError: From<E>,
    {
        Box::pin(async move {
            for pod in self.pods.all() {
                if let Some(found) = find(&pod.db).await? {
                    return Ok(Some(found));
                }
            }
            Ok(None)
        })
    }
}

impl StateStore for PodStorage {
    fn load(&self, merchant_id: i64) -> Pending<'static, StoredMerchant> {
        self.following(merchant_id, move |db| async move {
            crate::adapters::merchant::load(&db, merchant_id).await
        })
    }

    fn version(&self, merchant_id: i64) -> Pending<'static, i64> {
        self.following(merchant_id, move |db| async move {
            db.merchant_version(merchant_id).await
        })
    }

    fn hears_others(&self) -> bool {
        self.pods.all().iter().all(|p| p.db.coherence().is_live())
    }
}

impl GroupStore for PodStorage {
    fn open_group(
        &self,
        merchant_id: i64,
        expected: i64,
    ) -> Pending<'static, Option<Box<dyn OpenGroup>>> {
        self.following(merchant_id, move |db| async move {
            let group = db.open_group(merchant_id, expected).await?;
            Ok(group.map(|g| Box::new(g) as Box<dyn OpenGroup>))
        })
    }
}

impl StockStore for PodStorage {
    fn store_stock(&self, merchant_id: i64, store_id: i64) -> Pending<'static, StockMap> {
        self.in_pod_of(merchant_id, move |db| async move {
            StockStore::store_stock(&db, merchant_id, store_id).await
        })
    }
}

impl HistoryStore for PodStorage {
    fn find(&self, kind: RecordKind, merchant_id: i64, ids: Vec<i64>) -> Pending<'static, Records> {
        self.in_pod_of(merchant_id, move |db| async move {
            HistoryStore::find(&db, kind, merchant_id, ids).await
        })
    }

    fn query(
        &self,
        kind: RecordKind,
        merchant_id: i64,
        filter: SalesFilter,
    ) -> Pending<'static, Records> {
        self.in_pod_of(merchant_id, move |db| async move {
            HistoryStore::query(&db, kind, merchant_id, filter).await
        })
    }

    fn made_by_clients(
        &self,
        kind: RecordKind,
        merchant_id: i64,
        client_ids: Vec<String>,
    ) -> Pending<'static, Vec<i64>> {
        self.in_pod_of(merchant_id, move |db| async move {
            HistoryStore::made_by_clients(&db, kind, merchant_id, client_ids).await
        })
    }
}

impl TokenStore for PodStorage {
    fn rotate_batch<'a>(
        &'a self,
        grants: &'a [&'a RefreshGrant],
    ) -> Pending<'a, Vec<Option<RefreshExchange>>> {
        Box::pin(async move {
            if !self.pods.is_fleet() {
                return TokenStore::rotate_batch(self.pods.home(), grants).await;
            }
            // Each refresh in the pod of its application, in the order asked.
            let mut answers = Vec::with_capacity(grants.len());
            for grant in grants {
                let db = self.of_application(grant.application_id).await?;
                answers.extend(TokenStore::rotate_batch(&db, std::slice::from_ref(grant)).await?);
            }
            Ok(answers)
        })
    }

    fn grant<'a>(&'a self, grant: &'a Grant) -> Pending<'a, Granted> {
        Box::pin(async move {
            let application_id = match grant {
                Grant::Code(g) => g.application_id,
                Grant::Refresh(g) => g.application_id,
            };
            let db = self.of_application(application_id).await?;
            TokenStore::grant(&db, grant).await
        })
    }

    fn hears_revocations(&self) -> bool {
        self.pods.all().iter().all(|p| p.db.coherence().is_live())
    }

    fn access_token<'a>(&'a self, hash: &'a str) -> Pending<'a, Option<AccessTokenRecord>> {
        self.first_found(move |db| TokenStore::access_token(db, hash))
    }

    fn revoke_token<'a>(&'a self, hash: &'a str, application_id: i64) -> Pending<'a, Vec<String>> {
        Box::pin(async move {
            let db = self.of_application(application_id).await?;
            TokenStore::revoke_token(&db, hash, application_id).await
        })
    }

    fn token_info<'a>(
        &'a self,
        hash: &'a str,
        application_id: i64,
    ) -> Pending<'a, Option<TokenInfo>> {
        Box::pin(async move {
            let db = self.of_application(application_id).await?;
            TokenStore::token_info(&db, hash, application_id).await
        })
    }

    fn client<'a>(&'a self, client_id: &'a str) -> Pending<'a, Option<Client>> {
        self.first_found(move |db| TokenStore::client(db, client_id))
    }

    fn sign_in_candidates<'a>(&'a self, email: &'a str) -> Pending<'a, Vec<SignInCandidate>> {
        Box::pin(async move {
            let mut all: Vec<SignInCandidate> = Vec::new();
            for pod in self.pods.all() {
                for candidate in TokenStore::sign_in_candidates(&pod.db, email).await? {
                    // A merchant being moved is in two pods for a moment.
                    if !all.iter().any(|c| {
                        c.merchant_id == candidate.merchant_id
                            && c.employee_id == candidate.employee_id
                    }) {
                        all.push(candidate);
                    }
                }
            }
            Ok(all)
        })
    }

    fn create_session<'a>(&'a self, hash: &'a str, session: &'a NewSession) -> Pending<'a, ()> {
        self.in_pod_of(session.merchant_id, move |db| async move {
            TokenStore::create_session(&db, hash, session).await
        })
    }

    fn session<'a>(
        &'a self,
        hash: &'a str,
        purpose: SessionPurpose,
    ) -> Pending<'a, Option<SessionRecord>> {
        self.first_found(move |db| TokenStore::session(db, hash, purpose))
    }

    fn end_session<'a>(&'a self, hash: &'a str) -> Pending<'a, ()> {
        Box::pin(async move {
            for pod in self.pods.all() {
                TokenStore::end_session(&pod.db, hash).await?;
            }
            Ok(())
        })
    }

    fn connected_grants(&self, of: GrantsOf, now: i64) -> Pending<'_, Vec<ConnectedGrant>> {
        self.in_pod_of(of.merchant_id, move |db| async move {
            TokenStore::connected_grants(&db, of, now).await
        })
    }

    fn revoke_grant<'a>(
        &'a self,
        of: GrantsOf,
        family_id: &'a str,
    ) -> Pending<'a, Option<(i64, i64, Vec<String>)>> {
        self.in_pod_of(of.merchant_id, move |db| async move {
            TokenStore::revoke_grant(&db, of, family_id).await
        })
    }

    fn issue_code<'a>(&'a self, code: NewCode<'a>) -> Pending<'a, ()> {
        self.in_pod_of(code.family.merchant_id, move |db| async move {
            TokenStore::issue_code(&db, code).await
        })
    }

    fn issue_access_token<'a>(
        &'a self,
        family: &'a NewFamily,
        access_hash: &'a str,
        expires_at: i64,
    ) -> Pending<'a, ()> {
        self.in_pod_of(family.merchant_id, move |db| async move {
            TokenStore::issue_access_token(&db, family, access_hash, expires_at).await
        })
    }

    fn purge_expired(&self, before: i64) -> Pending<'_, u64> {
        Box::pin(async move {
            let mut removed = 0;
            for pod in self.pods.all() {
                removed += TokenStore::purge_expired(&pod.db, before).await?;
            }
            Ok(removed)
        })
    }

    fn record_uses<'a>(&'a self, uses: &'a [FamilyUse]) -> Pending<'a, ()> {
        Box::pin(async move {
            if !self.pods.is_fleet() {
                return TokenStore::record_uses(self.pods.home(), uses).await;
            }
            // Each pod updates the families of the merchants it holds (known to this process
            // for every merchant whose token was just used).
            let mut by_pod: BTreeMap<usize, Vec<FamilyUse>> = BTreeMap::new();
            for used in uses {
                let pod = self.pods.index_for(used.merchant_id).await?;
                by_pod.entry(pod).or_default().push(used.clone());
            }
            for (pod, uses) in by_pod {
                TokenStore::record_uses(&self.pods.pod(pod).db, &uses).await?;
            }
            Ok(())
        })
    }
}
