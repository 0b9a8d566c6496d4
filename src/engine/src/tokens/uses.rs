//! When a token family's access tokens were last used, recorded without slowing the request
//! that used them. The bearer gate notes each use here: a family is noted at most once a
//! minute in this process (one atomic compare on a per-family stamp), the note goes on a
//! bounded queue without waiting, and one task writes what has queued in one transaction.
//! Under load the queue fills while a write is in flight, so writes batch themselves; a note
//! that finds the queue full is dropped, and the family is noted again a minute later.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, RwLock};

use tokio::sync::mpsc;

use crate::tokens::actors::Store;
use domain::oauth::token::FamilyUse;

/// A family's uses are recorded at most this often per process: "last used" is accurate to
/// about a minute, which is what the page shows.
pub const RECORD_EVERY_MS: i64 = 60_000;
/// Notes waiting for the writer; beyond that they are dropped (see the module comment).
const QUEUE: usize = 8_192;
/// Families written per transaction.
const BATCH: usize = 512;

/// The last time each family was noted, by family id. A plain map behind a lock: every
/// request looks its family up, and a cache with eviction bookkeeping (moka) cost 5 % of the
/// samples of requests spread over 10,000 merchants. Stamps older than the interval hold
/// nothing back, so the writer drops them (see [`Stamps::prune`]).
#[derive(Clone, Default)]
struct Stamps(Arc<RwLock<HashMap<Box<str>, AtomicI64>>>);

impl Stamps {
    /// [`claim`] on the family's stamp, made on its first use.
    fn claim(&self, family_id: &str, now: i64) -> bool {
        {
            let map = self.0.read().unwrap_or_else(|p| p.into_inner());
            if let Some(stamp) = map.get(family_id) {
                return claim(stamp, now);
            }
        }
        let mut map = self.0.write().unwrap_or_else(|p| p.into_inner());
        let stamp = map
            .entry(family_id.into())
            .or_insert_with(|| AtomicI64::new(i64::MIN));
        claim(stamp, now)
    }

    /// Forgets the families not noted for two intervals: their next use is due anyway.
    fn prune(&self, now: i64) {
        let mut map = self.0.write().unwrap_or_else(|p| p.into_inner());
        map.retain(|_, stamp| {
            now.saturating_sub(stamp.load(Ordering::Relaxed)) < 2 * RECORD_EVERY_MS
        });
    }
}

#[derive(Clone)]
pub struct UseRecorder {
    stamps: Stamps,
    queue: mpsc::Sender<FamilyUse>,
}

impl UseRecorder {
    /// Starts the writer task on the current arbiter.
    pub fn start(store: Store) -> Self {
        let (queue, notes) = mpsc::channel(QUEUE);
        let stamps = Stamps::default();
        actix_rt::spawn(write_notes(store, notes, stamps.clone()));
        Self { stamps, queue }
    }

    /// Notes that an access token of `family_id` (of `merchant_id`) was used at `now` (epoch
    /// ms). Never waits.
    pub fn note(&self, family_id: &str, merchant_id: i64, now: i64) {
        if self.stamps.claim(family_id, now) {
            let _ = self.queue.try_send(FamilyUse {
                family_id: family_id.to_owned(),
                merchant_id,
                at: now,
            });
        }
    }
}

/// True when a use at `now` is due to be recorded (the last recorded one is a minute old or
/// more), and then moves the stamp to `now`: of the requests that find the minute over at
/// once, exactly one gets true.
fn claim(stamp: &AtomicI64, now: i64) -> bool {
    let last = stamp.load(Ordering::Relaxed);
    now.saturating_sub(last) >= RECORD_EVERY_MS
        && stamp
            .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
}

/// Writes queued notes until every sender is gone (the server stopped), and drops stale
/// stamps once an interval.
async fn write_notes(store: Store, mut notes: mpsc::Receiver<FamilyUse>, stamps: Stamps) {
    let mut batch = Vec::with_capacity(BATCH);
    let mut pruned = domain::now_millis();
    while notes.recv_many(&mut batch, BATCH).await > 0 {
        if let Err(e) = store.record_uses(&batch).await {
            // "Last used" is informational: a failed write is logged and not retried; the
            // families are noted again at their next use after the interval.
            tracing::warn!(error = %e, families = batch.len(), "recording token use failed");
        }
        batch.clear();
        let now = domain::now_millis();
        if now - pruned >= RECORD_EVERY_MS {
            stamps.prune(now);
            pruned = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_note_each_family_once_a_minute_and_forget_stale_ones() {
        let stamps = Stamps::default();
        let t = 1_774_706_280_000;
        assert!(stamps.claim("a", t));
        assert!(stamps.claim("b", t + 1), "families are apart");
        assert!(!stamps.claim("a", t + 2));
        stamps.prune(t + 2 * RECORD_EVERY_MS);
        assert_eq!(stamps.0.read().unwrap().len(), 1, "a is stale, b not quite");
        stamps.prune(t + 2 * RECORD_EVERY_MS + 1);
        assert!(stamps.0.read().unwrap().is_empty(), "both are stale");
        stamps.claim("c", t + 2 * RECORD_EVERY_MS);
        stamps.prune(t + 2 * RECORD_EVERY_MS + 2);
        assert_eq!(stamps.0.read().unwrap().len(), 1, "a fresh stamp stays");
    }

    #[test]
    fn a_family_is_recorded_at_most_once_a_minute() {
        let stamp = AtomicI64::new(i64::MIN);
        let t = 1_774_706_280_000;
        assert!(claim(&stamp, t), "the first use is recorded");
        assert!(!claim(&stamp, t));
        assert!(!claim(&stamp, t + RECORD_EVERY_MS - 1));
        assert!(claim(&stamp, t + RECORD_EVERY_MS));
        assert!(!claim(&stamp, t + RECORD_EVERY_MS + 1));
    }
}
