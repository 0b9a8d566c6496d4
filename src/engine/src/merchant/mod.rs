//! MerchantSupervisor: one actor per active merchant. It loads the merchant's cached state when
//! started, supervises a StoreActor per store, and owns every write: writes wait in its queue,
//! and each time the previous group is done it takes everything queued (up to a bound),
//! validates the writes in order against a working copy of the state, commits them in one
//! transaction, publishes the new state and only then answers each one (group commit). Reads
//! never enter the actor: they use the published snapshot.
//!
//! Beside it, what every record type shares: the registry of running merchants, the cached
//! state, groups and jobs, sales history, the store actors (`stock`), the ports storage is
//! reached through, the `Resource` trait each record's rules implement, and the replicas'
//! announcements.

pub(crate) mod delete;
pub(crate) mod group;
pub mod history;
pub mod job;
pub mod lifetime;
pub(crate) mod load;
pub mod plain;
pub mod ports;
pub mod registry;
pub mod render;
pub mod replicas;
pub mod resource;
pub mod state;
pub mod stock;
pub(crate) mod write;

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use tokio::sync::watch;

use crate::merchant::ports::{MerchantStorage, StorageError};
use crate::merchant::registry::{MerchantRegistry, Passivated};
use crate::merchant::stock::{Probe, StoreActor};
use domain::catalogue::store::StoreRecord;
use domain::stock::levels::StockMap;
use domain::{now_millis, Failure};
use group::{Group, Written};
use history::History;
use job::Job;
use metrics::Metrics;
use state::MerchantState;

/// Reloads in a row a group may wait through before its writes are answered 503: other
/// replicas write the merchant faster than this one can catch up.
const MAX_STALE_ROUNDS: u32 = 8;

/// Writes committed together at most, and objects in one group at most.
const MAX_GROUP_WRITES: usize = 256;
const MAX_GROUP_OBJECTS: usize = 2_000;

/// Where a supervisor is in its life, as readers see it.
#[derive(Clone, Debug)]
pub enum Phase {
    Loading,
    Ready(Arc<MerchantState>),
    /// The load failed: unavailable when the database was away, else internal.
    Failed(Failure),
}

/// What every supervisor shares with the registry that starts it.
#[derive(Clone)]
pub struct Environment {
    /// Where the merchant's records are kept (`actors/ports.rs`).
    pub storage: Arc<dyn MerchantStorage>,
    pub idle: Duration,
    pub registry: Addr<MerchantRegistry>,
    /// Where uploaded files are served, for image URLs.
    pub files_base: Arc<str>,
    /// Live products a merchant may have; 0: no limit.
    pub product_quota: usize,
    pub metrics: Metrics,
    pub history: History,
    /// Finished sales records the cached state keeps at most.
    pub window: usize,
    /// Test hook: how long a write holds its transaction open before committing.
    pub write_delay: Duration,
    /// How answers and events are shown (the read side).
    pub render: Arc<dyn crate::merchant::render::Render>,
}

pub struct MerchantSupervisor {
    merchant_id: i64,
    generation: u64,
    env: Environment,
    state: Arc<MerchantState>,
    publish: watch::Sender<Phase>,
    last_used: Arc<AtomicI64>,
    /// One StoreActor per live store, with the stock it publishes.
    children: HashMap<i64, (Addr<StoreActor>, watch::Receiver<Arc<StockMap>>)>,
    queue: VecDeque<Box<dyn Job>>,
    /// A group is being written, or the state reloaded: the next waits.
    writing: bool,
    /// A version another process announced that the state has not caught up with yet.
    refresh_to: i64,
    /// Told to stop once its queue is empty (the process stopped hearing other replicas).
    retiring: bool,
    /// Groups in a row found the database ahead of the state (other replicas writing).
    stale_rounds: u32,
}

impl MerchantSupervisor {
    pub fn new(
        merchant_id: i64,
        generation: u64,
        env: Environment,
        publish: watch::Sender<Phase>,
        last_used: Arc<AtomicI64>,
    ) -> Self {
        Self {
            merchant_id,
            generation,
            state: Arc::new(
                MerchantState::new(merchant_id, env.files_base.clone(), env.window)
                    .with_product_quota(env.product_quota),
            ),
            env,
            publish,
            last_used,
            children: HashMap::new(),
            queue: VecDeque::new(),
            writing: false,
            refresh_to: 0,
            retiring: false,
            stale_rounds: 0,
        }
    }

    fn install(&mut self, mut next: MerchantState) {
        self.supervise_stores(&mut next);
        next.clear_pending_stock();
        for (kind, n) in next.cached_sales() {
            let before = self
                .state
                .cached_sales()
                .into_iter()
                .find(|(k, _)| *k == kind);
            let delta = n as i64 - before.map_or(0, |(_, b)| b as i64);
            self.env
                .metrics
                .merchant_cached_records
                .with_label_values(&[kind.name()])
                .add(delta);
        }
        self.state = Arc::new(next);
        self.publish.send_replace(Phase::Ready(self.state.clone()));
    }

    /// Starts a StoreActor for every live store that has none running (a new store, or one
    /// whose actor failed: it reloads from the database), stops those of deleted stores, and
    /// points the state at each store's published stock.
    fn supervise_stores(&mut self, next: &mut MerchantState) {
        let live: Vec<i64> = next.live::<StoreRecord>().map(|s| s.id).collect();
        self.children.retain(|id, (addr, _)| {
            let keep = live.contains(id) && addr.connected();
            if !keep && addr.connected() {
                addr.do_send(StopStore);
            }
            keep
        });
        for store_id in &live {
            if !self.children.contains_key(store_id) {
                // A new actor starts from the last known levels (the merchant load's, or what a
                // failed predecessor last published) while it reloads from the database.
                let last_known = next
                    .stock
                    .get(store_id)
                    .map(|rx| rx.borrow().clone())
                    .unwrap_or_default();
                let child = StoreActor::spawn(
                    self.merchant_id,
                    *store_id,
                    self.env.storage.clone(),
                    last_known,
                );
                self.children.insert(*store_id, child);
            }
        }
        next.stock = self
            .children
            .iter()
            .map(|(id, (_, stock))| (*id, stock.clone()))
            .collect();
    }

    fn touch(&self) {
        self.last_used.store(now_millis(), Ordering::Relaxed);
    }

    fn enqueue(&mut self, job: Box<dyn Job>, ctx: &mut Context<Self>) {
        self.touch();
        self.queue.push_back(job);
        self.write_next_group(ctx);
    }

    /// Takes the queued writes (up to the bounds) and writes them as one group, unless a
    /// group is being written already: its end starts the next one.
    fn write_next_group(&mut self, ctx: &mut Context<Self>) {
        if self.writing || self.queue.is_empty() {
            return;
        }
        self.writing = true;
        let mut jobs: Vec<Box<dyn Job>> = Vec::new();
        let mut objects = 0;
        while let Some(job) = self.queue.pop_front() {
            // A repeat of a key already in this group waits for the next one, where it finds
            // the first one's stored answer.
            let repeat = job.idempotency().is_some_and(|key| {
                jobs.iter().any(|j| {
                    j.idempotency()
                        .is_some_and(|k| k.application_id == key.application_id && k.key == key.key)
                })
            });
            if repeat {
                self.queue.push_front(job);
                break;
            }
            self.env
                .metrics
                .actor_mailbox_wait
                .observe(job.sent().elapsed().as_secs_f64());
            objects += job.objects();
            jobs.push(job);
            if jobs.len() >= MAX_GROUP_WRITES || objects >= MAX_GROUP_OBJECTS {
                break;
            }
        }
        let group = Group {
            env: self.env.clone(),
            merchant_id: self.merchant_id,
            stores: self
                .children
                .iter()
                .map(|(id, (addr, _))| (*id, addr.clone()))
                .collect(),
        };
        let base = self.state.clone();
        ctx.spawn(
            async move { group.write(base, jobs).await }
                .into_actor(self)
                .map(|written, act, ctx| {
                    act.writing = false;
                    match written {
                        Written::Done(jobs, next) => {
                            act.stale_rounds = 0;
                            if let Some(next) = next {
                                act.install(*next);
                            }
                            let state = act.state.clone();
                            for job in jobs {
                                job.answer(&state, &*act.env.render);
                            }
                        }
                        Written::Stale(mut jobs) if act.stale_rounds >= MAX_STALE_ROUNDS => {
                            act.stale_rounds = 0;
                            let failure = Failure::Unavailable(
                                "other replicas are writing this merchant faster than this \
                                 one can catch up; retry"
                                    .into(),
                            );
                            let state = act.state.clone();
                            for mut job in jobs.drain(..) {
                                job.fail(failure.clone());
                                job.answer(&state, &*act.env.render);
                            }
                            act.refresh_to = act.refresh_to.max(act.state.version + 1);
                        }
                        Written::Stale(jobs) => {
                            // Written again, first and in order, once the state is current.
                            act.stale_rounds += 1;
                            for job in jobs.into_iter().rev() {
                                act.queue.push_front(job);
                            }
                            act.refresh_to = act.refresh_to.max(act.state.version + 1);
                        }
                    }
                    act.after_work(ctx);
                }),
        );
    }

    /// What comes after a group or a reload: a reload if another process wrote meanwhile,
    /// else the next group, else stopping if told to.
    fn after_work(&mut self, ctx: &mut Context<Self>) {
        if self.refresh_to > self.state.version {
            self.reload(ctx);
        } else if !self.queue.is_empty() {
            self.write_next_group(ctx);
        } else if self.retiring {
            ctx.stop();
        }
    }

    /// A state with nothing loaded yet, as this supervisor's settings make it.
    fn blank_state(&self) -> MerchantState {
        MerchantState::new(
            self.merchant_id,
            self.env.files_base.clone(),
            self.env.window,
        )
        .with_product_quota(self.env.product_quota)
    }

    /// Loads the state again from the database (another process wrote), with fresh store
    /// actors. Writes wait until it is done.
    fn reload(&mut self, ctx: &mut Context<Self>) {
        self.writing = true;
        // Announcements arriving from now on are newer than what this load may see.
        self.refresh_to = 0;
        let storage = self.env.storage.clone();
        ctx.spawn(
            load_state(storage, self.blank_state())
                .into_actor(self)
                .map(|loaded, act, ctx| {
                    act.writing = false;
                    match loaded {
                        Ok(next) => {
                            act.env.metrics.merchant_reloads.inc();
                            for (addr, _) in act.children.values() {
                                addr.do_send(StopStore);
                            }
                            act.children.clear();
                            act.install(next);
                        }
                        Err(e) => {
                            tracing::error!(merchant_id = act.merchant_id, error = %e, "merchant reload failed");
                            // The writes waiting cannot be validated, and the published state
                            // is known to be old: fail them and stop; the next request loads
                            // the merchant afresh.
                            let failure = Failure::from(e);
                            let state = act.state.clone();
                            for mut job in act.queue.drain(..) {
                                job.fail(failure.clone());
                                job.answer(&state, &*act.env.render);
                            }
                            ctx.stop();
                            return;
                        }
                    }
                    act.after_work(ctx);
                }),
        );
    }
}

/// The merchant's state as stored, owning what it needs (an actor's future is `'static`).
async fn load_state(
    storage: Arc<dyn MerchantStorage>,
    blank: MerchantState,
) -> Result<MerchantState, StorageError> {
    load::load(&*storage, blank).await
}

impl Actor for MerchantSupervisor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        // Writes are queued by the actor itself; its mailbox only hands them over.
        ctx.set_mailbox_capacity(1 << 16);
        let storage = self.env.storage.clone();
        // Nothing else runs until the state is loaded: messages queue behind `wait`.
        ctx.wait(
            load_state(storage, self.blank_state())
                .into_actor(self)
                .map(|loaded, act, ctx| match loaded {
                    Ok(state) => act.install(state),
                    Err(e) => {
                        tracing::error!(merchant_id = act.merchant_id, error = %e, "merchant load failed");
                        // Unavailable when the database was away (503, retried), else internal.
                        let failure = match Failure::from(e) {
                            Failure::Internal(why) => {
                                Failure::Internal(format!("merchant failed to load: {why}"))
                            }
                            away => away,
                        };
                        act.publish.send_replace(Phase::Failed(failure));
                        ctx.stop();
                    }
                }),
        );
        let tick = (self.env.idle / 4).max(Duration::from_millis(100));
        ctx.run_interval(tick, |act, ctx| {
            let idle_for = now_millis() - act.last_used.load(Ordering::Relaxed);
            let busy = act.writing || !act.queue.is_empty();
            if !busy && idle_for >= act.env.idle.as_millis() as i64 {
                ctx.stop();
            }
        });
    }

    fn stopped(&mut self, _: &mut Self::Context) {
        for (kind, n) in self.state.cached_sales() {
            self.env
                .metrics
                .merchant_cached_records
                .with_label_values(&[kind.name()])
                .sub(n as i64);
        }
        self.env.registry.do_send(Passivated {
            merchant_id: self.merchant_id,
            generation: self.generation,
        });
        tracing::debug!(merchant_id = self.merchant_id, "merchant passivated");
    }
}

/// A write handed to the supervisor; its answer travels back through the job's own channel.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Submit(pub Box<dyn Job>);

impl Handler<Submit> for MerchantSupervisor {
    type Result = ();

    fn handle(&mut self, Submit(job): Submit, ctx: &mut Self::Context) {
        self.enqueue(job, ctx);
    }
}

/// Another process committed `version` of this merchant: catch up with it.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Refresh {
    pub version: i64,
}

impl Handler<Refresh> for MerchantSupervisor {
    type Result = ();

    fn handle(&mut self, msg: Refresh, ctx: &mut Self::Context) {
        if msg.version <= self.state.version {
            return;
        }
        self.refresh_to = self.refresh_to.max(msg.version);
        if !self.writing {
            self.after_work(ctx);
        }
    }
}

/// Stop once the queued writes are written: the cached state may have missed another
/// process's writes, and the next request loads a fresh one.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Retire;

impl Handler<Retire> for MerchantSupervisor {
    type Result = ();

    fn handle(&mut self, _: Retire, ctx: &mut Self::Context) {
        self.retiring = true;
        if !self.writing && self.queue.is_empty() {
            ctx.stop();
        }
    }
}

/// Test hook: asks a store's actor a question, or makes it crash.
#[derive(Message, Clone)]
#[rtype(result = "Result<usize, Failure>")]
pub struct ProbeStore {
    pub store_id: i64,
    pub crash: bool,
}

impl Handler<ProbeStore> for MerchantSupervisor {
    type Result = ResponseActFuture<Self, Result<usize, Failure>>;

    fn handle(&mut self, msg: ProbeStore, _: &mut Self::Context) -> Self::Result {
        self.touch();
        let child = self.children.get(&msg.store_id).map(|(a, _)| a.clone());
        let fut = async move {
            match child {
                None => Err(Failure::internal(format!(
                    "store {} has no actor",
                    msg.store_id
                ))),
                Some(addr) => Ok(addr
                    .send(Probe { crash: msg.crash })
                    .await
                    .map_err(|e| Failure::internal(format!("store actor failed: {e}")))??),
            }
        }
        .into_actor(self)
        .map(|result, act, _| {
            if result.is_err() {
                // Restart whatever failed from the database before the next request.
                let current = (*act.state).clone();
                act.install(current);
            }
            result
        });
        Box::pin(fut)
    }
}

/// Stops a store's actor (its store was deleted).
#[derive(Message)]
#[rtype(result = "()")]
struct StopStore;

impl Handler<StopStore> for StoreActor {
    type Result = ();

    fn handle(&mut self, _: StopStore, ctx: &mut Self::Context) {
        ctx.stop();
    }
}

#[cfg(test)]
pub(crate) mod tests;
