//! The actors' storage ports (`ports.rs`) in memory, for the actors' own tests: no database,
//! and the failures a database has (a refused commit) on demand.
//!
//! It keeps each merchant's state as a committed group leaves it, not rows: activation starts
//! from the last committed state, with the version, event number, stock and kept answers a
//! database would give. It keeps no history past the cached window (finished sales the window
//! dropped are not found again), which the actors' tests do not reach.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::watch;

use super::merchant::history::{by_kind, Historic};
use super::merchant::state::MerchantState;
use super::ports::{
    Found, GroupStore, HistoryStore, OpenGroup, Pending, StateStore, StockStore, Writes, Writing,
};
use super::resource::Kind;
use super::store::StockMap;
use domain::batch::{Idempotency, IDEMPOTENCY_TTL_MILLIS};
use domain::stock::StockMove;
use storage::idempotency::StoredAnswer;
use storage::{DbError, SalesFilter};

/// Storage in memory, shared by every clone.
#[derive(Clone, Default)]
pub struct MemoryStorage {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Default)]
struct Inner {
    merchants: HashMap<i64, Kept>,
    last_id: i64,
    /// While true every commit fails, as a database that went away.
    refusing: bool,
    commits: usize,
    loads: usize,
}

/// One merchant as committed.
#[derive(Default)]
struct Kept {
    version: i64,
    event_seq: i64,
    state: Option<MerchantState>,
    stock: BTreeMap<i64, StockMap>,
    /// By (application, key): the answer and when it expires.
    answers: HashMap<(i64, String), (StoredAnswer, i64)>,
}

impl MemoryStorage {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A test that panicked while holding the lock left plain data behind; go on with it.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// From now on every commit fails (`true`), or none does.
    pub fn refuse_commits(&self, refusing: bool) {
        self.lock().refusing = refusing;
    }

    /// Groups committed so far.
    pub fn commits(&self) -> usize {
        self.lock().commits
    }

    /// Merchant states loaded so far (activations and reloads).
    pub fn loads(&self) -> usize {
        self.lock().loads
    }

    /// The merchant's committed version and last event number.
    pub fn committed(&self, merchant_id: i64) -> (i64, i64) {
        let inner = self.lock();
        inner
            .merchants
            .get(&merchant_id)
            .map_or((0, 0), |k| (k.version, k.event_seq))
    }
}

impl StateStore for MemoryStorage {
    fn load(&self, blank: MerchantState) -> Pending<'static, MerchantState> {
        let mut inner = self.lock();
        inner.loads += 1;
        let kept = inner.merchants.entry(blank.merchant_id).or_default();
        let mut state = kept.state.clone().unwrap_or(blank);
        state.version = kept.version;
        state.event_seq = kept.event_seq;
        state.stock = kept
            .stock
            .iter()
            .map(|(id, levels)| (*id, watch::channel(Arc::new(levels.clone())).1))
            .collect();
        Box::pin(async move { Ok(state) })
    }

    fn version(&self, merchant_id: i64) -> Pending<'static, i64> {
        let version = self.committed(merchant_id).0;
        Box::pin(async move { Ok(version) })
    }

    fn hears_others(&self) -> bool {
        // One process: there are no others.
        true
    }
}

impl GroupStore for MemoryStorage {
    fn open_group(
        &self,
        merchant_id: i64,
        expected: i64,
    ) -> Pending<'static, Option<Box<dyn OpenGroup>>> {
        let current = self.committed(merchant_id).0;
        let group = (current == expected).then(|| {
            Box::new(MemoryGroup {
                storage: self.clone(),
                merchant_id,
                version: expected + 1,
                staged: Staged::default(),
            }) as Box<dyn OpenGroup>
        });
        Box::pin(async move { Ok(group) })
    }
}

/// A group open in memory: what it writes waits in `staged` until the commit.
struct MemoryGroup {
    storage: MemoryStorage,
    merchant_id: i64,
    version: i64,
    staged: Staged,
}

#[derive(Default)]
struct Staged {
    state: Option<MerchantState>,
    event_seq: Option<i64>,
    moves: Vec<StockMove>,
    answers: Vec<(Idempotency, String, i64)>,
}

impl MemoryGroup {
    fn stage(&mut self, w: &Writes<'_>) -> i64 {
        let seq = w.after_event + w.events.len() as i64;
        self.staged.state = Some(w.state.clone());
        self.staged.event_seq = Some(seq);
        self.staged.moves.extend_from_slice(w.moves);
        for (key, answer) in &w.answers {
            self.staged
                .answers
                .push(((*key).clone(), answer.clone(), w.now));
        }
        seq
    }
}

impl OpenGroup for MemoryGroup {
    fn version(&self) -> i64 {
        self.version
    }

    fn allocate_ids(&mut self, n: usize) -> Pending<'_, Vec<i64>> {
        let mut inner = self.storage.lock();
        let first = inner.last_id + 1;
        inner.last_id += n as i64;
        let ids = (first..first + n as i64).collect();
        Box::pin(async move { Ok(ids) })
    }

    fn stored_answer<'a>(
        &'a mut self,
        key: &'a Idempotency,
        now: i64,
    ) -> Pending<'a, Option<StoredAnswer>> {
        let inner = self.storage.lock();
        let found = inner
            .merchants
            .get(&self.merchant_id)
            .and_then(|k| k.answers.get(&(key.application_id, key.key.clone())))
            .filter(|(_, expires)| *expires > now)
            .map(|(answer, _)| answer.clone());
        Box::pin(async move { Ok(found) })
    }

    fn write<'a>(&'a mut self, writes: Writes<'a>) -> Writing<'a, i64> {
        let seq = self.stage(&writes);
        Box::pin(async move { Ok(seq) })
    }

    fn write_part<'a>(&'a mut self, writes: Writes<'a>) -> Writing<'a, Result<i64, DbError>> {
        let seq = self.stage(&writes);
        Box::pin(async move { Ok(Ok(seq)) })
    }

    fn commit(self: Box<Self>) -> Pending<'static, ()> {
        let MemoryGroup {
            storage,
            merchant_id,
            version,
            staged,
        } = *self;
        let mut inner = storage.lock();
        if inner.refusing {
            return Box::pin(async { Err(DbError::Conflict("the commit was refused".into())) });
        }
        inner.commits += 1;
        let kept = inner.merchants.entry(merchant_id).or_default();
        kept.version = version;
        if let Some(state) = staged.state {
            kept.state = Some(state);
        }
        if let Some(seq) = staged.event_seq {
            kept.event_seq = seq;
        }
        for m in staged.moves {
            let level = kept
                .stock
                .entry(m.store_id)
                .or_default()
                .entry(m.product_id)
                .or_default();
            level.total += m.total;
            level.sold += m.sold;
        }
        for (key, answer, now) in staged.answers {
            let stored = StoredAnswer {
                fingerprint: key.fingerprint.clone(),
                answer,
            };
            kept.answers.insert(
                (key.application_id, key.key),
                (stored, now + IDEMPOTENCY_TTL_MILLIS),
            );
        }
        Box::pin(async { Ok(()) })
    }

    fn rollback(self: Box<Self>) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        Box::pin(async {})
    }
}

impl StockStore for MemoryStorage {
    fn store_stock(&self, merchant_id: i64, store_id: i64) -> Pending<'static, StockMap> {
        let inner = self.lock();
        let stock = inner
            .merchants
            .get(&merchant_id)
            .and_then(|k| k.stock.get(&store_id))
            .cloned()
            .unwrap_or_default();
        Box::pin(async move { Ok(stock) })
    }
}

/// Nothing past the window is kept: an empty answer of `R`'s kind.
async fn nothing<R: Historic>() -> Result<Found, DbError> {
    Ok(Box::new(Vec::<R>::new()))
}

impl HistoryStore for MemoryStorage {
    fn find(&self, kind: Kind, _: i64, _: Vec<i64>) -> Pending<'static, Found> {
        by_kind!(kind, nothing())
    }

    fn query(&self, kind: Kind, _: i64, _: SalesFilter) -> Pending<'static, Found> {
        by_kind!(kind, nothing())
    }

    fn made_by_clients(&self, _: Kind, _: i64, _: Vec<String>) -> Pending<'static, Vec<i64>> {
        Box::pin(async { Ok(Vec::new()) })
    }
}
