//! The one time representation stored in both databases and compared everywhere.

use std::sync::atomic::{AtomicI64, Ordering};

/// Milliseconds since the Unix epoch.
pub fn now_millis() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// How far the writes' clock is set from the wall clock: always 0 unless a benchmark moved it
/// through the `test_hooks` route (to complete a year of sales in minutes).
static WRITE_OFFSET: AtomicI64 = AtomicI64::new(0);

/// The time a merchant write happens at: the wall clock, unless `test_hooks` moved it.
pub fn write_millis() -> i64 {
    now_millis() + WRITE_OFFSET.load(Ordering::Relaxed)
}

/// Moves the writes' clock `offset` milliseconds from the wall clock (`test_hooks` only).
pub fn set_write_offset(offset: i64) {
    WRITE_OFFSET.store(offset, Ordering::Relaxed);
}
