//! MerchantRegistry: get-or-spawn of merchant supervisors through one mailbox (single flight), so
//! N concurrent first requests for a merchant start exactly one supervisor. [`Merchants`] is
//! what the HTTP layer holds: snapshots for reads (a shared map, no mailbox), writes handed to
//! the supervisor, and sales reads that may reach into history.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::AtomicI64;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use actix::prelude::*;
use tokio::sync::{oneshot, watch};

use crate::catalogue::export;
use crate::catalogue::import::ImportJob;
use crate::customers::erase::EraseJob;
use crate::merchant::delete::DeleteJob;
use crate::merchant::history::{self, Historic, History, SalesList, SalesQuery};
use crate::merchant::job::{DeleteOutcome, Job, ObjectOutcome};
use crate::merchant::ports::MerchantStorage;
use crate::merchant::render::Render;
use crate::merchant::resource::Resource;
use crate::merchant::state::MerchantState;
use crate::merchant::write::WriteJob;
use crate::merchant::{
    Environment, MerchantSupervisor, Phase, ProbeStore, Refresh, Retire, Submit,
};
use crate::offline::sync::{SaleInput, SyncJob, Synced};
use domain::batch::{Answered, BatchObject, Idempotency, WriteMode};
use domain::catalogue::file::{CatalogueFile, ImportOptions, ImportReport};
use domain::{now_millis, Failure};
use metrics::Metrics;

/// A running merchant: its mailbox (writes) and its published state (reads).
#[derive(Clone)]
pub struct MerchantHandle {
    addr: Addr<MerchantSupervisor>,
    phase: watch::Receiver<Phase>,
    last_used: Arc<AtomicI64>,
    generation: u64,
}

impl MerchantHandle {
    /// The latest published state, waiting for the first load when the merchant just started.
    pub async fn snapshot(&self) -> Result<Arc<MerchantState>, Failure> {
        self.touch();
        if let Phase::Ready(state) = &*self.phase.borrow() {
            return Ok(state.clone());
        }
        let mut phase = self.phase.clone();
        let ready = phase
            .wait_for(|p| !matches!(p, Phase::Loading))
            .await
            .map_err(|_| Failure::internal("the merchant stopped while loading"))?;
        match &*ready {
            Phase::Ready(state) => Ok(state.clone()),
            Phase::Failed(why) => Err(why.clone()),
            Phase::Loading => Err(Failure::internal("unreachable: still loading")),
        }
    }

    /// Keeps the merchant from passivating.
    fn touch(&self) {
        self.last_used
            .store(now_millis(), std::sync::atomic::Ordering::Relaxed);
    }

    /// The first published state at `version` or newer, after asking the supervisor to catch
    /// up with it.
    async fn snapshot_at(&self, version: i64) -> Result<Arc<MerchantState>, Failure> {
        self.addr.do_send(Refresh { version });
        let mut phase = self.phase.clone();
        let caught_up = phase.wait_for(|p| match p {
            Phase::Ready(state) => state.version >= version,
            Phase::Loading => false,
            Phase::Failed(_) => true,
        });
        let ready = tokio::time::timeout(CATCH_UP, caught_up)
            .await
            .map_err(|_| {
                Failure::Unavailable("the merchant's state could not be refreshed".into())
            })?
            .map_err(|_| Failure::internal("the merchant stopped while refreshing"))?;
        match &*ready {
            Phase::Ready(state) => Ok(state.clone()),
            Phase::Failed(why) => Err(why.clone()),
            Phase::Loading => Err(Failure::internal("unreachable: still loading")),
        }
    }
}

/// How long a read waits for its merchant to catch up with another process's writes.
const CATCH_UP: Duration = Duration::from_secs(10);

type Handles = Arc<RwLock<HashMap<i64, MerchantHandle>>>;

pub struct MerchantRegistry {
    env: RegistryEnv,
    handles: Handles,
    next_generation: u64,
}

/// What the registry passes on to every supervisor.
#[derive(Clone)]
struct RegistryEnv {
    storage: Arc<dyn MerchantStorage>,
    metrics: Metrics,
    history: History,
    idle: Duration,
    files_base: Arc<str>,
    product_quota: usize,
    window: usize,
    write_delay: Duration,
    render: Arc<dyn Render>,
}

#[derive(Message)]
#[rtype(result = "MerchantHandle")]
struct Activate(i64);

/// Sent by a supervisor as it stops (idle, failed or panicked).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Passivated {
    pub merchant_id: i64,
    pub generation: u64,
}

impl Actor for MerchantRegistry {
    type Context = Context<Self>;
}

impl Handler<Activate> for MerchantRegistry {
    type Result = MessageResult<Activate>;

    fn handle(&mut self, Activate(merchant_id): Activate, ctx: &mut Self::Context) -> Self::Result {
        if let Some(handle) = read(&self.handles).get(&merchant_id) {
            if handle.addr.connected() {
                return MessageResult(handle.clone());
            }
        }
        self.next_generation += 1;
        let generation = self.next_generation;
        let (publish, phase) = watch::channel(Phase::Loading);
        let last_used = Arc::new(AtomicI64::new(now_millis()));
        let e = &self.env;
        let env = Environment {
            storage: e.storage.clone(),
            idle: e.idle,
            registry: ctx.address(),
            files_base: e.files_base.clone(),
            product_quota: e.product_quota,
            metrics: e.metrics.clone(),
            history: e.history.clone(),
            window: e.window,
            write_delay: e.write_delay,
            render: e.render.clone(),
        };
        let addr =
            MerchantSupervisor::new(merchant_id, generation, env, publish, last_used.clone())
                .start();
        let handle = MerchantHandle {
            addr,
            phase,
            last_used,
            generation,
        };
        write(&self.handles).insert(merchant_id, handle.clone());
        self.env.metrics.merchant_actor_activations.inc();
        self.env.metrics.merchant_actors_active.inc();
        MessageResult(handle)
    }
}

impl Handler<Passivated> for MerchantRegistry {
    type Result = ();

    fn handle(&mut self, msg: Passivated, _: &mut Self::Context) {
        let mut handles = write(&self.handles);
        if handles
            .get(&msg.merchant_id)
            .is_some_and(|h| h.generation == msg.generation)
        {
            handles.remove(&msg.merchant_id);
        }
        self.env.metrics.merchant_actors_active.dec();
    }
}

// A poisoned lock only means another thread panicked mid-update of a plain map; the map itself
// is still consistent, so keep going.
fn read(h: &Handles) -> std::sync::RwLockReadGuard<'_, HashMap<i64, MerchantHandle>> {
    h.read().unwrap_or_else(|p| p.into_inner())
}

fn write(h: &Handles) -> std::sync::RwLockWriteGuard<'_, HashMap<i64, MerchantHandle>> {
    h.write().unwrap_or_else(|p| p.into_inner())
}

/// How supervisors are run.
pub struct RegistryConfig<'a> {
    /// Idle time after which a merchant is passivated.
    pub idle: Duration,
    /// Where uploaded files are served, for image URLs.
    pub files_base: &'a str,
    /// Live products a merchant may have (`quota_products`); 0: no limit.
    pub product_quota: usize,
    /// Finished sales records a merchant's cached state keeps at most.
    pub window: usize,
    /// Test hook: how long a write holds its transaction open.
    pub write_delay: Duration,
    /// How answers and events are shown (the read side, `views`).
    pub render: Arc<dyn Render>,
}

/// What handlers hold: a fast path to running merchants and the registry for the rest.
#[derive(Clone)]
pub struct Merchants {
    registry: Addr<MerchantRegistry>,
    handles: Handles,
    storage: Arc<dyn MerchantStorage>,
    history: History,
    hits: prometheus::IntCounter,
    misses: prometheus::IntCounter,
}

impl Merchants {
    /// Starts the registry on the current arbiter, over `storage` (the database, or memory
    /// in the actors' tests).
    pub fn start(
        storage: Arc<dyn MerchantStorage>,
        metrics: Metrics,
        config: RegistryConfig<'_>,
    ) -> Self {
        let handles: Handles = Arc::default();
        let history = History::new(&metrics);
        let hits = metrics
            .cache_requests
            .with_label_values(&["merchant", "hit"]);
        let misses = metrics
            .cache_requests
            .with_label_values(&["merchant", "miss"]);
        let registry = MerchantRegistry {
            env: RegistryEnv {
                storage: storage.clone(),
                metrics,
                history: history.clone(),
                idle: config.idle,
                files_base: config.files_base.into(),
                product_quota: config.product_quota,
                window: config.window,
                write_delay: config.write_delay,
                render: config.render,
            },
            handles: handles.clone(),
            next_generation: 0,
        }
        .start();
        Self {
            registry,
            handles,
            storage,
            history,
            hits,
            misses,
        }
    }

    /// The published state of a running, loaded merchant, taken under the map's lock: no
    /// handle is cloned, so a read touches one reference count, not four (reads spread over
    /// 10,000 merchants find each of them cold in the processor's caches).
    fn ready(&self, merchant_id: i64) -> Option<Arc<MerchantState>> {
        let handles = read(&self.handles);
        let handle = handles.get(&merchant_id)?;
        if !handle.addr.connected() {
            return None;
        }
        handle.touch();
        let Phase::Ready(state) = &*handle.phase.borrow() else {
            return None;
        };
        self.hits.inc();
        Some(state.clone())
    }

    /// The running supervisor of a merchant, started if needed.
    async fn get(&self, merchant_id: i64) -> Result<MerchantHandle, Failure> {
        if let Some(handle) = read(&self.handles).get(&merchant_id) {
            if handle.addr.connected() {
                self.hits.inc();
                return Ok(handle.clone());
            }
        }
        self.misses.inc();
        self.registry
            .send(Activate(merchant_id))
            .await
            .map_err(|e| Failure::internal(format!("merchant registry unavailable: {e}")))
    }

    /// The merchant's latest published state. While this process does not hear the other
    /// replicas (PostgreSQL, listening connection lost), the state is checked against the
    /// merchant's version in the database first; when the database cannot be reached either,
    /// the read fails as unavailable (503, 121): another replica may still reach it and have
    /// written past the cached state (docs/security.md).
    pub async fn snapshot(&self, merchant_id: i64) -> Result<Arc<MerchantState>, Failure> {
        // Read before the state: a state taken while this process heard every other replica
        // is current as of this read's start, whatever happens to the listener meanwhile.
        let live = self.storage.hears_others();
        if live {
            if let Some(state) = self.ready(merchant_id) {
                return Ok(state);
            }
        }
        let handle = self.get(merchant_id).await?;
        let state = handle.snapshot().await?;
        if live {
            return Ok(state);
        }
        let version = self.storage.version(merchant_id).await?;
        if version <= state.version {
            return Ok(state);
        }
        handle.snapshot_at(version).await
    }

    /// Waits (at most `wait`) until the merchant publishes a state past event `after`, and
    /// gives the last event the published state reflects: how an event stream sleeps until
    /// there is something to send, woken by this process's writes and, through the replica
    /// announcements, by other processes'.
    pub async fn published_after(
        &self,
        merchant_id: i64,
        after: i64,
        wait: Duration,
    ) -> Result<i64, Failure> {
        let state = self.snapshot(merchant_id).await?;
        if state.event_seq > after {
            return Ok(state.event_seq);
        }
        let handle = self.get(merchant_id).await?;
        let mut phase = handle.phase.clone();
        let moved = phase.wait_for(|p| matches!(p, Phase::Ready(s) if s.event_seq > after));
        let _ = tokio::time::timeout(wait, moved).await;
        Ok(self.snapshot(merchant_id).await?.event_seq)
    }

    /// Another process committed `version` of a merchant: a running supervisor catches up.
    pub fn refresh(&self, merchant_id: i64, version: i64) {
        if let Some(handle) = read(&self.handles).get(&merchant_id) {
            handle.addr.do_send(Refresh { version });
        }
    }

    /// Forgets every running merchant: each supervisor stops once its queued writes are done,
    /// and the next request for the merchant loads it afresh. For when announcements from
    /// other processes may have been missed.
    pub fn retire_all(&self) {
        let retired: Vec<MerchantHandle> = write(&self.handles).drain().map(|(_, h)| h).collect();
        for handle in retired {
            handle.addr.do_send(Retire);
        }
    }

    /// Hands a write to the merchant's supervisor, starting it again once if it has just
    /// stopped (passivated, or crashed while handling an earlier write); returns the handle it
    /// went to, whose phase says why if it never answers.
    async fn submit(&self, merchant_id: i64, job: Box<dyn Job>) -> Result<MerchantHandle, Failure> {
        let mut job = job;
        for _ in 0..2 {
            let handle = self.get(merchant_id).await?;
            match handle.addr.try_send(Submit(job)) {
                Ok(()) => return Ok(handle),
                Err(SendError::Closed(Submit(returned)) | SendError::Full(Submit(returned))) => {
                    job = returned;
                    let mut handles = write(&self.handles);
                    if handles
                        .get(&merchant_id)
                        .is_some_and(|h| h.generation == handle.generation)
                    {
                        handles.remove(&merchant_id);
                    }
                }
            }
        }
        Err(Failure::internal("the merchant's actor is not running"))
    }

    /// A batch write of `R`; each object gets its own outcome.
    #[tracing::instrument(level = "debug", skip_all, fields(merchant_id, resource = R::PLURAL, objects = objects.len()))]
    pub async fn write<R: Resource>(
        &self,
        merchant_id: i64,
        mode: WriteMode,
        objects: Vec<BatchObject>,
        caller: i64,
        key: Option<Idempotency>,
    ) -> Result<Answered<Vec<ObjectOutcome>>, Failure> {
        let (reply, answer) = oneshot::channel();
        let job = WriteJob::<R>::new(mode, objects, caller, key, reply);
        let handle = self.submit(merchant_id, Box::new(job)).await?;
        answer.await.map_err(|_| stopped(&handle))?
    }

    /// Imports a catalogue file: every product, or none unless `options` skip invalid ones.
    #[tracing::instrument(level = "debug", skip_all, fields(merchant_id, products = file.products.len()))]
    pub async fn import(
        &self,
        merchant_id: i64,
        file: CatalogueFile,
        options: ImportOptions,
        caller: i64,
        key: Option<Idempotency>,
    ) -> Result<Answered<ImportReport>, Failure> {
        let (reply, answer) = oneshot::channel();
        let job = ImportJob::new(file, options, caller, key, reply);
        let handle = self.submit(merchant_id, Box::new(job)).await?;
        answer.await.map_err(|_| stopped(&handle))?
    }

    /// The merchant's catalogue as a file, from its latest state.
    pub async fn export(&self, merchant_id: i64) -> Result<CatalogueFile, Failure> {
        Ok(export::catalogue(&*self.snapshot(merchant_id).await?))
    }

    /// Soft-deletes records of `R`; each id gets its own outcome.
    #[tracing::instrument(level = "debug", skip_all, fields(merchant_id, resource = R::PLURAL))]
    pub async fn delete<R: Resource>(
        &self,
        merchant_id: i64,
        ids: BTreeSet<i64>,
        key: Option<Idempotency>,
    ) -> Result<Answered<Vec<(i64, DeleteOutcome)>>, Failure> {
        let (reply, answer) = oneshot::channel();
        let job = DeleteJob::<R>::new(ids, key, reply);
        let handle = self.submit(merchant_id, Box::new(job)).await?;
        answer.await.map_err(|_| stopped(&handle))?
    }

    /// Erases customers' personal data (docs/customers.md); each id gets its own outcome.
    #[tracing::instrument(level = "debug", skip_all, fields(merchant_id))]
    pub async fn erase_customers(
        &self,
        merchant_id: i64,
        ids: BTreeSet<i64>,
        key: Option<Idempotency>,
    ) -> Result<Answered<Vec<(i64, DeleteOutcome)>>, Failure> {
        let (reply, answer) = oneshot::channel();
        let job = EraseJob::new(ids, key, reply);
        let handle = self.submit(merchant_id, Box::new(job)).await?;
        answer.await.map_err(|_| stopped(&handle))?
    }

    /// Records sales a till made offline (docs/offline.md); each gets its own outcome.
    #[tracing::instrument(level = "debug", skip_all, fields(merchant_id, sales = sales.len()))]
    pub async fn sync(
        &self,
        merchant_id: i64,
        sales: Vec<SaleInput>,
        caller: i64,
    ) -> Result<Synced, Failure> {
        let (reply, answer) = oneshot::channel();
        let job = SyncJob::new(sales, caller, None, reply);
        let handle = self.submit(merchant_id, Box::new(job)).await?;
        match answer.await.map_err(|_| stopped(&handle))?? {
            Answered::Fresh(synced) | Answered::Replayed(synced) => Ok(synced),
            Answered::KeyReused => Err(Failure::internal("a sync has no idempotency key")),
        }
    }

    /// Sales records matching `query`, from the cache or from history.
    #[tracing::instrument(level = "debug", skip_all, fields(merchant_id, resource = R::PLURAL))]
    pub async fn sales<R: Historic>(
        &self,
        merchant_id: i64,
        query: &SalesQuery,
    ) -> Result<SalesList<R>, Failure> {
        let state = self.snapshot(merchant_id).await?;
        Ok(history::list(&self.history, &*self.storage, state, query).await?)
    }

    /// Test hook: asks a store's actor a question, or makes it crash.
    pub async fn probe_store(
        &self,
        merchant_id: i64,
        store_id: i64,
        crash: bool,
    ) -> Result<usize, Failure> {
        let handle = self.get(merchant_id).await?;
        handle
            .addr
            .send(ProbeStore { store_id, crash })
            .await
            .map_err(|e| Failure::internal(format!("merchant actor unavailable: {e}")))?
    }

    /// How many supervisors are running (for tests and metrics).
    pub fn active(&self) -> usize {
        read(&self.handles).len()
    }
}

/// Why a job was never answered: its merchant failed to load (that failure, a 503 when the
/// database was away: the job waited in the mailbox and never ran), else the actor stopped.
fn stopped(handle: &MerchantHandle) -> Failure {
    match &*handle.phase.borrow() {
        Phase::Failed(why) => why.clone(),
        _ => Failure::internal("the merchant's actor stopped while handling the request"),
    }
}
