//! What storage answers when it cannot do what it was asked. The adapters classify their own
//! failures into these; the engine and services only ask whether a retry may help.

use domain::Failure;

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StorageError {
    /// The database could not be reached (down, refusing connections, out of connections,
    /// its disk full or read-only): a retry later may well succeed.
    #[error("database unavailable: {0}")]
    Unavailable(String),
    /// The write was refused as it stands (a unique key taken, a commit refused).
    #[error("{0}")]
    Conflict(String),
    /// What is stored does not make sense (a row that should be there is not).
    #[error("stored data is inconsistent: {0}")]
    Corrupt(String),
    /// Anything else: a failed statement, a migration, the configuration.
    #[error("database error: {0}")]
    Failed(String),
}

impl StorageError {
    /// True when the database could not be reached at all, as opposed to a failed statement.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, StorageError::Unavailable(_))
    }
}

impl From<StorageError> for Failure {
    fn from(e: StorageError) -> Self {
        if e.is_unavailable() {
            Failure::Unavailable(e.to_string())
        } else {
            Failure::Internal(e.to_string())
        }
    }
}
