//! The one time representation stored in both databases and compared everywhere.

/// Milliseconds since the Unix epoch.
pub fn now_millis() -> i64 {
    chrono::Utc::now().timestamp_millis()
}
