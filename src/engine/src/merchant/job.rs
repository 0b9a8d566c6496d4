//! The writes a merchant supervisor queues: a batch write or a delete of one resource. A job
//! knows what it needs before it can be validated (history records, identifiers, stock), how
//! to validate and apply itself to a working state, how to persist what it changed, and how to
//! answer. Applying starts from scratch each time, so a group that failed in the database can
//! be retried one job at a time.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use tokio::sync::oneshot;

use crate::merchant::ports::WriteStep;
use crate::merchant::render::Render;
use crate::merchant::resource::{Kind, Resource};
use crate::merchant::state::MerchantState;
use domain::batch::{Answered, Idempotency, StoredAnswer};
use domain::event::{EventKind, NewEvent};
use domain::sales::totals::Deltas;
use domain::stock::levels::StockMove;
use domain::{Failure, Refusal};

/// A saved object as the answer shows it.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Saved {
    pub created: bool,
    /// The record's id (answers stored before it was kept read 0).
    #[serde(default)]
    pub id: i64,
    /// Its JSON text.
    pub json: String,
    pub detail: String,
}

/// The answer for one object of a batch.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct ObjectOutcome {
    pub key: String,
    pub result: Result<Saved, Refusal>,
}

/// Per id of a delete: deleted, absent, or refused with a reason.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum DeleteOutcome {
    Deleted,
    Missing,
    Refused(String),
}

/// History records a job names, by kind, to be brought into the working state.
pub type Wants = BTreeMap<Kind, BTreeSet<i64>>;

/// Where a job's answer goes.
pub type Answer<T> = oneshot::Sender<Result<Answered<T>, Failure>>;

pub(crate) trait Job: Send {
    fn sent(&self) -> Instant;
    /// Objects (or ids) it writes, for the bound on a group's size.
    fn objects(&self) -> usize;
    /// History records it names that the state does not hold.
    fn wants(&self, state: &MerchantState, wants: &mut Wants) {
        let _ = (state, wants);
    }
    /// Whether it needs the stock levels of the stores it touches.
    fn reads_stock(&self) -> bool {
        false
    }
    /// The `clientId`s of records it creates (offline sales, baskets and payments made under
    /// the till's id), to be looked up in history first.
    fn client_ids(&self) -> Vec<(Kind, String)> {
        Vec::new()
    }
    /// New identifiers it takes, at most.
    fn ids_needed(&self, state: &MerchantState) -> usize {
        let _ = state;
        0
    }
    /// Validates every object in order against `state` and applies the accepted ones to it.
    fn apply(&mut self, state: &mut MerchantState, ids: &mut dyn Iterator<Item = i64>, now: i64);
    fn changed(&self) -> bool;
    /// The stock it moves.
    fn moves(&self) -> &[StockMove] {
        &[]
    }
    /// What it adds to the sales running totals.
    fn totals(&self) -> Option<&Deltas> {
        None
    }
    /// What storage keeps of it, in order.
    fn steps<'a>(&'a self, out: &mut Vec<WriteStep<'a>>);
    fn fail(&mut self, failure: Failure);
    /// Answers against the state as published after the write.
    fn answer(self: Box<Self>, state: &MerchantState, render: &dyn Render);
    /// The client's `Idempotency-Key`, if it sent one.
    fn idempotency(&self) -> Option<&Idempotency>;
    /// Takes the answer stored for its key by an earlier request (or refuses the key when it
    /// named another request): the job is then neither validated nor written.
    fn settle(&mut self, stored: StoredAnswer);
    fn settled(&self) -> bool;
    /// Its answer as stored with the write, rendered against the state the write leaves.
    fn stored_answer(&self, state: &MerchantState, render: &dyn Render) -> String;
    /// The change events of what it wrote, the objects rendered against the state the write
    /// leaves (stock events are the group's: see `Group::persist`).
    fn events(&self, state: &MerchantState, render: &dyn Render, out: &mut Vec<NewEvent>);
}

/// The events of the records a job wrote: per record, its actions in order. A record the
/// state no longer holds (a finished sale the group pushed out of the cached window) is
/// rendered from the job's own copy.
pub(crate) fn record_events<'a, R: Resource>(
    state: &MerchantState,
    render: &dyn Render,
    actions: &[(i64, &'static str)],
    written: impl Fn(i64) -> Option<&'a R>,
    out: &mut Vec<NewEvent>,
) {
    let mut rendered: Option<(i64, String)> = None;
    for (id, action) in actions {
        let data = match &rendered {
            Some((last, json)) if last == id => json.clone(),
            _ => {
                let json = match (state.entry::<R>(*id), written(*id)) {
                    (Some(entry), _) => render.event(entry.record(), Some(entry.memo()), state),
                    (None, Some(record)) => render.event(record, None, state),
                    (None, None) => "null".to_owned(),
                };
                rendered = Some((*id, json.clone()));
                json
            }
        };
        out.push(NewEvent {
            kind: EventKind::new(R::EVENT, action),
            object_id: *id,
            data,
        });
    }
}

/// The [`Job`] methods every job answers alike from its `failure` and `replay` fields.
macro_rules! replay_methods {
    () => {
        fn fail(&mut self, failure: Failure) {
            self.failure = Some(failure);
        }

        fn idempotency(&self) -> Option<&Idempotency> {
            self.replay.key.as_ref()
        }

        fn settle(&mut self, stored: StoredAnswer) {
            self.replay.settle(stored);
        }

        fn settled(&self) -> bool {
            self.replay.settled.is_some()
        }
    };
    // A job whose answer is one field, rendered by one `Render` method when stored.
    (answer: $field:ident, rendered: $render:ident) => {
        replay_methods!();

        fn answer(mut self: Box<Self>, _: &MerchantState, _: &dyn Render) {
            send_answer(
                self.reply.take(),
                self.failure.take(),
                self.replay.settled.take(),
                || std::mem::take(&mut self.$field),
            );
        }

        fn stored_answer(&self, _: &MerchantState, render: &dyn Render) -> String {
            render.$render(&self.$field)
        }
    };
}
pub(crate) use replay_methods;

/// What a job keeps of its `Idempotency-Key`.
pub(crate) struct Replay<T> {
    pub(crate) key: Option<Idempotency>,
    pub(crate) settled: Option<Answered<T>>,
}

impl<T: serde::de::DeserializeOwned> Replay<T> {
    pub(crate) fn new(key: Option<Idempotency>) -> Self {
        Self { key, settled: None }
    }

    pub(crate) fn settle(&mut self, stored: StoredAnswer) {
        let same = self
            .key
            .as_ref()
            .is_some_and(|k| k.fingerprint == stored.fingerprint);
        self.settled = Some(match serde_json::from_str(&stored.answer) {
            Ok(answer) if same => Answered::Replayed(answer),
            Ok(_) => Answered::KeyReused,
            Err(e) => {
                tracing::error!(error = %e, "a stored idempotent answer does not parse");
                Answered::KeyReused
            }
        });
    }
}

/// Sends a job's answer, once: its failure, else the answer its `Idempotency-Key` settled on,
/// else what it did (rendered only then).
pub(crate) fn send_answer<T>(
    reply: Option<Answer<T>>,
    failure: Option<Failure>,
    settled: Option<Answered<T>>,
    fresh: impl FnOnce() -> T,
) {
    let Some(reply) = reply else {
        return;
    };
    let answer = match (failure, settled) {
        (Some(failure), _) => Err(failure),
        (None, Some(settled)) => Ok(settled),
        (None, None) => Ok(Answered::Fresh(fresh())),
    };
    let _ = reply.send(answer);
}

pub(crate) fn want_missing<R: Resource>(state: &MerchantState, id: i64, wants: &mut Wants) {
    if let (Some(kind), None) = (R::HISTORY, state.entry::<R>(id)) {
        wants.entry(kind).or_default().insert(id);
    }
}
