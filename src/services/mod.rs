//! Small services over the storage layer for what no actor owns: logs, uploaded files, the
//! basket report, the merchant directory and the database's health. `startup` builds one
//! [`Services`] and hands it to the HTTP layer, which never touches storage itself.

mod events;
mod files;
mod legacy;
mod logs;
mod reports;
pub mod webhooks;

use crate::db::Db;
use crate::domain::merchant::MerchantRecord;
use crate::domain::Failure;

#[derive(Clone)]
pub struct Services {
    db: Db,
    legacy: legacy::LegacyClients,
}

impl Services {
    pub fn new(db: Db) -> Self {
        Self {
            db,
            legacy: legacy::LegacyClients::new(),
        }
    }

    /// Whether the application's merchant lets it use the old Shopwave clients' conventions.
    pub async fn legacy_application(&self, application_id: i64) -> Result<bool, Failure> {
        self.legacy.allowed(&self.db, application_id).await
    }

    /// True while the database answers and, where replicas share it, this process hears
    /// the others' writes (otherwise its caches could serve stale data).
    pub async fn database_ready(&self) -> bool {
        self.db.coherence().is_live() && self.db.ping().await
    }

    /// A merchant by id.
    pub async fn merchant(&self, id: i64) -> Result<Option<MerchantRecord>, Failure> {
        Ok(self.db.merchant(id).await?)
    }
}
