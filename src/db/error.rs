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
        match self {
            DbError::Database(
                sqlx::Error::PoolTimedOut
                | sqlx::Error::PoolClosed
                | sqlx::Error::Io(_)
                | sqlx::Error::WorkerCrashed,
            ) => true,
            // PostgreSQL going away: a connection exception (class 08), or the server shutting
            // down or not yet accepting (57P01–57P03). A retry later may well succeed.
            DbError::Database(sqlx::Error::Database(e)) => e
                .code()
                .is_some_and(|c| c.starts_with("08") || matches!(&*c, "57P01" | "57P02" | "57P03")),
            _ => false,
        }
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
