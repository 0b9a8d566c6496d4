//! The ports of `merchantd-ports`, implemented over the database: on one [`Db`](crate::Db)
//! (SQLite, or one PostgreSQL) and over pods ([`PodStorage`], every call to the pod holding its
//! merchant).

mod merchant;
mod pods;
mod replicas;
mod services;
mod tokens;
mod webhooks;

pub use pods::PodStorage;
pub use replicas::PodReplicas;

use ports::StorageError;

use crate::DbError;

impl From<DbError> for StorageError {
    fn from(e: DbError) -> Self {
        if e.is_unavailable() {
            return StorageError::Unavailable(e.to_string());
        }
        match e {
            DbError::Conflict(why) => StorageError::Conflict(why),
            DbError::Corrupt(why) => StorageError::Corrupt(why),
            other => StorageError::Failed(other.to_string()),
        }
    }
}
