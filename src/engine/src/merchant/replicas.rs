//! Hearing the other replicas that share one PostgreSQL. Every committed write announces
//! `merchant_changed <merchant_id>:<version>` (and revocations `tokens_revoked`); this task
//! listens on a dedicated connection and brings the process's caches up to date: a running
//! merchant whose state is older reloads, revoked access tokens leave the cache.
//!
//! Announcements sent while the connection is down are lost, so every (re)connection drops
//! every cached merchant and token. Until it listens again the process reports not ready,
//! reads check their merchant's version in the database, and access tokens are looked up in
//! the database; while the database cannot be reached either, reads fail as unavailable
//! (503, 121) like writes: a replica cut off alone cannot know that no other has written past
//! its caches (docs/security.md).

use std::time::Duration;

use crate::{Merchants, TokenActors};
use metrics::Metrics;
use std::sync::Arc;

use crate::merchant::ports::{Announcement, Replicas};

pub const FIRST_RETRY: Duration = Duration::from_millis(100);
const LAST_RETRY: Duration = Duration::from_secs(5);

/// Starts listening to `replicas` (the database's announcements; PostgreSQL only, as SQLite
/// serves one process). After a lost connection it tries again after `first_retry`, doubling
/// up to 5 s.
///
/// The listener runs on a thread of its own with its own runtime, and stops when the runtime
/// that called this shuts down: the database driver closes a dropped listener with a task of
/// the runtime it was made in, so it must never be dropped by a runtime that is going away.
pub fn listen(
    replicas: Arc<dyn Replicas>,
    merchants: Merchants,
    tokens: TokenActors,
    metrics: Metrics,
    first_retry: Duration,
) {
    let stop = crate::merchant::lifetime::ends_with_this_runtime();
    let spawned = std::thread::Builder::new()
        .name("replica-listener".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(e) => {
                    tracing::error!(error = %e, "cannot start the replica listener");
                    return;
                }
            };
            runtime.block_on(async move {
                tokio::select! {
                    _ = run(replicas, merchants, tokens, metrics, first_retry) => {}
                    _ = stop => {}
                }
            });
        });
    if let Err(e) = spawned {
        tracing::error!(error = %e, "cannot start the replica listener");
    }
}

async fn run(
    replicas: Arc<dyn Replicas>,
    merchants: Merchants,
    tokens: TokenActors,
    metrics: Metrics,
    first_retry: Duration,
) {
    let name = format!("merchantd-listener-{}", std::process::id());
    let mut retry = first_retry;
    loop {
        match replicas.listen(&name).await {
            Ok(mut listener) => {
                // Whatever was cached before now may have missed announcements.
                forget_everything(&merchants, &tokens);
                listener.go_live();
                metrics.replica_listens.inc();
                metrics.replica_listening.set(1);
                tracing::info!("listening for other replicas' writes");
                retry = first_retry;
                let lost = loop {
                    match listener.next().await {
                        Ok(announcement) => apply(&merchants, &tokens, announcement).await,
                        Err(e) => break e,
                    }
                };
                drop(listener);
                metrics.replica_listening.set(0);
                // Nothing is forgotten yet: until it listens again every read checks its
                // merchant's version and every token the database, and fails (503) when the
                // database cannot be reached. What was missed is forgotten on reconnecting,
                // above.
                tracing::warn!(error = %lost, "lost the connection listening for other replicas");
            }
            Err(e) => {
                tracing::warn!(error = %e, retry_in_ms = retry.as_millis() as u64, "cannot listen for other replicas");
            }
        }
        tokio::time::sleep(retry).await;
        retry = (retry * 2).min(LAST_RETRY.max(first_retry));
    }
}

async fn apply(merchants: &Merchants, tokens: &TokenActors, announcement: Announcement) {
    match announcement {
        Announcement::MerchantChanged {
            merchant_id,
            version,
        } => merchants.refresh(merchant_id, version),
        Announcement::TokensRevoked(Some(hashes)) => tokens.evict_revoked(&hashes).await,
        Announcement::TokensRevoked(None) => tokens.forget_cached_tokens(),
    }
}

fn forget_everything(merchants: &Merchants, tokens: &TokenActors) {
    merchants.retire_all();
    tokens.forget_cached_tokens();
}
