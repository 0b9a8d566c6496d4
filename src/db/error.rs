use thiserror::Error;

/// Failures of the storage layer. The HTTP layer maps them to 500/503 without showing internals.
#[derive(Debug, Error)]
pub enum DbError {
    #[error("database configuration: {0}")]
    Config(String),
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("migration error: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("{0}")]
    Conflict(String),
    #[error("stored data is inconsistent: {0}")]
    Corrupt(String),
}

impl DbError {
    /// True when the database could not be reached at all, as opposed to a failed statement.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            DbError::Database(
                sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_)
            )
        )
    }
}

impl From<DbError> for crate::domain::Failure {
    fn from(e: DbError) -> Self {
        if e.is_unavailable() {
            crate::domain::Failure::Unavailable(e.to_string())
        } else {
            crate::domain::Failure::Internal(e.to_string())
        }
    }
}
