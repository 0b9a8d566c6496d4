//! When a token family's access tokens were last used, recorded without slowing the request
//! that used them. The bearer gate notes each use here: a family is noted at most once a
//! minute in this process (one atomic compare on a per-family stamp), the note goes on a
//! bounded queue without waiting, and one task writes what has queued in one transaction.
//! Under load the queue fills while a write is in flight, so writes batch themselves; a note
//! that finds the queue full is dropped, and the family is noted again a minute later.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::token::Store;

/// A family's uses are recorded at most this often per process: "last used" is accurate to
/// about a minute, which is what the page shows.
pub const RECORD_EVERY_MS: i64 = 60_000;
/// Notes waiting for the writer; beyond that they are dropped (see the module comment).
const QUEUE: usize = 8_192;
/// Families written per transaction.
const BATCH: usize = 512;

#[derive(Clone)]
pub struct UseRecorder {
    /// The last time each family was noted, by family id. Entries idle for longer than the
    /// recording interval are no longer needed to hold a use back, so they go.
    stamps: moka::sync::Cache<String, Arc<AtomicI64>>,
    queue: mpsc::Sender<(String, i64)>,
}

impl UseRecorder {
    /// Starts the writer task on the current arbiter.
    pub fn start(store: Store) -> Self {
        let (queue, notes) = mpsc::channel(QUEUE);
        actix_rt::spawn(write_notes(store, notes));
        Self {
            stamps: moka::sync::Cache::builder()
                .max_capacity(200_000)
                .time_to_idle(Duration::from_millis(2 * RECORD_EVERY_MS as u64))
                .build(),
            queue,
        }
    }

    /// Notes that an access token of `family_id` was used at `now` (epoch ms). Never waits.
    pub fn note(&self, family_id: &str, now: i64) {
        let stamp = self
            .stamps
            .get_with_by_ref(family_id, || Arc::new(AtomicI64::new(i64::MIN)));
        if claim(&stamp, now) {
            let _ = self.queue.try_send((family_id.to_owned(), now));
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

/// Writes queued notes until every sender is gone (the server stopped).
async fn write_notes(store: Store, mut notes: mpsc::Receiver<(String, i64)>) {
    let mut batch = Vec::with_capacity(BATCH);
    while notes.recv_many(&mut batch, BATCH).await > 0 {
        if let Err(e) = store.record_uses(&batch).await {
            // "Last used" is informational: a failed write is logged and not retried; the
            // families are noted again at their next use after the interval.
            tracing::warn!(error = %e, families = batch.len(), "recording token use failed");
        }
        batch.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
