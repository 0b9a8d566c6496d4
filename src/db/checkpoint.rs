//! SQLite's WAL checkpoints, off the writer's path.
//!
//! By default the connection whose commit takes the WAL past 1,000 pages copies them into the
//! database file itself, inside that commit, fsync included: every write of its group waits
//! for it, and one batch in fifty took several times the median (issue 21's seeding stalls;
//! 8.6 % of a refresh-grant profile was `walCheckpoint` under the writer's COMMIT). The writer
//! turns that off (`wal_autocheckpoint = 0`) and this task checkpoints instead, on a pooled
//! connection of its own, a moment after commits: PASSIVE, so it never waits for (or blocks)
//! the writer or a reader, and copying a larger stretch of the log at once writes a page
//! updated many times only once.

use std::time::Duration;

use sqlx::{AnyPool, Executor};
use tokio::sync::watch;

/// How long commits accumulate before a checkpoint copies them.
const GATHER: Duration = Duration::from_millis(200);

/// Checkpoints after commits until `durable` (the writer's group counter) closes.
pub(super) fn start(pool: AnyPool, mut durable: watch::Receiver<u64>) {
    tokio::spawn(async move {
        while durable.changed().await.is_ok() {
            tokio::time::sleep(GATHER).await;
            durable.mark_unchanged(); // what committed while gathering is in this checkpoint
            let done = async {
                let mut conn = pool.acquire().await?;
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)").await?;
                Ok::<_, sqlx::Error>(())
            }
            .await;
            if let Err(e) = done {
                // The next commit tries again; the log only grows meanwhile.
                tracing::debug!(error = %e, "WAL checkpoint failed");
            }
        }
    });
}
