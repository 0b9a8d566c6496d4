//! The write protocol of one merchant's group of writes, chosen here so the actors never ask
//! which database they write to.
//!
//! Where several processes share the database (PostgreSQL), the group's transaction begins at
//! once and claims the merchant's next version under its row lock, before anything is
//! validated: if the database is ahead of the cached state (another replica wrote), the group
//! is told so and is written again after a reload. SQLite serves one process with one writer:
//! the transaction begins only once there is something to write, so validating a group never
//! holds the writer.

use crate::{Backend, Db, DbError, Tx};
use domain::batch::Idempotency;
use domain::batch::StoredAnswer;

/// One group's write, open on a merchant.
pub struct GroupWrite {
    db: Db,
    merchant_id: i64,
    tx: Option<Tx>,
    version: i64,
}

impl Db {
    /// Opens a group for a merchant whose cached state is at version `expected`; `None` when
    /// the database is ahead of it (another replica wrote: reload first).
    pub async fn open_group(
        &self,
        merchant_id: i64,
        expected: i64,
    ) -> Result<Option<GroupWrite>, DbError> {
        let mut group = GroupWrite {
            db: self.clone(),
            merchant_id,
            tx: None,
            version: expected,
        };
        if self.backend() == Backend::Postgres {
            let mut tx = self.begin().await?;
            let version = tx.claim_merchant(merchant_id).await?;
            if version != expected + 1 {
                tx.rollback().await?;
                return Ok(None);
            }
            group.tx = Some(tx);
            group.version = version;
        }
        Ok(Some(group))
    }
}

impl GroupWrite {
    /// The merchant's version once this group commits.
    pub fn version(&self) -> i64 {
        self.version
    }

    /// Identifiers for the group's new records.
    pub async fn allocate_ids(&mut self, n: usize) -> Result<Vec<i64>, DbError> {
        match self.tx.as_mut() {
            Some(tx) => self.db.allocate_ids_in(tx, n).await,
            None => self.db.allocate_ids(n).await,
        }
    }

    /// The answer kept for an `Idempotency-Key`, read under the group's claim when it holds
    /// one (so a repeat sent to another replica while the first was written finds it).
    pub async fn stored_answer(
        &mut self,
        key: &Idempotency,
        now: i64,
    ) -> Result<Option<StoredAnswer>, DbError> {
        match self.tx.as_mut() {
            Some(tx) => tx.stored_answer(self.merchant_id, key, now).await,
            None => self.db.stored_answer(self.merchant_id, key, now).await,
        }
    }

    /// The transaction the group's changes are written in, begun now if it was not yet.
    pub async fn tx(&mut self) -> Result<&mut Tx, DbError> {
        if self.tx.is_none() {
            self.tx = Some(self.db.begin().await?);
        }
        self.tx
            .as_mut()
            .ok_or_else(|| DbError::Corrupt("a group without its transaction".into()))
    }

    pub async fn commit(self) -> Result<(), DbError> {
        match self.tx {
            Some(tx) => tx.commit().await,
            None => Ok(()),
        }
    }

    /// Ends the group without writing (nothing changed, or it failed).
    pub async fn rollback(self) {
        if let Some(tx) = self.tx {
            if let Err(e) = tx.rollback().await {
                tracing::warn!(error = %e, "rolling back an unused write transaction failed");
            }
        }
    }
}
