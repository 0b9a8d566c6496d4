//! SQLite's single writer, with group commit.
//!
//! SQLite lets one connection write at a time, and with `synchronous = FULL` every commit pays
//! an fsync. So one connection does all of the process's writing: each [`Tx`](crate::Tx) is a
//! savepoint inside a transaction the writer keeps open while writes are queued, and the
//! transaction is committed — one fsync — when the queue runs dry (or holds `MAX_GROUP`
//! writes). A write's `commit` returns only once the transaction holding it is durable, so a
//! 201 still means "on disk". A statement that fails rolls back its own savepoint and nothing
//! else; only a failing COMMIT (the disk itself) fails every write of its group.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use sqlx::{AnyConnection, Connection, Executor};
use tokio::sync::{watch, Mutex as AsyncMutex, Notify, OwnedMutexGuard};

use crate::checkpoint::{self, Log};
use crate::DbError;
use metrics::Metrics;

/// Writes committed together at most (bounds the latency of the first of a group).
const MAX_GROUP: u64 = 512;

pub(crate) struct Writer {
    conn: Arc<AsyncMutex<WriterConn>>,
    /// Writers waiting for the connection: while there are any, a commit is left to the last.
    waiting: AtomicUsize,
    /// The number of the last group whose COMMIT finished.
    durable: watch::Sender<u64>,
    /// Groups whose COMMIT failed (rare: the disk itself), with the error each writer of the
    /// group gets.
    failed: Mutex<BTreeMap<u64, FailedCommit>>,
    /// Wakes the flusher to commit a group whose last writer left it open.
    flush: Notify,
    closed: AtomicBool,
    /// How long the log is, which the checkpoint task tells.
    log: Log,
    metrics: Metrics,
}

/// Why a group's COMMIT failed, kept for the writers waiting on it.
struct FailedCommit {
    why: String,
    away: bool,
}

pub(crate) struct WriterConn {
    pub(crate) conn: AnyConnection,
    /// The outer transaction is open.
    open: bool,
    /// A savepoint was left behind by a transaction that was dropped without commit.
    dirty: bool,
    /// Savepoints released into the open transaction.
    pending: u64,
    /// The number of the open (or next) group.
    group: u64,
}

/// The connection, held by one transaction at a time. `guard` is only `None` once the lease
/// has been committed or rolled back.
pub(crate) struct Lease {
    guard: Option<OwnedMutexGuard<WriterConn>>,
    writer: Arc<Writer>,
}

/// Decrements the waiting count even if the waiting future is dropped.
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Writer {
    pub(crate) fn start(conn: AnyConnection, log: Log, metrics: Metrics) -> Arc<Self> {
        let writer = Arc::new(Self {
            conn: Arc::new(AsyncMutex::new(WriterConn {
                conn,
                open: false,
                dirty: false,
                pending: 0,
                group: 1,
            })),
            waiting: AtomicUsize::new(0),
            durable: watch::channel(0).0,
            failed: Mutex::new(BTreeMap::new()),
            flush: Notify::new(),
            closed: AtomicBool::new(false),
            log,
            metrics,
        });
        // The flusher holds the writer weakly: it ends when the database handle is gone.
        let weak = Arc::downgrade(&writer);
        tokio::spawn(async move {
            loop {
                let Some(writer) = weak.upgrade() else { return };
                if writer.closed.load(Ordering::SeqCst) {
                    return;
                }
                let woken = tokio::time::timeout(
                    std::time::Duration::from_secs(1),
                    writer.flush.notified(),
                )
                .await;
                if woken.is_ok() {
                    let mut guard = writer.conn.clone().lock_owned().await;
                    writer.commit_group(&mut guard).await;
                }
            }
        });
        writer
    }

    /// The number of the last group committed, changing with each commit.
    pub(crate) fn commits(&self) -> watch::Receiver<u64> {
        self.durable.subscribe()
    }

    /// Waits for the connection and opens a savepoint on it.
    pub(crate) async fn lease(self: &Arc<Self>) -> Result<Lease, DbError> {
        let mut guard = {
            self.waiting.fetch_add(1, Ordering::SeqCst);
            let _waiting = Waiting(&self.waiting);
            self.conn.clone().lock_owned().await
        };
        if self.closed.load(Ordering::SeqCst) {
            return Err(DbError::Database(sqlx::Error::PoolClosed));
        }
        self.recover(&mut guard).await;
        if !guard.open {
            guard.conn.execute("BEGIN IMMEDIATE").await?;
            guard.open = true;
        }
        guard.conn.execute("SAVEPOINT w").await?;
        guard.dirty = true;
        Ok(Lease {
            guard: Some(guard),
            writer: self.clone(),
        })
    }

    /// Releases the savepoint and returns once its group is durable.
    pub(crate) async fn commit(mut lease: Lease) -> Result<(), DbError> {
        let writer = lease.writer.clone();
        let Some(mut guard) = lease.guard.take() else {
            return Err(DbError::Corrupt("the transaction has already ended".into()));
        };
        if let Err(e) = guard.conn.execute("RELEASE w").await {
            lease.guard = Some(guard);
            return Err(e.into());
        }
        guard.dirty = false;
        guard.pending += 1;
        let group = guard.group;
        if writer.waiting.load(Ordering::SeqCst) == 0 || guard.pending >= MAX_GROUP {
            // Nobody is queued behind this write: commit the group now.
            writer.commit_group(&mut guard).await;
            drop(guard);
        } else {
            // The writers queued behind join this group; whoever is last commits it, and the
            // flusher makes sure it happens even if they give up waiting.
            drop(guard);
            writer.flush.notify_one();
        }
        writer.wait_durable(group).await
    }

    async fn wait_durable(&self, group: u64) -> Result<(), DbError> {
        let mut durable = self.durable.subscribe();
        durable
            .wait_for(|done| *done >= group)
            .await
            .map_err(|_| DbError::Database(sqlx::Error::PoolClosed))?;
        let failed = self.failed.lock().unwrap_or_else(|p| p.into_inner());
        match failed.get(&group) {
            // A full or read-only disk, an I/O error: the write is not stored, and says so
            // as the 503 it is, like the same failure on the writer's own statements.
            Some(FailedCommit { why, away: true }) => {
                Err(DbError::Unavailable(format!("the commit failed: {why}")))
            }
            Some(FailedCommit { why, away: false }) => {
                Err(DbError::Corrupt(format!("the commit failed: {why}")))
            }
            None => Ok(()),
        }
    }

    /// Commits the open group, if any, and tells its writers.
    async fn commit_group(&self, guard: &mut WriterConn) {
        self.recover(guard).await;
        if !guard.open {
            return;
        }
        let group = guard.group;
        let result = guard.conn.execute("COMMIT").await;
        guard.open = false;
        guard.group += 1;
        let written = std::mem::take(&mut guard.pending);
        if let Err(e) = result {
            let e = DbError::from(e);
            tracing::error!(error = %e, writes = written, "group commit failed");
            // SQLite may have rolled back already; make sure no transaction stays open.
            let _ = guard.conn.execute("ROLLBACK").await;
            self.fail_group(group, e.to_string(), e.is_unavailable());
        } else if written > 0 {
            self.metrics.db_commits.inc();
            self.metrics.db_group_size.observe(written as f64);
        }
        self.durable.send_replace(group);
        if self.log.restart_due() {
            self.copy_the_rest(guard).await;
        }
    }

    /// Copies the frames the checkpoint task has not yet copied (the last groups'), so that
    /// the next group begins with the whole log in the file and starts it over (see
    /// `checkpoint`). The next write waits for this; the task has already copied the rest.
    async fn copy_the_rest(&self, guard: &mut WriterConn) {
        match checkpoint::passive(&mut guard.conn).await {
            // Everything copied: the next group starts the log over. Else (a reader still on
            // an old part) the next commit tries again.
            Ok((_, frames, copied)) => self.log.set(if copied >= frames { 0 } else { frames }),
            Err(e) => tracing::debug!(error = %e, "the writer's WAL checkpoint failed"),
        }
    }

    /// Rolls back the savepoint a failed or dropped write left. When that is impossible, the
    /// database already rolled the whole transaction back (SQLite may, on a full disk or an
    /// I/O error): every write released into the group is gone, and its writers, waiting for
    /// the group to be durable, are told so; the next write begins a new transaction.
    async fn recover(&self, guard: &mut WriterConn) {
        let Err(e) = guard.clean_up().await else {
            return;
        };
        tracing::error!(error = %e, writes = guard.pending, "the group's transaction is gone");
        let _ = guard.conn.execute("ROLLBACK").await;
        guard.dirty = false;
        if guard.open {
            let group = guard.group;
            guard.open = false;
            guard.group += 1;
            guard.pending = 0;
            self.fail_group(group, format!("the transaction was rolled back: {e}"), true);
            self.durable.send_replace(group);
        }
    }

    fn fail_group(&self, group: u64, why: String, away: bool) {
        let mut failed = self.failed.lock().unwrap_or_else(|p| p.into_inner());
        failed.insert(group, FailedCommit { why, away });
        while failed.len() > 1024 {
            failed.pop_first();
        }
    }

    /// Commits what is queued and refuses further writes.
    pub(crate) async fn close(&self) {
        let mut guard = self.conn.clone().lock_owned().await;
        self.commit_group(&mut guard).await;
        self.closed.store(true, Ordering::SeqCst);
        self.flush.notify_one();
        let conn = &mut guard.conn;
        let _ = conn.ping().await;
    }
}

impl WriterConn {
    /// Rolls back a savepoint a dropped transaction left behind.
    async fn clean_up(&mut self) -> Result<(), DbError> {
        if self.dirty {
            self.conn.execute("ROLLBACK TO w").await?;
            self.conn.execute("RELEASE w").await?;
            self.dirty = false;
        }
        Ok(())
    }
}

impl Lease {
    pub(crate) fn conn(&mut self) -> Result<&mut AnyConnection, DbError> {
        self.guard
            .as_mut()
            .map(|g| &mut g.conn)
            .ok_or_else(|| DbError::Corrupt("the transaction has already ended".into()))
    }

    /// Undoes this transaction's savepoint and hands the connection on.
    pub(crate) async fn rollback(mut self) -> Result<(), DbError> {
        let Some(mut guard) = self.guard.take() else {
            return Ok(());
        };
        self.writer.recover(&mut guard).await;
        if self.writer.waiting.load(Ordering::SeqCst) == 0 {
            // Close the group now rather than leave the write lock held for the flusher.
            self.writer.commit_group(&mut guard).await;
        } else {
            self.writer.flush.notify_one();
        }
        Ok(())
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        // A transaction dropped without commit or rollback leaves its savepoint behind; the
        // next holder rolls it back. Wake the flusher in case nobody else comes.
        if self.guard.take().is_some() {
            self.writer.flush.notify_one();
        }
    }
}
