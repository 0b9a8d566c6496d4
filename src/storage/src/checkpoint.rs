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
//!
//! A checkpoint copies the log into the file but does not shorten it: SQLite starts the log
//! over only when a write transaction begins while every frame is already copied. A writer
//! that is never idle always begins with its previous group's frames still uncopied, so under
//! a steady load the log grew without end (1 GB after 50,000 synced sales) and every page read
//! searched a longer log index: each sync round was slower than the one before. So once the
//! log is longer than `sqlite_log_restart_pages`, the writer copies the few frames left
//! itself, between two groups ([`Log::restart_due`]), and the group after it starts the log
//! over.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use sqlx::{AnyConnection, AnyPool};
use tokio::sync::watch;

/// How long commits accumulate before a checkpoint copies them.
const GATHER: Duration = Duration::from_millis(200);

/// How long the write-ahead log is, as the last checkpoint found it, and the length past which
/// the writer makes sure it starts over (`sqlite_log_restart_pages`, 64 MiB by default).
#[derive(Clone)]
pub(crate) struct Log {
    frames: Arc<AtomicU64>,
    restart: u64,
}

impl Log {
    pub(crate) fn restarting_at(frames: u32) -> Self {
        Self {
            frames: Arc::default(),
            restart: u64::from(frames),
        }
    }

    /// Whether the log is long enough that the writer should let it start over.
    pub(crate) fn restart_due(&self) -> bool {
        self.frames.load(Ordering::Relaxed) >= self.restart
    }

    /// Records how many frames the log holds.
    pub(crate) fn set(&self, frames: i64) {
        let frames = u64::try_from(frames).unwrap_or(0);
        self.frames.store(frames, Ordering::Relaxed);
    }
}

/// Checkpoints after commits until `durable` (the writer's group counter) closes, telling
/// `log` how long the log is.
pub(crate) fn start(pool: AnyPool, mut durable: watch::Receiver<u64>, log: Log) {
    tokio::spawn(async move {
        while durable.changed().await.is_ok() {
            tokio::time::sleep(GATHER).await;
            durable.mark_unchanged(); // what committed while gathering is in this checkpoint
            let done = async {
                let mut conn = pool.acquire().await?;
                passive(&mut conn).await
            }
            .await;
            match done {
                Ok((_, frames, _)) => log.set(frames),
                // The next commit tries again; the log only grows meanwhile.
                Err(e) => tracing::debug!(error = %e, "WAL checkpoint failed"),
            }
        }
    });
}

/// A checkpoint that waits for nobody: (busy, frames in the log, frames copied).
pub(crate) async fn passive(conn: &mut AnyConnection) -> Result<(i64, i64, i64), sqlx::Error> {
    sqlx::query_as("PRAGMA wal_checkpoint(PASSIVE)")
        .fetch_one(conn)
        .await
}

#[cfg(test)]
mod tests {
    use sqlx::Connection;

    use super::AnyConnection;

    /// The bundled SQLite is built to keep a savepoint's sub-journal in memory up to 64 MiB
    /// (`LIBSQLITE3_FLAGS` in .cargo/config.toml): without it each write's changed pages also
    /// go to a temporary file past 64 KiB.
    #[actix_rt::test]
    async fn savepoint_journals_stay_in_memory_up_to_64_mib() {
        sqlx::any::install_default_drivers();
        let mut conn = AnyConnection::connect("sqlite::memory:")
            .await
            .expect("an in-memory database");
        let options: Vec<(String,)> = sqlx::query_as("PRAGMA compile_options")
            .fetch_all(&mut conn)
            .await
            .expect("compile options");
        assert!(
            options.iter().any(|(o,)| o == "STMTJRNL_SPILL=67108864"),
            "{options:?}"
        );
    }
}
