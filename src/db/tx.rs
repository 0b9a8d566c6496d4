//! The write transaction handle. Every write of the application goes through one: begin it with
//! [`Db::begin`](super::Db::begin), call the operations the storage modules define on it, then
//! [`Tx::commit`]. Dropping it without commit undoes it.

use std::time::Instant;

use sqlx::{Any, AnyConnection};

use super::writer::{Lease, Writer};
use super::{Backend, Db, DbError};

pub struct Tx {
    inner: Inner,
    db: Db,
    started: Instant,
}

enum Inner {
    /// A savepoint on SQLite's shared writer.
    Shared(Lease),
    /// A transaction of its own from the pool.
    Own(sqlx::Transaction<'static, Any>),
}

impl Tx {
    pub(super) fn shared(lease: Lease, db: Db) -> Self {
        Self {
            inner: Inner::Shared(lease),
            db,
            started: Instant::now(),
        }
    }

    pub(super) fn own(tx: sqlx::Transaction<'static, Any>, db: Db) -> Self {
        Self {
            inner: Inner::Own(tx),
            db,
            started: Instant::now(),
        }
    }

    /// The connection the transaction's statements run on.
    pub(super) fn conn(&mut self) -> Result<&mut AnyConnection, DbError> {
        match &mut self.inner {
            Inner::Shared(lease) => lease.conn(),
            Inner::Own(tx) => Ok(&mut **tx),
        }
    }

    pub(super) fn db(&self) -> &Db {
        &self.db
    }

    pub fn backend(&self) -> Backend {
        self.db.backend()
    }

    /// Makes the transaction durable; returns once it is.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn commit(self) -> Result<(), DbError> {
        let Tx { inner, db, started } = self;
        match inner {
            Inner::Shared(lease) => Writer::commit(lease).await?,
            Inner::Own(tx) => {
                tx.commit().await?;
                db.count_commit();
            }
        }
        db.observe("transaction", started);
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
