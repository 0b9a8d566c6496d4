//! Rate limits on the API, per token family (one grant: its access tokens come and go) and per
//! merchant (one busy tenant cannot take a replica from the others). GCRA token buckets from
//! `governor`; over a limit → 429 with message 108, `Retry-After` and the `RateLimit-*`
//! headers; within it, the `RateLimit-*` headers say what is left of the tighter one.

use std::num::NonZeroU32;

use actix_web::http::header::{HeaderMap, HeaderName, HeaderValue};
use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

type Keyed<K> = RateLimiter<K, DefaultKeyedStateStore<K>, DefaultClock, StateInformationMiddleware>;

/// One limit: requests per second, and how many may come at once.
#[derive(Clone, Copy, Debug)]
pub struct Limit {
    pub per_second: u32,
    pub burst: u32,
}

/// What a request may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Allowed {
        limit: u32,
        remaining: u32,
    },
    Limited {
        limit: u32,
        retry_after_secs: u64,
        by: &'static str,
    },
}

pub struct ApiLimits {
    /// Keyed by a hash of the family id: no allocation per request.
    per_token: Option<(Keyed<u64>, u32)>,
    per_merchant: Option<(Keyed<i64>, u32)>,
    limited: prometheus::IntCounterVec,
}

fn keyed<K: Clone + std::hash::Hash + Eq>(limit: Limit) -> Option<(Keyed<K>, u32)> {
    let per_second = NonZeroU32::new(limit.per_second)?;
    let burst = NonZeroU32::new(limit.burst.max(limit.per_second)).unwrap_or(per_second);
    let quota = Quota::per_second(per_second).allow_burst(burst);
    Some((
        RateLimiter::keyed(quota).with_middleware::<StateInformationMiddleware>(),
        burst.get(),
    ))
}

impl ApiLimits {
    /// A limit of 0 requests per second is off.
    pub fn new(per_token: Limit, per_merchant: Limit, limited: prometheus::IntCounterVec) -> Self {
        Self {
            per_token: keyed(per_token),
            per_merchant: keyed(per_merchant),
            limited,
        }
    }

    /// Counts one request of a token family for a merchant.
    pub fn check(&self, family: &str, merchant_id: i64) -> Verdict {
        // The token's own bucket first: a token over its limit does not spend its merchant's.
        let mut verdict = None::<Verdict>;
        if let Some((limiter, burst)) = &self.per_token {
            verdict = Some(judge(
                limiter.check_key(&family_key(family)),
                *burst,
                "token",
            ));
        }
        if let Some((limiter, burst)) = &self.per_merchant {
            if !matches!(verdict, Some(Verdict::Limited { .. })) {
                let shared = judge(limiter.check_key(&merchant_id), *burst, "merchant");
                verdict = Some(tighter(verdict, shared));
            }
        }
        let verdict = verdict.unwrap_or(Verdict::Allowed {
            limit: 0,
            remaining: 0,
        });
        if let Verdict::Limited { by, .. } = verdict {
            self.limited.with_label_values(&[by]).inc();
        }
        verdict
    }

    /// Forgets the buckets of keys that have been quiet long enough to be full again.
    pub fn prune(&self) {
        if let Some((limiter, _)) = &self.per_token {
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
        if let Some((limiter, _)) = &self.per_merchant {
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
    }

    pub fn enabled(&self) -> bool {
        self.per_token.is_some() || self.per_merchant.is_some()
    }
}

fn judge(
    outcome: Result<
        governor::middleware::StateSnapshot,
        governor::NotUntil<<DefaultClock as Clock>::Instant>,
    >,
    burst: u32,
    by: &'static str,
) -> Verdict {
    match outcome {
        Ok(snapshot) => Verdict::Allowed {
            limit: burst,
            remaining: snapshot.remaining_burst_capacity(),
        },
        Err(not_until) => {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            Verdict::Limited {
                limit: burst,
                retry_after_secs: wait.as_secs() + u64::from(wait.subsec_nanos() > 0),
                by,
            }
        }
    }
}

fn family_key(family: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    family.hash(&mut hasher);
    hasher.finish()
}

fn tighter(a: Option<Verdict>, b: Verdict) -> Verdict {
    match (a, b) {
        (Some(Verdict::Allowed { remaining: ra, .. }), Verdict::Allowed { remaining: rb, .. })
            if ra <= rb =>
        {
            a.unwrap_or(b)
        }
        _ => b,
    }
}

/// The `RateLimit-*` headers (IETF httpapi draft) of a verdict.
pub fn headers(verdict: Verdict, into: &mut HeaderMap) {
    let (limit, remaining, reset) = match verdict {
        Verdict::Allowed { limit: 0, .. } => return,
        Verdict::Allowed { limit, remaining } => (limit, remaining, 1),
        Verdict::Limited {
            limit,
            retry_after_secs,
            ..
        } => (limit, 0, retry_after_secs),
    };
    for (name, value) in [
        ("ratelimit-limit", limit as u64),
        ("ratelimit-remaining", remaining as u64),
        ("ratelimit-reset", reset),
    ] {
        into.insert(HeaderName::from_static(name), HeaderValue::from(value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counter() -> prometheus::IntCounterVec {
        prometheus::IntCounterVec::new(prometheus::Opts::new("t", "t"), &["limit"]).unwrap()
    }

    #[test]
    fn a_burst_then_a_wait_per_token_and_per_merchant() {
        let limits = ApiLimits::new(
            Limit {
                per_second: 1,
                burst: 3,
            },
            Limit {
                per_second: 100,
                burst: 100,
            },
            counter(),
        );
        for left in [2, 1, 0] {
            assert_eq!(
                limits.check("f", 1),
                Verdict::Allowed {
                    limit: 3,
                    remaining: left
                }
            );
        }
        assert!(matches!(
            limits.check("f", 1),
            Verdict::Limited {
                retry_after_secs: 1,
                by: "token",
                ..
            }
        ));
        // Another token of the same merchant has its own bucket.
        assert!(matches!(limits.check("g", 1), Verdict::Allowed { .. }));
    }

    #[test]
    fn zero_per_second_is_off() {
        let off = Limit {
            per_second: 0,
            burst: 0,
        };
        let limits = ApiLimits::new(off, off, counter());
        assert!(!limits.enabled());
        assert_eq!(
            limits.check("f", 1),
            Verdict::Allowed {
                limit: 0,
                remaining: 0
            }
        );
    }
}
