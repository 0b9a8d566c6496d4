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
    /// The merchant left this database for the pod named (a move's write hold ended).
    #[error("the merchant moved to pod {0}")]
    Moved(String),
    /// A failure that reached us second-hand (a group's COMMIT, run by another writer) and was
    /// classified "unavailable" where it happened.
    #[error("database unavailable: {0}")]
    Unavailable(String),
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
            DbError::Database(sqlx::Error::Database(e)) => {
                let code = e.code().unwrap_or_default();
                if e.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() {
                    sqlite_away(&code)
                } else {
                    postgres_away(&code)
                }
            }
            DbError::Unavailable(_) => true,
            _ => false,
        }
    }
}

/// PostgreSQL going away: a connection exception (class 08), the server shutting down, crashed
/// or not yet accepting (57P01–57P04), too many connections (53300), or the database not
/// accepting connections (55000, `ALLOW_CONNECTIONS false`). A retry later may well succeed.
fn postgres_away(sqlstate: &str) -> bool {
    sqlstate.starts_with("08")
        || sqlstate.starts_with("57P")
        || matches!(sqlstate, "53300" | "55000")
}

/// SQLite's file unusable for now (by the primary result code of the extended one): busy past
/// its timeout (5), read-only (8), an I/O error (10), the disk full (13), not openable (14).
fn sqlite_away(extended: &str) -> bool {
    extended
        .parse::<i32>()
        .is_ok_and(|code| matches!(code & 0xff, 5 | 8 | 10 | 13 | 14))
}

impl From<DbError> for domain::Failure {
    fn from(e: DbError) -> Self {
        if e.is_unavailable() {
            domain::Failure::Unavailable(e.to_string())
        } else {
            domain::Failure::Internal(e.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{postgres_away, sqlite_away};

    #[test]
    fn connection_level_sqlstates_are_unavailable_and_statement_errors_are_not() {
        for away in [
            "08006", "08001", "57P01", "57P02", "57P03", "53300", "55000",
        ] {
            assert!(postgres_away(away), "{away}");
        }
        for failed in ["23505", "40001", "42P01", "22001", ""] {
            assert!(!postgres_away(failed), "{failed}");
        }
    }

    #[test]
    fn sqlite_busy_read_only_io_full_and_cantopen_are_unavailable() {
        // SQLITE_BUSY, SQLITE_READONLY, SQLITE_READONLY_DBMOVED, SQLITE_IOERR_WRITE,
        // SQLITE_FULL, SQLITE_CANTOPEN.
        for away in ["5", "8", "1032", "778", "13", "14"] {
            assert!(sqlite_away(away), "{away}");
        }
        // SQLITE_CONSTRAINT_UNIQUE, SQLITE_ERROR, SQLITE_CORRUPT.
        for failed in ["2067", "1", "11", "", "x"] {
            assert!(!sqlite_away(failed), "{failed}");
        }
    }
}
