//! Writing one group of queued writes: validated in order against a working copy of the
//! state, persisted in one transaction, and only then answered.
//!
//! Storage opens the group ([`OpenGroup`]) as it wants: a database shared by replicas, under
//! a claim of the merchant taken before anything is validated. When the
//! database is ahead of the cached state (another replica wrote), the group is handed back
//! ([`Written::Stale`]) to be written again after a reload. So no write is ever validated
//! against stale state, and writes for one merchant stay serialized across replicas.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use actix::Addr;

use crate::merchant::job::{Job, Wants};
use crate::merchant::ports::{GroupWrites, OpenGroup, StorageError};
use crate::merchant::render::Render;
use crate::merchant::resource::Kind;
use crate::merchant::state::MerchantState;
use crate::merchant::stock::{ApplyStock, Probe, StoreActor};
use crate::merchant::Environment;
use domain::clock::write_millis;
use domain::event::{EventKind, NewEvent};
use domain::sales::totals::Deltas;
use domain::stock::levels::StockMove;
use domain::{now_millis, Failure};

/// How a group ended.
pub(crate) enum Written {
    /// Every job is decided (saved, refused or failed); the state to publish, if any changed.
    Done(Vec<Box<dyn Job>>, Option<Box<MerchantState>>),
    /// The database holds writes the cached state has not seen: reload, then write these.
    Stale(Vec<Box<dyn Job>>),
}

impl Written {
    fn failed(mut jobs: Vec<Box<dyn Job>>, failure: Failure) -> Self {
        for job in &mut jobs {
            job.fail(failure.clone());
        }
        Written::Done(jobs, None)
    }
}

/// What writing a group needs, taken from the supervisor so it can run beside its mailbox.
pub(crate) struct Group {
    pub env: Environment,
    pub merchant_id: i64,
    pub stores: HashMap<i64, Addr<StoreActor>>,
}

impl Group {
    #[tracing::instrument(level = "debug", skip_all, fields(merchant_id = self.merchant_id, writes = jobs.len()))]
    pub async fn write(&self, base: Arc<MerchantState>, mut jobs: Vec<Box<dyn Job>>) -> Written {
        let mut start = (*base).clone();
        start.begin_group();
        if let Err(failure) = self.prepare(&mut start, &jobs).await {
            return Written::failed(jobs, failure);
        }
        let mut group = match self
            .env
            .storage
            .open_group(self.merchant_id, base.version)
            .await
        {
            Ok(Some(group)) => group,
            Ok(None) => return Written::Stale(jobs),
            Err(e) => return Written::failed(jobs, e.into()),
        };
        if let Err(e) = self.settle_repeats(&mut jobs, &mut group).await {
            group.rollback().await;
            return Written::failed(jobs, e.into());
        }
        let mut next = start.clone();
        if let Err(failure) = self.apply(&mut next, &mut jobs, &mut group).await {
            group.rollback().await;
            return Written::failed(jobs, failure);
        }
        if !jobs.iter().any(|j| j.changed()) {
            // Nothing to write; keep what was brought in from history.
            group.rollback().await;
            return Written::Done(jobs, Some(Box::new(next)));
        }
        let moves: Vec<StockMove> = jobs.iter().flat_map(|j| j.moves()).copied().collect();
        let totals = merged_totals(&jobs);
        match self.persist(group, &jobs, (&moves, &totals), &next).await {
            Ok((version, event_seq)) => {
                self.observe_group(jobs.len());
                self.publish_stock(moves).await;
                next.version = version;
                next.event_seq = event_seq;
                Written::Done(jobs, Some(Box::new(next)))
            }
            Err(e) if jobs.len() == 1 => Written::failed(jobs, e.into()),
            // One bad write must not fail the others: each is tried again on its own.
            Err(_) => self.write_one_by_one(base.version, start, jobs).await,
        }
    }

    /// Brings what the jobs name from history into the state, and waits for the stores'
    /// stock when a job reads it.
    #[tracing::instrument(level = "debug", skip_all)]
    async fn prepare(
        &self,
        state: &mut MerchantState,
        jobs: &[Box<dyn Job>],
    ) -> Result<(), Failure> {
        self.bring_client_sales(state, jobs).await?;
        // Two rounds: a payment named by id brings its basket in the second.
        for _ in 0..2 {
            let mut wants = Wants::new();
            for job in jobs {
                job.wants(state, &mut wants);
            }
            if wants.is_empty() {
                break;
            }
            self.env
                .history
                .bring(&*self.env.storage, state, &wants)
                .await?;
        }
        if jobs.iter().any(|j| j.reads_stock()) {
            // A store's actor loads its stock when started: wait until each has, so a
            // just-started one is not read as empty.
            for addr in self.stores.values() {
                addr.send(Probe { crash: false })
                    .await
                    .map_err(|e| Failure::internal(format!("store actor failed: {e}")))??;
            }
        }
        Ok(())
    }

    /// Brings in the records earlier writes made for the jobs' `clientId`s (a repeat answers
    /// the record it made): one indexed look-up per kind, for the ones the state does not hold.
    async fn bring_client_sales(
        &self,
        state: &mut MerchantState,
        jobs: &[Box<dyn Job>],
    ) -> Result<(), Failure> {
        let mut unknown: BTreeMap<Kind, Vec<String>> = BTreeMap::new();
        for (kind, client) in jobs.iter().flat_map(|j| j.client_ids()) {
            if !state.index.by_client.contains_key(&(kind, client.clone())) {
                unknown.entry(kind).or_default().push(client);
            }
        }
        let mut wants = Wants::new();
        for (kind, clients) in unknown {
            let ids = self
                .env
                .storage
                .made_by_clients(kind.record(), self.merchant_id, clients)
                .await?;
            if !ids.is_empty() {
                wants.insert(kind, ids.into_iter().collect());
            }
        }
        if !wants.is_empty() {
            self.env
                .history
                .bring(&*self.env.storage, state, &wants)
                .await?;
        }
        Ok(())
    }

    /// Jobs whose `Idempotency-Key` has a live stored answer take it instead of running.
    async fn settle_repeats(
        &self,
        jobs: &mut [Box<dyn Job>],
        group: &mut Box<dyn OpenGroup>,
    ) -> Result<(), StorageError> {
        let now = now_millis();
        for job in jobs.iter_mut() {
            let Some(key) = job.idempotency().cloned() else {
                continue;
            };
            if let Some(stored) = group.stored_answer(&key, now).await? {
                job.settle(stored);
            }
        }
        Ok(())
    }

    /// What the jobs keep: their records, the answers of those sent with an
    /// `Idempotency-Key`, their events (each group's stock events after), and the state left.
    fn writes<'a>(
        &self,
        jobs: &'a [Box<dyn Job>],
        (moves, totals): (&'a [StockMove], &'a Deltas),
        events: &'a mut Vec<NewEvent>,
        state: &'a MerchantState,
        now: i64,
    ) -> GroupWrites<'a> {
        let mut answers = Vec::new();
        let mut steps = Vec::new();
        for job in jobs {
            if let Some(key) = job.idempotency().filter(|_| job.changed()) {
                answers.push((key, job.stored_answer(state, &*self.env.render)));
            }
            job.steps(&mut steps);
            job.events(state, &*self.env.render, events);
        }
        stock_events(moves, state, &*self.env.render, events);
        GroupWrites {
            merchant_id: self.merchant_id,
            steps,
            answers,
            moves,
            totals,
            events,
            after_event: state.event_seq,
            now,
        }
    }

    /// Validates and applies the jobs in order; each write of the group has its own time, so
    /// "this request" stays one request.
    async fn apply(
        &self,
        state: &mut MerchantState,
        jobs: &mut [Box<dyn Job>],
        group: &mut Box<dyn OpenGroup>,
    ) -> Result<(), Failure> {
        for (now, job) in (write_millis()..).zip(jobs.iter_mut()) {
            let needed = if job.settled() {
                0
            } else {
                job.ids_needed(state)
            };
            let ids = group.allocate_ids(needed).await?;
            job.apply(state, &mut ids.into_iter(), now);
        }
        Ok(())
    }

    /// Persists the jobs, their stock moves and their events, and commits. Gives back the
    /// version committed and the merchant's last event number.
    #[tracing::instrument(level = "debug", skip_all, fields(moves = changes.0.len()))]
    async fn persist(
        &self,
        mut group: Box<dyn OpenGroup>,
        jobs: &[Box<dyn Job>],
        changes: (&[StockMove], &Deltas),
        state: &MerchantState,
    ) -> Result<(i64, i64), StorageError> {
        let version = group.version();
        let mut events = Vec::new();
        let writes = self.writes(jobs, changes, &mut events, state, write_millis());
        let appended = writes.events.len();
        let event_seq = match group.write(&writes).await {
            Ok(seq) => seq,
            Err(e) => {
                // Now, not lazily: the retry claims the merchant's row this transaction holds.
                group.rollback().await;
                return Err(e);
            }
        };
        if !self.env.write_delay.is_zero() {
            tokio::time::sleep(self.env.write_delay).await;
        }
        group.commit().await?;
        self.env.metrics.events_appended.inc_by(appended as u64);
        Ok((version, event_seq))
    }

    /// After a group failed in the database: every job again, in order, each in a part of one
    /// transaction of its own, against the state the ones before it left. Only the jobs that
    /// fail again fail.
    async fn write_one_by_one(
        &self,
        expected: i64,
        start: MerchantState,
        mut jobs: Vec<Box<dyn Job>>,
    ) -> Written {
        let mut group = match self
            .env
            .storage
            .open_group(self.merchant_id, expected)
            .await
        {
            Ok(Some(group)) => group,
            Ok(None) => return Written::Stale(jobs),
            Err(e) => return Written::failed(jobs, e.into()),
        };
        let version = group.version();
        let mut state = start;
        let mut moves = Vec::new();
        let mut appended = 0;
        for (now, at) in (write_millis()..).zip(0..jobs.len()) {
            let mut trial = state.clone();
            match self
                .write_part(&mut group, &mut trial, &mut jobs, at, now)
                .await
            {
                Ok(Ok(events)) => {
                    moves.extend(jobs[at].moves().iter().copied());
                    appended += events;
                    state = trial;
                }
                Ok(Err(e)) => jobs[at].fail(e.into()),
                // The transaction itself is lost (on PostgreSQL an error outside a savepoint
                // aborts it, and its COMMIT would silently roll back): nothing is written.
                Err(e) => {
                    group.rollback().await;
                    return Written::failed(jobs, e.into());
                }
            }
        }
        if let Err(e) = group.commit().await {
            return Written::failed(jobs, e.into());
        }
        self.env.metrics.events_appended.inc_by(appended as u64);
        self.observe_group(jobs.len());
        self.publish_stock(moves).await;
        state.version = version;
        Written::Done(jobs, Some(Box::new(state)))
    }

    /// Job `at` as a part of the group that is taken back alone if it fails. The inner error
    /// is the job's own (its part undone, the group goes on); the outer one loses the group.
    async fn write_part(
        &self,
        group: &mut Box<dyn OpenGroup>,
        state: &mut MerchantState,
        jobs: &mut [Box<dyn Job>],
        at: usize,
        now: i64,
    ) -> Result<Result<usize, StorageError>, StorageError> {
        let job = &mut jobs[at];
        let needed = if job.settled() {
            0
        } else {
            job.ids_needed(state)
        };
        let ids = group.allocate_ids(needed).await?;
        job.apply(state, &mut ids.into_iter(), now);
        if !job.changed() {
            return Ok(Ok(0));
        }
        let mut events = Vec::new();
        let job = &jobs[at..=at];
        let totals = merged_totals(job);
        let writes = self.writes(job, (job[0].moves(), &totals), &mut events, state, now);
        let appended = writes.events.len();
        Ok(match group.write_part(&writes).await? {
            Ok(seq) => {
                state.event_seq = seq;
                Ok(appended)
            }
            Err(e) => Err(e),
        })
    }

    fn observe_group(&self, writes: usize) {
        self.env
            .metrics
            .merchant_write_batch_size
            .observe(writes as f64);
    }

    /// The stores' actors learn of committed stock before the writes are answered, so a read
    /// sent after an answer sees it.
    async fn publish_stock(&self, moves: Vec<StockMove>) {
        for (store_id, addr) in &self.stores {
            let mine: Vec<StockMove> = moves
                .iter()
                .filter(|m| m.store_id == *store_id)
                .copied()
                .collect();
            if !mine.is_empty() {
                let _ = addr.send(ApplyStock(mine)).await;
            }
        }
    }
}

/// What the jobs add to the sales running totals, one delta per row.
fn merged_totals(jobs: &[Box<dyn Job>]) -> Deltas {
    let mut all = Deltas::new();
    for totals in jobs.iter().filter_map(|j| j.totals()) {
        for (key, t) in totals {
            all.entry(key.clone()).or_default().add(t);
        }
    }
    all
}

/// `stock.changed` for each product and store a group's moves touched, with the levels the
/// commit leaves (the state counts the group's moves as pending).
fn stock_events(
    moves: &[StockMove],
    state: &MerchantState,
    render: &dyn Render,
    out: &mut Vec<NewEvent>,
) {
    let touched: BTreeSet<(i64, i64)> = moves.iter().map(|m| (m.store_id, m.product_id)).collect();
    for (store_id, product_id) in touched {
        let level = state.stock_level(store_id, product_id);
        out.push(NewEvent {
            kind: EventKind::new("stock", "changed"),
            object_id: product_id,
            data: render.stock(store_id, product_id, level),
        });
    }
}
