//! Rate limits for the token, revoke and introspect endpoints, and the sign-in slowdown.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use moka::sync::Cache;

/// Fixed one-minute windows per key ("ip:…", "client:…", "authfail:…").
#[derive(Clone)]
pub struct RateLimiter {
    windows: Cache<String, Arc<AtomicU32>>,
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl RateLimiter {
    pub fn new() -> Self {
        Self {
            windows: Cache::builder()
                .max_capacity(200_000)
                .time_to_live(Duration::from_secs(120))
                .build(),
        }
    }

    fn counter(&self, key: &str) -> (Arc<AtomicU32>, u64) {
        let now = now_secs();
        let window = now / 60;
        let counter = self
            .windows
            .get_with(format!("{key}@{window}"), || Arc::new(AtomicU32::new(0)));
        (counter, 60 - now % 60)
    }

    /// Counts one request for `key`; `Err(retry_after_secs)` when over `limit` this minute.
    pub fn hit(&self, key: &str, limit: u32) -> Result<(), u64> {
        let (counter, retry_after) = self.counter(key);
        if counter.fetch_add(1, Ordering::Relaxed) >= limit {
            Err(retry_after)
        } else {
            Ok(())
        }
    }

    /// `Err(retry_after_secs)` when `key` has already reached `limit` this minute (no count).
    pub fn check(&self, key: &str, limit: u32) -> Result<(), u64> {
        let (counter, retry_after) = self.counter(key);
        if counter.load(Ordering::Relaxed) >= limit {
            Err(retry_after)
        } else {
            Ok(())
        }
    }
}

impl Default for RateLimiter {
    fn default() -> Self {
        Self::new()
    }
}

/// Failed sign-ins per email and per IP. After `free` failures each further one doubles the
/// wait (1 s, 2 s, 4 s … at most 5 minutes); a success clears the email's record. Times are
/// kept in milliseconds so a wait is never cut short by a second boundary.
#[derive(Clone)]
pub struct SignInThrottle {
    failures: Cache<String, (u32, u64)>,
}

fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl SignInThrottle {
    pub fn new() -> Self {
        Self {
            failures: Cache::builder()
                .max_capacity(200_000)
                .time_to_idle(Duration::from_secs(15 * 60))
                .build(),
        }
    }

    /// Seconds to wait before `key` may try again, if any.
    pub fn wait_for(&self, key: &str, free: u32) -> Option<u64> {
        let (count, last) = self.failures.get(key)?;
        if count < free {
            return None;
        }
        let lockout_ms = (1000u64 << (count - free).min(9)).min(300_000);
        let elapsed = now_millis().saturating_sub(last);
        // Whole seconds for the message, rounded up.
        (elapsed < lockout_ms).then(|| (lockout_ms - elapsed).div_ceil(1000))
    }

    pub fn fail(&self, key: &str) {
        let count = self.failures.get(key).map_or(0, |(c, _)| c);
        self.failures
            .insert(key.to_owned(), (count.saturating_add(1), now_millis()));
    }

    pub fn clear(&self, key: &str) {
        self.failures.invalidate(key);
    }
}

impl Default for SignInThrottle {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limiter_refuses_past_the_limit() {
        let l = RateLimiter::new();
        for _ in 0..3 {
            assert!(l.hit("ip:1", 3).is_ok());
        }
        assert!(l.hit("ip:1", 3).is_err());
        assert!(l.hit("ip:2", 3).is_ok());
    }

    #[test]
    fn sign_in_slows_down_after_free_failures() {
        let t = SignInThrottle::new();
        for _ in 0..3 {
            assert_eq!(t.wait_for("email:a", 3), None);
            t.fail("email:a");
        }
        assert!(t.wait_for("email:a", 3).is_some());
        t.clear("email:a");
        assert_eq!(t.wait_for("email:a", 3), None);
    }
}
