//! The write transaction handle. Every write of the application goes through one: begin it with
//! [`Db::begin`](crate::Db::begin), call the operations the storage modules define on it, then
//! [`Tx::commit`]. Dropping it without commit undoes it.

use std::time::Instant;

use sqlx::{Any, AnyConnection, Executor};

use crate::notify::Announcement;
use crate::writer::{Lease, Writer};
use crate::{Backend, Db, DbError};

pub struct Tx {
    inner: Inner,
    db: Db,
    started: Instant,
    /// Told to the other replicas when (and only if) the transaction commits.
    announcements: Vec<Announcement>,
    /// Writes noted by operations that only sometimes write (see [`Tx::note_write`]).
    writes: u64,
    /// Whether it appended change events (the dispatcher is told when it commits).
    pub(crate) appended: bool,
}

enum Inner {
    /// A savepoint on SQLite's shared writer.
    Shared(Lease),
    /// A transaction of its own from the pool.
    Own(sqlx::Transaction<'static, Any>),
}

impl Tx {
    pub(crate) fn shared(lease: Lease, db: Db) -> Self {
        Self {
            inner: Inner::Shared(lease),
            db,
            started: Instant::now(),
            announcements: Vec::new(),
            writes: 0,
            appended: false,
        }
    }

    pub(crate) fn own(tx: sqlx::Transaction<'static, Any>, db: Db) -> Self {
        Self {
            inner: Inner::Own(tx),
            db,
            started: Instant::now(),
            announcements: Vec::new(),
            writes: 0,
            appended: false,
        }
    }

    /// The connection the transaction's statements run on.
    pub(crate) fn conn(&mut self) -> Result<&mut AnyConnection, DbError> {
        match &mut self.inner {
            Inner::Shared(lease) => lease.conn(),
            Inner::Own(tx) => Ok(&mut **tx),
        }
    }

    pub(crate) fn db(&self) -> &Db {
        &self.db
    }

    pub fn backend(&self) -> Backend {
        self.db.backend()
    }

    /// Makes the transaction durable; returns once it is.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn commit(self) -> Result<(), DbError> {
        let Tx {
            inner,
            db,
            started,
            announcements,
            appended,
            ..
        } = self;
        match inner {
            Inner::Shared(lease) => Writer::commit(lease).await?,
            Inner::Own(mut tx) => {
                if db.backend() == Backend::Postgres {
                    // Queued in the transaction: delivered at COMMIT, dropped by a rollback.
                    for (channel, payload) in announcements.iter().flat_map(|a| a.payloads()) {
                        sqlx::query("SELECT pg_notify($1, $2)")
                            .bind(channel)
                            .bind(payload)
                            .execute(&mut *tx)
                            .await?;
                    }
                }
                tx.commit().await?;
                db.count_commit();
            }
        }
        db.observe("transaction", started);
        if appended {
            db.note_events_committed();
        }
        Ok(())
    }

    /// Counts a write by an operation that writes only when something differs (tenant
    /// manifests), so its caller can tell whether anything changed.
    pub(crate) fn note_write(&mut self) {
        self.writes += 1;
    }

    pub(crate) fn writes(&self) -> u64 {
        self.writes
    }

    /// Queues something for the other replicas to hear once this transaction commits.
    pub fn announce(&mut self, announcement: Announcement) {
        self.announcements.push(announcement);
    }

    /// Takes the merchant's next version, holding its row's lock until this transaction ends:
    /// writes for one merchant are serialized across every process sharing the database. The
    /// version is announced to the other replicas when the transaction commits. Returns it.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn claim_merchant(&mut self, merchant_id: i64) -> Result<i64, DbError> {
        let started = Instant::now();
        let row: Option<(i64,)> = sqlx::query_as(
            "UPDATE merchants SET version = version + 1 WHERE id = $1 AND moved_to IS NULL \
             RETURNING version",
        )
        .bind(merchant_id)
        .fetch_optional(self.conn()?)
        .await?;
        let Some((version,)) = row else {
            // Waited on a move's hold, or came after it: the merchant lives elsewhere now.
            let moved: Option<(Option<String>,)> =
                sqlx::query_as("SELECT moved_to FROM merchants WHERE id = $1")
                    .bind(merchant_id)
                    .fetch_optional(self.conn()?)
                    .await?;
            return Err(match moved {
                Some((Some(pod),)) => DbError::Moved(pod),
                _ => DbError::Conflict(format!("merchant {merchant_id} does not exist")),
            });
        };
        self.announce(Announcement::MerchantChanged {
            merchant_id,
            version,
        });
        self.db.observe("claim_merchant", started);
        Ok(version)
    }

    /// Marks the start of a part of the transaction that [`Tx::undo_part`] can take back
    /// alone (a savepoint); [`Tx::keep_part`] keeps it. Parts do not nest.
    pub async fn begin_part(&mut self) -> Result<(), DbError> {
        self.conn()?.execute("SAVEPOINT part").await?;
        Ok(())
    }

    pub async fn keep_part(&mut self) -> Result<(), DbError> {
        self.conn()?.execute("RELEASE SAVEPOINT part").await?;
        Ok(())
    }

    /// Takes back everything since [`Tx::begin_part`]; the transaction goes on.
    pub async fn undo_part(&mut self) -> Result<(), DbError> {
        let conn = self.conn()?;
        conn.execute("ROLLBACK TO SAVEPOINT part").await?;
        conn.execute("RELEASE SAVEPOINT part").await?;
        Ok(())
    }

    /// Undoes the transaction.
    pub async fn rollback(self) -> Result<(), DbError> {
        match self.inner {
            Inner::Shared(lease) => lease.rollback().await,
            Inner::Own(tx) => Ok(tx.rollback().await?),
        }
    }

    /// Takes `n` identifiers, unique across all merchants, inside this transaction.
    pub(crate) async fn take_ids(&mut self, n: i64) -> Result<Vec<i64>, DbError> {
        match self.backend() {
            Backend::Postgres => {
                let rows: Vec<(i64,)> =
                    sqlx::query_as("SELECT nextval('global_id_seq') FROM generate_series(1, $1)")
                        .bind(n)
                        .fetch_all(self.conn()?)
                        .await?;
                Ok(rows.into_iter().map(|(id,)| id).collect())
            }
            Backend::Sqlite => {
                let (end,): (i64,) = sqlx::query_as(
                    "UPDATE id_allocator SET next_id = next_id + $1 WHERE k = 1 RETURNING next_id",
                )
                .bind(n)
                .fetch_one(self.conn()?)
                .await?;
                Ok((end - n..end).collect())
            }
        }
    }

    pub(crate) async fn take_id(&mut self) -> Result<i64, DbError> {
        self.take_ids(1)
            .await?
            .pop()
            .ok_or_else(|| DbError::Corrupt("the id allocator returned nothing".into()))
    }
}
