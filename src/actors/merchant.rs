//! MerchantSupervisor: one actor per active merchant. It loads the merchant's catalogue when
//! started, serializes every write (validate → one transaction → apply → publish), and publishes
//! an immutable snapshot after each write so reads never wait in its mailbox.

use std::collections::BTreeSet;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use serde_json::{Map, Value};
use tokio::sync::watch;

use super::registry::{MerchantRegistry, Passivated};
use super::resource::{Collection, Resource};
use super::store::{ApplyStock, Probe, StockMap, StoreActor};
use crate::db::stock::{self, StockLevel, StockMove};
use crate::db::{now_millis, Db, DbError};
use crate::domain::basket::BasketRecord;
use crate::domain::category::CategoryRecord;
use crate::domain::product::ProductRecord;
use crate::domain::promotion::PromotionRecord;
use crate::domain::reconcile::StockReconciliation;
use crate::domain::sales::{InvoiceRecord, OrderRecord, TransactionRecord};
use crate::domain::store::StoreRecord;
use crate::domain::supplier::{SupplierRecord, SupplierStoreRecord};
use crate::http::batch::BatchObject;
use crate::http::messages::Message;
use crate::metrics::Metrics;

/// Everything reads need about one merchant, immutable once published.
#[derive(Clone, Debug, Default)]
pub struct MerchantState {
    pub merchant_id: i64,
    pub stores: Collection<StoreRecord>,
    pub categories: Collection<CategoryRecord>,
    pub employees: Collection<crate::domain::employee::EmployeeRecord>,
    pub applications: Collection<crate::domain::application::ApplicationRecord>,
    pub suppliers: Collection<SupplierRecord>,
    pub supplier_stores: Collection<SupplierStoreRecord>,
    pub promotions: Collection<PromotionRecord>,
    pub products: Collection<ProductRecord>,
    pub baskets: Collection<BasketRecord>,
    pub transactions: Collection<TransactionRecord>,
    pub orders: Collection<OrderRecord>,
    pub invoices: Collection<InvoiceRecord>,
    pub stock_reconciliations: Collection<StockReconciliation>,
    /// Each live store's stock, as its StoreActor publishes it.
    pub stock: std::collections::BTreeMap<i64, watch::Receiver<Arc<StockMap>>>,
    /// Where uploaded files are served (`<public_base_url>`), for image URLs.
    pub files_base: Arc<str>,
}

impl MerchantState {
    async fn load(store: &Db, merchant_id: i64, files_base: Arc<str>) -> Result<Self, DbError> {
        let mut conn = store.pool().acquire().await?;
        Ok(Self {
            merchant_id,
            files_base,
            // Each store's stock as last stored; the StoreActors take over from these values.
            stock: store
                .load_merchant_stock(merchant_id)
                .await?
                .into_iter()
                .map(|(id, levels)| (id, watch::channel(Arc::new(levels)).1))
                .collect(),
            stores: index(StoreRecord::load(&mut conn, merchant_id).await?),
            categories: index(CategoryRecord::load(&mut conn, merchant_id).await?),
            employees: index(
                crate::domain::employee::EmployeeRecord::load(&mut conn, merchant_id).await?,
            ),
            applications: index(
                crate::domain::application::ApplicationRecord::load(&mut conn, merchant_id).await?,
            ),
            suppliers: index(SupplierRecord::load(&mut conn, merchant_id).await?),
            supplier_stores: index(SupplierStoreRecord::load(&mut conn, merchant_id).await?),
            promotions: index(PromotionRecord::load(&mut conn, merchant_id).await?),
            products: index(ProductRecord::load(&mut conn, merchant_id).await?),
            baskets: index(BasketRecord::load(&mut conn, merchant_id).await?),
            transactions: index(TransactionRecord::load(&mut conn, merchant_id).await?),
            orders: index(OrderRecord::load(&mut conn, merchant_id).await?),
            invoices: index(InvoiceRecord::load(&mut conn, merchant_id).await?),
            stock_reconciliations: index(StockReconciliation::load(&mut conn, merchant_id).await?),
        })
    }

    /// The live records of a collection, in id order.
    pub fn live<R: Resource>(&self) -> impl Iterator<Item = &Arc<R>> {
        R::collection(self)
            .values()
            .filter(|r| r.delete_date().is_none())
    }

    /// A product's stock at a store, from that store's actor: what was received and what left.
    /// A store that is not this merchant's (or none) has no stock: zero, the same answer.
    pub fn stock_level(&self, store_id: i64, product_id: i64) -> StockLevel {
        self.stock
            .get(&store_id)
            .and_then(|stock| stock.borrow().get(&product_id).copied())
            .unwrap_or_default()
    }

    /// A live record by id.
    pub fn find<R: Resource>(&self, id: i64) -> Option<&Arc<R>> {
        R::collection(self)
            .get(&id)
            .filter(|r| r.delete_date().is_none())
    }
}

fn index<R: Resource>(records: Vec<R>) -> Collection<R> {
    records.into_iter().map(|r| (r.id(), Arc::new(r))).collect()
}

/// Where a supervisor is in its life, as readers see it.
#[derive(Clone, Debug)]
pub enum Phase {
    Loading,
    Ready(Arc<MerchantState>),
    Failed(String),
}

/// POST creates objects without `id` and updates those with one; PUT only updates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteMode {
    Upsert,
    UpdateOnly,
}

/// The answer for one object of a batch.
#[derive(Debug, Clone)]
pub struct ObjectOutcome {
    pub key: String,
    pub result: Result<(Message, Value, String), (Message, Vec<String>)>,
}

/// A batch write of one resource.
pub struct Write<R> {
    pub mode: WriteMode,
    pub objects: Vec<BatchObject>,
    /// When it was sent, for `actor_mailbox_wait_seconds`.
    sent: Instant,
    _resource: PhantomData<fn() -> R>,
}

impl<R> Write<R> {
    pub fn new(mode: WriteMode, objects: Vec<BatchObject>) -> Self {
        Self {
            mode,
            objects,
            sent: Instant::now(),
            _resource: PhantomData,
        }
    }
}

impl<R> Clone for Write<R> {
    fn clone(&self) -> Self {
        Self::new(self.mode, self.objects.clone())
    }
}

impl<R: Resource> actix::Message for Write<R> {
    type Result = Result<Vec<ObjectOutcome>, DbError>;
}

/// Soft-deletes; the answer lists, per requested id, whether it existed and was deleted.
pub struct Delete<R> {
    pub ids: BTreeSet<i64>,
    sent: Instant,
    _resource: PhantomData<fn() -> R>,
}

impl<R> Delete<R> {
    pub fn new(ids: BTreeSet<i64>) -> Self {
        Self {
            ids,
            sent: Instant::now(),
            _resource: PhantomData,
        }
    }
}

impl<R> Clone for Delete<R> {
    fn clone(&self) -> Self {
        Self::new(self.ids.clone())
    }
}

/// Per id: deleted, absent, or refused with a reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeleteOutcome {
    Deleted,
    Missing,
    Refused(String),
}

impl<R: Resource> actix::Message for Delete<R> {
    type Result = Result<Vec<(i64, DeleteOutcome)>, DbError>;
}

/// What every supervisor shares with the registry that starts it.
#[derive(Clone)]
pub struct Environment {
    pub db: Db,
    pub idle: Duration,
    pub registry: Addr<MerchantRegistry>,
    /// Where uploaded files are served, for image URLs.
    pub files_base: Arc<str>,
    pub metrics: Metrics,
    /// Test hook: how long a write holds its transaction open before committing.
    pub write_delay: Duration,
}

pub struct MerchantSupervisor {
    merchant_id: i64,
    generation: u64,
    env: Environment,
    db: Db,
    state: Arc<MerchantState>,
    publish: watch::Sender<Phase>,
    last_used: Arc<AtomicI64>,
    /// One StoreActor per live store.
    children: std::collections::HashMap<i64, Addr<StoreActor>>,
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
            db: env.db.clone(),
            env,
            state: Arc::new(MerchantState {
                merchant_id,
                ..Default::default()
            }),
            publish,
            last_used,
            children: Default::default(),
        }
    }

    fn install(&mut self, mut next: MerchantState) {
        self.supervise_stores(&mut next);
        self.state = Arc::new(next);
        self.publish.send_replace(Phase::Ready(self.state.clone()));
    }

    /// Starts a StoreActor for every live store that has none running (a new store, or one
    /// whose actor failed: it reloads from the database), and stops those of deleted stores.
    fn supervise_stores(&mut self, next: &mut MerchantState) {
        let live: BTreeSet<i64> = next.live::<StoreRecord>().map(|s| s.id).collect();
        self.children.retain(|id, addr| {
            let keep = live.contains(id) && addr.connected();
            if !keep && addr.connected() {
                addr.do_send(StopStore);
            }
            keep
        });
        next.stock.retain(|id, _| live.contains(id));
        for store_id in live {
            if !self.children.contains_key(&store_id) {
                // A new actor starts from the last known levels (the merchant load's, or what a
                // failed predecessor last published) while it reloads from the database.
                let last_known = next
                    .stock
                    .get(&store_id)
                    .map(|rx| rx.borrow().clone())
                    .unwrap_or_default();
                let (addr, stock) =
                    StoreActor::spawn(self.merchant_id, store_id, self.db.clone(), last_known);
                self.children.insert(store_id, addr);
                next.stock.insert(store_id, stock);
            }
        }
    }

    fn touch(&self) {
        self.last_used.store(now_millis(), Ordering::Relaxed);
    }
}

impl Actor for MerchantSupervisor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        let store = self.db.clone();
        let merchant_id = self.merchant_id;
        let files_base = self.env.files_base.clone();
        // Nothing else runs until the state is loaded: messages queue behind `wait`.
        ctx.wait(
            async move { MerchantState::load(&store, merchant_id, files_base).await }
                .into_actor(self)
                .map(|loaded, act, ctx| match loaded {
                    Ok(state) => act.install(state),
                    Err(e) => {
                        tracing::error!(merchant_id = act.merchant_id, error = %e, "merchant load failed");
                        act.publish.send_replace(Phase::Failed(e.to_string()));
                        ctx.stop();
                    }
                }),
        );
        let tick = (self.env.idle / 4).max(Duration::from_millis(100));
        ctx.run_interval(tick, |act, ctx| {
            let idle_for = now_millis() - act.last_used.load(Ordering::Relaxed);
            if idle_for >= act.env.idle.as_millis() as i64 {
                ctx.stop();
            }
        });
    }

    fn stopped(&mut self, _: &mut Self::Context) {
        self.env.registry.do_send(Passivated {
            merchant_id: self.merchant_id,
            generation: self.generation,
        });
        tracing::debug!(merchant_id = self.merchant_id, "merchant passivated");
    }
}

/// Validates one object against the working state, giving the record to write.
fn decide<R: Resource>(
    state: &MerchantState,
    mode: WriteMode,
    fields: Map<String, Value>,
    ids: &mut dyn Iterator<Item = i64>,
    now: i64,
) -> Result<(bool, R), (Message, Vec<String>)> {
    let invalid = |problems| (Message::InvalidObject, problems);
    let decided = match fields.get("id") {
        None | Some(Value::Null) if mode == WriteMode::UpdateOnly => Err(invalid(vec![
            "id: required to update (PUT only updates).".into(),
        ])),
        None | Some(Value::Null) => R::create(ids, fields, state, now)
            .map(|r| (true, r))
            .map_err(invalid),
        Some(Value::Number(n)) => {
            let existing = n
                .as_i64()
                .and_then(|id| state.find::<R>(id))
                .ok_or_else(|| {
                    invalid(vec![format!(
                        "id: {} {n} does not exist.",
                        R::NOUN.to_lowercase()
                    )])
                })?;
            if existing.locked() {
                return Err((
                    Message::AlreadyComplete,
                    vec![format!("{} {n} is completed and cannot change.", R::NOUN)],
                ));
            }
            existing
                .update(ids, fields, state, now)
                .map(|r| (false, r))
                .map_err(invalid)
        }
        Some(_) => Err(invalid(vec!["id: must be an integer.".into()])),
    }?;
    decided.1.check(state)?;
    let conflicts = decided.1.conflicts(state);
    if conflicts.is_empty() {
        Ok(decided)
    } else {
        Err((Message::Conflict, conflicts))
    }
}

/// Writes records in one transaction.
async fn persist_all<R: Resource>(
    env: &Environment,
    merchant_id: i64,
    changed: &[(bool, R)],
    moves: &[StockMove],
) -> Result<(), DbError> {
    if changed.is_empty() {
        return Ok(());
    }
    let started = Instant::now();
    let mut tx = env.db.pool().begin().await?;
    for (is_new, record) in changed {
        R::persist(&mut tx, merchant_id, record, *is_new).await?;
    }
    stock::apply_moves(&mut tx, merchant_id, moves).await?;
    if !env.write_delay.is_zero() {
        tokio::time::sleep(env.write_delay).await;
    }
    tx.commit().await?;
    env.db.observe("write_batch", started);
    env.metrics
        .merchant_write_batch_size
        .observe(changed.len() as f64);
    Ok(())
}

impl<R: Resource> Handler<Write<R>> for MerchantSupervisor {
    type Result = AtomicResponse<Self, Result<Vec<ObjectOutcome>, DbError>>;

    fn handle(&mut self, msg: Write<R>, _: &mut Self::Context) -> Self::Result {
        self.touch();
        self.env
            .metrics
            .actor_mailbox_wait
            .observe(msg.sent.elapsed().as_secs_f64());
        let base = self.state.clone();
        let store = self.db.clone();
        let env = self.env.clone();
        let children = self.children.clone();
        let merchant_id = self.merchant_id;
        let fut = async move {
            let wanted: usize = msg
                .objects
                .iter()
                .filter_map(|(_, o)| o.as_ref().ok())
                .map(|m| R::ids_needed_in(m, &base))
                .sum();
            if R::READS_STOCK {
                // A store's actor loads its stock when started: wait until each has, so a
                // just-started one is not read as empty.
                for addr in children.values() {
                    addr.send(Probe { crash: false })
                        .await
                        .map_err(|e| DbError::Corrupt(format!("store actor failed: {e}")))??;
                }
            }
            let mut ids = store.allocate_ids(wanted).await?.into_iter();
            let now = now_millis();
            // Objects are validated in order against a working copy, so a later object sees
            // the earlier ones (a repeated id, a barcode taken a line above).
            let mut next = (*base).clone();
            let mut touched = BTreeSet::new();
            let mut outcomes = Vec::with_capacity(msg.objects.len());
            let mut changed: Vec<(bool, R)> = Vec::new();
            let mut moves: Vec<StockMove> = Vec::new();
            for (key, object) in msg.objects {
                let decided = object
                    .map_err(|e| (Message::InvalidObject, vec![e]))
                    .and_then(|fields| decide::<R>(&next, msg.mode, fields, &mut ids, now))
                    .and_then(|(is_new, record)| {
                        if touched.insert(record.id()) {
                            Ok((is_new, record))
                        } else {
                            Err((
                                Message::Conflict,
                                vec![format!(
                                    "id: {} {} appears twice in this request.",
                                    R::NOUN.to_lowercase(),
                                    record.id()
                                )],
                            ))
                        }
                    });
                let result = decided.map(|(is_new, record)| {
                    let before = R::collection(&next).get(&record.id()).cloned();
                    let message = if is_new {
                        Message::Created
                    } else {
                        Message::Updated
                    };
                    let detail = record.success_detail(before.as_deref());
                    moves.extend(record.stock_moves(before.as_deref()));
                    R::collection_mut(&mut next).insert(record.id(), Arc::new(record.clone()));
                    record.side_records(before.as_deref(), &mut next);
                    let id = record.id();
                    changed.push((is_new, record));
                    (message, id, detail)
                });
                outcomes.push((key, result));
            }
            persist_all(&env, merchant_id, &changed, &moves).await?;
            // The stores' actors learn of committed stock before the write is answered, so a
            // read sent after the answer sees it.
            for (store_id, addr) in &children {
                let mine: Vec<StockMove> = moves
                    .iter()
                    .filter(|m| m.store_id == *store_id)
                    .copied()
                    .collect();
                if !mine.is_empty() {
                    let _ = addr.send(ApplyStock(mine)).await;
                }
            }
            let next = (!changed.is_empty()).then_some(next);
            Ok::<_, DbError>((outcomes, next))
        }
        .into_actor(self)
        .map(|result, act, _| {
            let (outcomes, next) = result?;
            if let Some(next) = next {
                act.install(next);
            }
            // Rendered against the state as it now is (category titles, nested records).
            let state = act.state.clone();
            Ok(outcomes
                .into_iter()
                .map(|(key, result)| ObjectOutcome {
                    key,
                    result: result.map(|(message, id, detail)| {
                        let json = R::collection(&state)
                            .get(&id)
                            .map_or(Value::Null, |r| r.to_json(&state));
                        (message, json, detail)
                    }),
                })
                .collect())
        });
        AtomicResponse::new(Box::pin(fut))
    }
}

impl<R: Resource> Handler<Delete<R>> for MerchantSupervisor {
    type Result = AtomicResponse<Self, Result<Vec<(i64, DeleteOutcome)>, DbError>>;

    fn handle(&mut self, msg: Delete<R>, _: &mut Self::Context) -> Self::Result {
        self.touch();
        self.env
            .metrics
            .actor_mailbox_wait
            .observe(msg.sent.elapsed().as_secs_f64());
        let now = now_millis();
        let mut outcomes = Vec::new();
        let mut changed = Vec::new();
        for id in &msg.ids {
            match self.state.find::<R>(*id) {
                None => outcomes.push((*id, DeleteOutcome::Missing)),
                Some(record) if record.locked() => {
                    outcomes.push((*id, DeleteOutcome::Refused("it is completed.".into())))
                }
                Some(record) => match record.check_delete(&self.state) {
                    Err(why) => outcomes.push((*id, DeleteOutcome::Refused(why))),
                    Ok(()) => {
                        let mut record = (**record).clone();
                        record.mark_deleted(now);
                        changed.push((false, record));
                        outcomes.push((*id, DeleteOutcome::Deleted));
                    }
                },
            }
        }
        let env = self.env.clone();
        let merchant_id = self.merchant_id;
        let fut = async move {
            persist_all(&env, merchant_id, &changed, &[]).await?;
            Ok::<_, DbError>(changed)
        }
        .into_actor(self)
        .map(move |result, act, _| {
            let changed = result?;
            if !changed.is_empty() {
                let mut next = (*act.state).clone();
                for (_, record) in changed {
                    R::collection_mut(&mut next).insert(record.id(), Arc::new(record));
                }
                act.install(next);
            }
            Ok(outcomes)
        });
        AtomicResponse::new(Box::pin(fut))
    }
}

/// Test hook: asks a store's actor a question, or makes it crash.
#[derive(Message, Clone)]
#[rtype(result = "Result<usize, DbError>")]
pub struct ProbeStore {
    pub store_id: i64,
    pub crash: bool,
}

impl Handler<ProbeStore> for MerchantSupervisor {
    type Result = AtomicResponse<Self, Result<usize, DbError>>;

    fn handle(&mut self, msg: ProbeStore, _: &mut Self::Context) -> Self::Result {
        self.touch();
        let child = self.children.get(&msg.store_id).cloned();
        let fut = async move {
            match child {
                None => Err(DbError::Corrupt(format!(
                    "store {} has no actor",
                    msg.store_id
                ))),
                Some(addr) => addr
                    .send(Probe { crash: msg.crash })
                    .await
                    .map_err(|e| DbError::Corrupt(format!("store actor failed: {e}")))?,
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
        AtomicResponse::new(Box::pin(fut))
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
