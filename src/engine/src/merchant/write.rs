//! A batch write of one resource: each object validated against the working state in order,
//! the accepted ones applied to it, and the changes kept to be stored and answered.

use std::collections::BTreeSet;
use std::time::Instant;

use serde_json::{Map, Value};

use super::job::{
    record_events, replay_methods, send_answer, want_missing, Answer, Job, ObjectOutcome, Replay,
    Saved, Wants,
};
use crate::merchant::ports::{Registered, WriteStep};
use crate::merchant::render::Render;
use crate::merchant::resource::{Input, Kind, Resource};
use crate::merchant::state::MerchantState;
use domain::batch::{BatchObject, Change, Idempotency, StoredAnswer, WriteMode};
use domain::event::NewEvent;
use domain::sales::basket::BasketRecord;
use domain::sales::totals::Deltas;
use domain::stock::levels::StockMove;
use domain::{Failure, Refusal};

/// A batch write of one resource.
pub(crate) struct WriteJob<R> {
    mode: WriteMode,
    objects: Vec<BatchObject>,
    caller: i64,
    sent: Instant,
    reply: Option<Answer<Vec<ObjectOutcome>>>,
    /// Per object: (created, id, detail) or the refusal.
    outcomes: Vec<Result<(bool, i64, String), Refusal>>,
    changes: Changes<R>,
    failure: Option<Failure>,
    replay: Replay<Vec<ObjectOutcome>>,
}

impl<R: Resource> WriteJob<R> {
    pub(crate) fn new(
        mode: WriteMode,
        objects: Vec<BatchObject>,
        caller: i64,
        key: Option<Idempotency>,
        reply: Answer<Vec<ObjectOutcome>>,
    ) -> Self {
        Self {
            mode,
            objects,
            caller,
            sent: Instant::now(),
            reply: Some(reply),
            outcomes: Vec::new(),
            changes: Changes::default(),
            failure: None,
            replay: Replay::new(key),
        }
    }

    fn fields(&self) -> impl Iterator<Item = &Map<String, Value>> {
        self.objects.iter().filter_map(|o| o.fields.as_ref().ok())
    }

    /// Each object's outcome, saved records rendered against `state` (category titles,
    /// nested records) and kept there for the reads that follow.
    fn outcomes(&self, state: &MerchantState, render: &dyn Render) -> Vec<ObjectOutcome> {
        self.objects
            .iter()
            .zip(&self.outcomes)
            .map(|(object, outcome)| ObjectOutcome {
                key: object.key.clone(),
                result: outcome.clone().map(|(created, id, detail)| Saved {
                    created,
                    id,
                    json: state
                        .entry::<R>(id)
                        .map(|e| render.record(e.record(), e.memo(), state))
                        .unwrap_or_else(|| "null".to_owned()),
                    detail,
                }),
            })
            .collect()
    }
}

impl<R: Resource> Job for WriteJob<R> {
    fn sent(&self) -> Instant {
        self.sent
    }

    fn objects(&self) -> usize {
        self.objects.len()
    }

    fn wants(&self, state: &MerchantState, wants: &mut Wants) {
        for fields in self.fields() {
            if let Some(id) = fields.get("id").and_then(Value::as_i64) {
                want_missing::<R>(state, id, wants);
                // A payment or an order being changed needs its basket too.
                if let Some(basket) = state.entry::<R>(id).and_then(|r| r.basket_id()) {
                    want_missing::<domain::sales::basket::BasketRecord>(state, basket, wants);
                }
            }
            for basket in R::referenced_baskets(fields) {
                want_missing::<domain::sales::basket::BasketRecord>(state, basket, wants);
            }
            for payment in R::referenced_payments(fields) {
                want_missing::<domain::sales::payment::TransactionRecord>(state, payment, wants);
            }
        }
    }

    fn reads_stock(&self) -> bool {
        R::READS_STOCK
    }

    fn client_ids(&self) -> Vec<(Kind, String)> {
        match R::HISTORY {
            Some(kind) => self
                .fields()
                .filter_map(R::client_id_of)
                .map(|c| (kind, c))
                .collect(),
            None => Vec::new(),
        }
    }

    fn ids_needed(&self, state: &MerchantState) -> usize {
        self.fields().map(|f| R::ids_needed_in(f, state)).sum()
    }

    fn apply(&mut self, state: &mut MerchantState, ids: &mut dyn Iterator<Item = i64>, now: i64) {
        self.outcomes.clear();
        self.changes.clear();
        if self.settled() {
            return;
        }
        let mut touched = BTreeSet::new();
        let creates = self.mode != WriteMode::UpdateOnly;
        for object in &self.objects {
            if let Some(repeat) = object
                .fields
                .as_ref()
                .ok()
                .filter(|_| creates)
                .and_then(|f| repeated::<R>(state, f))
            {
                self.outcomes.push(repeat);
                continue;
            }
            let rotates = object.secret.is_some();
            let input = object.fields.clone().map(|fields| Input {
                fields,
                secret: object.secret.clone(),
                disabled_because: object.disabled_because.clone(),
                caller: self.caller,
            });
            let decided = input
                .map_err(Refusal::invalid)
                .and_then(|input| decide::<R>(state, self.mode, input, &mut *ids, now))
                .and_then(|(is_new, record)| {
                    if touched.insert(record.id()) {
                        Ok((is_new, record))
                    } else {
                        Err(Refusal::Conflict(vec![format!(
                            "id: {} {} appears twice in this request.",
                            R::NOUN.to_lowercase(),
                            record.id()
                        )]))
                    }
                });
            let outcome = decided.map(|(is_new, record)| {
                let id = record.id();
                let detail = self.changes.accept(state, is_new, record, rotates);
                (is_new, id, detail)
            });
            self.outcomes.push(outcome);
        }
    }

    fn changed(&self) -> bool {
        !self.changes.is_empty()
    }

    fn moves(&self) -> &[StockMove] {
        &self.changes.moves
    }

    fn totals(&self) -> Option<&Deltas> {
        Some(&self.changes.totals)
    }

    fn steps<'a>(&'a self, out: &mut Vec<WriteStep<'a>>) {
        self.changes.steps(out);
    }

    replay_methods!();

    fn answer(mut self: Box<Self>, state: &MerchantState, render: &dyn Render) {
        send_answer(
            self.reply.take(),
            self.failure.take(),
            self.replay.settled.take(),
            || self.outcomes(state, render),
        );
    }

    fn stored_answer(&self, state: &MerchantState, render: &dyn Render) -> String {
        render.written(&self.outcomes(state, render))
    }

    fn events(&self, state: &MerchantState, render: &dyn Render, out: &mut Vec<NewEvent>) {
        self.changes.events(state, render, out);
    }
}

/// The changes a job accepted for one resource: the records to store, what each did (for its
/// events), the baskets they booked and the stock they move.
pub(crate) struct Changes<R> {
    records: Vec<(Change, R)>,
    /// (id, `created` | `updated` | a completion), in order.
    actions: Vec<(i64, &'static str)>,
    /// Baskets its records booked (a stock count's wastage), stored before them.
    booked: Vec<(Change, BasketRecord)>,
    moves: Vec<StockMove>,
    totals: Deltas,
}

impl<R> Default for Changes<R> {
    fn default() -> Self {
        Self {
            records: Vec::new(),
            actions: Vec::new(),
            booked: Vec::new(),
            moves: Vec::new(),
            totals: Deltas::new(),
        }
    }
}

impl<R: Resource> Changes<R> {
    pub(crate) fn clear(&mut self) {
        *self = Self::default();
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.records.len()
    }

    pub(crate) fn moves(&self) -> &[StockMove] {
        &self.moves
    }

    pub(crate) fn totals(&self) -> &Deltas {
        &self.totals
    }

    pub(crate) fn records(&self) -> impl Iterator<Item = &R> {
        self.records.iter().map(|(_, r)| r)
    }

    /// Puts a record that passed its rules into the working state, with what it brings (the
    /// stock it moves, the records it books), and keeps it to be stored. Gives the success
    /// message's details.
    pub(crate) fn accept(
        &mut self,
        state: &mut MerchantState,
        is_new: bool,
        record: R,
        rotates: bool,
    ) -> String {
        let before = state.entry::<R>(record.id()).cloned();
        let before = before.as_deref().map(|e| e.record());
        let detail = record.success_detail(before);
        let moves = record.stock_moves(before);
        state.add_pending_stock(&moves);
        self.moves.extend(moves);
        record.sales_totals(before, state, &mut self.totals);
        for basket in record.side_records(before, state) {
            self.booked.push((Change::New, basket));
        }
        let id = record.id();
        let change = match before {
            _ if is_new => Change::New,
            Some(b) if record.same_children(b) => Change::UpdatedKeepingChildren,
            _ => Change::Updated,
        };
        self.actions
            .push((id, if is_new { "created" } else { "updated" }));
        if let Some(completes) = R::COMPLETES_AS {
            if record.locked() && !before.is_some_and(|b| b.locked()) {
                self.actions.push((id, completes));
            }
        }
        if let Some(action) = record.also_event(before) {
            self.actions.push((id, action));
        }
        if rotates && !is_new {
            self.actions.push((id, "secret_rotated"));
        }
        state.put(record.clone());
        self.records.push((change, record));
        detail
    }

    pub(crate) fn steps<'a>(&'a self, out: &mut Vec<WriteStep<'a>>) {
        if !self.booked.is_empty() {
            out.push(WriteStep::Records(BasketRecord::changes(&self.booked)));
        }
        if !self.records.is_empty() {
            out.push(WriteStep::Records(R::changes(&self.records)));
        }
    }

    pub(crate) fn events(
        &self,
        state: &MerchantState,
        render: &dyn Render,
        out: &mut Vec<NewEvent>,
    ) {
        let written = |id| {
            self.records
                .iter()
                .rev()
                .find(|(_, r)| r.id() == id)
                .map(|(_, r)| r)
        };
        record_events::<R>(state, render, &self.actions, written, out);
        let booked: Vec<(i64, &'static str)> = self
            .booked
            .iter()
            .flat_map(|(_, b)| [(b.id, "created"), (b.id, "completed")])
            .collect();
        record_events::<BasketRecord>(state, render, &booked, |_| None, out);
    }
}

/// A creation under a `clientId` that already made a record: the same body answers that
/// record (nothing is written again), another body is refused.
fn repeated<R: Resource>(
    state: &MerchantState,
    fields: &Map<String, Value>,
) -> Option<Result<(bool, i64, String), Refusal>> {
    let client = R::client_id_of(fields)?;
    let (id, made_from) = R::made_by_client(state, &client)?;
    let noun = R::NOUN.to_lowercase();
    Some(
        if made_from.is_some_and(|stored| domain::offline::fingerprint::made_from(&stored, fields))
        {
            Ok((
                false,
                id,
                format!("clientId {client} already made {noun} {id}; nothing was written again."),
            ))
        } else {
            Err(Refusal::Conflict(vec![format!(
                "clientId: {client} already made {noun} {id} from a different body; send it as \
                 it was, or give a new {noun} a new clientId."
            )]))
        },
    )
}

/// Validates one object against the working state, giving the record to write.
pub(crate) fn decide<R: Resource>(
    state: &MerchantState,
    mode: WriteMode,
    input: Input,
    ids: &mut dyn Iterator<Item = i64>,
    now: i64,
) -> Result<(bool, R), Refusal> {
    let decided = match input.fields.get("id") {
        None | Some(Value::Null) if mode == WriteMode::UpdateOnly => Err(Refusal::invalid(
            "id: required to update (PUT only updates).",
        )),
        None | Some(Value::Null) => R::create(ids, input, state, now)
            .map(|r| (true, r))
            .map_err(Refusal::Invalid),
        Some(Value::Number(n)) => {
            let existing = n
                .as_i64()
                .and_then(|id| state.find::<R>(id))
                .ok_or_else(|| {
                    Refusal::invalid(format!(
                        "id: {} {n} does not exist.",
                        R::NOUN.to_lowercase()
                    ))
                })?;
            if existing.locked() {
                return Err(Refusal::Locked(vec![format!(
                    "{} {n} is completed and cannot change.",
                    R::NOUN
                )]));
            }
            existing
                .update(ids, input, state, now)
                .map(|r| (false, r))
                .map_err(Refusal::Invalid)
        }
        Some(_) => Err(Refusal::invalid("id: must be an integer.")),
    }?;
    decided.1.check(state)?;
    let conflicts = decided.1.conflicts(state);
    if conflicts.is_empty() {
        Ok(decided)
    } else {
        Err(Refusal::Conflict(conflicts))
    }
}
