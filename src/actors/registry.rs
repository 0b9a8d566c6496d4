//! MerchantRegistry: get-or-spawn of merchant supervisors through one mailbox (single flight), so
//! N concurrent first requests for a merchant start exactly one supervisor. Handlers look up
//! running merchants in a shared map without entering the mailbox.

use std::collections::HashMap;
use std::sync::atomic::AtomicI64;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use actix::prelude::*;
use tokio::sync::watch;

use super::merchant::{Environment, MerchantState, MerchantSupervisor, Phase};
use crate::db::{now_millis, Db, DbError};
use crate::metrics::Metrics;

/// A running merchant: its mailbox (writes) and its published state (reads).
#[derive(Clone)]
pub struct MerchantHandle {
    pub addr: Addr<MerchantSupervisor>,
    phase: watch::Receiver<Phase>,
    last_used: Arc<AtomicI64>,
    generation: u64,
}

impl MerchantHandle {
    /// The latest published state, waiting for the first load when the merchant just started.
    pub async fn snapshot(&self) -> Result<Arc<MerchantState>, DbError> {
        self.last_used
            .store(now_millis(), std::sync::atomic::Ordering::Relaxed);
        let mut phase = self.phase.clone();
        let ready = phase
            .wait_for(|p| !matches!(p, Phase::Loading))
            .await
            .map_err(|_| DbError::Corrupt("the merchant stopped while loading".into()))?;
        match &*ready {
            Phase::Ready(state) => Ok(state.clone()),
            Phase::Failed(why) => Err(DbError::Corrupt(format!("merchant failed to load: {why}"))),
            Phase::Loading => Err(DbError::Corrupt("unreachable: still loading".into())),
        }
    }
}

type Handles = Arc<RwLock<HashMap<i64, MerchantHandle>>>;

pub struct MerchantRegistry {
    db: Db,
    metrics: Metrics,
    idle: Duration,
    files_base: Arc<str>,
    write_delay: Duration,
    handles: Handles,
    next_generation: u64,
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
        let env = Environment {
            db: self.db.clone(),
            idle: self.idle,
            registry: ctx.address(),
            files_base: self.files_base.clone(),
            metrics: self.metrics.clone(),
            write_delay: self.write_delay,
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
        self.metrics.merchant_actor_activations.inc();
        self.metrics.merchant_actors_active.inc();
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
        self.metrics.merchant_actors_active.dec();
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
    /// Test hook: how long a write holds its transaction open.
    pub write_delay: Duration,
}

/// What handlers hold: a fast path to running merchants and the registry for the rest.
#[derive(Clone)]
pub struct Merchants {
    registry: Addr<MerchantRegistry>,
    handles: Handles,
    cache_requests: prometheus::IntCounterVec,
}

impl Merchants {
    /// Starts the registry on the current arbiter.
    pub fn start(db: Db, metrics: Metrics, config: RegistryConfig<'_>) -> Self {
        let handles: Handles = Arc::default();
        let cache_requests = metrics.cache_requests.clone();
        let registry = MerchantRegistry {
            db,
            metrics,
            idle: config.idle,
            files_base: config.files_base.into(),
            write_delay: config.write_delay,
            handles: handles.clone(),
            next_generation: 0,
        }
        .start();
        Self {
            registry,
            handles,
            cache_requests,
        }
    }

    /// The running supervisor of a merchant, started if needed.
    pub async fn get(&self, merchant_id: i64) -> Result<MerchantHandle, DbError> {
        if let Some(handle) = read(&self.handles).get(&merchant_id) {
            if handle.addr.connected() {
                self.cache_requests
                    .with_label_values(&["merchant", "hit"])
                    .inc();
                return Ok(handle.clone());
            }
        }
        self.cache_requests
            .with_label_values(&["merchant", "miss"])
            .inc();
        self.registry
            .send(Activate(merchant_id))
            .await
            .map_err(|e| DbError::Corrupt(format!("merchant registry unavailable: {e}")))
    }

    /// Sends a write to the merchant's supervisor, restarting it once if it has just stopped
    /// (passivated, or crashed while handling an earlier message).
    pub async fn write<M>(&self, merchant_id: i64, msg: M) -> Result<M::Result, DbError>
    where
        M: Message + Send + Clone + 'static,
        M::Result: Send,
        MerchantSupervisor: Handler<M>,
    {
        for _ in 0..2 {
            let handle = self.get(merchant_id).await?;
            match handle.addr.send(msg.clone()).await {
                Ok(result) => return Ok(result),
                Err(MailboxError::Closed) => {
                    let mut handles = write(&self.handles);
                    if handles
                        .get(&merchant_id)
                        .is_some_and(|h| h.generation == handle.generation)
                    {
                        handles.remove(&merchant_id);
                    }
                }
                Err(MailboxError::Timeout) => break,
            }
        }
        Err(DbError::Corrupt(
            "the merchant's actor stopped while handling the request".into(),
        ))
    }

    /// How many supervisors are running (for tests and metrics).
    pub fn active(&self) -> usize {
        read(&self.handles).len()
    }
}
