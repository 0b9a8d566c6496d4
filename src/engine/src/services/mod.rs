//! Small services over the storage layer for what no actor owns: logs, uploaded files, the
//! basket report, the merchant directory and the database's health. `startup` builds one
//! [`Services`] and hands it to the HTTP layer, which never touches storage itself.
mod events;
mod files;
mod legacy;
mod logs;

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use domain::fleet::merchant::MerchantRecord;
use domain::Failure;
use ports::fleet::FleetStore;
use ports::ServiceStorage;

/// How long readiness stays false after a request was answered 503: a fault that fails
/// writes while `SELECT 1` still works (a full SQLite disk) takes the replica out of rotation,
/// and it comes back on its own once the window passes without another.
const NOT_READY_AFTER_UNAVAILABLE_MILLIS: i64 = 5_000;

#[derive(Clone)]
pub struct Services {
    pub(crate) storage: Arc<dyn ServiceStorage>,
    legacy: legacy::LegacyClients,
    /// When a request was last answered "unavailable" (Unix millis; 0: never).
    last_unavailable: Arc<AtomicI64>,
    /// The operator's realm: its tokens, merchants' creation, suspension and usage.
    pub operator: crate::fleet::operator::Operator,
    /// The merchants whose digests this process keeps current.
    pub digests: crate::offline::digests::DigestFollower,
}

impl Services {
    pub fn new(storage: Arc<dyn ServiceStorage>, fleet: Arc<dyn FleetStore>) -> Self {
        Self {
            operator: crate::fleet::operator::Operator::new(fleet),
            digests: crate::offline::digests::DigestFollower::new(storage.clone()),
            storage,
            legacy: legacy::LegacyClients::new(),
            last_unavailable: Arc::new(AtomicI64::new(0)),
        }
    }

    /// Whether the application's merchant lets it use the old Shopwave clients' conventions.
    pub async fn legacy_application(&self, application_id: i64) -> Result<bool, Failure> {
        self.legacy.allowed(&*self.storage, application_id).await
    }

    /// True while the database answers and, where replicas share it, this process hears
    /// the others' writes (otherwise its caches could serve stale data).
    /// Not while a request was answered "unavailable" in the last few seconds either.
    pub async fn database_ready(&self) -> bool {
        let quiet = domain::clock::now_millis() - self.last_unavailable.load(Ordering::Relaxed)
            > NOT_READY_AFTER_UNAVAILABLE_MILLIS;
        quiet && self.storage.ready().await
    }

    /// A request was answered "unavailable" (503, message 121).
    pub fn note_unavailable(&self) {
        self.last_unavailable
            .store(domain::clock::now_millis(), Ordering::Relaxed);
    }

    /// A merchant by id.
    pub async fn merchant(&self, id: i64) -> Result<Option<MerchantRecord>, Failure> {
        Ok(self.storage.merchant(id).await?)
    }
}
