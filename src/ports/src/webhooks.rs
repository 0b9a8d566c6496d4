//! The webhook dispatcher's queue in one database: endpoints with work due are claimed under a
//! lease, their deliveries read, attempted and recorded.

use domain::event::Event;
use domain::webhooks::webhook::{AttemptRecord, Endpoint, PendingDelivery, QueueDepth, Recorded};
use tokio::sync::watch;

use crate::Pending;

pub trait DeliveryQueue: Send + Sync {
    /// Changes whenever this process commits a write that appended events.
    fn commits(&self) -> watch::Receiver<u64>;
    /// Takes up to `limit` endpoints with work due, for `owner` until `lease_until`.
    fn claim<'a>(
        &'a self,
        owner: &'a str,
        now: i64,
        lease_until: i64,
        limit: i64,
    ) -> Pending<'a, Vec<Endpoint>>;
    fn queue_depth(&self) -> Pending<'_, QueueDepth>;
    /// An endpoint as it is now, if it is on and not deleted.
    fn endpoint(&self, merchant_id: i64, id: i64, now: i64) -> Pending<'_, Option<Endpoint>>;
    /// The endpoint's oldest pending deliveries, in sequence order.
    fn pending_deliveries<'a>(
        &'a self,
        endpoint: &'a Endpoint,
        limit: i64,
    ) -> Pending<'a, Vec<PendingDelivery>>;
    /// The events of those deliveries, oldest first.
    fn events_pending<'a>(&'a self, endpoint: &'a Endpoint, limit: i64) -> Pending<'a, Vec<Event>>;
    /// The merchant's events after `after`, at most `limit`.
    fn events_after(&self, merchant_id: i64, after: i64, limit: i64) -> Pending<'_, Vec<Event>>;
    /// Extends a claim's lease; false when the claim no longer holds it.
    fn renew_lease<'a>(
        &'a self,
        endpoint: &'a Endpoint,
        token: &'a str,
        until: i64,
    ) -> Pending<'a, bool>;
    /// Records attempts, moves the endpoint's cursor and renews the lease, in one
    /// transaction.
    fn record_attempts<'a>(
        &'a self,
        endpoint: &'a Endpoint,
        attempts: &'a [AttemptRecord],
        cursor: i64,
        lease: (&'a str, i64),
    ) -> Pending<'a, Recorded>;
    /// Gives the endpoint back, to be claimed again from `next_attempt_at`.
    fn release<'a>(
        &'a self,
        endpoint: &'a Endpoint,
        owner: &'a str,
        next_attempt_at: i64,
    ) -> Pending<'a, ()>;
}
