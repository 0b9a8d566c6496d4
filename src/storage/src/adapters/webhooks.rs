//! The webhook dispatcher's queue ([`DeliveryQueue`]) on one database (one dispatcher a pod).

use domain::event::Event;
use domain::webhooks::webhook::{AttemptRecord, Endpoint, PendingDelivery, QueueDepth, Recorded};
use ports::{DeliveryQueue, Pending};
use tokio::sync::watch;

use crate::Db;

impl DeliveryQueue for Db {
    fn commits(&self) -> watch::Receiver<u64> {
        Db::commits(self)
    }

    fn claim<'a>(
        &'a self,
        owner: &'a str,
        now: i64,
        lease_until: i64,
        limit: i64,
    ) -> Pending<'a, Vec<Endpoint>> {
        Box::pin(async move { Ok(self.claim_webhooks(owner, now, lease_until, limit).await?) })
    }

    fn queue_depth(&self) -> Pending<'_, QueueDepth> {
        Box::pin(async move { Ok(self.webhook_queue_depth().await?) })
    }

    fn endpoint(&self, merchant_id: i64, id: i64, now: i64) -> Pending<'_, Option<Endpoint>> {
        Box::pin(async move { Ok(self.webhook_endpoint(merchant_id, id, now).await?) })
    }

    fn pending_deliveries<'a>(
        &'a self,
        endpoint: &'a Endpoint,
        limit: i64,
    ) -> Pending<'a, Vec<PendingDelivery>> {
        Box::pin(async move { Ok(Db::pending_deliveries(self, endpoint, limit).await?) })
    }

    fn events_pending<'a>(&'a self, endpoint: &'a Endpoint, limit: i64) -> Pending<'a, Vec<Event>> {
        Box::pin(async move { Ok(Db::events_pending(self, endpoint, limit).await?) })
    }

    fn events_after(&self, merchant_id: i64, after: i64, limit: i64) -> Pending<'_, Vec<Event>> {
        Box::pin(async move { Ok(Db::events_after(self, merchant_id, after, limit).await?) })
    }

    fn renew_lease<'a>(
        &'a self,
        endpoint: &'a Endpoint,
        token: &'a str,
        until: i64,
    ) -> Pending<'a, bool> {
        Box::pin(async move { Ok(Db::renew_lease(self, endpoint, token, until).await?) })
    }

    fn record_attempts<'a>(
        &'a self,
        endpoint: &'a Endpoint,
        attempts: &'a [AttemptRecord],
        cursor: i64,
        lease: (&'a str, i64),
    ) -> Pending<'a, Recorded> {
        Box::pin(
            async move { Ok(Db::record_attempts(self, endpoint, attempts, cursor, lease).await?) },
        )
    }

    fn release<'a>(
        &'a self,
        endpoint: &'a Endpoint,
        owner: &'a str,
        next_attempt_at: i64,
    ) -> Pending<'a, ()> {
        Box::pin(async move {
            Ok(self
                .release_webhook(endpoint, owner, next_attempt_at)
                .await?)
        })
    }
}
