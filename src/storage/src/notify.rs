//! What replicas sharing one PostgreSQL tell each other. A write transaction queues its
//! announcements ([`Announcement`]) and [`Tx::commit`](crate::Tx::commit) sends them with
//! `pg_notify` just before COMMIT, so PostgreSQL delivers them if and only if the write
//! committed. Every replica listens on a dedicated connection ([`Listener`]).
//!
//! SQLite serves one process, so nothing is announced there.

use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use sqlx::postgres::{PgConnectOptions, PgListener, PgPoolOptions};

use crate::{Backend, Db, DbError};

/// `<merchant_id>:<version>`: the merchant's cached state older than `version` is stale.
const MERCHANT_CHANGED: &str = "merchant_changed";
/// Comma-separated access-token hashes that no longer grant anything, or `*` for "any".
const TOKENS_REVOKED: &str = "tokens_revoked";
/// `<merchant_id>`: the merchant moved to another pod (its placement changed).
const MERCHANT_PLACED: &str = "merchant_placed";
/// PostgreSQL refuses payloads of 8,000 bytes or more.
const MAX_PAYLOAD: usize = 7_900;

/// Something a committed write tells the other replicas.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Announcement {
    MerchantChanged {
        merchant_id: i64,
        version: i64,
    },
    /// Access tokens revoked; `None` when they are too many to name (or unknown by hash).
    TokensRevoked(Option<Vec<String>>),
    /// The merchant's placement changed (a move between pods): where it lives is read again.
    MerchantPlaced(i64),
}

impl Announcement {
    /// The `(channel, payload)` pairs carrying it.
    pub(crate) fn payloads(&self) -> Vec<(&'static str, String)> {
        match self {
            Announcement::MerchantChanged {
                merchant_id,
                version,
            } => vec![(MERCHANT_CHANGED, format!("{merchant_id}:{version}"))],
            Announcement::MerchantPlaced(merchant_id) => {
                vec![(MERCHANT_PLACED, merchant_id.to_string())]
            }
            Announcement::TokensRevoked(None) => vec![(TOKENS_REVOKED, "*".to_owned())],
            Announcement::TokensRevoked(Some(hashes)) => {
                let mut out = Vec::new();
                let mut payload = String::new();
                for hash in hashes {
                    if !payload.is_empty() && payload.len() + hash.len() + 1 > MAX_PAYLOAD {
                        out.push((TOKENS_REVOKED, std::mem::take(&mut payload)));
                    }
                    if !payload.is_empty() {
                        payload.push(',');
                    }
                    payload.push_str(hash);
                }
                if !payload.is_empty() {
                    out.push((TOKENS_REVOKED, payload));
                }
                out
            }
        }
    }

    fn parse(channel: &str, payload: &str) -> Option<Self> {
        match channel {
            MERCHANT_CHANGED => {
                let (merchant, version) = payload.split_once(':')?;
                Some(Announcement::MerchantChanged {
                    merchant_id: merchant.parse().ok()?,
                    version: version.parse().ok()?,
                })
            }
            MERCHANT_PLACED => Some(Announcement::MerchantPlaced(payload.parse().ok()?)),
            TOKENS_REVOKED if payload == "*" => Some(Announcement::TokensRevoked(None)),
            TOKENS_REVOKED => Some(Announcement::TokensRevoked(Some(
                payload.split(',').map(str::to_owned).collect(),
            ))),
            _ => None,
        }
    }
}

/// Whether this process hears every other replica's announcements. Always true on SQLite
/// (one process); on PostgreSQL only while the listening connection is up.
#[derive(Clone, Debug)]
pub struct Coherence(Arc<AtomicBool>);

impl Coherence {
    pub(crate) fn new(backend: Backend) -> Self {
        Self(Arc::new(AtomicBool::new(backend == Backend::Sqlite)))
    }

    pub fn is_live(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    pub(crate) fn set(&self, live: bool) {
        self.0.store(live, Ordering::SeqCst);
    }
}

/// The dedicated connection a replica hears announcements on.
pub struct Listener {
    /// Always `Some` until dropped.
    inner: Option<PgListener>,
    coherence: Coherence,
}

impl Db {
    /// Opens a listening connection (PostgreSQL only) named `application_name` in
    /// `pg_stat_activity`. Coherence turns live with [`Listener::go_live`] and off when the
    /// connection is lost.
    /// The channel replicas announce their commits on, when other processes may write to this
    /// database (PostgreSQL); `None` on SQLite, which serves one process.
    pub fn replicas(&self) -> Option<Replicas> {
        (self.backend() == Backend::Postgres).then(|| Replicas(self.clone()))
    }

    pub async fn listen(&self, application_name: &str) -> Result<Listener, DbError> {
        if self.backend() != Backend::Postgres {
            return Err(DbError::Config(
                "only PostgreSQL replicas listen for each other".into(),
            ));
        }
        let options =
            PgConnectOptions::from_str(&self.inner.url)?.application_name(application_name);
        let pool = PgPoolOptions::new()
            .max_connections(1)
            .max_lifetime(None)
            .idle_timeout(None)
            .acquire_timeout(std::time::Duration::from_secs(10))
            .connect_with(options)
            .await?;
        let mut inner = PgListener::connect_with(&pool).await?;
        // A lost connection is reported at once (and this process stops trusting its caches)
        // rather than retried inside the listener while announcements go missing.
        inner.eager_reconnect(false);
        inner
            .listen_all([MERCHANT_CHANGED, TOKENS_REVOKED, MERCHANT_PLACED])
            .await?;
        Ok(Listener {
            inner: Some(inner),
            coherence: self.inner.coherence.clone(),
        })
    }

    /// Whether cached state may be trusted to hear other replicas' writes.
    pub fn coherence(&self) -> &Coherence {
        &self.inner.coherence
    }
}

/// Where this process hears the other replicas' commits (see [`Db::replicas`]).
pub struct Replicas(Db);

impl Replicas {
    /// A connection listening for announcements.
    pub async fn listen(&self, application_name: &str) -> Result<Listener, DbError> {
        self.0.listen(application_name).await
    }
}

impl Listener {
    /// From now on cached state may be trusted: every later commit will be heard. Call it
    /// once whatever was cached before listening has been dropped.
    pub fn go_live(&self) {
        self.coherence.set(true);
    }

    /// The next announcement. An error means the connection is lost (announcements may have
    /// been missed): coherence is off until a new listener is opened.
    pub async fn next(&mut self) -> Result<Announcement, DbError> {
        let Some(inner) = self.inner.as_mut() else {
            return Err(DbError::Corrupt("the listener is closed".into()));
        };
        loop {
            let received = inner.try_recv().await;
            let notification = match received {
                Ok(Some(n)) => n,
                Ok(None) => {
                    self.coherence.set(false);
                    return Err(DbError::Database(sqlx::Error::Io(std::io::Error::new(
                        std::io::ErrorKind::ConnectionAborted,
                        "the listening connection was lost",
                    ))));
                }
                Err(e) => {
                    self.coherence.set(false);
                    return Err(e.into());
                }
            };
            match Announcement::parse(notification.channel(), notification.payload()) {
                Some(announcement) => return Ok(announcement),
                None => tracing::warn!(
                    channel = notification.channel(),
                    "ignoring an announcement that does not parse"
                ),
            }
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.coherence.set(false);
        // sqlx hands the connection back with a spawned task, which panics once the runtime
        // is gone (a task dropped as its runtime shuts down): then let the process end close it.
        if let Some(inner) = self.inner.take() {
            if tokio::runtime::Handle::try_current().is_err() {
                std::mem::forget(inner);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn announcements_read_back_as_sent() {
        let changed = Announcement::MerchantChanged {
            merchant_id: 42,
            version: 7,
        };
        for (channel, payload) in changed.payloads() {
            assert_eq!(
                Announcement::parse(channel, &payload),
                Some(changed.clone())
            );
        }
        let placed = Announcement::MerchantPlaced(9);
        for (channel, payload) in placed.payloads() {
            assert_eq!(Announcement::parse(channel, &payload), Some(placed.clone()));
        }
        let all = Announcement::TokensRevoked(None);
        assert_eq!(all.payloads(), vec![(TOKENS_REVOKED, "*".to_owned())]);
    }

    #[test]
    fn many_revoked_hashes_are_split_under_the_payload_limit() {
        let hashes: Vec<String> = (0..500).map(|i| format!("{i:064x}")).collect();
        let payloads = Announcement::TokensRevoked(Some(hashes.clone())).payloads();
        assert!(payloads.len() > 1);
        let mut back = Vec::new();
        for (channel, payload) in payloads {
            assert!(payload.len() < 8_000);
            match Announcement::parse(channel, &payload) {
                Some(Announcement::TokensRevoked(Some(h))) => back.extend(h),
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(back, hashes);
    }

    #[test]
    fn garbage_is_not_an_announcement() {
        assert_eq!(Announcement::parse(MERCHANT_CHANGED, "x:1"), None);
        assert_eq!(Announcement::parse(MERCHANT_CHANGED, "12"), None);
        assert_eq!(Announcement::parse("other", "1:2"), None);
    }
}
