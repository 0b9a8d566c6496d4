//! MerchantSupervisor: one actor per active merchant. It loads the merchant's catalogue when
//! started, serializes every write (validate → one transaction → apply → publish), and publishes
//! an immutable snapshot after each write so reads never wait in its mailbox.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use serde_json::{Map, Value};
use tokio::sync::watch;

use super::registry::{MerchantRegistry, Passivated};
use crate::domain::store::StoreRecord;
use crate::http::batch::BatchObject;
use crate::http::messages::Message;
use crate::store::{now_millis, Store, StoreError};

/// Everything reads need about one merchant, immutable once published.
#[derive(Clone, Debug, Default)]
pub struct MerchantState {
    pub merchant_id: i64,
    pub stores: BTreeMap<i64, Arc<StoreRecord>>,
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

#[derive(Message, Clone)]
#[rtype(result = "Result<Vec<ObjectOutcome>, StoreError>")]
pub struct WriteStores {
    pub mode: WriteMode,
    pub objects: Vec<BatchObject>,
}

/// Soft-deletes; the answer lists, per requested id, whether it existed.
#[derive(Message, Clone)]
#[rtype(result = "Result<Vec<(i64, bool)>, StoreError>")]
pub struct DeleteStores {
    pub ids: BTreeSet<i64>,
}

pub struct MerchantSupervisor {
    merchant_id: i64,
    generation: u64,
    store: Store,
    state: Arc<MerchantState>,
    publish: watch::Sender<Phase>,
    last_used: Arc<AtomicI64>,
    idle: Duration,
    registry: Addr<MerchantRegistry>,
}

impl MerchantSupervisor {
    pub fn new(
        merchant_id: i64,
        generation: u64,
        store: Store,
        publish: watch::Sender<Phase>,
        last_used: Arc<AtomicI64>,
        idle: Duration,
        registry: Addr<MerchantRegistry>,
    ) -> Self {
        Self {
            merchant_id,
            generation,
            store,
            state: Arc::new(MerchantState {
                merchant_id,
                ..Default::default()
            }),
            publish,
            last_used,
            idle,
            registry,
        }
    }

    fn install(&mut self, next: MerchantState) {
        self.state = Arc::new(next);
        self.publish.send_replace(Phase::Ready(self.state.clone()));
    }

    fn touch(&self) {
        self.last_used.store(now_millis(), Ordering::Relaxed);
    }
}

impl Actor for MerchantSupervisor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        let store = self.store.clone();
        let merchant_id = self.merchant_id;
        // Nothing else runs until the state is loaded: messages queue behind `wait`.
        ctx.wait(
            async move { store.load_stores(merchant_id).await }
                .into_actor(self)
                .map(|loaded, act, ctx| match loaded {
                    Ok(stores) => {
                        let next = MerchantState {
                            merchant_id: act.merchant_id,
                            stores: stores.into_iter().map(|s| (s.id, Arc::new(s))).collect(),
                        };
                        act.install(next);
                    }
                    Err(e) => {
                        tracing::error!(merchant_id = act.merchant_id, error = %e, "merchant load failed");
                        act.publish.send_replace(Phase::Failed(e.to_string()));
                        ctx.stop();
                    }
                }),
        );
        let tick = (self.idle / 4).max(Duration::from_millis(100));
        ctx.run_interval(tick, |act, ctx| {
            let idle_for = now_millis() - act.last_used.load(Ordering::Relaxed);
            if idle_for >= act.idle.as_millis() as i64 {
                ctx.stop();
            }
        });
    }

    fn stopped(&mut self, _: &mut Self::Context) {
        self.registry.do_send(Passivated {
            merchant_id: self.merchant_id,
            generation: self.generation,
        });
        tracing::debug!(merchant_id = self.merchant_id, "merchant passivated");
    }
}

/// Validates one object against the state, giving the record to write.
fn decide_store(
    state: &MerchantState,
    mode: WriteMode,
    fields: Map<String, Value>,
    new_id: &mut impl Iterator<Item = i64>,
    now: i64,
) -> Result<(bool, StoreRecord), (Message, Vec<String>)> {
    let invalid = |problems| (Message::InvalidObject, problems);
    match fields.get("id") {
        None | Some(Value::Null) if mode == WriteMode::UpdateOnly => Err(invalid(vec![
            "id: required to update (PUT only updates).".into(),
        ])),
        None | Some(Value::Null) => {
            let id = new_id
                .next()
                .ok_or_else(|| invalid(vec!["no identifier was available.".into()]))?;
            StoreRecord::create(id, fields, now)
                .map(|r| (true, r))
                .map_err(invalid)
        }
        Some(Value::Number(n)) => {
            let existing = n
                .as_i64()
                .and_then(|id| state.stores.get(&id))
                .filter(|s| s.delete_date.is_none())
                .ok_or_else(|| invalid(vec![format!("id: store {n} does not exist.")]))?;
            existing.update(fields).map(|r| (false, r)).map_err(invalid)
        }
        Some(_) => Err(invalid(vec!["id: must be an integer.".into()])),
    }
}

impl Handler<WriteStores> for MerchantSupervisor {
    type Result = AtomicResponse<Self, Result<Vec<ObjectOutcome>, StoreError>>;

    fn handle(&mut self, msg: WriteStores, _: &mut Self::Context) -> Self::Result {
        self.touch();
        let state = self.state.clone();
        let store = self.store.clone();
        let merchant_id = self.merchant_id;
        let fut = async move {
            let creates = msg
                .objects
                .iter()
                .filter(|(_, o)| {
                    o.as_ref()
                        .is_ok_and(|m| m.get("id").is_none_or(Value::is_null))
                })
                .count();
            let ids = if msg.mode == WriteMode::Upsert {
                store.allocate_ids(creates).await?
            } else {
                Vec::new()
            };
            let mut ids = ids.into_iter();
            let now = now_millis();
            let mut outcomes = Vec::with_capacity(msg.objects.len());
            let (mut created, mut updated) = (Vec::new(), Vec::new());
            let mut seen = BTreeSet::new();
            for (key, object) in msg.objects {
                let decided = object
                    .map_err(|e| (Message::InvalidObject, vec![e]))
                    .and_then(|fields| decide_store(&state, msg.mode, fields, &mut ids, now))
                    .and_then(|(is_new, record)| {
                        if !is_new && !seen.insert(record.id) {
                            Err((
                                Message::Conflict,
                                vec![format!(
                                    "id: store {} appears twice in this request.",
                                    record.id
                                )],
                            ))
                        } else {
                            Ok((is_new, record))
                        }
                    });
                let result = match decided {
                    Ok((true, record)) => {
                        let out = (
                            Message::Created,
                            record.to_json(),
                            format!("Store {} created.", record.id),
                        );
                        created.push(record);
                        Ok(out)
                    }
                    Ok((false, record)) => {
                        let out = (
                            Message::Updated,
                            record.to_json(),
                            format!("Store {} updated.", record.id),
                        );
                        updated.push(record);
                        Ok(out)
                    }
                    Err(e) => Err(e),
                };
                outcomes.push(ObjectOutcome { key, result });
            }
            if !created.is_empty() || !updated.is_empty() {
                store.save_stores(merchant_id, &created, &updated).await?;
            }
            Ok::<_, StoreError>((outcomes, created, updated))
        }
        .into_actor(self)
        .map(|result, act, _| {
            let (outcomes, created, updated) = result?;
            if !created.is_empty() || !updated.is_empty() {
                let mut next = (*act.state).clone();
                for record in created.into_iter().chain(updated) {
                    next.stores.insert(record.id, Arc::new(record));
                }
                act.install(next);
            }
            Ok(outcomes)
        });
        AtomicResponse::new(Box::pin(fut))
    }
}

impl Handler<DeleteStores> for MerchantSupervisor {
    type Result = AtomicResponse<Self, Result<Vec<(i64, bool)>, StoreError>>;

    fn handle(&mut self, msg: DeleteStores, _: &mut Self::Context) -> Self::Result {
        self.touch();
        let now = now_millis();
        let mut found = Vec::new();
        let mut deleted = Vec::new();
        for id in &msg.ids {
            match self
                .state
                .stores
                .get(id)
                .filter(|s| s.delete_date.is_none())
            {
                Some(s) => {
                    let mut record = (**s).clone();
                    record.delete_date = Some(now);
                    deleted.push(record);
                    found.push((*id, true));
                }
                None => found.push((*id, false)),
            }
        }
        let store = self.store.clone();
        let merchant_id = self.merchant_id;
        let fut = async move {
            if !deleted.is_empty() {
                store.save_stores(merchant_id, &[], &deleted).await?;
            }
            Ok(deleted)
        }
        .into_actor(self)
        .map(
            move |result: Result<Vec<StoreRecord>, StoreError>, act, _| {
                let deleted = result?;
                if !deleted.is_empty() {
                    let mut next = (*act.state).clone();
                    for record in deleted {
                        next.stores.insert(record.id, Arc::new(record));
                    }
                    act.install(next);
                }
                Ok(found)
            },
        );
        AtomicResponse::new(Box::pin(fut))
    }
}
